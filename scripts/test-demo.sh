#!/usr/bin/env bash
# Runs the demo walk-through once (scripts/demo.sh --once) against the
# local emulator and fails if any step fails; first checks that
# `scripts/demo.sh --help` prints the usage and none of the script's code.
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
env -u KUBECONFIG scripts/demo.sh --once --no-deps --build-dir "${DEMO_BUILD_DIR:-build}"
