#!/usr/bin/env bash
# The project's whole test suite: installs dependencies, checks the source
# rules (scripts/check-src.sh) and the format (.clang-format, clang-format
# --dry-run --Werror), builds and runs every test twice, in the
# normal build and under AddressSanitizer + UndefinedBehaviorSanitizer, builds
# Release (so -O3 warnings cannot creep in), then every scripts/test-*.sh
# stage: the demo walk-through, the e2e suite against the emulator, the
# bounded fuzz run, the unit groups under valgrind and the monitoring
# component's rules and dashboard checked with promtool. After the first
# build, docs/configuration.md's flag tables are checked against the
# binaries' --help (scripts/flag-docs.sh --check). Warnings are errors
# in every build here (-DSTICKYVM_WERROR=ON).
#
# Output: one line per stage with its duration, and the stage's summary
# (ctest's count, each e2e scenario, each fuzz target, valgrind's count).
# Each stage's whole output is kept in TEST_LOG_DIR (default build-logs/),
# one file per stage; when a stage fails the script names its log, shows
# its end (all of it with TEST_FULL_LOGS=1, as .ci/run asks) and stops.
# Usage: scripts/test.sh            (build dirs: build/, build-asan/, build-release/, build-fuzz/)
set -euo pipefail
cd "$(dirname "$0")/.."

jobs=$(nproc)
logs=${TEST_LOG_DIR:-build-logs}
mkdir -p "$logs"
logs=$(cd "$logs" && pwd)
rm -f "$logs"/*.log

# stage NAME SUMMARY_REGEX COMMAND...: runs COMMAND with its output in
# $logs/NAME.log; prints one line, then the log's lines matching
# SUMMARY_REGEX (none when empty). A failure stops the script.
stage() {
  local name=$1 pattern=$2 log=$logs/$1.log start=$SECONDS
  shift 2
  if "$@" >"$log" 2>&1; then
    printf '%-16s ok   %4ss\n' "$name" $((SECONDS - start))
    if [ -n "$pattern" ]; then grep -E "$pattern" "$log" | sed 's/^/    /' || true; fi
    return 0
  fi
  printf '%-16s FAIL %4ss   full log: %s\n' "$name" $((SECONDS - start)) "$log"
  if [ "${TEST_FULL_LOGS:-0}" = 1 ]; then
    sed 's/^/    /' "$log"
  else
    tail -n 40 "$log" | sed 's/^/    /'
    echo "(the last 40 lines; all of them in $log)"
  fi
  exit 1
}

# (Functions run by stage run in an `if`, where set -e does not hold: each
# joins its commands with &&.)
source_rules() {
  scripts/check-src.sh && git ls-files '*.c' '*.h' | xargs clang-format --dry-run --Werror
}

build() { # dir, extra cmake args...
  local dir=$1
  shift
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSTICKYVM_WERROR=ON "$@" &&
    cmake --build "$dir" -j"$jobs"
}

run_ctest() { # dir
  (cd "$1" && ctest --output-on-failure -j"$jobs")
}

CTEST_SUMMARY='tests passed|tests failed|^Total Test time'
stage deps '^deps: installing|^deps: apt' scripts/deps.sh
stage source-rules '' source_rules
stage build '' build build
stage flag-docs '' scripts/flag-docs.sh --check build
stage tests "$CTEST_SUMMARY" run_ctest build
stage build-asan '' build build-asan -DSTICKYVM_SANITIZE=ON
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  stage tests-asan "$CTEST_SUMMARY" run_ctest build-asan
stage build-release '' build build-release -DCMAKE_BUILD_TYPE=Release
for extra in scripts/test-*.sh; do
  [ -e "$extra" ] || continue
  name=$(basename "$extra" .sh)
  case $name in
    test-e2e) summary='^(ok|FAIL) |[0-9]+ passed, [0-9]+ failed$' ;;
    test-fuzz) summary='^fuzz: [a-z_]+: ' ;;
    test-valgrind) summary='^valgrind: [0-9]+ passed' ;;
    test-monitoring) summary='^monitoring: ' ;;
    *) summary='' ;;
  esac
  stage "${name#test-}" "$summary" "$extra"
done
echo "all test stages passed (logs: $logs/)"
