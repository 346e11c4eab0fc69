#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The whole test suite, twice: a normal build and an AddressSanitizer +
# UndefinedBehaviorSanitizer build, both with warnings as errors (LCP_WERROR);
# then the libFuzzer harnesses (fuzz/), built with clang in the sanitizer
# configuration, each run for LCP_FUZZ_SECONDS (default 30; 0 skips them).
# Installs what is missing first.
set -eu
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
jobs=$(nproc 2>/dev/null || echo 2)
for variant in release asan; do
  dir=build
  flags="-DCMAKE_BUILD_TYPE=RelWithDebInfo -DLCP_WERROR=ON"
  if [ "$variant" = asan ]; then
    dir=build-asan
    flags="-DCMAKE_BUILD_TYPE=Debug -DLCP_SANITIZE=ON -DLCP_WERROR=ON"
  fi
  echo "== $variant build ($dir)"
  # shellcheck disable=SC2086
  cmake -S . -B "$dir" $flags >/dev/null
  cmake --build "$dir" -j "$jobs" >/dev/null
  echo "== $variant tests"
  (cd "$dir" && ctest --output-on-failure -j "$jobs")
done
echo "== all tests passed in both builds"
fuzz_seconds=${LCP_FUZZ_SECONDS:-30}
if [ "$fuzz_seconds" -gt 0 ]; then
  echo "== fuzz build (build-fuzz, clang)"
  CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLCP_FUZZ=ON \
    -DLCP_WERROR=ON -DLCP_BUILD_TESTS=OFF -DLCP_BUILD_BENCH=OFF >/dev/null
  cmake --build build-fuzz -j "$jobs" --target fuzzers >/dev/null
  LCP_FUZZ_SECONDS=$fuzz_seconds ./fuzz/run_fuzzers.sh build-fuzz
fi
