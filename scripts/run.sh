#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The main job: installs what is missing, builds, starts lcpsimd with its
# built-in world (ground, the 7-dof arm, a table, a box) on free ports, runs
# the Python arm_sine.py example against it — the arm follows sine targets
# under the in-engine PD controllers and its state is printed every 100
# steps — then stops the daemon with SIGTERM and checks that it exited 0.
# Extra arguments go to arm_sine.py (e.g. --steps 5000 --kp 100 --kd 10).
set -eu
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$(nproc 2>/dev/null || echo 2)" >/dev/null

log=$(mktemp)
trap 'rm -f "$log"' EXIT
./build/server/daemon/lcpsimd --bind tcp://127.0.0.1:0 --pub tcp://127.0.0.1:0 >"$log" 2>&1 &
daemon=$!
# The first line names the endpoints as bound.
endpoint=""
for _ in $(seq 100); do
  endpoint=$(sed -n '1s/.*rep=\([^ ]*\).*/\1/p' "$log")
  [ -n "$endpoint" ] && break
  if ! kill -0 "$daemon" 2>/dev/null; then
    cat "$log" >&2
    exit 1
  fi
  sleep 0.05
done
[ -n "$endpoint" ] || { echo "run: lcpsimd did not start" >&2; cat "$log" >&2; kill "$daemon"; exit 1; }
echo "run: $(head -n 1 "$log")"

# The scene's own gains (kp = 100, kd = 10) let the heavy shoulder lag by
# ~0.6 rad at 0.5 Hz; a real arm's gains track within ~0.03 rad.
status=0
/usr/bin/python3 client-examples/python/arm_sine.py \
  --kp 1000 --kd 100 "$@" "$endpoint" || status=$?

kill -TERM "$daemon"
daemon_status=0
wait "$daemon" || daemon_status=$?
echo "run: lcpsimd exited with status $daemon_status"
[ "$status" -eq 0 ] && [ "$daemon_status" -eq 0 ]
