// SPDX-License-Identifier: Apache-2.0
'use strict';
// Run by test_package.js in an empty project that has installed the lcpsim
// tarball, beside a copy of live_daemon.js: requires the package by name,
// checks that it is the project's copy and loads the .proto it carries, and
// pings and steps a live lcpsimd (LCPSIMD) through it. Prints
// "lcpsim VERSION from DIR: ..." and exits 0, or fails.

const assert = require('node:assert/strict');
const path = require('node:path');
const { startDaemon, stopDaemon } = require('./live_daemon');

async function main() {
  const installed = path.join(__dirname, 'node_modules', 'lcpsim');
  assert.equal(require.resolve('lcpsim'), path.join(installed, 'lcpsim.js'));
  const lcpsim = require('lcpsim');
  const { version } = require('lcpsim/package.json');
  assert.equal(lcpsim.DEFAULT_PROTO, path.join(installed, 'proto', 'lcpsim', 'v1', 'lcpsim.proto'));
  assert.equal(process.env.LCPSIM_PROTO, undefined, 'the package must do without LCPSIM_PROTO');

  const daemon = await startDaemon(process.env.LCPSIMD);
  let reply;
  try {
    const client = new lcpsim.Client(daemon.rep, { timeoutMs: 20000 });
    try {
      reply = await client.ping(Buffer.from('installed'));
      assert.equal(reply.payload.toString(), 'installed');
      const { state } = await client.step(1, { returnState: true });
      assert.equal(state.stepCount, 1);
    } finally {
      await client.close();
    }
  } finally {
    const exit = await stopDaemon(daemon.proc);
    assert.deepEqual(exit, { code: 0, signal: null });
  }
  console.log(`lcpsim ${version} from ${installed}: ping answered by ${reply.serverVersion}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
