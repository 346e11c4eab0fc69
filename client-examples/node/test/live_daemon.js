// SPDX-License-Identifier: Apache-2.0
'use strict';
// Test support: an lcpsimd of the test's own on ephemeral loopback ports.

const { spawn } = require('node:child_process');
const readline = require('node:readline');

// Starts `daemon` (the lcpsimd executable) on ephemeral loopback ports, with
// `args` after those;
// resolves with { proc, rep, pub } once it has printed the endpoints it bound.
function startDaemon(daemon, args = []) {
  return new Promise((resolve, reject) => {
    const proc = spawn(daemon, ['--bind', 'tcp://127.0.0.1:0', '--pub', 'tcp://127.0.0.1:0', ...args], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const timer = setTimeout(() => reject(new Error('lcpsimd printed no endpoints within 10 s')), 10000);
    proc.on('error', reject);
    proc.on('exit', (code, signal) => reject(new Error(`lcpsimd exited early (${code ?? signal})`)));
    const lines = readline.createInterface({ input: proc.stdout });
    lines.once('line', (line) => {
      clearTimeout(timer);
      const m = /rep=(\S+)\s+pub=(\S+)/.exec(line);
      if (!m) return reject(new Error(`unexpected first line from lcpsimd: ${line}`));
      proc.removeAllListeners('exit');
      resolve({ proc, rep: m[1], pub: m[2] });
    });
  });
}

// SIGTERM; resolves with the exit { code, signal }.
function stopDaemon(proc) {
  return new Promise((resolve) => {
    proc.once('exit', (code, signal) => resolve({ code, signal }));
    proc.kill('SIGTERM');
  });
}

// The first State `stream` receives while `client` subscribes its world to
// every step and steps it (a subscription takes effect once the stream's
// connection is up, so it steps until one comes, at most timeoutMs); null if
// none came. Ends the subscription and closes the stream.
async function firstPublishedState(client, stream, timeoutMs = 10000) {
  await client.subscribe(1);
  let received = null;
  const reader = (async () => {
    for await (const state of stream) {
      received = state;
      break;
    }
  })();
  const deadline = Date.now() + timeoutMs;
  while (!received && Date.now() < deadline) {
    await client.step(1);
    await new Promise((r) => setTimeout(r, 20));
  }
  await client.subscribe(0);
  stream.close();
  await reader.catch(() => {});
  return received;
}

module.exports = { startDaemon, stopDaemon, firstPublishedState };
