// SPDX-License-Identifier: Apache-2.0
'use strict';
// The package carries its own copy of the protocol, proto/lcpsim/v1/lcpsim.proto, which
// lcpsim.js loads at run time. npm runs this script as "prepare": before `npm pack` and
// `npm publish` (so the tarball carries the .proto as it is in the repository) and after a
// plain `npm install` or `npm ci` in this folder (so that a checkout runs as the package does).
//
// The source: LCPSIM_PROTO_SOURCE, else the repository's proto/lcpsim/v1/lcpsim.proto two
// folders up. Without one, a copy already in the package is kept (a package unpacked from its
// tarball); with neither, it fails.

const fs = require('node:fs');
const path = require('node:path');

const PACKAGE_DIR = path.resolve(__dirname, '..');
const RELATIVE = path.join('proto', 'lcpsim', 'v1', 'lcpsim.proto');
const TARGET = path.join(PACKAGE_DIR, RELATIVE);
const SOURCE = process.env.LCPSIM_PROTO_SOURCE || path.resolve(PACKAGE_DIR, '..', '..', RELATIVE);

if (fs.existsSync(SOURCE)) {
  fs.mkdirSync(path.dirname(TARGET), { recursive: true });
  fs.copyFileSync(SOURCE, TARGET);
} else if (!fs.existsSync(TARGET)) {
  console.error(`copy-proto: no ${SOURCE} to copy, and the package has no ${RELATIVE}; ` +
    'set LCPSIM_PROTO_SOURCE to the repository\'s proto/lcpsim/v1/lcpsim.proto');
  process.exit(1);
}
