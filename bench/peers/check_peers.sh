#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# check_peers.sh BUILD_DIR: the peers build lcpsim-bench's robots as lcpsim
# does. Where two engines share the physics a figure depends on, they must
# agree with lcpsim within the stated tolerance:
# - arm, 3000 steps: MuJoCo's RMS tracking error within 1 % of lcpsim's. The
#   error is set by the PD gains against the arm's gravity and inertia, so a
#   wrong joint frame, axis, mass, inertia, gain or target shows here.
# - quadruped, 2000 steps: Bullet's trunk sag below the standing height
#   within 0.3 mm of lcpsim's (2.6 mm): the PD knees hold the weight, so
#   wrong masses, centres of mass or leg frames move it.
# - chain, 3000 steps: ODE's and MuJoCo's mean contact count within 0.5 of
#   lcpsim's: the links' capsules and joint axes decide on how many points
#   the dropped chain lands and comes to rest.
# Missing peers are skipped. Only built with -DLCP_BENCH_PEERS=ON.
set -euo pipefail
build=${1:?usage: check_peers.sh BUILD_DIR}
peers=$build/bench/peers
failures=0

figure() { # figure KEY COMMAND...: the value of KEY in the command's line
  local key=$1
  shift
  "$@" | tr ' ' '\n' | sed -n "s/^$key=//p"
}

agree() { # agree WHAT ACTUAL EXPECTED TOLERANCE relative|absolute
  if awk -v a="$2" -v e="$3" -v t="$4" -v mode="$5" 'BEGIN {
      d = a - e; if (d < 0) d = -d
      bound = mode == "relative" ? t * (e < 0 ? -e : e) : t
      exit !(d <= bound) }'; then
    echo "ok: $1: $2 (lcpsim $3)"
  else
    echo "FAIL: $1: $2, lcpsim $3, tolerance $4 ($5)"
    failures=$((failures + 1))
  fi
}

if [ -x "$peers/lcpsim-bench-mujoco" ]; then
  expected=$(figure track_err_rad "$build/lcpsim-bench" arm -s 3000)
  agree "mujoco arm track_err_rad" "$(figure track_err_rad "$peers/lcpsim-bench-mujoco" arm -s 3000)" \
    "$expected" 0.01 relative
fi
if [ -x "$peers/lcpsim-bench-bullet" ]; then
  expected=$(figure height_err_m "$build/lcpsim-bench" quadruped -s 2000)
  agree "bullet quadruped height_err_m" \
    "$(figure height_err_m "$peers/lcpsim-bench-bullet" quadruped -s 2000)" "$expected" 0.0003 absolute
fi
expected=$(figure contacts "$build/lcpsim-bench" chain -s 3000)
for engine in ode mujoco; do
  [ -x "$peers/lcpsim-bench-$engine" ] || continue
  agree "$engine chain contacts" "$(figure contacts "$peers/lcpsim-bench-$engine" chain -s 3000)" \
    "$expected" 0.5 absolute
done
exit $((failures > 0))
