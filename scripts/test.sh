#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds, runs every test with ctest; then the same
# suite on the AddressSanitizer + UndefinedBehaviorSanitizer build (scripts/sanitize.sh), then a short
# fuzz run of every libFuzzer target on its committed corpus (HETSIM_FUZZ_SECONDS each, when clang is
# installed). SKIP_SANITIZE=1 or SKIP_FUZZ=1 leave a step out. docs/reliability.md gives the timings.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure -j "$(nproc)"
if [ "${SKIP_SANITIZE:-0}" != 1 ]; then
  scripts/sanitize.sh
fi
if [ "${SKIP_FUZZ:-0}" != 1 ] && command -v clang++ >/dev/null; then
  build=${FUZZ_BUILD_DIR:-build-fuzz}
  CXX=clang++ cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" \
    -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer" -DHETSIM_BUILD_FUZZ=ON \
    -DHETSIM_BUILD_BENCH=OFF -DHETSIM_PYTHON=OFF -DHETSIM_FUZZ_SECONDS="${HETSIM_FUZZ_SECONDS:-5}" >/dev/null
  cmake --build "$build" -j "$(nproc)" --target fuzz_load_binary fuzz_load_text fuzz_load_json fuzz_plan_sim fuzz_chakra
  ctest --test-dir "$build" --output-on-failure -R '^fuzz\.'
fi
