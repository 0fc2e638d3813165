"""A planner's search loop calling hetsim: try tensor/data-parallel splits of one island, simulate each
candidate in a thread, keep the fastest. Run from the repository root with the package on the path:
    PYTHONPATH=build/python python3 examples/python/search_loop.py
"""
import concurrent.futures
import copy

import hetsim
from google.protobuf import text_format

CLUSTER = "examples/cluster-a100-512.pbtxt"
base = text_format.Parse(open("examples/plan-megatron-39b.pbtxt").read(), hetsim.hetsim_pb2.Plan())


def candidate(tp):
    """The 39B plan on 512 GPUs with tensor-parallel size tp (data parallel takes the rest)."""
    plan = copy.deepcopy(base)
    plan.name = f"tp{tp}"
    for stage in plan.stages:
        stage.tensor_parallel, stage.data_parallel = tp, 256 // tp
    plan.micro_batch_size = 4 * (256 // tp)  # 4 samples per replica
    return plan


def simulate(plan):
    try:
        report = hetsim.run(plan, CLUSTER)
    except hetsim.HetsimError as e:  # an invalid candidate: skip it, say why
        return plan.name, f"rejected: {e.field_path}: {e.problem}"
    if report.oom:  # simulated, but a stage does not fit in its GPUs' memory: skip it too
        s = max(report.stages, key=lambda s: s.peak_memory_gib - s.memory_capacity_gib)
        return plan.name, f"out of memory: stage {s.index} needs {s.peak_memory_gib:.1f} of {s.memory_capacity_gib:.0f} GiB"
    return plan.name, report.iteration_time_ms


with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:  # hetsim releases the GIL
    results = list(pool.map(simulate, [candidate(tp) for tp in (2, 4, 8)]))
for name, t in results:
    print(name, t if isinstance(t, str) else f"{t:.1f} ms")
best = min((r for r in results if not isinstance(r[1], str)), key=lambda r: r[1])
print("best:", best[0])
