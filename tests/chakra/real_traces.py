#!/usr/bin/env python3
"""Real Chakra traces converted from PyTorch by Chakra's own tools, run through `hetsim run --chakra`:
what runs, what is skipped, what is refused as JSON. The files are committed in
tests/corpus/third_party/chakra-real-traces/ (tests/corpus/sources.txt: repository, commit, archive member, SHA-256,
licence), verbatim from their source (each SHA-256 is checked again here); tests/chakra.cmake runs this
test always, and a missing file fails it (docs/corpus.md). Chakra's 4.9 MB `chakra.0.json` is left out:
its small sibling small_chakra.0.json is refused for the same reason.
Usage: real_traces.py HETSIM CLUSTER TRACES_DIR OUT_DIR"""
import hashlib
import os
import shutil
import subprocess
import sys
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
for t in TRACES:
    src = traces / t["name"]
    if not src.is_file():
        failures.append(f"{src}: missing (tests/corpus/sources.txt lists it)")
        continue
    if hashlib.sha256(src.read_bytes()).hexdigest() != t["sha256"]:
        failures.append(f"{src}: not the file of {t['source']}")
        continue
    folder = out / t["name"].replace(".", "_")
    folder.mkdir(parents=True)
    shutil.copyfile(src, folder / t["name"])
    r = subprocess.run([hetsim, "run", "--chakra", str(folder), "--cluster", cluster, "--no-wall-time"],
                       capture_output=True, text=True)
    print(f"{t['name']}: exit {r.returncode}\n{r.stdout}{r.stderr}")
    if r.returncode != t["exit"]:
        failures.append(f"{t['name']}: exit {r.returncode}, expected {t['exit']}")
    for stream, text in (("stdout", r.stdout), ("stderr", r.stderr)):
        failures += [f"{t['name']}: {stream} lacks \"{w}\"" for w in t.get(stream, []) if w not in text]
if failures:
    sys.exit("\n".join(failures))
shutil.rmtree(out)
print(f"{len(TRACES)} real traces as expected")
