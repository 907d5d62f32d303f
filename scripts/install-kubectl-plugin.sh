#!/usr/bin/env bash
# Puts the kubectl plugin kubectl-stickyvm on PATH, so that `kubectl
# stickyvm pin|unpin|list|why` works: builds it (build dir: --build-dir,
# default build/) and installs it with `cmake --install` into PREFIX/bin
# (--prefix, default ~/.local; /usr/local needs root). Prints the PATH line
# to add when PREFIX/bin is not on PATH.
#
# Without installing, for this shell only:
#   export PATH=$PWD/build:$PATH        (after building kubectl-stickyvm)
#
# Usage: scripts/install-kubectl-plugin.sh [--prefix DIR] [--build-dir DIR]
set -euo pipefail
cd "$(dirname "$0")/.."

prefix=$HOME/.local
build_dir=build
while [ $# -gt 0 ]; do
    case $1 in
        --prefix) prefix=${2:?}; shift ;;
        --build-dir) build_dir=${2:?}; shift ;;
        -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "install-kubectl-plugin: unknown argument $1" >&2; exit 2 ;;
    esac
    shift
done
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build_dir" -j"$(nproc)" --target kubectl-stickyvm >/dev/null
cmake --install "$build_dir" --prefix "$prefix" --component Unspecified >/dev/null
echo "installed $prefix/bin/kubectl-stickyvm"
case ":$PATH:" in
    *":$prefix/bin:"*) kubectl plugin list 2>/dev/null | grep kubectl-stickyvm || true ;;
    *) echo "add it to PATH: export PATH=$prefix/bin:\$PATH" ;;
esac
