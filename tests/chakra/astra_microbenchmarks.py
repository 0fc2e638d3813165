#!/usr/bin/env python3
"""ASTRA-sim's own Chakra traces, the all-gather and reduce-scatter microbenchmarks on 4 NPUs
(astra-sim/astra-sim, examples/workload/microbenchmarks/{all_gather,reduce_scatter}/4npus_1MB/*.et,
commit cb9c7d30e44ef2d2c9031c8c9b0af9d089b3abf0, written by its generator_scripts/*.py), rebuilt
here node for node and checked byte for byte against the SHA-256 of ASTRA-sim's files, then run
through `hetsim run --chakra` on a cluster of 4 or more GPUs.

Both write comm_size = 1 MiB. ASTRA-sim's Ring reads it as each rank's input: the all-gather sends
1 MiB per step (3 steps: 3 MiB per rank), the reduce-scatter 1/4 MiB per step (3/4 MiB per rank).
With hetsim following that reading the all-gather takes 4 times the reduce-scatter's transfer time
(2.8 times in all on the HAPT cluster, where latency counts); read as the gathered output (hetsim
before issue 41) they took the same.
Usage: astra_microbenchmarks.py HETSIM CLUSTER OUT_DIR"""
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from astra_rules import check as astra_problems  # noqa: E402
from chakra_wire import COLL, node, stream  # noqa: E402

ALL_GATHER, REDUCE_SCATTER = 2, 7
SHA256 = {
    "all_gather": ["c385570d79b3aa0dd74bae04e49b4e9845c8ac869963ea6ceefd5042dc8f93b0",
                   "6671b66d0e75bd458d386eef5b0357e783c7a3147c477ebacb51d2c473fd689b",
                   "6d9e4c0512dcbee8f8806137e463962fd802196a22d47a8428b8f8ec2430d04b",
                   "f54d74785e5268524605d8631a9617acf5c12243fdb05d5efddbd160b6b792a4"],
    "reduce_scatter": ["41adcb95933a24a7fcf87752697931120e65e007443fcb1300f6890de47d629e",
                       "da245a824087ecfe04961ad5946ee70e70be23a38abee488267522d5c87c4c50",
                       "d63304953c83e2208733e060433679c48824c386c92aa0ff7dc7db663a0c88e6",
                       "43ac7f69833d8f4eaafae1e13294f5df8dffc21b55b283c3add45659f10e0b13"],
}

hetsim, cluster, out = sys.argv[1], sys.argv[2], Path(sys.argv[3])
shutil.rmtree(out, ignore_errors=True)
times = {}
for coll, comm_type in (("all_gather", ALL_GATHER), ("reduce_scatter", REDUCE_SCATTER)):
    folder = out / coll
    folder.mkdir(parents=True)
    for npu in range(4):
        # As generator_scripts/<coll>.py writes it: one node, id = the NPU, no pg_name.
        data = stream([node(npu, COLL, name=f"{coll}_4npus_1MB", is_cpu_op=False, comm_type=comm_type,
                            comm_size=1024 * 1024)])
        if hashlib.sha256(data).hexdigest() != SHA256[coll][npu]:
            sys.exit(f"{coll}.{npu}.et: not byte for byte ASTRA-sim's file")
        (folder / f"{coll}.{npu}.et").write_bytes(data)
    problems = astra_problems(str(folder), coll)
    if problems:
        sys.exit(f"astra_rules.py refuses ASTRA-sim's own trace: {problems}")
    r = subprocess.run([hetsim, "run", "--chakra", str(folder), "--cluster", cluster, "--report",
                        str(out / f"{coll}.json"), "--no-wall-time", "--quiet"], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"hetsim run --chakra {folder}: exit {r.returncode}\n{r.stderr}")
    times[coll] = json.loads((out / f"{coll}.json").read_text())["iteration_time_ms"]
ratio = times["all_gather"] / times["reduce_scatter"]
print(f"all_gather {times['all_gather']:.4f} ms, reduce_scatter {times['reduce_scatter']:.4f} ms, ratio {ratio:.2f}")
if not 2 <= ratio <= 4.5:
    sys.exit(f"the all-gather takes {ratio:.2f} x the reduce-scatter; ASTRA-sim's reading of comm_size gives 2 to 4")
shutil.rmtree(out)
