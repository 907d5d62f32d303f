#!/usr/bin/env bash
# Runs every UNIT test group of the normal build (build/, made by
# scripts/test.sh) under valgrind memcheck: any invalid access or definite /
# indirect leak fails the script. (Still-reachable blocks are allowed: the
# string intern pool of kube/codec/intern.h is permanent by design.)
# Integration groups are covered by the ASan+UBSan (LeakSanitizer) stage.
set -euo pipefail
cd "$(dirname "$0")/.."

build=${BUILD_DIR:-build}
[ -x "$build/stickyvm-tests" ] || { echo "test-valgrind: build $build first" >&2; exit 1; }
groups=$(cd "$build" && ctest -N -L unit | sed -n 's/^ *Test *#[0-9]*: //p')
failed=0
passed=0
for g in $groups; do
    if valgrind -q --leak-check=full --errors-for-leak-kinds=definite,indirect \
        --show-leak-kinds=definite,indirect --error-exitcode=99 \
        "$build/stickyvm-tests" "$g" > "$build/valgrind-$g.log" 2>&1; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        echo "valgrind: group $g failed (see $build/valgrind-$g.log):"
        tail -40 "$build/valgrind-$g.log"
    fi
done
echo "valgrind: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
