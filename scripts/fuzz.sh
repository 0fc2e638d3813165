#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (${FUZZ_BUILD_DIR:-build-fuzz}) and fuzzes each one, one at a
# time, for SECONDS (default 600). New interesting inputs go to ${FUZZ_WORK:-/tmp/hetsim-fuzz}/<target>;
# crashes, leaks and timeouts are written to tests/fuzz/regressions/<target>/ to be fixed and kept as
# regression inputs. Usage: scripts/fuzz.sh [SECONDS] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}; shift || true
targets=("$@")
((${#targets[@]})) || targets=(fuzz_load_binary fuzz_load_text fuzz_load_json fuzz_plan_sim fuzz_chakra fuzz_launch_line fuzz_nccl_log fuzz_torchtitan fuzz_nemo fuzz_deepspeed_config fuzz_calibrate_csv fuzz_report_html fuzz_api_args)
build=${FUZZ_BUILD_DIR:-build-fuzz}
work=${FUZZ_WORK:-/tmp/hetsim-fuzz}
san="-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer"
CXX=${CXX_FUZZ:-clang++} cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" -DCMAKE_CXX_FLAGS="$san" -DHETSIM_BUILD_FUZZ=ON \
  -DHETSIM_BUILD_BENCH=OFF >/dev/null
cmake --build "$build" -j "${JOBS:-$(nproc)}" --target "${targets[@]}"
for t in "${targets[@]}"; do
  mkdir -p "$work/$t" "tests/fuzz/regressions/$t"
  echo "fuzz: $t for ${seconds}s" >&2
  "$build/fuzz/$t" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 -print_final_stats=1 \
    -dict=tests/fuzz/hetsim.dict -artifact_prefix="tests/fuzz/regressions/$t/" "$work/$t" "tests/fuzz/corpus/$t" \
    2>&1 | tee "$work/$t.log" | grep -E "^#[0-9]+.*(DONE|pulse)|stat::|ERROR|SUMMARY" || true
done
