#!/usr/bin/env bash
# Regenerates examples/validate-naive/: plans for HAPT's case-study cluster (the best plan of each of
# hetsim's four planners, and HAPT's runners-up), each carrying the prediction of the deliberately
# naive cost model (service/evaluation/naive_prediction.h: FLOPs over peak, free communication). Deterministic:
# one search thread, fixed micro-batch. Then `hetsim validate --plans examples/validate-naive/plans.txt
# --cluster examples/cluster-hapt-case.pbtxt` shows which plans the naive model misranks and why
# (docs/validation-of-planners.md).
set -euo pipefail
cd "$(dirname "$0")/.."
hetsim=${HETSIM:-build/hetsim}
out=examples/validate-naive
cluster=examples/cluster-hapt-case.pbtxt
model=$out/models/gpt-hapt-case.pbtxt  # outside the plans: --plans DIR reads every file of DIR as a plan
plan() {  # file name, then `hetsim plan` options
  local file=$1; shift
  "$hetsim" plan --model "$model" --cluster "$cluster" --micro-batch 1 --threads 1 --prediction naive \
    --out "$out/$file" "$@" >/dev/null
  echo "$file"
}
{
  echo "# The plans of this folder, for hetsim validate --plans (scripts/gen_validate_naive.sh writes them)."
  for planner in hapt tangram megatron alpa; do plan "$planner.pbtxt" --planner "$planner" --name "$planner"; done
  # --alternative K names the plan hapt-altK.
  for k in 2 3 4 5; do plan "hapt-alt$k.pbtxt" --planner hapt --name hapt --alternative "$k"; done
} >"$out/plans.txt"
