#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
'use strict';
// scripted_session.js: one scripted session against a fresh lcpsimd serving
// its built-in world (the arm "arm7", the static "table", the free 0.5 kg
// "box"): load a quadruped, add IMUs, set states, push, randomise the
// dynamics, sense, snapshot and restore. It prints every state it reads in a
// canonical text form that the C (scripted_session.c) and Python
// (scripted_session.py) versions of this script print byte for byte the
// same: the daemon is deterministic, and the three clients must hand the same
// doubles to the user.
//
//   node scripted_session.js ENDPOINT QUADRUPED_URDF
//
// The script (the same constants in the three languages):
//  1. GetInfo; LoadModel QUADRUPED_URDF as "dog", floating base, base at
//     (0, 2, 0.6) m.
//  2. AddImu "wrist" on arm7/link7 at (0, 0, 0.05) m; AddImu "trunk_imu" on
//     dog/trunk with accel_noise 0.01 m/s², gyro_noise 0.001 rad/s, seed 7.
//  3. SetRobotState arm7 joint1 q = 0.3, joint2 q = 0.2, qd = 0.1;
//     SetRobotState dog base pose (0, 2, 0.5) m, identity, base twist linear
//     (0.1, 0, 0) m/s, angular 0; SetBodyState box at its position
//     + (0, 0, 0.05) m, its orientation, linear velocity 0, angular velocity
//     (0, 0, 1) rad/s.
//  4. Step 20 with targets: arm7 every joint POSITION q* = 0.1, kp = 100,
//     kd = 10; dog every joint POSITION q* = 0 (hip), 0.8 (thigh), -1.6
//     (calf), kp = 200, kd = 5. Print "A".
//  5. ApplyWrench dog base force (0, 50, 0) N, held; Step 24; clear it;
//     ApplyWrench arm7 link7 torque (0, 0, 2) N·m, local frame, next step
//     only; Step 1. Print "B".
//  6. SetDynamics box mass 2.0 kg, friction 0.6; dog trunk mass 8.8 kg (the
//     URDF's 8.0 kg + 10 %); arm7 joint3 damping 0.5 N·m·s/rad. Step 60 with
//     every sensor group and the contacts; print "C" (the Step's state) with
//     them.
//  7. SaveState; Step 10; print "D"; RestoreState; Step 10; print "E". D and
//     E must be equal (the script exits 1 if not).
// "A", "B", "D" and "E" come from a GetState after the steps (no sensors, no
// contacts).
//
// The canonical form: one line per value group, "<label> <path>[ <value>...]";
// a double is the 16 lowercase hex digits of its IEEE-754 bits, an integer is
// decimal. Per state: time, step_count; per robot (the state's order):
// robot.R.q, .qd, .applied_torque, .base_pose (px py pz qw qx qy qz),
// .base_twist (linear, angular), .link_poses and .frame_poses (7 per link or
// frame); per body: body.B.pose, body.B.twist. With the sensors also
// robot.R.qdd, .link_twists, .link_twists_local, .link_accelerations (6 per
// link: linear, angular), .joint_wrenches (12 per joint: world force, torque,
// local force, torque), .link_contact_wrenches (12 per link: normal force,
// torque, friction force, torque), robot.R.imu.NAME (specific_force,
// angular_rate), robot.R.energy (kinetic, potential); body.B.contact_wrench
// (12), body.B.energy; and solver_stats (pairs manifolds contacts rows
// iterations residual warm_started). With the contacts: "contacts N", then
// per contact "contact A B" position normal depth normal_impulse
// friction_impulse. A message the daemon left out prints as zeros, except an
// orientation, which prints as the identity (the protocol says an unset
// orientation is the identity; a quaternion of four zeros is taken the same
// way). A body without a name is "body.#ID".

const { Client } = require('./lcpsim');

const DOG_BASE = { x: 0.0, y: 2.0, z: 0.6 }; // m, where LoadModel puts the dog
const WRIST_SITE = { x: 0.0, y: 0.0, z: 0.05 }; // m, in link7's frame
const TRUNK_IMU_ACCEL_NOISE = 0.01;
const TRUNK_IMU_GYRO_NOISE = 0.001;
const TRUNK_IMU_SEED = 7;
const DOG_RESET_BASE = { x: 0.0, y: 2.0, z: 0.5 }; // m
const DOG_RESET_LINEAR = { x: 0.1, y: 0.0, z: 0.0 }; // m/s
const BOX_LIFT = 0.05; // m
const BOX_SPIN = { x: 0.0, y: 0.0, z: 1.0 }; // rad/s
const ARM_TARGET = 0.1;
const ARM_KP = 100.0;
const ARM_KD = 10.0;
const DOG_STANCE = { hip: 0.0, thigh: 0.8, calf: -1.6 }; // rad, by the joint name's part
const DOG_KP = 200.0;
const DOG_KD = 5.0;
const PUSH_FORCE = { x: 0.0, y: 50.0, z: 0.0 }; // N
const PUSH_STEPS = 24;
const TWIST_TORQUE = { x: 0.0, y: 0.0, z: 2.0 }; // N·m
const BOX_MASS = 2.0;
const BOX_FRICTION = 0.6;
const TRUNK_MASS = 8.0 * 1.1; // kg: the URDF's trunk mass + 10 % (GetInfo gives no link masses)
const JOINT3_DAMPING = 0.5; // N·m·s/rad
const SETTLE_STEPS = 20;
const SENSED_STEPS = 60;
const REPLAY_STEPS = 10;
const IDENTITY = { w: 1.0, x: 0.0, y: 0.0, z: 0.0 };
const ZERO = { x: 0.0, y: 0.0, z: 0.0 };
const ALL_SENSORS = {
  linkTwists: true,
  linkAccelerations: true,
  imus: true,
  jointWrenches: true,
  contactWrenches: true,
  energy: true,
  solverStats: true,
};

// ---- the canonical form ----

const bits = Buffer.alloc(8);
function hexDouble(value) {
  bits.writeDoubleLE(value);
  return bits.readBigUInt64LE().toString(16).padStart(16, '0');
}

// Absent messages come from the client as null.
const vec3 = (v) => [v?.x ?? 0, v?.y ?? 0, v?.z ?? 0];

// (w, x, y, z); an unset Quat or four zeros is the identity.
function orientation(q) {
  const values = [q?.w ?? 0, q?.x ?? 0, q?.y ?? 0, q?.z ?? 0];
  return values.every((v) => v === 0) ? [1, 0, 0, 0] : values;
}

const pose = (p) => [...vec3(p?.position), ...orientation(p?.orientation)];
const twist = (t) => [...vec3(t?.linear), ...vec3(t?.angular)]; // a Twist or an Acceleration
const wrench = (w) => [...vec3(w?.force), ...vec3(w?.torque)];
const contactWrench = (w) => [...wrench(w?.normal), ...wrench(w?.friction)];
const energy = (e) => [e?.kinetic ?? 0, e?.potential ?? 0];

// The state's lines in the canonical form (see the top of this file).
function canonical(label, state, { sensors = false, contacts = false } = {}) {
  const lines = [];
  const line = (path, doubles = [], words = []) =>
    lines.push([label, path, ...words.map(String), ...doubles.map(hexDouble)].join(' '));
  line('time', [state.time]);
  line('step_count', [], [state.stepCount]);
  for (const robot of state.robots) {
    const path = `robot.${robot.name}.`;
    line(`${path}q`, robot.q);
    line(`${path}qd`, robot.qd);
    line(`${path}applied_torque`, robot.appliedTorque);
    line(`${path}base_pose`, pose(robot.basePose));
    line(`${path}base_twist`, twist(robot.baseTwist));
    line(`${path}link_poses`, robot.linkPoses.flatMap(pose));
    line(`${path}frame_poses`, robot.framePoses.flatMap(pose));
    if (sensors) {
      line(`${path}qdd`, robot.qdd);
      line(`${path}link_twists`, robot.linkTwists.flatMap(twist));
      line(`${path}link_twists_local`, robot.linkTwistsLocal.flatMap(twist));
      line(`${path}link_accelerations`, robot.linkAccelerations.flatMap(twist));
      line(`${path}joint_wrenches`, robot.jointWrenches.flatMap((w) => [...wrench(w.world),
        ...wrench(w.local)]));
      line(`${path}link_contact_wrenches`, robot.linkContactWrenches.flatMap(contactWrench));
      for (const imu of robot.imus) {
        line(`${path}imu.${imu.name}`, [...vec3(imu.specificForce), ...vec3(imu.angularRate)]);
      }
      line(`${path}energy`, energy(robot.energy));
    }
  }
  for (const body of state.bodies) {
    const path = `body.${body.name || `#${body.id}`}.`;
    line(`${path}pose`, pose(body.pose));
    line(`${path}twist`, twist(body.twist));
    if (sensors) {
      line(`${path}contact_wrench`, contactWrench(body.contactWrench));
      line(`${path}energy`, energy(body.energy));
    }
  }
  if (contacts) {
    line('contacts', [], [state.contacts.length]);
    for (const c of state.contacts) {
      const values = [...vec3(c.position), ...vec3(c.normal), c.depth, c.normalImpulse,
        ...vec3(c.frictionImpulse)];
      line('contact', values, [c.a, c.b]);
    }
  }
  if (sensors) {
    const s = state.solverStats ?? {};
    const ints = [s.pairs, s.manifolds, s.contacts, s.rows, s.iterations].map((v) => v ?? 0);
    const residual = hexDouble(s.residual ?? 0);
    lines.push(`${label} solver_stats ${ints.join(' ')} ${residual} ${s.warmStarted ?? 0}`);
  }
  return lines;
}

const emit = (lines) => process.stdout.write(lines.map((l) => `${l}\n`).join(''));
const withoutLabel = (lines) => lines.map((l) => l.slice(l.indexOf(' ') + 1));

// ---- the session ----

async function session(sim, quadrupedUrdf) {
  // 1. The world, and a quadruped beside the arm.
  await sim.getInfo();
  const { robot: dog } = await sim.loadModel({
    urdfPath: quadrupedUrdf,
    name: 'dog',
    baseType: 'BASE_FLOATING',
    basePose: { position: DOG_BASE },
  });
  // 2. IMUs: a noiseless one at the wrist, a noisy one (seeded) in the trunk.
  await sim.addImu({ name: 'wrist', robot: 'arm7', link: 'link7', pose: { position: WRIST_SITE } });
  await sim.addImu({
    name: 'trunk_imu',
    robot: 'dog',
    link: 'trunk',
    accelNoise: TRUNK_IMU_ACCEL_NOISE,
    gyroNoise: TRUNK_IMU_GYRO_NOISE,
    seed: TRUNK_IMU_SEED,
  });
  // 3. States: two arm joints by name, the dog's base in the air moving
  //    along x, the box lifted off the table and spinning.
  await sim.setRobotState({
    robot: 'arm7',
    joints: [
      { name: 'joint1', position: 0.3 },
      { name: 'joint2', position: 0.2, velocity: 0.1 },
    ],
  });
  await sim.setRobotState({
    robot: 'dog',
    basePose: { position: DOG_RESET_BASE, orientation: IDENTITY },
    baseTwist: { linear: DOG_RESET_LINEAR, angular: ZERO },
  });
  const box = (await sim.getState()).bodies.find((b) => b.name === 'box');
  const [x, y, z] = vec3(box.pose?.position);
  const [qw, qx, qy, qz] = orientation(box.pose?.orientation);
  await sim.setBodyState({
    name: 'box',
    pose: { position: { x, y, z: z + BOX_LIFT }, orientation: { w: qw, x: qx, y: qy, z: qz } },
    twist: { linear: ZERO, angular: BOX_SPIN },
  });
  // 4. PD targets for both robots, applied with the first step.
  const part = (name) => Object.keys(DOG_STANCE).find((p) => name.includes(`_${p}_`));
  const stance = dog.joints.map((joint) => DOG_STANCE[part(joint.name)]);
  const targets = [
    { robot: 'arm7', mode: 'POSITION', position: [ARM_TARGET], kp: [ARM_KP], kd: [ARM_KD] },
    { robot: 'dog', mode: 'POSITION', position: stance, kp: [DOG_KP], kd: [DOG_KD] },
  ];
  await sim.step(SETTLE_STEPS, { targets });
  emit(canonical('A', await sim.getState()));
  // 5. A held lateral push on the dog's base, then a one-step twist of the wrist.
  const { holdId } = await sim.applyWrench({ target: 'dog', force: PUSH_FORCE, duration: 'HOLD' });
  await sim.step(PUSH_STEPS);
  await sim.applyWrench({ clear: holdId });
  await sim.applyWrench({ target: 'arm7', link: 'link7', torque: TWIST_TORQUE, frame: 'LOCAL' });
  await sim.step(1);
  emit(canonical('B', await sim.getState()));
  // 6. Randomised dynamics, then every sensor and the contacts.
  await sim.setDynamics({
    bodies: [
      { body: 'box', mass: BOX_MASS, friction: BOX_FRICTION },
      { robot: 'dog', link: 'trunk', mass: TRUNK_MASS },
    ],
    joints: [{ robot: 'arm7', joint: 'joint3', damping: JOINT3_DAMPING }],
  });
  const sensed = await sim.step(SENSED_STEPS,
    { returnState: true, includeContacts: true, sensors: ALL_SENSORS });
  emit(canonical('C', sensed.state, { sensors: true, contacts: true }));
  // 7. A snapshot, replayed: the same steps from it give the same state.
  const { snapshot } = await sim.saveState();
  await sim.step(REPLAY_STEPS);
  const first = canonical('D', await sim.getState());
  emit(first);
  await sim.restoreState({ snapshot });
  await sim.step(REPLAY_STEPS);
  const again = canonical('E', await sim.getState());
  emit(again);
  if (withoutLabel(first).join('\n') !== withoutLabel(again).join('\n')) {
    process.stderr.write('scripted_session.js: the replay from the snapshot (E) differs from ' +
      'the first run (D)\n');
    return 1;
  }
  return 0;
}

async function main() {
  if (process.argv.length !== 4) {
    process.stderr.write('usage: scripted_session.js ENDPOINT QUADRUPED_URDF\n');
    return 2;
  }
  const sim = new Client(process.argv[2], { timeoutMs: 30000 });
  try {
    return await session(sim, process.argv[3]);
  } catch (err) {
    process.stderr.write(`scripted_session.js: ${err.message}\n`);
    return 1;
  } finally {
    await sim.close();
  }
}

main().then((code) => {
  process.exitCode = code;
});
