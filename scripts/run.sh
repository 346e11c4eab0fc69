#!/bin/sh
# The main job: installs what is missing, builds, and runs the pyramid and
# pile benchmark scenes, printing their figures.
set -eu
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$(nproc 2>/dev/null || echo 2)" >/dev/null
./build/lcpsim-bench pyramid
./build/lcpsim-bench pile
