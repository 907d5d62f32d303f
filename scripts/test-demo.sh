#!/usr/bin/env bash
# Runs the demo walk-through once (scripts/demo.sh --once) against the
# local emulator and fails if any step fails (each step checks its own
# output and stops the demo when it lacks what it must show); first checks
# that `scripts/demo.sh --help` prints the usage and none of the script's
# code; then, that every chapter ran, chapter 7's node status, alert and
# evacuation included, and that docs/stickyvm.md's "Real output (the
# demo)" blocks are what this run printed (scripts/check-doc-output.sh);
# last, how a running demo (--cluster-only) ends:
# Ctrl-C (SIGINT to its whole process group, as a terminal sends it) stops
# it quietly with "stopped" and exit status 130 (or 0), its files removed;
# an emulator that dies on its own (SIGKILL) is an error, exit status 1,
# its log kept.
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
# docs/stickyvm.md's "Real output (the demo)" is this run's output
scripts/check-doc-output.sh "$out"

# demo_running OUT: starts scripts/demo.sh --cluster-only in its own process
# group (a terminal's foreground job), output to OUT; DEMO_PID; waits until
# it keeps running, and sets DEMO_DIR (its files) from its "logs:" line.
demo_running() {
    setsid env -u KUBECONFIG scripts/demo.sh --cluster-only --no-deps \
        --build-dir "${DEMO_BUILD_DIR:-build}" >"$1" 2>&1 &
    DEMO_PID=$!
    for _ in $(seq 1 1200); do
        grep -q 'The demo keeps running' "$1" && break
        kill -0 "$DEMO_PID" 2>/dev/null || break
        sleep 0.1
    done
    grep -q 'The demo keeps running' "$1" || { cat "$1" >&2; echo "test-demo: the demo did not start" >&2; exit 1; }
    DEMO_DIR=$(sed -n 's|^ *logs: *\(/.*\)/\*\.log$|\1|p' "$1" | head -n1)
    [ -d "$DEMO_DIR" ] || { echo "test-demo: no logs directory in the demo's output" >&2; exit 1; }
}
# demo_status: DEMO_PID's exit status into ST (it must end within 60 s).
demo_status() {
    for _ in $(seq 1 600); do
        kill -0 "$DEMO_PID" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$DEMO_PID" 2>/dev/null; then
        echo "test-demo: the demo did not stop" >&2
        kill -KILL -- -"$DEMO_PID"
        exit 1
    fi
    ST=0
    wait "$DEMO_PID" || ST=$?
}

# Ctrl-C: every process of the demo gets SIGINT
demo_running "$out"
kill -INT -- -"$DEMO_PID"
demo_status
st=$ST
if { [ "$st" != 130 ] && [ "$st" != 0 ]; } || ! grep -qx 'stopped' "$out" || grep -q 'error' "$out" ||
    [ -e "$DEMO_DIR" ]; then
    cat "$out" >&2
    echo "test-demo: Ctrl-C: exit status $st (want 130 or 0), 'stopped', no error, $DEMO_DIR removed" >&2
    exit 1
fi
echo "test-demo: Ctrl-C stops the demo quietly (exit status $st, 'stopped')"

# the emulator dies on its own: an error, its log kept
demo_running "$out"
kill -KILL "$(cat "$DEMO_DIR/pids/emulator")"
demo_status
st=$ST
if [ "$st" != 1 ] || ! grep -q "error: the emulator stopped (exit status 137; see $DEMO_DIR/emulator.log)" "$out" ||
    [ ! -s "$DEMO_DIR/emulator.log" ]; then
    cat "$out" >&2
    echo "test-demo: a dead emulator: exit status $st (want 1), the error, $DEMO_DIR/emulator.log kept" >&2
    exit 1
fi
rm -rf "$DEMO_DIR"
echo "test-demo: an emulator that dies is an error, its log kept"
