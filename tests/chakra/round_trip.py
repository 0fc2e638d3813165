#!/usr/bin/env python3
"""`hetsim export chakra` then `hetsim run --chakra` against `hetsim run` on the plan, through the
command line as the README shows it: every rank file is one ASTRA-sim accepts (astra_rules.py, rules
read from its source), the iteration times agree within 1% (issue 18), and the replay's report and
trace are byte-identical when run twice.
Usage: round_trip.py HETSIM PLAN CLUSTER OUT_DIR [LIMIT_PERCENT] (default 1)"""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from astra_rules import check as astra_problems  # noqa: E402

hetsim, plan, cluster, out = sys.argv[1], sys.argv[2], sys.argv[3], Path(sys.argv[4])
limit_percent = float(sys.argv[5]) if len(sys.argv) > 5 else 1.0
shutil.rmtree(out, ignore_errors=True)
out.mkdir(parents=True)


def run(*args):
    r = subprocess.run([hetsim, *args], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"hetsim {' '.join(args)}: exit {r.returncode}\n{r.stderr}")
    return r


run("export", "chakra", plan, "--cluster", cluster, "--out", str(out / "traces"), "--prefix", "t", "--quiet")
problems = astra_problems(str(out / "traces"), "t")
if problems:
    sys.exit("the export breaks ASTRA-sim's rules:\n" + "\n".join(problems[:20]))
for k in (1, 2):
    r = run("run", "--chakra", str(out / "traces"), "--cluster", cluster, "--report", str(out / f"replay{k}.json"),
            "--trace", str(out / f"trace{k}.json"), "--no-wall-time", "--quiet")
    if "warning" in r.stderr:
        sys.exit(f"the exported traces needed a repair:\n{r.stderr}")
run("run", plan, "--cluster", cluster, "--report", str(out / "plan.json"), "--no-wall-time", "--quiet")
replay = json.loads((out / "replay1.json").read_text())["iteration_time_ms"]
direct = json.loads((out / "plan.json").read_text())["iteration_time_ms"]
err = abs(replay - direct) / direct
print(f"{plan}: run {direct:.3f} ms, export + run --chakra {replay:.3f} ms, {100 * err:.4f}% apart")
for a, b in (("replay1.json", "replay2.json"), ("trace1.json", "trace2.json")):
    if (out / a).read_bytes() != (out / b).read_bytes():
        sys.exit(f"{a} and {b} differ: the replay is not deterministic")
json.loads((out / "trace1.json").read_text())  # the trace is valid JSON
if 100 * err > limit_percent:
    sys.exit(f"round trip off by {100 * err:.3f}% (limit {limit_percent:g}%)")
shutil.rmtree(out)
