#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# install_consumer (ctest): installs the build into a temporary prefix and uses it as another
# project would.
#   1. cmake --install into $LCP_WORK_DIR/prefix; every header, library, package file, robot
#      and the .proto must be there, and the internal scenes.h must not;
#   2. starts the installed lcpsimd with its built-in world (it must find the installed arm7.urdf
#      from its own place) and pings it with the installed lcpsim-ping;
#   3. builds consumer/ with find_package(lcpsim), installs its program into the prefix's bin
#      and runs it against that daemon;
#   4. builds the same program with the flags pkg-config gives and runs it the same way.
# LCPSIM_ROBOTS_DIR is unset throughout: the installed programs find the robots by themselves.
# Environment (set by tests/install/CMakeLists.txt): LCP_BUILD_DIR, LCP_CONFIG, LCP_WORK_DIR,
# LCP_CONSUMER_SOURCE, LCP_CMAKE, LCP_CC, LCP_PKG_CONFIG, LCP_BINDIR, LCP_LIBDIR,
# LCP_INCLUDEDIR, LCP_DATADIR, LCP_WITH_DAEMON (1/0), LCP_SHARED (1/0), LCP_WERROR (ON/OFF).
set -eu
unset LCPSIM_ROBOTS_DIR
work=$LCP_WORK_DIR
prefix=$work/prefix
bin=$prefix/$LCP_BINDIR
daemon_pid=""

log() { printf 'install_consumer: %s\n' "$*"; }
fail() {
  printf 'install_consumer: FAILED: %s\n' "$*" >&2
  exit 1
}
# Runs a command with its output in $work/$1.log, shown when it fails.
run_logged() {
  name=$1
  shift
  "$@" >"$work/$name.log" 2>&1 || {
    cat "$work/$name.log" >&2
    fail "$name: $*"
  }
}
cleanup() {
  if [ -n "$daemon_pid" ]; then
    kill -TERM "$daemon_pid" 2>/dev/null || true
    wait "$daemon_pid" 2>/dev/null || true
  fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

rm -rf "$work"
mkdir -p "$work"

# ---- 1. the installed tree ----
log "cmake --install $LCP_BUILD_DIR --prefix $prefix"
run_logged install "$LCP_CMAKE" --install "$LCP_BUILD_DIR" --prefix "$prefix" --config "$LCP_CONFIG"
if [ "$LCP_SHARED" = 1 ]; then lib_suffix=so; else lib_suffix=a; fi
include=$LCP_INCLUDEDIR
libs="lcpsim lcpsim_model"
headers="$include/lcpsim/lcpsim.h $include/lcpsim/robot.h $include/lcpsim/urdf.h $include/lcpsim/export.h"
pc_files="lcpsim lcpsim-model"
programs=""
if [ "$LCP_WITH_DAEMON" = 1 ]; then
  libs="$libs lcpsim_proto lcpsim_client"
  headers="$headers $include/lcpsim/v1/lcpsim.pb-c.h $include/lcpsim_client.h"
  pc_files="$pc_files lcpsim-proto lcpsim-client"
  programs="lcpsimd lcpsim-ping"
fi
expected="$headers"
for l in $libs; do expected="$expected $LCP_LIBDIR/lib$l.$lib_suffix"; done
for p in $pc_files; do expected="$expected $LCP_LIBDIR/pkgconfig/$p.pc"; done
for p in $programs; do expected="$expected $LCP_BINDIR/$p"; done
for f in lcpsimConfig.cmake lcpsimConfigVersion.cmake lcpsimTargets.cmake; do
  expected="$expected $LCP_LIBDIR/cmake/lcpsim/$f"
done
for r in arm7 pendulum2 quadruped; do expected="$expected $LCP_DATADIR/lcpsim/robots/$r.urdf"; done
expected="$expected $LCP_DATADIR/lcpsim/proto/lcpsim/v1/lcpsim.proto"
missing=""
for f in $expected; do [ -e "$prefix/$f" ] || missing="$missing $f"; done
[ -z "$missing" ] || fail "not installed:$missing"
[ ! -e "$prefix/$include/lcpsim/scenes.h" ] || fail "the internal scenes.h is installed"
log "installed: $(cd "$prefix" && find . -type f | wc -l) files, all $(echo "$expected" | wc -w) expected ones among them"
robots=$(cd "$prefix/$LCP_DATADIR/lcpsim/robots" && pwd -P)

# ---- 2. the installed daemon ----
endpoint=""
if [ "$LCP_WITH_DAEMON" = 1 ]; then
  "$bin/lcpsimd" --bind tcp://127.0.0.1:0 --pub tcp://127.0.0.1:0 >"$work/lcpsimd.log" 2>&1 &
  daemon_pid=$!
  i=0
  until grep -q 'listening' "$work/lcpsimd.log" 2>/dev/null; do
    kill -0 "$daemon_pid" 2>/dev/null || fail "the installed lcpsimd exited: $(cat "$work/lcpsimd.log")"
    i=$((i + 1))
    [ $i -le 300 ] || fail "the installed lcpsimd printed no endpoints in 30 s"
    sleep 0.1
  done
  endpoint=$(sed -n 's/.*rep=\([^ ]*\).*/\1/p' "$work/lcpsimd.log" | head -n 1)
  log "installed lcpsimd serves its built-in world at $endpoint"
  run_logged ping "$bin/lcpsim-ping" --timeout-ms 5000 "$endpoint"
  log "$(cat "$work/ping.log")"
fi

# ---- 3. find_package(lcpsim) ----
log "consumer with find_package(lcpsim)"
run_logged cmake-configure "$LCP_CMAKE" -S "$LCP_CONSUMER_SOURCE" -B "$work/cmake-build" \
  -DCMAKE_C_COMPILER="$LCP_CC" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_INSTALL_BINDIR="$LCP_BINDIR" \
  -DCONSUMER_WERROR="$LCP_WERROR"
found=$(sed -n 's/^lcpsim_DIR:PATH=//p' "$work/cmake-build/CMakeCache.txt")
[ "$found" = "$prefix/$LCP_LIBDIR/cmake/lcpsim" ] || fail "find_package(lcpsim) found $found"
run_logged cmake-build "$LCP_CMAKE" --build "$work/cmake-build"
run_logged cmake-install "$LCP_CMAKE" --install "$work/cmake-build"
# shellcheck disable=SC2086 # no endpoint without the daemon
"$bin/lcpsim-consumer" $endpoint || fail "the find_package build's program"

# ---- 4. pkg-config ----
log "consumer with pkg-config"
PKG_CONFIG_PATH="$prefix/$LCP_LIBDIR/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
export PKG_CONFIG_PATH
modules="lcpsim lcpsim-model"
defines=""
if [ "$LCP_WITH_DAEMON" = 1 ]; then
  modules="$modules lcpsim-proto lcpsim-client"
  defines="-DCONSUMER_WITH_CLIENT"
fi
# shellcheck disable=SC2086
"$LCP_PKG_CONFIG" --exists --print-errors $modules || fail "pkg-config does not find$modules"
pc_robots=$("$LCP_PKG_CONFIG" --variable=robotsdir lcpsim-model)
[ "$(cd "$pc_robots" && pwd -P)" = "$robots" ] || fail "pkg-config's robotsdir is $pc_robots"
werror=""
[ "$LCP_WERROR" = ON ] && werror=-Werror
# shellcheck disable=SC2046,SC2086 # pkg-config's flags are words
run_logged pkg-config-build "$LCP_CC" -std=c17 -O2 -Wall -Wextra $werror $defines \
  "-DEXPECTED_ROBOTS_DIR=\"$pc_robots\"" $("$LCP_PKG_CONFIG" --cflags $modules) \
  "$LCP_CONSUMER_SOURCE/consumer.c" -o "$bin/lcpsim-consumer-pkg-config" \
  $("$LCP_PKG_CONFIG" --libs $modules) -lm
if [ "$LCP_SHARED" = 1 ]; then
  # A program built with pkg-config's flags carries no path to the libraries (the installed
  # lcpsimd and the find_package build do: they were run without this).
  LD_LIBRARY_PATH="$prefix/$LCP_LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export LD_LIBRARY_PATH
fi
# shellcheck disable=SC2086
"$bin/lcpsim-consumer-pkg-config" $endpoint || fail "the pkg-config build's program"
log "PASSED"
