// SPDX-License-Identifier: Apache-2.0
'use strict';
// The Node.js client and arm_sine.js against a live lcpsimd on ephemeral
// ports. LCPSIMD names the daemon binary (the ctest sets it); NODE_PATH may
// point at the node_modules that `npm ci` made, and LCPSIM_PROTO at the
// .proto when this folder has no copy of its own.

const test = require('node:test');
const assert = require('node:assert/strict');
const { execFile } = require('node:child_process');
const path = require('node:path');
const zmq = require('zeromq');
const { Client, StateStream, LcpsimError, TimeoutError } = require('../lcpsim');
const { startDaemon, stopDaemon, firstPublishedState } = require('./live_daemon');

const DAEMON = process.env.LCPSIMD;
const ARM_SINE = path.join(__dirname, '..', 'arm_sine.js');

function run(file, args, timeoutMs) {
  return new Promise((resolve) => {
    execFile(process.execPath, [file, ...args], { timeout: timeoutMs }, (err, stdout, stderr) => {
      resolve({ code: err ? (err.code ?? 1) : 0, stdout, stderr });
    });
  });
}

test('lcpsim.js against lcpsimd', { skip: !DAEMON && 'LCPSIMD is not set' }, async (t) => {
  const daemon = await startDaemon(DAEMON);
  const client = new Client(daemon.rep, { timeoutMs: 10000 });
  t.after(async () => {
    await client.close();
  });

  await t.test('Ping echoes the payload and names the server version', async () => {
    const reply = await client.ping(Buffer.from([0, 1, 2, 255]));
    assert.deepEqual([...reply.payload], [0, 1, 2, 255]);
    assert.ok(reply.serverVersion.length > 0);
  });

  await t.test('replies are matched to requests by id when several are in flight', async () => {
    const payloads = Array.from({ length: 20 }, (_, i) => Buffer.from(`call-${i}`));
    const replies = await Promise.all(payloads.map((p) => client.ping(p)));
    replies.forEach((r, i) => assert.equal(r.payload.toString(), `call-${i}`));
  });

  await t.test('a long Step: Ping is answered while it runs, and CancelStep stops it', async () => {
    const steps = 20000000;
    const stepping = client.step(steps, {}, { timeoutMs: 600000 });
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal((await client.ping(Buffer.from('meanwhile'))).payload.toString(), 'meanwhile');
    const cancel = await client.cancelStep();
    const step = await stepping;
    assert.equal(cancel.cancelled, true);
    assert.equal(cancel.stepsRequested, steps);
    assert.ok(cancel.stepsRun > 0 && cancel.stepsRun < steps);
    assert.equal(step.cancelled, true);
    assert.equal(step.stepsRun, cancel.stepsRun);
    assert.equal(step.stepCount, cancel.stepsRun);
    // Nothing runs now: nothing to cancel.
    assert.equal((await client.cancelStep()).cancelled, false);
    await client.reset();
  });

  let arm;
  await t.test('GetInfo lists the built-in fixed-base arm with its 7 joints', async () => {
    const info = await client.getInfo();
    arm = info.robots.find((r) => !r.floatingBase);
    assert.ok(arm, 'a fixed-base robot');
    assert.equal(arm.joints.length, 7);
    assert.ok(info.settings.timestep > 0);
    arm.joints.forEach((j, i) => assert.equal(j.index, i));
  });

  await t.test('a server error carries the status code and message; the client stays usable', async () => {
    await assert.rejects(client.setTarget({ robot: 'no-such-robot', mode: 'POSITION', position: [0] }), (err) => {
      assert.ok(err instanceof LcpsimError);
      assert.equal(err.code, 2);
      assert.equal(err.codeName, 'NOT_FOUND');
      assert.ok(err.serverMessage.length > 0);
      return true;
    });
    await assert.rejects(client.step(-1), (err) => err instanceof LcpsimError && err.codeName === 'INVALID_ARGUMENT');
    assert.equal((await client.ping(Buffer.from('still here'))).payload.toString(), 'still here');
  });

  await t.test('SetSettings by name: the contact settings, false and 0 included; unnamed ones unchanged', async () => {
    const { settings: defaults } = await client.getInfo();
    assert.equal(defaults.maxPushSpeed, 3);
    assert.equal(defaults.relaxIterations, 4);
    assert.equal(defaults.restitutionThreshold, 1);
    assert.equal(defaults.enforceVelocityLimits, true);
    let { settings } = await client.setSettings({
      maxPushSpeed: 0.5, relaxIterations: 0, restitutionThreshold: 0.3, enforceVelocityLimits: false,
    });
    assert.equal(settings.maxPushSpeed, 0.5);
    assert.equal(settings.relaxIterations, 0);
    assert.equal(settings.restitutionThreshold, 0.3);
    assert.equal(settings.enforceVelocityLimits, false);
    ({ settings } = await client.setSettings({ iterations: defaults.iterations }));
    assert.equal(settings.maxPushSpeed, 0.5);
    assert.equal(settings.enforceVelocityLimits, false);
    ({ settings } = await client.setSettings({
      maxPushSpeed: defaults.maxPushSpeed, relaxIterations: defaults.relaxIterations,
      restitutionThreshold: defaults.restitutionThreshold, enforceVelocityLimits: true,
    }));
    assert.deepEqual(settings, defaults);
    await assert.rejects(client.setSettings({ maxPushSpeed: -1 }),
      (err) => err.codeName === 'INVALID_ARGUMENT' && err.serverMessage.includes('max_push_speed'));
  });

  await t.test('Spawn takes a restitution in [0, 1]', async () => {
    const sphere = { type: 'SPHERE', radius: 0.1 };
    const pose = { position: { x: -1, y: 0, z: 1 } };
    const reply = await client.spawn({ name: 'bouncy', shape: sphere, pose, mass: 1, restitution: 0.5 });
    assert.equal(reply.name, 'bouncy');
    await client.remove('bouncy');
    await assert.rejects(client.spawn({ name: 'over', shape: sphere, pose, mass: 1, restitution: 1.5 }),
      (err) => err.codeName === 'INVALID_ARGUMENT' && err.serverMessage.includes('spawn.restitution'));
  });

  await t.test('the state stream publishes every k steps with a counting sequence', async () => {
    const stream = new StateStream(daemon.pub);
    const before = await client.getState();
    // A slow joiner: PUB drops what it sends before the subscription arrives,
    // so subscribe on the daemon, then step until the stream delivers.
    await client.subscribe(5);
    const received = [];
    const reader = (async () => {
      for await (const state of stream) {
        received.push(state);
        if (received.length === 3) break;
      }
    })();
    const deadline = Date.now() + 10000;
    while (received.length < 3 && Date.now() < deadline) {
      await client.step(5);
      await new Promise((r) => setTimeout(r, 20));
    }
    // Readings on the stream: each published state carries those asked for.
    await client.subscribe(1, { sensors: { energy: true } });
    const sensed = [];
    const sensedReader = (async () => {
      for await (const state of stream) {
        if (state.robots[0].energy) {
          sensed.push(state);
          break;
        }
      }
    })();
    const sensedDeadline = Date.now() + 10000;
    while (sensed.length === 0 && Date.now() < sensedDeadline) {
      await client.step(1);
      await new Promise((r) => setTimeout(r, 20));
    }
    await client.subscribe(0);
    stream.close();
    await reader.catch(() => {});
    await sensedReader.catch(() => {});
    assert.equal(sensed.length, 1, 'a published state with the energy asked for');
    assert.ok(sensed[0].robots[0].energy.potential !== 0);
    assert.equal(received.length, 3, 'three published states');
    for (let i = 0; i < received.length; ++i) {
      assert.ok(received[i].stepCount > before.stepCount);
      assert.equal(received[i].stepCount % 5, 0);
      assert.ok(received[i].sequence >= 1);
      if (i > 0) {
        assert.equal(received[i].sequence, received[i - 1].sequence + 1);
        assert.equal(received[i].stepCount, received[i - 1].stepCount + 5);
      }
    }
  });

  await t.test('arm_sine.js drives the arm in lockstep and exits 0', async () => {
    await client.reset();
    const start = await client.getState();
    const q0 = start.robots.find((r) => r.name === arm.name).q;
    const steps = 300;
    const result = await run(ARM_SINE, ['--steps', String(steps), '--robot', arm.name, daemon.rep], 120000);
    assert.equal(result.code, 0, `arm_sine.js failed: ${result.stderr}`);
    const lines = result.stdout.trim().split('\n');
    assert.match(lines[0], new RegExp(`^robot=${arm.name} joints=7 timestep=\\S+ steps=${steps} kp=100 kd=10$`));
    const stateLines = lines.filter((l) => l.startsWith('time='));
    assert.equal(stateLines.length, steps / 100);

    // The world advanced by exactly its steps and the arm moved towards the
    // sine targets: at t = 0.3 s, q*_i = 0.5 sin(0.3π + i).
    const end = await client.getState();
    assert.equal(end.stepCount - start.stepCount, steps);
    const q = end.robots.find((r) => r.name === arm.name).q;
    const moved = Math.max(...q.map((v, i) => Math.abs(v - q0[i])));
    assert.ok(moved > 0.1, `the arm moved ${moved} rad`);
    const last = /time=(\S+) q=(\S+) tracking_error=(\S+)/.exec(stateLines[stateLines.length - 1]);
    assert.ok(last, stateLines[stateLines.length - 1]);
    assert.deepEqual(
      last[2].split(',').map(Number),
      q.slice(0, 7).map((v) => Number(v.toFixed(4))),
      'the last printed q is the daemon state',
    );
    // kp = 100, kd = 10 leave the shoulder a lightly damped loop driven near
    // resonance (about 0.65 rad of error by linear analysis): bounded, not small.
    assert.ok(Number(last[3]) < 0.8, `tracking error ${last[3]} rad`);
  });

  await t.test('arm_sine.js with stiffer gains tracks the sine within 0.05 rad', async () => {
    await client.reset();
    const result = await run(ARM_SINE, ['--steps', '1000', '--kp', '1000', '--kd', '100', daemon.rep], 120000);
    assert.equal(result.code, 0, `arm_sine.js failed: ${result.stderr}`);
    const rows = result.stdout
      .split('\n')
      .map((l) => /^time=(\S+) q=\S+ tracking_error=(\S+)$/.exec(l))
      .filter(Boolean)
      .map((m) => ({ time: Number(m[1]), error: Number(m[2]) }));
    assert.equal(rows.length, 10);
    // Once the start-up transient has died out (2 s).
    const settled = rows.filter((r) => r.time >= 2.0);
    assert.ok(settled.length >= 3);
    const worst = Math.max(...settled.map((r) => r.error));
    assert.ok(worst < 0.05, `tracking error ${worst} rad`);
  });

  await t.test('SIGTERM stops the daemon with exit code 0', async () => {
    const { code, signal } = await stopDaemon(daemon.proc);
    assert.equal(signal, null);
    assert.equal(code, 0);
  });
});

// A daemon bound to the IPv6 loopback, as a pod reached by its AAAA record:
// requests and the state stream both connect to tcp://[::1]:PORT (the
// sockets need their ipv6 option before they connect).
test('an IPv6 endpoint serves requests and states', { skip: !DAEMON && 'LCPSIMD is not set' }, async (t) => {
  const probe = require('node:net').createServer();
  const hasIpv6 = await new Promise((resolve) => {
    probe.once('error', () => resolve(false));
    probe.listen(0, '::1', () => probe.close(() => resolve(true)));
  });
  if (!hasIpv6) return t.skip('no IPv6 loopback');
  const daemon = await startDaemon(DAEMON, ['--bind', 'tcp://[::1]:0', '--pub', 'tcp://[::1]:0']);
  const client = new Client(daemon.rep, { timeoutMs: 10000 });
  const stream = new StateStream(daemon.pub);
  t.after(async () => {
    await client.close();
    await stopDaemon(daemon.proc);
  });
  assert.match(daemon.rep, /^tcp:\/\/\[::1\]:\d+$/);
  assert.equal((await client.ping(Buffer.from('v6'))).payload.toString(), 'v6');
  const received = await firstPublishedState(client, stream);
  assert.ok(received, 'no state came over IPv6 within 10 s');
  assert.ok(received.robots.some((robot) => robot.name === 'arm7'));
});

test('a misspelt field is refused before anything is sent', async () => {
  const silent = new zmq.Router({ linger: 0 });
  await silent.bind('tcp://127.0.0.1:*');
  const client = new Client(silent.lastEndpoint, { timeoutMs: 200 });
  // `base` for `baseType`: protobufjs alone would drop it and load the robot
  // with the default base.
  await assert.rejects(client.call('loadModel', { urdfPath: 'x.urdf', base: 'BASE_FIXED' }), (err) =>
    err instanceof TypeError && err.message.includes("request.loadModel.base: lcpsim.v1.LoadModelRequest has no field 'base'") &&
    err.message.includes('baseType'));
  // Inside nested and repeated messages too.
  await assert.rejects(client.call('step', { steps: 1, targets: [{ robot: 'arm7', positon: [0] }] }), (err) =>
    err instanceof TypeError && err.message.startsWith('request.step.targets[0].positon:'));
  await assert.rejects(client.call('spawn', { shape: { type: 'SPHERE', radius: 0.1 }, pose: { position: { x: 0, y: 0, zz: 1 } } }),
    (err) => err instanceof TypeError && err.message.startsWith('request.spawn.pose.position.zz:'));
  await assert.rejects(client.call('noSuchCall', {}), (err) => err instanceof TypeError && err.message.includes("no field 'noSuchCall'"));
  await client.close();
  silent.close();
});

test('a call to an endpoint that never answers rejects with TimeoutError', async () => {
  const silent = new zmq.Router({ linger: 0 });
  await silent.bind('tcp://127.0.0.1:*');
  const client = new Client(silent.lastEndpoint, { timeoutMs: 200 });
  const started = Date.now();
  await assert.rejects(client.getInfo(), (err) => err instanceof TimeoutError && err.call === 'getInfo');
  const waited = Date.now() - started;
  assert.ok(waited >= 190 && waited < 5000, `waited ${waited} ms`);
  // A per-call timeout overrides the client's.
  await assert.rejects(client.ping('x', { timeoutMs: 50 }), TimeoutError);
  await client.close();
  silent.close();
});

test('arm_sine.js rejects bad arguments with exit code 2', async () => {
  const result = await run(ARM_SINE, ['--steps', '-3'], 10000);
  assert.equal(result.code, 2);
  assert.match(result.stderr, /usage/);
});
