// SPDX-License-Identifier: Apache-2.0
'use strict';
// GetScene, Record and readRecording through the Node.js client against a
// live lcpsimd (the built-in world) started with --record-dir. LCPSIMD names
// the daemon binary (the ctest sets it).

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { Client, LcpsimError, readRecording } = require('../lcpsim');
const { startDaemon, stopDaemon } = require('./live_daemon');

const DAEMON = process.env.LCPSIMD;

test('the scene and recordings against lcpsimd', { skip: !DAEMON && 'LCPSIMD is not set' }, async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lcpsim-node-record-'));
  const daemon = await startDaemon(DAEMON, ['--record-dir', dir]);
  const client = new Client(daemon.rep, { timeoutMs: 10000 });
  t.after(async () => {
    await client.close();
    const { code, signal } = await stopDaemon(daemon.proc);
    assert.equal(signal, null);
    assert.equal(code, 0);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  await t.test('GetScene describes the built-in world', async () => {
    const { scene, info } = await client.getScene();
    assert.deepEqual(scene.worldGeoms.map((g) => g.type), ['PLANE']);
    assert.deepEqual(scene.robots.map((r) => r.name), ['arm7']);
    assert.equal(scene.robots[0].links.length, 8);
    assert.deepEqual(scene.bodies.map((b) => b.name), info.bodies.map((b) => b.name));
    const box = scene.bodies.find((b) => b.name === 'box');
    assert.equal(box.geoms[0].type, 'BOX');
    assert.deepEqual(box.geoms[0].halfExtents, { x: 0.05, y: 0.05, z: 0.05 });
  });

  await t.test('Record starts and stops; readRecording reads every entry', async () => {
    const started = await client.record({ path: 'node.lcprec', everySteps: 1 });
    assert.equal(started.recording, true);
    assert.equal(started.path, path.join(fs.realpathSync(dir), 'node.lcprec'));
    await client.step(3);
    const stopped = await client.record({ stop: true });
    assert.equal(stopped.recording, false);
    assert.equal(stopped.statesWritten, 4);
    assert.equal(fs.statSync(stopped.path).size, stopped.bytesWritten);
    const entries = [...readRecording(stopped.path)];
    assert.deepEqual(entries.map((e) => e.entry), ['header', 'scene', 'state', 'state', 'state', 'state']);
    assert.equal(entries[0].header.magic, 'lcpsim-recording');
    assert.equal(entries[0].header.formatVersion, 1);
    assert.deepEqual(entries.slice(2).map((e) => e.state.stepCount), [0, 1, 2, 3]);
    assert.deepEqual(entries[1].scene.scene.robots.map((r) => r.name), ['arm7']);
    await assert.rejects(client.record({ path: 'node.lcprec' }), (err) => {
      assert.ok(err instanceof LcpsimError);
      assert.equal(err.codeName, 'INVALID_ARGUMENT');
      assert.match(err.message, /exists/);
      return true;
    });
  });
});
