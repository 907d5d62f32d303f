#!/usr/bin/env bash
# Runs the demo walk-through once (scripts/demo.sh --once) against the
# local emulator and fails if any step fails. Build dir: build/ (or
# DEMO_BUILD_DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
env -u KUBECONFIG scripts/demo.sh --once --no-deps --build-dir "${DEMO_BUILD_DIR:-build}"
