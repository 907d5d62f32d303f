#!/usr/bin/env bash
# Runs the demo walk-through once (scripts/demo.sh --once) against the
# local emulator and fails if any step fails (each step checks its own
# output and stops the demo when it lacks what it must show); first checks
# that `scripts/demo.sh --help` prints the usage and none of the script's
# code; last, that every chapter ran, chapter 7's node status, alert and
# evacuation included.
# Build dir: build/ (or DEMO_BUILD_DIR).
set -euo pipefail
cd "$(dirname "$0")/.."

help=$(scripts/demo.sh --help)
grep -q '^Usage: scripts/demo.sh ' <<<"$help" || { echo "demo --help: no usage line" >&2; exit 1; }
if grep -qE '^(set|source|ROOT=|cd) ' <<<"$help"; then
    echo "demo --help prints the script's code:" >&2
    grep -E '^(set|source|ROOT=|cd) ' <<<"$help" >&2
    exit 1
fi
out=$(mktemp)
trap 'rm -f "$out"' EXIT
env -u KUBECONFIG scripts/demo.sh --once --no-deps --build-dir "${DEMO_BUILD_DIR:-build}" | tee "$out"
for want in '==> 7. A node is lost: ' ' lost: Ready Unknown (NodeStatusUnknown)' \
    'stickyvm-apiserver https://127.0.0.1' ' up ' 'NODE-STATUS' 'StickyVMPinnedNodeNotReady firing' \
    'Repinned (server dry run)' \
    '--grace-period=0 --force' ' restored: Ready True' 'demo walk-through complete'; do
    grep -qF -- "$want" "$out" || { echo "test-demo: the demo's output lacks \"$want\"" >&2; exit 1; }
done
