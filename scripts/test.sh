#!/usr/bin/env bash
# The project's whole test suite: installs dependencies, checks the source
# rules (scripts/check-src.sh) and the format (.clang-format, clang-format
# --dry-run --Werror), builds and runs every test twice, in the
# normal build and under AddressSanitizer + UndefinedBehaviorSanitizer, builds
# Release (so -O3 warnings cannot creep in), then every scripts/test-*.sh
# stage: the demo walk-through, the e2e suite against the emulator, the
# bounded fuzz run and the unit groups under valgrind. Warnings are errors
# in every build here (-DSTICKYVM_WERROR=ON).
# Usage: scripts/test.sh            (build dirs: build/ and build-asan/)
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/deps.sh
jobs=$(nproc)

run_suite() { # dir, extra cmake args...
  local dir=$1; shift
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSTICKYVM_WERROR=ON "$@" >/dev/null
  cmake --build "$dir" -j"$jobs"
  (cd "$dir" && ctest --output-on-failure -j"$jobs")
}

echo "== source rules"
scripts/check-src.sh
git ls-files '*.c' '*.h' | xargs clang-format --dry-run --Werror
echo "== normal build"
run_suite build
echo "== ASan + UBSan build"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  run_suite build-asan -DSTICKYVM_SANITIZE=ON
echo "== Release build"
cmake -S . -B build-release -DCMAKE_BUILD_TYPE=Release -DSTICKYVM_WERROR=ON >/dev/null
cmake --build build-release -j"$jobs" >/dev/null
for extra in scripts/test-*.sh; do
  [ -e "$extra" ] || continue
  echo "== $extra"
  "$extra"
done
echo "all test stages passed"
