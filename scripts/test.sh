#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds, runs every test with ctest; then the same
# suite on the AddressSanitizer + UndefinedBehaviorSanitizer build (scripts/sanitize.sh), which with
# clang installed also builds the libFuzzer targets and runs each on its committed corpus
# (HETSIM_FUZZ_SECONDS each). SKIP_SANITIZE=1 or SKIP_FUZZ=1 leave a step out. docs/reliability.md
# gives the timings.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure -j "$(nproc)"
if [ "${SKIP_SANITIZE:-0}" != 1 ]; then
  scripts/sanitize.sh
fi
