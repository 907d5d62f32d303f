#!/usr/bin/env bash
# Installs the build and test dependencies on Debian bookworm (idempotent).
# Runs apt-get only when a package is missing; needs root (or sudo).
# Prints one line per step with its duration; apt-get's and dpkg's own
# output goes to a log file (DEPS_LOG, default $TMPDIR/stickyvm-deps.log),
# whose end is shown when a step fails.
set -euo pipefail

# prometheus: promtool for scripts/test-monitoring.sh, and the server the
# demo's "a node is lost" chapter starts on loopback; jq: the demo and e2e.
PACKAGES=(build-essential cmake pkg-config clang clang-format git valgrind openssl curl
          libcurl4-openssl-dev libwebsockets-dev libcjson-dev libssl-dev
          libyaml-dev libcmocka-dev libnghttp2-dev jq prometheus)
log=${DEPS_LOG:-${TMPDIR:-/tmp}/stickyvm-deps.log}

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ! command -v kubectl >/dev/null 2>&1; then
  missing+=(kubernetes-client)
fi
if [ ${#missing[@]} -eq 0 ]; then
  echo "deps: all ${#PACKAGES[@]} packages and kubectl are installed"
  exit 0
fi

# step TITLE COMMAND...: runs COMMAND with its output in the log; one line.
step() {
  local title=$1 start=$SECONDS
  shift
  if "$@" >>"$log" 2>&1; then
    echo "deps: $title ($((SECONDS - start))s)"
  else
    echo "deps: $title FAILED after $((SECONDS - start))s; the end of $log:" >&2
    tail -n 25 "$log" | sed 's/^/  /' >&2
    exit 1
  fi
}

apt=(env DEBIAN_FRONTEND=noninteractive apt-get -qq -o Dpkg::Use-Pty=0)
[ "$(id -u)" -eq 0 ] || apt=(sudo "${apt[@]}")
: >"$log"
echo "deps: installing ${missing[*]} (log: $log)"
step "apt-get update" "${apt[@]}" update
step "apt-get install (${#missing[@]} packages)" "${apt[@]}" install -y --no-install-recommends "${missing[@]}"
