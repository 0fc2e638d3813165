#!/usr/bin/env bash
# Installs, on Debian 12 as root, every package hetsim's build, tests and tools need.
# Idempotent: does nothing (and needs no network) when everything is already installed.
set -euo pipefail
packages=(g++ cmake ninja-build libboost-graph-dev libboost-program-options-dev libabsl-dev
          libprotobuf-dev protobuf-compiler catch2 libbenchmark-dev clang libclang-rt-14-dev
          python3 python3-matplotlib)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
