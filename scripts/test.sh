#!/usr/bin/env bash
# The project's whole test suite: installs dependencies, then builds and runs
# every test twice, in the normal build and under AddressSanitizer +
# UndefinedBehaviorSanitizer, then every scripts/test-*.sh stage: the demo
# walk-through, the e2e suite against the emulator, the bounded fuzz run and
# the unit groups under valgrind.
# Usage: scripts/test.sh            (build dirs: build/ and build-asan/)
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/deps.sh
jobs=$(nproc)

run_suite() { # dir, extra cmake args...
  local dir=$1; shift
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
  cmake --build "$dir" -j"$jobs"
  (cd "$dir" && ctest --output-on-failure -j"$jobs")
}

echo "== normal build"
run_suite build
echo "== ASan + UBSan build"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  run_suite build-asan -DSTICKYVM_SANITIZE=ON
for extra in scripts/test-*.sh; do
  [ -e "$extra" ] || continue
  echo "== $extra"
  "$extra"
done
echo "all test stages passed"
