#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
'use strict';
// arm_sine.js: drives the daemon's arm in lockstep along
// q*_i(t) = 0.5 sin(2π·0.5·t + i) with the in-engine PD controllers
// (by default kp = 100, kd = 10, the gains of the daemon's built-in arm
// scene), one Step-with-targets round trip per control tick, and prints a
// line of state every 100 steps.
//
//   node arm_sine.js [--steps N] [--robot NAME] [--kp KP] [--kd KD] [--timeout-ms MS] [ENDPOINT]
//   (default endpoint tcp://127.0.0.1:5555, 2000 steps, the first fixed-base robot)

const { parseArgs } = require('node:util');
const { Client } = require('./lcpsim');

const AMPLITUDE = 0.5; // rad
const FREQUENCY = 0.5; // Hz
const PRINT_EVERY = 100;

// The target of joint i at time t, and its rate (the velocity target, so that
// kd damps the tracking error rather than the motion itself).
const targetPosition = (i, t) => AMPLITUDE * Math.sin(2 * Math.PI * FREQUENCY * t + i);
const targetVelocity = (i, t) => AMPLITUDE * 2 * Math.PI * FREQUENCY * Math.cos(2 * Math.PI * FREQUENCY * t + i);

const sign = (x) => (x < 0 ? '-' : '+') + Math.abs(x).toFixed(4);

function usage() {
  process.stderr.write('usage: arm_sine.js [--steps N] [--robot NAME] [--kp KP] [--kd KD] [--timeout-ms MS] [ENDPOINT]\n');
  process.exit(2);
}

async function main() {
  let args;
  try {
    args = parseArgs({
      options: {
        steps: { type: 'string', default: '2000' },
        robot: { type: 'string' },
        kp: { type: 'string', default: '100' }, // N·m/rad
        kd: { type: 'string', default: '10' }, // N·m·s/rad
        'timeout-ms': { type: 'string', default: '5000' },
        help: { type: 'boolean', short: 'h' },
      },
      allowPositionals: true,
    });
  } catch (err) {
    process.stderr.write(`arm_sine.js: ${err.message}\n`);
    return usage();
  }
  const steps = Number(args.values.steps);
  const timeoutMs = Number(args.values['timeout-ms']);
  const kp = Number(args.values.kp);
  const kd = Number(args.values.kd);
  const bad = !Number.isInteger(steps) || steps < 0 || !(timeoutMs > 0) || !(kp >= 0) || !(kd >= 0);
  if (args.values.help || args.positionals.length > 1 || bad) {
    return usage();
  }
  const endpoint = args.positionals[0] || 'tcp://127.0.0.1:5555';

  const client = new Client(endpoint, { timeoutMs });
  try {
    const info = await client.getInfo();
    // The robot asked for, or else the first robot of the world.
    const robot = args.values.robot ? info.robots.find((r) => r.name === args.values.robot) : info.robots[0];
    if (!robot || robot.floatingBase || robot.joints.length === 0) {
      const named = args.values.robot ? ` named ${args.values.robot}` : '';
      process.stderr.write(`arm_sine.js: no fixed-base robot${named} with joints at ${endpoint}\n`);
      return 1;
    }
    const joints = robot.joints.length;
    const timestep = info.settings.timestep;
    console.log(`robot=${robot.name} joints=${joints} timestep=${timestep} steps=${steps} kp=${kp} kd=${kd}`);

    let state = await client.getState();
    const target = {
      robot: robot.name,
      mode: 'POSITION',
      position: new Array(joints),
      velocity: new Array(joints),
      kp: [kp],
      kd: [kd],
      gravityCompensation: true,
    };
    for (let step = 1; step <= steps; ++step) {
      // The implicit PD acts on the state at the end of the step: aim at the
      // target of that time.
      const t = state.time + timestep;
      for (let i = 0; i < joints; ++i) {
        target.position[i] = targetPosition(i, t);
        target.velocity[i] = targetVelocity(i, t);
      }
      state = (await client.step(1, { targets: [target], returnState: true })).state;
      if (step % PRINT_EVERY !== 0) continue;
      const arm = state.robots.find((r) => r.name === robot.name);
      if (!arm || arm.q.length < joints) {
        process.stderr.write(`arm_sine.js: the state has no q for ${robot.name}\n`);
        return 1;
      }
      let error = 0;
      for (let i = 0; i < joints; ++i) error = Math.max(error, Math.abs(targetPosition(i, state.time) - arm.q[i]));
      const q = arm.q.slice(0, joints).map(sign).join(',');
      console.log(`time=${state.time.toFixed(3)} q=${q} tracking_error=${error.toFixed(4)}`);
    }
    return 0;
  } catch (err) {
    process.stderr.write(`arm_sine.js: ${err.message}\n`);
    return 1;
  } finally {
    await client.close();
  }
}

main().then((code) => {
  process.exitCode = code;
});
