// SPDX-License-Identifier: Apache-2.0
'use strict';
// The package as a user gets it: `npm pack` of this folder, the tarball
// installed into an empty project, and installed_ping.js run there against a
// live lcpsimd. The folder is packed from a copy (without node_modules and
// without the copied .proto), so that the test writes nothing into the source
// tree; the copy's "prepare" script takes the .proto from
// LCPSIM_PROTO_SOURCE, as it takes it from the repository's proto/ in a
// checkout.
//
// Environment (the ctest sets it): LCPSIMD, LCPSIM_NPM (npm),
// LCPSIM_PROTO_SOURCE (proto/lcpsim/v1/lcpsim.proto), LCPSIM_PACKAGE_WORK_DIR
// (made anew each run), LCPSIM_PROJECT_VERSION.

const test = require('node:test');
const assert = require('node:assert/strict');
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const PACKAGE_DIR = path.join(__dirname, '..');
const NEEDED = ['LCPSIMD', 'LCPSIM_NPM', 'LCPSIM_PROTO_SOURCE', 'LCPSIM_PACKAGE_WORK_DIR', 'LCPSIM_PROJECT_VERSION'];
const missing = NEEDED.filter((name) => !process.env[name]);
// What the tarball holds, no more: the package's "files", and what npm always adds.
const SHIPPED = ['LICENSE', 'README.md', 'arm_sine.js', 'lcpsim.js', 'package.json', 'proto/lcpsim/v1/lcpsim.proto',
  'scripted_session.js', 'scripts/copy-proto.js'];

function npm(args, cwd, env = process.env) {
  return execFileSync(process.env.LCPSIM_NPM, [...args, '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd,
    env,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
}

test('npm pack, install into an empty project, ping', { skip: missing.length > 0 && `${missing} not set` }, () => {
  const work = process.env.LCPSIM_PACKAGE_WORK_DIR;
  const version = process.env.LCPSIM_PROJECT_VERSION;
  fs.rmSync(work, { recursive: true, force: true });

  const folder = path.join(work, 'folder');
  const generated = [path.join(PACKAGE_DIR, 'node_modules'), path.join(PACKAGE_DIR, 'proto')];
  fs.cpSync(PACKAGE_DIR, folder, {
    recursive: true,
    filter: (source) => !generated.includes(source) && !source.endsWith('.tgz'),
  });
  const [packed] = JSON.parse(npm(['pack', '--json', '--pack-destination', work], folder));
  assert.equal(packed.filename, `lcpsim-${version}.tgz`);
  assert.deepEqual(packed.files.map((f) => f.path).sort(), SHIPPED);

  const project = path.join(work, 'project');
  fs.mkdirSync(project);
  fs.writeFileSync(path.join(project, 'package.json'),
    JSON.stringify({ name: 'lcpsim-package-test', version: '1.0.0', private: true }));
  npm(['install', '--prefer-offline', path.join(work, packed.filename)], project);
  const installed = path.join(project, 'node_modules', 'lcpsim');
  assert.deepEqual(fs.readFileSync(path.join(installed, 'proto', 'lcpsim', 'v1', 'lcpsim.proto')),
    fs.readFileSync(process.env.LCPSIM_PROTO_SOURCE), 'the tarball carries the repository\'s .proto');

  for (const file of ['installed_ping.js', 'live_daemon.js']) {
    fs.copyFileSync(path.join(__dirname, file), path.join(project, file));
  }
  const env = { ...process.env };
  delete env.NODE_PATH;
  delete env.LCPSIM_PROTO;
  const out = execFileSync(process.execPath, ['installed_ping.js'], {
    cwd: project,
    env,
    encoding: 'utf8',
    timeout: 120000,
  });
  assert.match(out, new RegExp(`^lcpsim ${version.replace(/\./g, '\\.')} from ${installed}: ping answered by `));
});
