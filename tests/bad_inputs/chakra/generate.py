#!/usr/bin/env python3
"""Writes the Chakra cases of the bad-input corpus (tests/bad_inputs/cases.txt, chakra_*): one folder
per case holding rank files t.<rank>.et (and t.comm_groups.json when the case needs groups).

The protobuf wire format is encoded by hand (tests/chakra/chakra_wire.py, no protobuf module needed).
Run from anywhere; the output is deterministic and committed."""
import json
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

sys.path.insert(0, os.path.join(HERE, "..", "..", "chakra"))
from chakra_wire import COLL, COMP, RECV, SEND, node, stream  # noqa: E402


def write(case, ranks, groups=None, raw=None):
    d = os.path.join(HERE, case)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    for r, nodes in ranks.items():
        data = raw[r] if raw and r in raw else stream(nodes)
        with open(os.path.join(d, f"t.{r}.et"), "wb") as f:
            f.write(data)
    if groups is not None:
        with open(os.path.join(d, "t.comm_groups.json"), "w") as f:
            json.dump(groups, f)


comp = lambda id, **kw: node(id, COMP, dur=10, **kw)

write("missing_dep", {0: [comp(1), comp(2, data_deps=[99])], 1: [comp(1)]})
# Data dependencies: a cycle of control dependencies alone is repaired (they are dropped, docs/chakra.md).
write("cycle", {0: [comp(1, data_deps=[3]), comp(2, data_deps=[1]), comp(3, data_deps=[2])], 1: [comp(1)]})
# A cycle through 40 nodes: the message names its first nodes, its last and the count (session 32: a
# million-node cycle was a 10 MB message).
write("long_cycle", {0: [comp(1, data_deps=[40])] + [comp(i, data_deps=[i - 1]) for i in range(2, 41)], 1: [comp(1)]})
write("missing_rank", {0: [comp(1)], 2: [comp(1)]})
write("too_many_ranks", {r: [comp(1)] for r in range(7)})
write("duplicate_id", {0: [comp(1), comp(1)], 1: [comp(1)]})
write("invalid_type", {0: [comp(1), node(2, 0)], 1: [comp(1)]})
write("storage_type", {0: [comp(1), node(2, 8)], 1: [comp(1)]})
write("unmatched_send", {0: [comp(1), node(2, SEND, deps=[1], comm_dst=1, comm_size=1024, comm_tag=5)],
                         1: [comp(1)]})
write("send_without_dst", {0: [node(1, SEND, comm_size=1024, comm_tag=5)], 1: [node(1, RECV, comm_src=0, comm_size=1024, comm_tag=5)]})
write("send_to_self", {0: [node(1, SEND, comm_dst=0, comm_size=1024)], 1: [comp(1)]})
write("peer_out_of_range", {0: [node(1, SEND, comm_dst=9, comm_size=1024)], 1: [comp(1)]})
write("barrier", {0: [node(1, COLL, comm_type=9, comm_size=0, pg_name="1")],
                  1: [node(1, COLL, comm_type=9, comm_size=0, pg_name="1")]}, groups={"1": [0, 1]})
write("unknown_group", {0: [node(1, COLL, comm_type=0, comm_size=1024, pg_name="7")],
                        1: [node(1, COLL, comm_type=0, comm_size=1024, pg_name="7")]}, groups={"1": [0, 1]})
write("not_a_member", {0: [node(1, COLL, comm_type=0, comm_size=1024, pg_name="1")],
                       1: [node(1, COLL, comm_type=0, comm_size=1024, pg_name="2")],
                       2: [node(1, COLL, comm_type=0, comm_size=1024, pg_name="1")]}, groups={"1": [0, 2], "2": [0, 2]})
write("collective_count", {0: [node(1, COLL, comm_type=0, comm_size=1024, pg_name="1"),
                               node(2, COLL, deps=[1], comm_type=0, comm_size=1024, pg_name="1")],
                           1: [node(1, COLL, comm_type=0, comm_size=1024, pg_name="1")]}, groups={"1": [0, 1]})
write("collective_size", {0: [node(1, COLL, comm_type=0, comm_size=1024, pg_name="1")],
                          1: [node(1, COLL, comm_type=0, comm_size=2048, pg_name="1")]}, groups={"1": [0, 1]})
write("deadlock", {0: [node(1, RECV, comm_src=1, comm_size=64, comm_tag=1),
                       node(2, SEND, deps=[1], comm_dst=1, comm_size=64, comm_tag=2)],
                   1: [node(1, RECV, comm_src=0, comm_size=64, comm_tag=2),
                       node(2, SEND, deps=[1], comm_dst=0, comm_size=64, comm_tag=1)]})
write("newer_schema", {0: [comp(1)], 1: [comp(1)]}, raw={0: stream([comp(1)], version="2.0.0")})
write("truncated", {0: [comp(1), comp(2)], 1: [comp(1)]}, raw={0: stream([comp(1), comp(2, deps=[1])])[:-3]})
write("garbage", {0: [], 1: [comp(1)]}, raw={0: b"\x05\xff\xff\xff\xff\xff"})
write("empty_file", {0: [], 1: [comp(1)]}, raw={0: b""})
write("bad_groups_json", {0: [comp(1)], 1: [comp(1)]}, groups={"1": [0, "one"]})
# A 64-byte send received as 128 bytes (session 33: replayed without a word).
write("recv_size", {0: [node(1, SEND, comm_dst=1, comm_size=64, comm_tag=1)],
                    1: [node(1, RECV, comm_src=0, comm_size=128, comm_tag=1)]})
write("negative_num_ops", {0: [comp(1, num_ops=-5)], 1: [comp(1)]})
# Two traces in one folder.
write("two_prefixes", {0: [comp(1)]})
with open(os.path.join(HERE, "two_prefixes", "u.0.et"), "wb") as f:
    f.write(stream([comp(1)]))
# Four compute nodes of 2^40 us each (the most one node may last) in sequence: 4.4e18 ps, past what
# hetsim times (time saturates instead of wrapping, and a saturated end must be an error).
big = lambda id, **kw: node(id, COMP, dur=1 << 40, **kw)
write("saturated_time", {0: [big(1), big(2, deps=[1]), big(3, deps=[2]), big(4, deps=[3])], 1: [comp(1)]})
# JSON where a protobuf trace belongs: a Chakra workload graph named .et, and a folder holding only a
# PyTorch execution trace (what chakra_trace_link and chakra_converter take).
write("json_as_et", {0: [comp(1)]}, raw={0: b'{\n  "workload_graph": [\n    {"Id": 1, "NodeType": 4}\n  ]\n}\n'})
shutil.rmtree(os.path.join(HERE, "json_only"), ignore_errors=True)
os.makedirs(os.path.join(HERE, "json_only"))
with open(os.path.join(HERE, "json_only", "pytorch_et_0.json"), "w") as f:
    json.dump({"schema": "1.0.2-chakra.0.0.4", "pid": 1, "nodes": [{"id": 1, "name": "[pytorch|profiler|execution_trace|thread]"}]}, f)
