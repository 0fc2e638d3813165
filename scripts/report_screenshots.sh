#!/usr/bin/env bash
# Regenerates the screenshots of docs/report.md (and the README's) from the bundled examples with the
# current build: the HTML reports of run (512-GPU and HAPT case), sweep and validate, and the 512-GPU
# trace in speedscope, opened in
# headless Chromium (tests/viewers/screenshot.mjs; scripts/setup.sh installs what it needs).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
hetsim=${HETSIM:-$root/build/hetsim}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
ex=$root/examples
shot() { node "$root/tests/viewers/screenshot.mjs" "$@"; }
"$hetsim" run "$ex/plan-512gpu.pbtxt" --cluster "$ex/cluster-512gpu.pbtxt" --html "$out/512.html" --quiet --no-wall-time
shot "$out/512.html" "$root/docs/report-512gpu.png"
shot "$out/512.html" "$root/docs/report-512gpu-zoom.png" --gantt 0.06 9
"$hetsim" run "$ex/plan-512gpu.pbtxt" --cluster "$ex/cluster-512gpu.pbtxt" --trace "$out/512.trace.json" --quiet --no-wall-time
node "$root/tests/viewers/speedscope_trace.mjs" "$out/512.trace.json" "$root/docs/report-speedscope.png"
"$hetsim" run "$ex/plan-hapt-case.pbtxt" --cluster "$ex/cluster-hapt-case.pbtxt" --faults "$ex/faults-straggler.pbtxt" \
  --html "$out/hapt.html" --quiet --no-wall-time
shot "$out/hapt.html" "$root/docs/report-hapt-case-straggler.png" --gantt 0.5 6
"$hetsim" run "$ex/plan-mixed-replicas.pbtxt" --cluster "$ex/cluster-mixed-cloud.pbtxt" --html "$out/mixed.html" \
  --quiet --no-wall-time
shot "$out/mixed.html" "$root/docs/report-mixed-replicas.png"
"$hetsim" run "$ex/plan-lab-pipelines.pbtxt" --cluster "$ex/cluster-lab-pcie.pbtxt" --html "$out/lab.html" \
  --quiet --no-wall-time
shot "$out/lab.html" "$root/docs/report-lab-pipelines.png"
"$hetsim" sweep "$ex/sweep-bandwidth.pbtxt" -o "$out/sweep.csv" --html "$out/sweep.html" --jobs 2
shot "$out/sweep.html" "$root/docs/report-sweep.png"
"$hetsim" validate "$ex/plan-hapt-case.pbtxt" --cluster "$ex/cluster-hapt-case.pbtxt" --top-k 6 \
  --html "$out/validate.html" >/dev/null
shot "$out/validate.html" "$root/docs/report-validate.png"
echo "wrote docs/report-*.png"
