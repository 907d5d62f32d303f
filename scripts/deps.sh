#!/usr/bin/env bash
# Installs the build and test dependencies on Debian bookworm (idempotent).
# Runs apt-get only when a package is missing; needs root (or sudo).
set -euo pipefail

PACKAGES=(build-essential cmake pkg-config clang clang-format git valgrind openssl curl
          libcurl4-openssl-dev libwebsockets-dev libcjson-dev libssl-dev
          libyaml-dev libcmocka-dev libnghttp2-dev)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ! command -v kubectl >/dev/null 2>&1; then
  missing+=(kubernetes-client)
fi
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "deps: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
