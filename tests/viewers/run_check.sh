#!/usr/bin/env bash
# One viewer test of ctest (tests/viewers.cmake): KIND HETSIM OUT_DIR PLAN CLUSTER
#   devtools    the run's Chrome trace in the DevTools trace engine (devtools_trace.mjs)
#   speedscope  the run's Chrome trace in speedscope, in headless Chromium (speedscope_trace.mjs)
#   report      the run's --html report in headless Chromium (report_browser.mjs), with a screenshot
# Exits 77 (ctest: skipped) with the reason when node, the npm packages or Chromium are missing.
set -euo pipefail
kind=$1 hetsim=$2 out=$3 plan=$4 cluster=$5
here=$(cd "$(dirname "$0")" && pwd)
skip() { echo "SKIP: $*"; exit 77; }
command -v node >/dev/null || skip "node is not installed (scripts/setup.sh installs nodejs)"
[ -d "$here/node_modules/@paulirish/trace_engine" ] ||
  skip "tests/viewers/node_modules is missing (scripts/setup.sh runs npm ci there)"
if [ "$kind" != devtools ]; then
  [ -x "${HETSIM_CHROMIUM:-/usr/bin/chromium}" ] || skip "chromium is not installed (scripts/setup.sh installs it)"
fi
mkdir -p "$out"
name=$(basename "$plan" .pbtxt)
case $kind in
  devtools)
    "$hetsim" run "$plan" --cluster "$cluster" --trace "$out/$name.trace.json" --quiet --no-wall-time
    node "$here/devtools_trace.mjs" "$out/$name.trace.json" ;;
  speedscope)
    "$hetsim" run "$plan" --cluster "$cluster" --trace "$out/$name.trace.json" --quiet --no-wall-time
    node "$here/speedscope_trace.mjs" "$out/$name.trace.json" "$out/$name.speedscope.png" ;;
  report)
    "$hetsim" run "$plan" --cluster "$cluster" --html "$out/$name.html" --report "$out/$name.report.json" \
      --quiet --no-wall-time
    node "$here/report_browser.mjs" "$out/$name.html" "$out/$name.report.json" "$out/$name.report.png"
    echo "screenshot: $out/$name.report.png" ;;
  *) echo "run_check.sh: unknown kind $kind" >&2; exit 2 ;;
esac
