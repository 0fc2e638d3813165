#!/usr/bin/env python3
"""Checks the Kubernetes Indexed Job of docs/sweeps.md without a cluster: the YAML parses, it is an
Indexed Job whose completions equal the shard count of --shard, every shard writes its own file, and
the index variable Kubernetes sets (JOB_COMPLETION_INDEX) reaches --shard through the container's
shell: the command runs under /bin/sh with a stand-in `hetsim` that records its arguments, once per
index. Usage: scripts/check_k8s_manifest.py [docs/sweeps.md]. Exit 0 pass, 1 fail."""
import os
import re
import subprocess
import sys
import tempfile

import yaml  # Debian's python3-yaml (scripts/setup.sh)

doc = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "docs", "sweeps.md")
text = open(doc).read()
m = re.search(r"### Kubernetes Indexed Job\s+```yaml\n(.*?)```", text, re.S)
if not m:
    sys.exit(f"{doc}: no yaml block under '### Kubernetes Indexed Job'")
job = yaml.safe_load(m.group(1))


def check(cond, what):
    if not cond:
        sys.exit(f"{doc}: Kubernetes Job: {what}")


check(job.get("apiVersion") == "batch/v1" and job.get("kind") == "Job", "not a batch/v1 Job")
spec = job["spec"]
check(spec.get("completionMode") == "Indexed", "completionMode is not Indexed")
n = spec["completions"]
check(isinstance(n, int) and n > 0, "completions is not a positive integer")
check(spec["template"]["spec"].get("restartPolicy") in ("Never", "OnFailure"), "restartPolicy must be Never or OnFailure")
container = spec["template"]["spec"]["containers"][0]
command = container["command"] + container["args"]
check(command[:2] == ["/bin/sh", "-c"], "the command is not run by /bin/sh -c (the index would not expand)")
script = container["args"][0]
check(f"--shard ${{JOB_COMPLETION_INDEX}}/{n}" in script, f"--shard does not read JOB_COMPLETION_INDEX out of {n}")
check("--resume" in script, "a retried index must --resume its own file")

outputs = set()
with tempfile.TemporaryDirectory() as tmp:
    shim = os.path.join(tmp, "hetsim")
    with open(shim, "w") as f:
        f.write('#!/bin/sh\nfor a in "$@"; do printf "%s\\n" "$a"; done > "$HETSIM_ARGS"\n')
    os.chmod(shim, 0o755)
    for k in range(n):
        args_file = os.path.join(tmp, f"args{k}")
        env = dict(os.environ, PATH=f"{tmp}:{os.environ['PATH']}", JOB_COMPLETION_INDEX=str(k), HETSIM_ARGS=args_file)
        subprocess.run(command, env=env, check=True)
        argv = open(args_file).read().split("\n")
        check(argv[0] == "sweep", f"index {k}: the command is not `hetsim sweep`")
        shard = argv[argv.index("--shard") + 1]
        check(shard == f"{k}/{n}", f"index {k}: --shard is {shard!r}, expected {k}/{n}")
        outputs.add(argv[argv.index("-o") + 1])
check(len(outputs) == n, f"{len(outputs)} distinct output files for {n} indexes")
print(f"k8s manifest: Indexed Job of {n} completions; JOB_COMPLETION_INDEX reaches --shard K/{n}; {n} distinct outputs")
