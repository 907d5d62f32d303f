#!/usr/bin/env bash
# Builds the binaries the e2e suite runs (stickyvm-emulator,
# stickyvm-scheduler, stickyvm-apiserver, and the kubectl plugin
# kubectl-stickyvm) and runs e2e/run.sh against the
# local emulator - never against a cluster, whatever KUBECONFIG says (run
# e2e/run.sh yourself for that).
# Usage: scripts/test-e2e.sh          (build dir: build/, or E2E_BUILD_DIR)
set -euo pipefail
cd "$(dirname "$0")/.."

dir=${E2E_BUILD_DIR:-build}
jobs=$(nproc)
command -v kubectl >/dev/null || scripts/deps.sh
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSTICKYVM_WERROR=ON >/dev/null
cmake --build "$dir" -j"$jobs" --target stickyvm-emulator stickyvm-scheduler stickyvm-apiserver \
  kubectl-stickyvm
env -u KUBECONFIG e2e/run.sh --build-dir "$dir"
