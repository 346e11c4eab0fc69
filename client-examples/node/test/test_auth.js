// SPDX-License-Identifier: Apache-2.0
'use strict';
// The Node.js client against an lcpsimd with CURVE on (--curve-secret-key):
// key files load, a controller's key steps, an observer's key reads and
// subscribes but its Step is PERMISSION_DENIED and changes nothing, an
// unknown key and a wrong server key get no reply (a TimeoutError).
// LCPSIMD names the daemon binary (the ctest sets it).

const test = require('node:test');
const assert = require('node:assert/strict');
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const {
  Client, StateStream, LcpsimError, TimeoutError, readKeyFile, loadKeyPair, loadPublicKey,
} = require('../lcpsim');
const { startDaemon, stopDaemon, firstPublishedState } = require('./live_daemon');

const DAEMON = process.env.LCPSIMD;
// A refused client waits this long for the reply that never comes.
const REFUSED_TIMEOUT_MS = 1500;

test('lcpsim.js with CURVE keys', { skip: !DAEMON && 'LCPSIMD is not set' }, async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lcpsim-node-auth-'));
  const allow = path.join(dir, 'allow');
  fs.mkdirSync(allow);
  const gen = (name, role = 'controller') => {
    execFileSync(DAEMON, ['--gen-keys', path.join(dir, name), '--key-role', role]);
    return path.join(dir, name);
  };
  const server = gen('server');
  const controller = gen('controller');
  const observer = gen('observer', 'observer');
  const stranger = gen('stranger');
  fs.copyFileSync(`${controller}.pub`, path.join(allow, 'controller.pub'));
  fs.copyFileSync(`${observer}.pub`, path.join(allow, 'observer.pub'));
  const daemon = await startDaemon(DAEMON, ['--curve-secret-key', `${server}.key`, '--authorized-keys', allow]);
  const clients = [];
  const connect = (keys, serverKey = `${server}.pub`, timeoutMs = 10000) => {
    const client = new Client(daemon.rep, { timeoutMs, serverKey, clientKeys: `${keys}.key` });
    clients.push(client);
    return client;
  };
  t.after(async () => {
    for (const client of clients) await client.close();
    const { code } = await stopDaemon(daemon.proc);
    fs.rmSync(dir, { recursive: true, force: true });
    assert.equal(code, 0);
  });

  await t.test('key files load', () => {
    const pair = loadKeyPair(`${controller}.key`);
    assert.equal(pair.publicKey.length, 40);
    assert.equal(pair.secretKey.length, 40);
    assert.equal(loadPublicKey(`${controller}.pub`), pair.publicKey);
    assert.equal(readKeyFile(`${observer}.pub`).role, 'observer');
    assert.throws(() => loadKeyPair(`${server}.pub`), /secret-key/);
    const bad = path.join(dir, 'bad.key');
    fs.writeFileSync(bad, '# comment\npublic-key = "short"\n');
    assert.throws(() => readKeyFile(bad), new RegExp(`${bad}:2:`));
  });

  await t.test('a controller steps', async () => {
    const client = connect(controller);
    const before = await client.getState();
    await client.step(3);
    const after = await client.getState();
    assert.equal(after.stepCount, before.stepCount + 3);
  });

  await t.test('an observer reads, and its Step is PERMISSION_DENIED', async () => {
    const client = connect(observer);
    const reply = await client.ping();
    assert.ok(reply.serverVersion.length > 0);
    const before = await client.getState();
    await assert.rejects(client.step(3), (err) => {
      assert.ok(err instanceof LcpsimError);
      assert.equal(err.codeName, 'PERMISSION_DENIED');
      assert.match(err.serverMessage, /observer/);
      return true;
    });
    await assert.rejects(client.reset(), (err) => err.codeName === 'PERMISSION_DENIED');
    const after = await client.getState();
    assert.equal(after.stepCount, before.stepCount);
  });

  await t.test('an observer subscribes to the state stream', async () => {
    const client = connect(controller);
    const stream = new StateStream(daemon.pub, { serverKey: `${server}.pub`, clientKeys: loadKeyPair(`${observer}.key`) });
    const received = await firstPublishedState(client, stream);
    assert.ok(received, 'a state reached the observer');
    assert.ok(received.stepCount > 0);
  });

  await t.test('an unknown key, a wrong server key and no key get no reply', async () => {
    const refused = [
      connect(stranger, `${server}.pub`, REFUSED_TIMEOUT_MS),
      connect(controller, `${stranger}.pub`, REFUSED_TIMEOUT_MS),
      new Client(daemon.rep, { timeoutMs: REFUSED_TIMEOUT_MS }),
    ];
    clients.push(refused[2]);
    for (const client of refused) {
      await assert.rejects(client.ping(), TimeoutError);
    }
  });
});
