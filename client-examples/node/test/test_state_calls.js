// SPDX-License-Identifier: Apache-2.0
'use strict';
// SetRobotState, SetBodyState, ApplyWrench and SetDynamics through the
// Node.js client against a live lcpsimd (the built-in world: 'arm7', a table
// and a box). LCPSIMD names the daemon binary (the ctest sets it).

const test = require('node:test');
const assert = require('node:assert/strict');
const { Client, LcpsimError } = require('../lcpsim');
const { startDaemon, stopDaemon } = require('./live_daemon');

const DAEMON = process.env.LCPSIMD;
const PUCK_URDF =
  "<robot name='puck'><link name='body'><inertial><mass value='2'/>" +
  "<inertia ixx='0.01' iyy='0.01' izz='0.01' ixy='0' ixz='0' iyz='0'/></inertial>" +
  '</link></robot>';

test('the state calls against lcpsimd', { skip: !DAEMON && 'LCPSIMD is not set' }, async (t) => {
  const daemon = await startDaemon(DAEMON);
  const client = new Client(daemon.rep, { timeoutMs: 10000 });
  t.after(async () => {
    await client.close();
    const { code, signal } = await stopDaemon(daemon.proc);
    assert.equal(signal, null);
    assert.equal(code, 0);
  });
  const h = (await client.getInfo()).settings.timestep;

  await t.test('SetRobotState by joint name and by vector', async () => {
    await client.setRobotState({ robot: 'arm7', joints: [{ name: 'joint2', position: 0.4, velocity: 0.2 }] });
    let arm = (await client.getState()).robots.find((r) => r.name === 'arm7');
    assert.equal(arm.q[1], 0.4);
    assert.equal(arm.qd[1], 0.2);
    await client.setRobotState({ robot: 'arm7', q: [0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1] });
    arm = (await client.getState()).robots.find((r) => r.name === 'arm7');
    assert.deepEqual(arm.q, [0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1]);
    await assert.rejects(client.setRobotState({ robot: 'arm7', q: [0] }), (err) => {
      assert.ok(err instanceof LcpsimError);
      assert.equal(err.codeName, 'INVALID_ARGUMENT');
      assert.match(err.message, /set_robot_state\.q has 1 values/);
      return true;
    });
  });

  await t.test('SetBodyState moves the box', async () => {
    await client.setBodyState({ name: 'box', pose: { position: { x: 0.6, y: 0.1, z: 0.5 } } });
    const box = (await client.getState()).bodies.find((b) => b.name === 'box');
    assert.equal(box.pose.position.y, 0.1);
  });

  await t.test('a held wrench gives the momentum of its impulse; SetDynamics changes the mass', async () => {
    await client.setSettings({ gravity: { x: 0, y: 0, z: 0 } });
    await client.loadModel({ urdfText: PUCK_URDF, baseType: 'BASE_FLOATING', basePose: { position: { z: 3 } } });
    const held = await client.applyWrench({ target: 'puck', force: { x: 4 }, duration: 'HOLD' });
    assert.ok(held.holdId > 0);
    await client.step(24);
    assert.equal((await client.applyWrench({ clear: held.holdId })).held ?? 0, 0);
    let puck = (await client.getState()).robots.find((r) => r.name === 'puck');
    assert.ok(Math.abs(2 * puck.baseTwist.linear.x - 4 * 24 * h) < 1e-9);
    await client.setDynamics({ bodies: [{ robot: 'puck', link: 'body', mass: 4, inertia: [0.02, 0.02, 0.02] }] });
    await client.setRobotState({ robot: 'puck', baseTwist: {} });
    await client.applyWrench({ target: 'puck', force: { x: 4 }, frame: 'LOCAL', duration: 'NEXT_STEP' });
    await client.step(1);
    puck = (await client.getState()).robots.find((r) => r.name === 'puck');
    assert.ok(Math.abs(4 * puck.baseTwist.linear.x - 4 * h) < 1e-9);
    await assert.rejects(client.setDynamics({ joints: [{ robot: 'arm7', joint: 'joint1', lower: 1, upper: -1 }] }),
      (err) => err.codeName === 'INVALID_ARGUMENT' && /set_dynamics\.joints\[0\]/.test(err.message));
  });
});
