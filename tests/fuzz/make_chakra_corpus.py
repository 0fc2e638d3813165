#!/usr/bin/env python3
"""Writes tests/fuzz/corpus/fuzz_chakra: every Chakra case of the bad-input corpus, and a few valid traces
(pipeline send/recv, an all-reduce, loose kernels, MEM nodes, unknown attributes, a trace as Chakra's
PyTorch converter writes it), each as one input:
the groups JSON, then the rank files, joined by "\\n--rank--\\n" (tests/fuzz/fuzz_chakra.cc)."""
import glob
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "bad_inputs", "chakra"))
sys.dont_write_bytecode = True
import generate as g  # noqa: E402  (writes the bad-input folders again, identically)

OUT = os.path.join(HERE, "corpus", "fuzz_chakra")
SEP = b"\n--rank--\n"
os.makedirs(OUT, exist_ok=True)


def put(name, groups, ranks):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(SEP.join([json.dumps(groups).encode() if groups else b""] + ranks))


for d in sorted(glob.glob(os.path.join(g.HERE, "*", ""))):
    gpath = os.path.join(d, "t.comm_groups.json")
    files = sorted(glob.glob(os.path.join(d, "t.*.et")), key=lambda p: int(p.split(".")[-2]))[:4]
    groups = json.load(open(gpath)) if os.path.exists(gpath) else None
    put(os.path.basename(os.path.dirname(d)), groups, [open(p, "rb").read() for p in files])

COMP, SEND, RECV, COLL = g.COMP, g.SEND, g.RECV, g.COLL
put("valid_pipeline", None, [
    g.stream([g.comp(1), g.node(2, SEND, deps=[1], comm_dst=1, comm_size=1 << 20, comm_tag=0),
              g.node(3, RECV, comm_src=1, comm_size=1 << 20, comm_tag=1), g.comp(4, data_deps=[3])]),
    g.stream([g.node(1, RECV, comm_src=0, comm_size=1 << 20, comm_tag=0), g.comp(2, data_deps=[1]),
              g.node(3, SEND, deps=[2], comm_dst=0, comm_size=1 << 20, comm_tag=1)]),
])
put("valid_allreduce", {"1": [0, 1, 2, 3]}, [
    g.stream([g.comp(1, num_ops=1 << 30, tensor_size=1 << 20, is_cpu_op=False),
              g.node(2, COLL, data_deps=[1], comm_type=0, comm_size=1 << 24, pg_name="1")]) for _ in range(4)])
put("valid_repairs", None, [
    g.stream([g.comp(1, rf_id=7), g.node(2, 2), g.comp(3), g.node(4, COLL, comm_type=2, comm_size=4096)], version="0.0.3"),
    g.stream([g.node(1, COLL, comm_type=2, comm_size=4096)]),
])
# As Chakra's PyTorch converter writes a rank: control dependencies on a left-out node (3) and on the
# node itself, a host op ordered after the kernel it launches (a control cycle), the host side of a
# collective without comm_size.
put("valid_pytorch_converted", None, [
    g.stream([g.comp(10, deps=[3, 12], is_cpu_op=True),
              g.node(11, COLL, deps=[3, 11], data_deps=[10], is_cpu_op=True),
              g.node(12, COLL, data_deps=[10, 11], is_cpu_op=False, comm_type=5, comm_size=4096),
              g.comp(13, data_deps=[12])], version=""),
])
