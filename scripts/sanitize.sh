#!/usr/bin/env bash
# AddressSanitizer + UndefinedBehaviorSanitizer build of hetsim and its tests (-O1 with debug info), then
# the whole ctest suite on it. Benchmarks are left out (they time code, sanitizers distort that).
# Build folder: ${ASAN_BUILD_DIR:-build-asan}; jobs: ${JOBS:-$(nproc)}.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${ASAN_BUILD_DIR:-build-asan}
jobs=${JOBS:-$(nproc)}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" -DHETSIM_SANITIZE=ON -DHETSIM_BUILD_BENCH=OFF -DHETSIM_PYTHON=OFF >/dev/null
cmake --build "$build" -j "$jobs" --target hetsim hetsim_tests
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
ctest --test-dir "$build" --output-on-failure -j "$jobs"
