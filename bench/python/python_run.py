"""What the Python layer costs: hetsim.run(plan, cluster) on messages against the same C++ call
(api::Invoke of the "run" call on the serialized inputs, timed inside the extension) in the same process, one call of each
in turn. Times are the calling thread's CPU time (hetsim runs in it, GIL released): on a machine shared
with other builds, wall time measures them. Prints per-call times and their ratio.

    PYTHONPATH=build/python python3 bench/python/python_run.py [PLAN CLUSTER] [--rounds R] [--calls N]
"""
import argparse
import statistics
import time

from google.protobuf import text_format

import hetsim
from hetsim import _hetsim, hetsim_pb2

parser = argparse.ArgumentParser()
parser.add_argument("plan", nargs="?", default="bench/python/plan-64gpu.pbtxt")
parser.add_argument("cluster", nargs="?", default="examples/cluster-a100-512.pbtxt")
parser.add_argument("--rounds", type=int, default=7)
parser.add_argument("--calls", type=int, default=5)
args = parser.parse_args()

plan = text_format.Parse(open(args.plan).read(), hetsim_pb2.Plan())
cluster = text_format.Parse(open(args.cluster).read(), hetsim_pb2.Cluster())
plan_bytes, cluster_bytes = plan.SerializeToString(), cluster.SerializeToString()
report = hetsim.run(plan, cluster)  # warm-up, and the figures of the plan
gpus = sum(s.mesh.node_count * s.mesh.gpus_per_node for s in plan.stages)

# One call of each in turn.
native, python = [], []
for _ in range(args.rounds * args.calls):
    native.append(_hetsim.time_run(("bytes", plan_bytes), ("bytes", cluster_bytes), 1))
    start = time.thread_time()
    hetsim.run(plan, cluster)
    python.append(time.thread_time() - start)

# The Python side's own work per call, measured alone: serialise the inputs, parse the Report back.
report_bytes = report.SerializeToString()
start = time.thread_time()
for _ in range(2000):
    plan.SerializeToString(), cluster.SerializeToString()
    hetsim_pb2.Report().ParseFromString(report_bytes)
own = (time.thread_time() - start) / 2000

print(f"plan {plan.name}: {gpus} GPUs, {len(plan.stages)} stages, {report.num_microbatches} microbatches, "
      f"{report.events_processed} events, iteration {report.iteration_time_ms:.3f} ms")
print(f"C++ run call  median {statistics.median(native) * 1e3:.2f} ms, min {min(native) * 1e3:.2f} ms per call")
print(f"hetsim.run    median {statistics.median(python) * 1e3:.2f} ms, min {min(python) * 1e3:.2f} ms per call")
print(f"Python-side serialisation per call {own * 1e6:.0f} us ({len(plan_bytes) + len(cluster_bytes)} bytes in, "
      f"{len(report_bytes)} bytes out): {own / statistics.median(native) * 100:.2f}% of the C++ call")
print(f"ratio Python / C++: of the medians {statistics.median(python) / statistics.median(native):.4f}, of the "
      f"minima {min(python) / min(native):.4f} over {len(native)} calls each")
