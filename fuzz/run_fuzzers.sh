#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs the libFuzzer harnesses of a build configured with -DLCP_FUZZ=ON, each
# for a bounded time, and fails when one of them finds a crash, a leak, a
# sanitizer report, a hang or a memory blow-up, printing the reproducer.
#   fuzz/run_fuzzers.sh BUILD_DIR [TARGET...]     (default: every harness built)
# LCP_FUZZ_SECONDS: seconds per harness (default 60). LCP_FUZZ_ARGS: more
# libFuzzer options (e.g. "-jobs=2 -workers=2").
# New inputs that reach new code go to BUILD_DIR/fuzz/work/TARGET (kept from
# run to run, not in the repository); findings go to
# BUILD_DIR/fuzz/findings/TARGET. A finding, once fixed, belongs in
# fuzz/regressions/TARGET (docs/fuzzing.md).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
[ $# -ge 1 ] || { echo "usage: $0 BUILD_DIR [TARGET...]" >&2; exit 2; }
build=$(cd "$1" && pwd)
shift
seconds=${LCP_FUZZ_SECONDS:-60}
targets=${*:-stl urdf scene request}
failed=""
for target in $targets; do
  fuzzer="$build/fuzz/fuzz_$target"
  if [ ! -x "$fuzzer" ]; then
    echo "== fuzz $target: $fuzzer not built (configure with -DLCP_FUZZ=ON)" >&2
    failed="$failed $target"
    continue
  fi
  work="$build/fuzz/work/$target"
  findings="$build/fuzz/findings/$target"
  log="$build/fuzz/fuzz_$target.log"
  mkdir -p "$work" "$findings"
  dict=""
  [ -f "$here/$target.dict" ] && dict="-dict=$here/$target.dict"
  echo "== fuzz $target: ${seconds} s"
  stamp="$build/fuzz/fuzz_$target.started"
  touch "$stamp"
  status=0
  # A single input running 20 s is a hang: lcpsim answers in milliseconds.
  # shellcheck disable=SC2086
  "$fuzzer" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$findings/" $dict ${LCP_FUZZ_ARGS:-} \
    "$work" "$here/corpus/$target" "$here/regressions/$target" >"$log" 2>&1 || status=$?
  grep -E "^(#[0-9]+[[:space:]]+DONE|stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb|new_units_added))" "$log" || true
  if [ "$status" -ne 0 ]; then
    echo "== fuzz $target FAILED (exit $status); the end of $log:"
    tail -n 60 "$log"
    # This run's findings (older ones stay, for the developer to look at).
    find "$findings" -type f -newer "$stamp" | while read -r finding; do
      echo "reproducer: $finding"
      echo "  replay it: $build/fuzz/fuzz_$target $finding"
    done
    failed="$failed $target"
  fi
done
if [ -n "$failed" ]; then
  echo "== fuzzing failed:$failed" >&2
  exit 1
fi
echo "== fuzzing found nothing"
