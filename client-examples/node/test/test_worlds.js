// SPDX-License-Identifier: Apache-2.0
'use strict';
// Worlds through the Node.js client against a live lcpsimd (the built-in
// world: 'arm7', a table and a box): client.world(name) views and the
// per-call world option address one world only; createWorld, listWorlds,
// destroyWorld; a batchStep equals the same steps made one world at a time,
// exactly; a world not found fails alone; a world's own state stream.
// LCPSIMD names the daemon binary (the ctest sets it).

const test = require('node:test');
const assert = require('node:assert/strict');
const { Client, LcpsimError, StateStream } = require('../lcpsim');
const { startDaemon, stopDaemon } = require('./live_daemon');

const DAEMON = process.env.LCPSIMD;

test('worlds against lcpsimd', { skip: !DAEMON && 'LCPSIMD is not set' }, async (t) => {
  const daemon = await startDaemon(DAEMON, ['--workers', '2', '--max-worlds', '16']);
  const client = new Client(daemon.rep, { timeoutMs: 20000 });
  t.after(async () => {
    await client.close();
    const { code, signal } = await stopDaemon(daemon.proc);
    assert.equal(signal, null);
    assert.equal(code, 0);
  });

  await t.test('views and the world option address one world', async () => {
    const info = await client.createWorld({ name: 'w1', copyOf: 'default' });
    assert.equal(info.name, 'w1');
    assert.equal(info.robotCount, 1);
    const w1 = client.world('w1');
    const reply = await w1.step(15);
    assert.equal(reply.stepCount, 15);
    assert.equal((await client.getState()).stepCount, 0);
    assert.equal((await client.getState({}, { world: 'w1' })).stepCount, 15);
    await w1.close(); // a view's close leaves the client's socket open
    const list = await client.listWorlds();
    assert.deepEqual(list.worlds.map((w) => w.name), ['default', 'w1']);
    assert.equal(list.maxWorlds, 16);
    await client.destroyWorld('w1');
    await assert.rejects(w1.getState(), (err) => err instanceof LcpsimError && err.codeName === 'NOT_FOUND');
    await assert.rejects(client.destroyWorld('default'),
      (err) => err instanceof LcpsimError && err.codeName === 'FAILED_PRECONDITION');
  });

  await t.test('batchStep equals one world at a time', async () => {
    const names = ['b0', 'b1', 'b2'];
    for (const name of [...names, 's0', 's1', 's2']) await client.createWorld({ name, copyOf: 'default' });
    for (let tick = 0; tick < 10; ++tick) {
      const targets = names.map((_, i) => [{
        robot: 'arm7', mode: 'POSITION', kp: [150], kd: [12],
        position: [0, 1, 2, 3, 4, 5, 6].map((j) => 0.4 * Math.sin(0.1 * tick + 0.5 * i + 0.8 * j)),
      }]);
      const results = await client.batchStep(names.map((world, i) => ({ world, steps: 3, targets: targets[i] })),
        { returnState: true });
      assert.deepEqual(results.map((r) => r.world), names);
      for (let i = 0; i < names.length; ++i) {
        const alone = await client.world(`s${i}`).step(3, { targets: targets[i], returnState: true });
        assert.equal(results[i].status.code, 'OK');
        assert.deepEqual(results[i].state.robots[0].q, alone.state.robots[0].q);
        assert.deepEqual(results[i].state.robots[0].qd, alone.state.robots[0].qd);
        assert.equal(results[i].stepCount, alone.stepCount);
      }
    }
    const mixed = await client.batchStep([{ world: 'b0', steps: 1 }, { world: 'nowhere', steps: 1 }]);
    assert.equal(mixed[0].status.code, 'OK');
    assert.equal(mixed[1].status.code, 'NOT_FOUND');
  });

  await t.test("a world's state stream", async () => {
    await client.createWorld({ name: 'streamed', copyOf: 'default' });
    const view = client.world('streamed');
    const stream = new StateStream(daemon.pub, { world: 'streamed' });
    await view.subscribe(1);
    const iterator = stream[Symbol.asyncIterator]();
    const next = iterator.next();
    let received = null;
    next.then((item) => { received = item.value; }).catch(() => {});
    // The first states may go before the subscription is connected: step until one comes.
    for (let i = 0; i < 200 && !received; ++i) {
      await view.step(1);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    stream.close();
    assert.ok(received);
    assert.equal(received.world, 'streamed');
  });
});
