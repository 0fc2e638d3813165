#!/usr/bin/env bash
# Installs, on Debian 12 as root, every package hetsim's build, tests and tools need.
# Idempotent: does nothing (and needs no network) when everything is already installed.
set -euo pipefail
packages=(g++ cmake ninja-build libboost-graph-dev libboost-program-options-dev libabsl-dev
          libprotobuf-dev protobuf-compiler catch2 libbenchmark-dev clang clang-format libclang-rt-14-dev
          python3 python3-matplotlib python3-yaml chromium slurm-wlm munge pybind11-dev python3-protobuf
          python3-pytest python3-dev libtomlplusplus-dev libyaml-cpp-dev)
# node and npm: Debian's unless a node (with its npm) is installed already, e.g. from NodeSource.
command -v node >/dev/null || packages+=(nodejs)
command -v npm >/dev/null || packages+=(npm)
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
# The viewer tests' npm packages (tests/viewers: the DevTools trace engine, speedscope, playwright-core
# driving Debian's chromium), pinned by package-lock.json; reinstalled only when the lock changed.
viewers=$(cd "$(dirname "$0")/.." && pwd)/tests/viewers
if ! cmp -s "$viewers/package-lock.json" "$viewers/node_modules/.hetsim-package-lock.json"; then
  echo "setup: npm ci in tests/viewers" >&2
  (cd "$viewers" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
  cp "$viewers/package-lock.json" "$viewers/node_modules/.hetsim-package-lock.json"
fi
