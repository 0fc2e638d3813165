#!/usr/bin/env python3
"""What a whole `hetsim collective` process costs (issue 43): process start, cluster load, the estimates
and the simulation, as a user runs it. The 1 GiB all-reduce on 512 GPUs by default (`auto`) is the case
set side by side with ASTRA-sim (docs/performance.md); `--help` is the process start alone and 8 GPUs
the start plus the cluster load. Every binary runs every case in turn, repeated (interleaved, so that a
machine shared with builds loads them alike); prints per case and binary the median CPU (user + system,
wait4) and wall over the repetitions, and the load average. The cluster is the session-33 experiment's
(H100 nodes, 8 GPUs on NVSwitch at 3600 Gb/s, 8 x 400 Gb/s NICs, full-bisection fat tree of 16 nodes per
leaf, 64 nodes), written to a temporary file.

    python3 bench/process_collective.py build/hetsim [OTHER_HETSIM ...] [--reps 30]
"""
import argparse
import os
import statistics
import subprocess
import tempfile
import time

CLUSTER = """name: "h100-fat-tree-64-nodes"
gpu_types { name: "h100-sxm" preset: "H100-SXM" }
node_types {
  name: "dgx-h100"
  gpu_type: "h100-sxm"
  gpus_per_node: 8
  intra_node_fabric: NVSWITCH
  intra_node_bandwidth_gbps: 3600
  intra_node_latency_ns: 1000
}
islands {
  name: "h100"
  node_type: "dgx-h100"
  node_count: 64
  fabric: INFINIBAND
  topology: FAT_TREE
  nics_per_node: 8
  nic_bandwidth_gbps: 400
  nic_latency_ns: 1000
  switch_latency_ns: 130
  oversubscription: 1
  nodes_per_leaf: 16
}
"""

parser = argparse.ArgumentParser()
parser.add_argument("binaries", nargs="+")
parser.add_argument("--reps", type=int, default=30)
args = parser.parse_args()

with tempfile.TemporaryDirectory() as tmp:
    cluster = os.path.join(tmp, "cluster-h100-64.pbtxt")
    with open(cluster, "w") as f:
        f.write(CLUSTER)
    collective = ["collective", "-c", cluster, "--op", "all-reduce", "--bytes", "1GiB"]
    cases = {"--help": ["--help"], "8 GPUs": collective + ["--gpus", "0-7"],
             "512 GPUs": collective + ["--gpus", "0-511"]}
    cpu, wall, loads = {}, {}, []
    for _ in range(args.reps):
        for name, case in cases.items():
            for binary in args.binaries:
                loads.append(os.getloadavg()[0])
                start = time.perf_counter()
                p = subprocess.Popen([binary] + case, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                _, status, usage = os.wait4(p.pid, 0)
                wall.setdefault((name, binary), []).append(time.perf_counter() - start)
                cpu.setdefault((name, binary), []).append(usage.ru_utime + usage.ru_stime)
                if os.waitstatus_to_exitcode(status) != 0:
                    raise SystemExit(f"{binary} {' '.join(case)}: exit {os.waitstatus_to_exitcode(status)}")
    print(f"medians of {args.reps} interleaved runs; load average (1 min) {min(loads):.1f}-{max(loads):.1f}")
    print(f"{'case':10s} {'CPU ms':>8s} {'wall ms':>8s}  binary")
    for (name, binary), times in cpu.items():
        print(f"{name:10s} {1e3 * statistics.median(times):8.2f} {1e3 * statistics.median(wall[name, binary]):8.2f}"
              f"  {binary}")
