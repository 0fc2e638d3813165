#!/usr/bin/env python3
"""Checks a folder of Chakra traces against what ASTRA-sim needs to run them, read from its source and
not from hetsim's reader (docs/chakra.md, "What ASTRA-sim accepts"):

  astra-sim/astra-sim  astra-sim/workload/Workload.cc      (Workload::Workload, initialize_comm_groups,
                                                            issue, issue_comm, issue_coll_comm,
                                                            issue_send_comm, issue_recv_comm,
                                                            extract_comm_group)
  astra-sim/astra-sim  astra-sim/system/CommunicatorGroup.cc (set_id: id 0 is reserved)
  astra-sim/chakra     src/feeder_v3/et_feeder.cpp          (build_index_dependancy_cache,
                                                            graph_sanity_check)
  astra-sim/chakra     src/feeder_v3/dependancy_solver.cpp  (resolve_dependancy_free_nodes)

Usage: astra_rules.py DIR PREFIX [NPUS]   (NPUS: the NPU count of the network; default: the rank files)
Prints one line per broken rule and exits 1, or prints "ok" and exits 0."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from chakra_wire import COLL, RECV, SEND, read_rank  # noqa: E402

NODE_TYPES = set(range(0, 8))  # INVALID .. COMM_COLL: Workload::issue exits on any other ("Unknown node type")
COLLECTIVES = {0: "ALL_REDUCE", 6: "ALL_TO_ALL", 2: "ALL_GATHER", 7: "REDUCE_SCATTER", 5: "BROADCAST"}


def check_groups(path, npus):
    """initialize_comm_groups: a JSON object whose keys std::stoi reads and whose values are rank lists;
    CommunicatorGroup::set_id asserts id > 0 (0 is the default group of every rank)."""
    problems, groups = [], {}
    if not os.path.exists(path):
        return problems, groups
    with open(path) as f:
        data = json.load(f)
    if not isinstance(data, dict):
        return [f"{path}: not a JSON object"], groups
    for k, ranks in data.items():
        if not k.strip().lstrip("-").isdigit() or int(k) <= 0:
            problems.append(f"{path}: group \"{k}\": not an integer above 0 (std::stoi, set_id asserts id > 0)")
            continue
        if not isinstance(ranks, list) or not all(isinstance(r, int) and 0 <= r < npus for r in ranks):
            problems.append(f"{path}: group \"{k}\": not a list of NPU ids below {npus}")
            continue
        groups[int(k)] = ranks
    return problems, groups


def check_deps(file, nodes):
    """The feeder: ids index the file (a repeated id hides a node); every data and control dependency
    names a node of the file (graph_sanity_check); some node has none (resolve_dependancy_free_nodes:
    "No dependancy free nodes found"); and, for the rank to finish, no cycle."""
    problems = []
    ids = [n["id"] for n in nodes]
    if len(set(ids)) != len(ids):
        problems.append(f"{file}: repeated node ids (the feeder's index keeps one of each)")
    known = set(ids)
    for n in nodes:
        for field in ("data_deps", "ctrl_deps"):
            for d in n[field]:
                if d not in known:
                    problems.append(f"{file}: node {n['id']}: {field} {d} is not in the file (graph_sanity_check)")
    if not nodes:
        problems.append(f"{file}: no node (the feeder finds no dependency-free node and throws)")
    elif not any(not n["data_deps"] and not n["ctrl_deps"] for n in nodes):
        problems.append(f"{file}: no node without dependencies (resolve_dependancy_free_nodes throws)")
    parents = {n["id"]: set(n["data_deps"]) | set(n["ctrl_deps"]) for n in nodes}
    done, ready = set(), [i for i, p in parents.items() if not p]
    children = {i: [] for i in parents}
    for i, p in parents.items():
        for d in p:
            if d in children:
                children[d].append(i)
    while ready:
        i = ready.pop()
        done.add(i)
        for c in children[i]:
            if parents[c] <= done and c not in done:
                ready.append(c)
    if len(done) != len(parents) and not problems:
        problems.append(f"{file}: {len(parents) - len(done)} nodes in or after a dependency cycle never run")
    return problems


def check_comm(file, rank, n, groups):
    """Workload::issue_comm and its callees."""
    problems, a, where = [], n["attr"], f"{file}: node {n['id']}"
    if a.get("is_cpu_op", (False,))[0]:
        problems.append(f"{where}: communication with is_cpu_op (\"Comm node should not be on CPU\")")
    if "comm_size" not in a:
        problems.append(f"{where}: no comm_size")
    if n["type"] == COLL:
        if a.get("comm_type", (None,))[0] not in COLLECTIVES:
            problems.append(f"{where}: comm_type {a.get('comm_type', (None,))[0]} (\"Unsupported collective comm type\")")
        pg = a.get("pg_name", ("", "string"))
        if pg[1] != "string":
            problems.append(f"{where}: pg_name is not a string")
        elif pg[0] not in ("", "0") and (not pg[0].isdigit() or int(pg[0]) not in groups):
            problems.append(f"{where}: pg_name \"{pg[0]}\" is not a group of the groups file (extract_comm_group)")
        elif pg[0] not in ("", "0") and rank not in groups[int(pg[0])]:
            problems.append(f"{where}: rank {rank} is not in its group \"{pg[0]}\"")
    else:
        mine, peer = ("comm_src", "comm_dst") if n["type"] == SEND else ("comm_dst", "comm_src")
        if mine in a and a[mine][0] != rank:
            problems.append(f"{where}: {mine} {a[mine][0]} is not the issuing rank {rank}")
        if peer not in a:
            problems.append(f"{where}: no {peer}")
    return problems


def check(folder, prefix, npus=None):
    ranks = sorted(int(f[len(prefix) + 1:-3]) for f in os.listdir(folder)
                   if f.startswith(prefix + ".") and f.endswith(".et") and f[len(prefix) + 1:-3].isdigit())
    npus = npus if npus is not None else len(ranks)
    problems, groups = check_groups(os.path.join(folder, f"{prefix}.comm_groups.json"), npus)
    for r in range(npus):
        file = os.path.join(folder, f"{prefix}.{r}.et")
        if r not in ranks:
            problems.append(f"{file}: missing (Workload::Workload exits for every NPU without its file)")
            continue
        try:
            with open(file, "rb") as f:
                _, nodes = read_rank(f.read())
        except ValueError as e:
            problems.append(f"{file}: {e}")
            continue
        problems += check_deps(file, nodes)
        for n in nodes:
            if n["type"] not in NODE_TYPES:
                problems.append(f"{file}: node {n['id']}: type {n['type']} (\"Unknown node type\")")
            elif n["type"] in (SEND, RECV, COLL):
                problems += check_comm(file, r, n, groups)
    return problems


if __name__ == "__main__":
    found = check(sys.argv[1], sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else None)
    for p in found[:50]:
        print(p)
    if found:
        sys.exit(f"{len(found)} problems for ASTRA-sim")
    print("ok")
