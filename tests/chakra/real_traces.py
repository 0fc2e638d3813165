#!/usr/bin/env python3
"""Real Chakra traces converted from PyTorch by Chakra's own tools, run through `hetsim run --chakra`:
what runs, what is skipped, what is refused as JSON. The files are committed in
tests/corpus/third_party/chakra-real-traces/ (tests/corpus/sources.txt: repository, commit, archive member, SHA-256,
licence), verbatim from their source (each SHA-256 is checked again here); tests/chakra.cmake runs this
test always, and a missing file fails it (docs/corpus.md). Chakra's 4.9 MB `chakra.0.json` is left out:
its small sibling small_chakra.0.json is refused for the same reason. A trace of several ranks lists
them in "files" (each with its SHA-256), its communicator groups in "groups" (run --comm-groups); rank files
committed in one .tar.gz name it in "archive", a trace of more ranks than CLUSTER has its own "cluster".
Usage: real_traces.py HETSIM CLUSTER TRACES_DIR OUT_DIR"""
import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

CHAKRA = "mlcommons/chakra"
TRACES = [
    {
        # The trace of Chakra's feeder tests: one rank of a PyTorch run (3,664 nodes, the host ops and
        # the GPU kernels of a broadcast and all-reduces), converted by chakra_converter.
        "name": "chakra.0.et",
        "source": f"{CHAKRA} tests/data/feeder_tests_trace.tar.gz, member tests/data/chakra.0.et, "
                  "commit e84ec82b6535783aa8a14902705a4798647c92d6",
        "sha256": "e4ae8172ef0d18f94cb12371b28c8d78095bac13b0375986cf56c86e2ba2d4ed",
        "exit": 0,
        "stdout": ["1 ranks, 3664 nodes", "7 collectives",
                   "skipped: 1277 control dependencies on nodes not in their file, 383 on the node itself, "
                   "2004 closing cycles; 14 CPU-side communication nodes without comm_size"],
    },
    {
        # Two ranks of a PyTorch FSDP run (torchrun --nproc_per_node=2 of a two-layer MLP, five steps, the
        # fourth traced), linked by chakra_trace_link and converted by chakra_converter as the repository's
        # examples/test-2-comm-group/README.md shows: 1,632 kernels and two all-reduces of comm_size 4 GiB
        # (on process groups "1" and "2") per rank. Its groups file (ASTRA-sim's --comm-group-configuration)
        # names groups "0", "1" and "2", each ranks 0 and 1; the same traces' test-1-comm-group/ folder has
        # one naming "1" only, on which ASTRA-sim stops too ("communicator group 2 not found").
        "name": "chakra_trace",
        "source": "EricDinging/astra-sim-hybrid-parallelism examples/test-2-comm-group/, "
                  "commit 5da4f0d87a63e64286b8b1e65bdaf4973d53a448",
        "files": [("chakra_trace.0.et", "5331d99f81956a8ab19682914ab4a6cbb2c35ecf70aedd60bbc43c36019d9e24"),
                  ("chakra_trace.1.et", "d4b3f03d0cd1cb2629867e6eeb7d2f090f661057815f5834ab61bfe4e5e7730a")],
        "groups": ("comm_group.json", "7a4923e06a565db55ed827b57982350a250d307fcf79b23c07a3106f145cf95c"),
        "exit": 0,
        "stdout": ["2 ranks, 3268 nodes", "2 collectives"],
    },
    {
        # Eight ranks of a PyTorch DLRM run (2023-09-07), host and device traces linked as published in
        # astra-sim/astra-sim ab5d3e6 (my_test/inputs/workload/et_plus/dlrm_eg_<rank>_plus.json, 3 MB each, MIT) and
        # converted here by Chakra's own converter of that time (mlcommons/chakra e7d7a7c, December 2023:
        # python -m chakra.et_converter.et_converter --input_type PyTorch --num_dims 1; later converters refuse the
        # schema 1.0.1 of these files): 9,158 nodes, the GPU kernels with their measured durations and, per
        # rank, 5 all-to-alls (the embeddings' exchange) and 3 all-reduces over the 8 ranks. Committed as the
        # converter wrote the rank files, in one .tar.gz (405 KB; tests/corpus/sources.txt: `converted:`), each
        # member's SHA-256 checked below.
        "name": "dlrm",
        "source": "astra-sim/astra-sim my_test/inputs/workload/et_plus/, commit "
                  "ab5d3e629c9d28257cf9d2b367474f0cbfdf450e, converted by mlcommons/chakra e7d7a7c",
        "archive": ("dlrm-8rank.et.tar.gz", "80daf19d58f706024246a26831d386ea67894cc316a5ff5e3b5c1e4a119b6671"),
        "files": [("dlrm.0.et", "83648b8a5e72e9aa9f1a7ffd8fff3189d741b474e2fba850135a977f7082d4fa"),
                  ("dlrm.1.et", "a817b7799279b578629c1de03c5d66a80ff368c4ebb2926fee1c836615feb0cc"),
                  ("dlrm.2.et", "ad5ef5b2294219e6d78777c2b0d99eba6b0ceefc76746380090d8fd3e468f0ae"),
                  ("dlrm.3.et", "8db9ab7ead4da3a6f931b700806513194344991c9852762039b8e1091c308ea5"),
                  ("dlrm.4.et", "7af6504dcd57141382be1fb4467e01df74401bddfc14f53d1366024360e3c4dc"),
                  ("dlrm.5.et", "6a768ea95dc290892857ef4153c6421ea8e2c63f47abd8f51c06a8b1dd1c4c1d"),
                  ("dlrm.6.et", "3d9228a970a94d76b2cddd89c166b26add7d8f91a85a1eece57c09f7908f6473"),
                  ("dlrm.7.et", "6ed8e97021917e545567f46944e8b7e3f74a4bde95f2d92acc0e6bf8034c8d0c")],
        # One DGX A100 node: the run's 8 GPUs (the host traces name no GPU model).
        "cluster": "validation/nccl/cluster-dgx-a100-1node.pbtxt",
        "exit": 0,
        "stdout": ["8 ranks, 9158 nodes", "8 collectives",
                   "skipped: 6189 control dependencies on nodes not in their file, 272 on the node itself, "
                   "2697 closing cycles; 128 CPU-side communication nodes without comm_size",
                   # The kernels' own durations, not a model's: the busiest rank's GPU time.
                   "GPU compute busy: max 0.984 ms"],
    },
    {
        # Eight ranks of a Megatron-LM run at tensor parallel 8 on one A100-SXM4-80GB node (2024-02-01, PyTorch host
        # traces of schema 1.0.1 and their Kineto traces, astra-sim/astra-sim ab5d3e6
        # my_test/inputs/workload/megatron-tp8/megatron_{et,kineto}_<rank>.json, MIT), linked here by the linker of
        # that time (facebookresearch/param 522ccae, train/compute/python/tools/trace_link.py, which matches kernels
        # to their launches by correlation id; Chakra's later linker finds no "Record function id" in these Kineto
        # traces and links nothing) and converted by Chakra e053939 (February 2024): 54,502 nodes, 690 kernels and
        # 84 all-reduces per rank (the tensor-parallel ones). Its Kineto trace measures ProfilerStep#3 at 603.2 ms;
        # the replay on one DGX A100 gives 502.5 ms (docs/chakra.md).
        "name": "megatron",
        "source": "astra-sim/astra-sim my_test/inputs/workload/megatron-tp8/, commit "
                  "ab5d3e629c9d28257cf9d2b367474f0cbfdf450e, linked by facebookresearch/param 522ccae, converted by "
                  "mlcommons/chakra e053939",
        "archive": ("megatron-tp8.et.tar.gz", "9ddfa93754550e786b4964272639849b09cba7e01e4d5be85b7771df6cafb44e"),
        "files": [("megatron.0.et", "1d2d43b6d4e6c5f494585d983140fb50f6e4978f92cc8989181809af8777b7d5"),
                  ("megatron.1.et", "f9ce5eaf0d8f68655ac344d4ca28d42a8bd9538d14cf5ff13aaf6d4e4f4d1984"),
                  ("megatron.2.et", "0412c1829d717f8b35eb4794f53847d556a5ffad9f0a27dd45096c695a89815b"),
                  ("megatron.3.et", "bb4170ab53026b713dba1ba2a329d6735144eab31a2a7d58930532e37c7b2bfb"),
                  ("megatron.4.et", "ec8cbca3e95a14c4eebf15e7ae80a562dcafe4763607f2af8b9593ce7477eced"),
                  ("megatron.5.et", "fb41ca98c04adf7df9c4efe07fe20841a1a19b5d7ce1a72f1a8dfedbad19d532"),
                  ("megatron.6.et", "48f8719af205635b68ef2285ab949cbd9260ead67649f057e2257077d86573d2"),
                  ("megatron.7.et", "5aecd976f1b5461d7ecf1c71614269e27726c35df7b95a43647e2db6f3a5d31b")],
        "cluster": "validation/nccl/cluster-dgx-a100-1node.pbtxt",
        "exit": 0,
        "stdout": ["8 ranks, 54502 nodes", "84 collectives",
                   "skipped: 8 control dependencies on nodes not in their file, 0 on the node itself, 0 closing "
                   "cycles; 2032 CPU-side communication nodes without comm_size",
                   "GPU compute busy: max 133.423 ms"],
    },
    {
        "name": "small_chakra.0.json",
        "source": f"{CHAKRA} tests/data/json_trace.tar.gz, member jsonData/small_chakra.0.json, "
                  "commit 58fda3ed3bbb9dd83008e66a38136e2428dc3b88",
        "sha256": "1f0a80abfda637be6a388fdd7546ea88d1d3cdc8beb2cde63b1ac1a2f8b99d5f",
        "exit": 2,
        "stderr": ["small_chakra.0.json: a Chakra workload graph in JSON"],
    },
    {
        # What chakra_converter takes: a PyTorch execution trace (schema 1.0.2-chakra.0.0.4).
        "name": "1.0.2-chakra.0.0.4.json",
        "source": f"{CHAKRA} tests/data/1.0.2-chakra.0.0.4.tgz, member 1.0.2-chakra.0.0.4.json, "
                  "commit 23fb517486000a32a0a8ee85154b1f079590811b",
        "sha256": "70862b006635b0cd6e955716051c0f972a103378ea3c68a61bbbd4d3d47222bd",
        "exit": 2,
        "stderr": ["1.0.2-chakra.0.0.4.json: a PyTorch execution trace (JSON)", "chakra_converter"],
    },
]

hetsim, cluster, traces, out = sys.argv[1], sys.argv[2], Path(sys.argv[3]), Path(sys.argv[4])
shutil.rmtree(out, ignore_errors=True)
failures = []



def checked(name, sha256, source, folder=None):
    """The corpus file `name` (in `folder`, the corpus folder by default) when it is there with its hash, else
    None (and a failure)."""
    src = (folder or traces) / name
    if not src.is_file():
        failures.append(f"{src}: missing (tests/corpus/sources.txt lists it)")
        return None
    if hashlib.sha256(src.read_bytes()).hexdigest() != sha256:
        failures.append(f"{src}: not the file of {source}")
        return None
    return src


def unpacked(archive, sha256, source, files):
    """The members of a checked .tar.gz of rank files, unpacked into OUT/archive/ (None when not there)."""
    src = checked(archive, sha256, source)
    if src is None:
        return None
    into = out / "archive" / archive
    into.mkdir(parents=True)
    with tarfile.open(src) as tar:
        for name, _ in files:
            member = tar.extractfile(f"./{name}")
            if member is None:
                failures.append(f"{src}: no member {name}")
                return None
            (into / name).write_bytes(member.read())
    return into


REPOSITORY = Path(__file__).resolve().parents[2]
for t in TRACES:
    files = t.get("files", [(t["name"], t.get("sha256"))])
    where = traces
    if "archive" in t:
        where = unpacked(t["archive"][0], t["archive"][1], t["source"], files)
        if where is None:
            continue
    sources = [checked(name, sha, t["source"], where) for name, sha in files]
    groups = checked(t["groups"][0], t["groups"][1], t["source"]) if "groups" in t else None
    if None in sources or ("groups" in t and groups is None):
        continue
    folder = out / t["name"].replace(".", "_")
    folder.mkdir(parents=True)
    for src in sources:
        shutil.copyfile(src, folder / src.name)
    on = str(REPOSITORY / t["cluster"]) if "cluster" in t else cluster
    command = [hetsim, "run", "--chakra", str(folder), "--cluster", on, "--no-wall-time"]
    if groups is not None:
        command += ["--comm-groups", str(groups)]
    r = subprocess.run(command, capture_output=True, text=True)
    print(f"{t['name']}: exit {r.returncode}\n{r.stdout}{r.stderr}")
    if r.returncode != t["exit"]:
        failures.append(f"{t['name']}: exit {r.returncode}, expected {t['exit']}")
    for stream, text in (("stdout", r.stdout), ("stderr", r.stderr)):
        failures += [f"{t['name']}: {stream} lacks \"{w}\"" for w in t.get(stream, []) if w not in text]
if failures:
    sys.exit("\n".join(failures))
shutil.rmtree(out)
print(f"{len(TRACES)} real traces as expected")
