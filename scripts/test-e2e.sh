#!/usr/bin/env bash
# Builds the binaries the e2e suite runs (stickyvm-emulator,
# stickyvm-scheduler, stickyvm-apiserver, and the kubectl plugin
# kubectl-stickyvm) and runs e2e/run.sh against the
# local emulator - never against a cluster, whatever KUBECONFIG says (run
# e2e/run.sh yourself for that). The build's output goes to
# <build dir>/e2e-build.log.
# Usage: scripts/test-e2e.sh          (build dir: build/, or E2E_BUILD_DIR)
set -euo pipefail
cd "$(dirname "$0")/.."

dir=${E2E_BUILD_DIR:-build}
jobs=$(nproc)
command -v kubectl >/dev/null || scripts/deps.sh
log=$dir/e2e-build.log
build() {
    cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSTICKYVM_WERROR=ON &&
        cmake --build "$dir" -j"$jobs" --target stickyvm-emulator stickyvm-scheduler stickyvm-apiserver \
            kubectl-stickyvm
}
mkdir -p "$dir"
if ! build >"$log" 2>&1; then
    echo "test-e2e: the build failed; the end of $log:" >&2
    tail -n 30 "$log" >&2
    exit 1
fi
env -u KUBECONFIG e2e/run.sh --build-dir "$dir"
