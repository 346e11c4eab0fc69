// SPDX-License-Identifier: Apache-2.0
// Builds the viewer into one directory the daemon serves as it is, with nothing fetched at
// run time (the page works offline):
//   index.html, style.css    copied
//   viewer.js                src/main.js and everything it imports (three.js, protobufjs),
//                            bundled by esbuild
//   lcpsim.proto.json        the protocol as protobufjs reflection JSON, made here from the
//                            .proto by protobufjs's own parser; the bundle includes it too
//
// Usage: node scripts/build.mjs --proto PATH/lcpsim.proto --out DIR [--src DIR] [--dev]
//   --src  the viewer's sources (index.html, style.css, src/); default: this script's parent.
//          The packages come from node_modules beside this script's folder, so the build may
//          run from a copy (the CMake build runs npm ci in the build tree, not in the sources).
import { mkdirSync, readFileSync, writeFileSync, copyFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import protobuf from "protobufjs";
import * as esbuild from "esbuild";

const here = dirname(fileURLToPath(import.meta.url));
const packages = resolve(here, "..", "node_modules");

function argument(name, fallback) {
  const at = process.argv.indexOf(name);
  if (at < 0 && fallback !== undefined) return fallback;
  if (at < 0 || at + 1 >= process.argv.length) {
    console.error(`usage: node scripts/build.mjs --proto FILE --out DIR [--dev]; ${name} missing`);
    process.exit(2);
  }
  return process.argv[at + 1];
}
const protoPath = resolve(argument("--proto"));
const outDir = resolve(argument("--out"));
const root = resolve(argument("--src", resolve(here, "..")));
const development = process.argv.includes("--dev");

// keepCase: the page reads the fields by their .proto names (link_poses, normal_impulse).
const parsed = protobuf.parse(readFileSync(protoPath, "utf8"), { keepCase: true });
const descriptor = JSON.stringify(parsed.root.toJSON());

mkdirSync(outDir, { recursive: true });
writeFileSync(join(outDir, "lcpsim.proto.json"), descriptor + "\n");
for (const file of ["index.html", "style.css"]) copyFileSync(join(root, file), join(outDir, file));

// The descriptor enters the bundle as the module "lcpsim-proto-descriptor".
const descriptorModule = {
  name: "lcpsim-proto-descriptor",
  setup(build) {
    build.onResolve({ filter: /^lcpsim-proto-descriptor$/ }, (args) => ({
      path: args.path,
      namespace: "lcpsim-descriptor",
    }));
    build.onLoad({ filter: /.*/, namespace: "lcpsim-descriptor" }, () => ({
      contents: descriptor,
      loader: "json",
    }));
  },
};

await esbuild.build({
  entryPoints: [join(root, "src", "main.js")],
  bundle: true,
  format: "iife",
  platform: "browser",
  target: ["es2020"],
  minify: !development,
  sourcemap: development ? "inline" : false,
  legalComments: "linked",
  outfile: join(outDir, "viewer.js"),
  nodePaths: [packages],
  plugins: [descriptorModule],
  logLevel: "warning",
});
