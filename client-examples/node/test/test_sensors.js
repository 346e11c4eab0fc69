// SPDX-License-Identifier: Apache-2.0
'use strict';
// Sensors and AddImu through the Node.js client against a live lcpsimd (the
// built-in world: 'arm7', a table and a box). LCPSIMD names the daemon binary
// (the ctest sets it).

const test = require('node:test');
const assert = require('node:assert/strict');
const { Client, LcpsimError } = require('../lcpsim');
const { startDaemon, stopDaemon } = require('./live_daemon');

const DAEMON = process.env.LCPSIMD;

test('sensors and AddImu against lcpsimd', { skip: !DAEMON && 'LCPSIMD is not set' }, async (t) => {
  const daemon = await startDaemon(DAEMON);
  const client = new Client(daemon.rep, { timeoutMs: 10000 });
  t.after(async () => {
    await client.close();
    const { code, signal } = await stopDaemon(daemon.proc);
    assert.equal(signal, null);
    assert.equal(code, 0);
  });

  await t.test('an IMU on the fixed base reads +9.81 m/s² up and no rotation', async () => {
    await client.addImu({ name: 'base_imu', robot: 'arm7', link: 'base_link' });
    await assert.rejects(client.addImu({ name: 'base_imu', robot: 'arm7', link: 'base_link' }), (err) => {
      assert.ok(err instanceof LcpsimError);
      assert.equal(err.codeName, 'INVALID_ARGUMENT');
      return true;
    });
    const reply = await client.step(5, { returnState: true, sensors: { imus: true } });
    const arm = reply.state.robots.find((r) => r.name === 'arm7');
    assert.equal(arm.imus.length, 1);
    const imu = arm.imus[0];
    assert.equal(imu.name, 'base_imu');
    assert.equal(imu.link, 'base_link');
    // Specific force Rᵀ(a − g) with a = 0, g = (0, 0, −9.81): to 1e-9 m/s².
    assert.ok(Math.abs(imu.specificForce.x) < 1e-9);
    assert.ok(Math.abs(imu.specificForce.y) < 1e-9);
    assert.ok(Math.abs(imu.specificForce.z - 9.81) < 1e-9);
    const w = imu.angularRate;
    assert.ok(Math.abs(w.x) + Math.abs(w.y) + Math.abs(w.z) < 1e-12);
    // Not asked for: none.
    const plain = await client.getState();
    assert.deepEqual(plain.robots.find((r) => r.name === 'arm7').imus, []);
  });

  await t.test('energy, joint wrenches and solver stats only when asked for', async () => {
    let state = await client.getState();
    let arm = state.robots.find((r) => r.name === 'arm7');
    assert.equal(arm.energy, null);
    assert.deepEqual(arm.jointWrenches, []);
    assert.equal(state.solverStats, null);
    for (const body of state.bodies) assert.equal(body.energy, null);

    state = await client.getState({ sensors: { energy: true, jointWrenches: true, solverStats: true } });
    arm = state.robots.find((r) => r.name === 'arm7');
    assert.ok(arm.energy.kinetic >= 0);
    assert.ok(Number.isFinite(arm.energy.potential));
    assert.ok(arm.jointWrenches.length > 0);
    assert.ok(arm.jointWrenches[0].world.force);
    assert.ok(state.solverStats.iterations >= 0);
    for (const body of state.bodies) assert.ok(Number.isFinite(body.energy.potential));
  });

  await t.test('a misspelt sensor is refused before it is sent', async () => {
    await assert.rejects(client.getState({ sensors: { imu: true } }), (err) =>
      err instanceof TypeError && err.message.startsWith('request.getState.sensors.imu:'));
  });
});
