#!/usr/bin/env python3
"""The exact 16K-GPU run (issue 43): `hetsim run examples/plan-llama3-405b.pbtxt --cluster
examples/cluster-16k-h100.pbtxt --exact`, each binary in turn per round (interleaved, so that a machine
shared with builds loads them alike). Prints per round and binary the user and system CPU (wait4), wall
and peak RSS with the load average, then per binary the sums of its user and system CPU and the ratio of
its user CPU to the first binary's,
and whether every binary's JSON report is the first one's less `wall_time_s`.

    python3 bench/exact_run.py OLD_HETSIM NEW_HETSIM [--rounds 3] [--examples examples]
"""
import argparse
import os
import re
import subprocess
import tempfile
import time

parser = argparse.ArgumentParser()
parser.add_argument("binaries", nargs="+")
parser.add_argument("--rounds", type=int, default=3)
parser.add_argument("--examples", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
args = parser.parse_args()

plan = os.path.join(args.examples, "plan-llama3-405b.pbtxt")
cluster = os.path.join(args.examples, "cluster-16k-h100.pbtxt")
user = {b: [] for b in args.binaries}
system = {b: [] for b in args.binaries}
reports = {}
with tempfile.TemporaryDirectory() as tmp:
    for r in range(args.rounds):
        line = [f"round {r + 1}, load {os.getloadavg()[0]:.1f}:"]
        for i, binary in enumerate(args.binaries):
            report = os.path.join(tmp, f"r{i}.json")
            start = time.perf_counter()
            p = subprocess.Popen([binary, "run", plan, "--cluster", cluster, "--exact", "--quiet", "--report", report],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            _, status, usage = os.wait4(p.pid, 0)
            wall = time.perf_counter() - start
            if os.waitstatus_to_exitcode(status) != 0:
                raise SystemExit(f"{binary}: exit {os.waitstatus_to_exitcode(status)}")
            user[binary].append(usage.ru_utime)
            system[binary].append(usage.ru_stime)
            with open(report) as f:
                reports[binary] = re.sub(r'"wall_time_s": *[0-9.eE+-]+', '"wall_time_s": X', f.read())
            line.append(f"{binary} {usage.ru_utime:.2f} s user, {usage.ru_stime:.2f} s sys, {wall:.1f} s wall, {usage.ru_maxrss / 1024:.0f} MiB;")
        print(" ".join(line), flush=True)
first = args.binaries[0]
for binary in args.binaries:
    same = "report identical" if reports[binary] == reports[first] else "REPORT DIFFERS"
    print(f"{binary}: {sum(user[binary]):.2f} s user in all, {sum(user[binary]) / sum(user[first]):.3f} of "
          f"{first} ({sum(system[binary]):.2f} s sys in all); {same}")
