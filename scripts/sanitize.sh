#!/usr/bin/env bash
# AddressSanitizer + UndefinedBehaviorSanitizer build of hetsim and its tests (-O1 with debug info), then
# the whole ctest suite on it. Benchmarks are left out (they time code, sanitizers distort that).
# With clang installed (and SKIP_FUZZ unset) the same build also links the fuzz targets, so their
# ctest tests fuzz.* (each target replays its committed corpus and regressions, then fuzzes for
# HETSIM_FUZZ_SECONDS) come with the suite: one sanitized build instead of two. Only the fuzz targets'
# own files carry coverage instrumentation here: on the libraries it slowed the whole suite 2-3x.
# scripts/fuzz.sh builds them with coverage everywhere for real fuzzing campaigns.
# Build folder: ${ASAN_BUILD_DIR:-build-asan}; jobs: ${JOBS:-$(nproc)}.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${ASAN_BUILD_DIR:-build-asan}
jobs=${JOBS:-$(nproc)}
targets=(hetsim hetsim_tests)
config=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" -DHETSIM_SANITIZE=ON
  -DHETSIM_BUILD_BENCH=OFF -DHETSIM_PYTHON=OFF)
if [ "${SKIP_FUZZ:-0}" != 1 ] && command -v clang++ >/dev/null; then
  export CXX=clang++
  config+=(-DHETSIM_BUILD_FUZZ=ON -DHETSIM_FUZZ_SECONDS="${HETSIM_FUZZ_SECONDS:-5}")
  targets+=(fuzz_load_binary fuzz_load_text fuzz_load_json fuzz_plan_sim fuzz_chakra fuzz_launch_line fuzz_nccl_log fuzz_torchtitan fuzz_nemo fuzz_deepspeed_config fuzz_calibrate_csv fuzz_report_html fuzz_api_args)
fi
cmake -S . -B "$build" -G Ninja "${config[@]}" >/dev/null
cmake --build "$build" -j "$jobs" --target "${targets[@]}"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
ctest --test-dir "$build" --output-on-failure -j "$jobs"
