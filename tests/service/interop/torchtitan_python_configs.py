#!/usr/bin/env python3
"""torchtitan's Python configs (its format since 2026-02) rendered by scripts/torchtitan_config.py (Python's ast, nothing
run) and imported by `hetsim import torchtitan`: the plan each gives, or why the script refuses it. The files are
torchtitan's own, committed in tests/corpus/third_party/launch-corpus/ (tests/corpus/sources.txt: commit, SHA-256,
licence). Usage: torchtitan_python_configs.py HETSIM SOURCE_DIR OUT_DIR"""
import subprocess
import sys
from pathlib import Path

REGISTRY = "torchtitan-2026_llama3_config_registry.py"
H100 = "torchtitan-2026_recipes_tests_h100.py"
# (file, function, --with files, nodes, what the import prints, or the script's refusal)
CASES = [
    (REGISTRY, "llama3_8b", [], 8,
     "1 pipeline stages x TP 1 x DP 64 on island \"h100\", ONE_F_ONE_B, micro-batch 1 per replica, global batch 64"),
    (REGISTRY, "llama3_70b", [], 8,
     "1 pipeline stages x TP 8 x DP 8 on island \"h100\", ONE_F_ONE_B, micro-batch 8 per replica, global batch 64"),
    (REGISTRY, "llama3_405b", [], 16,
     "1 pipeline stages x TP 8 x DP 16 on island \"h100\", ONE_F_ONE_B, micro-batch 2 per replica, global batch 32"),
    (REGISTRY, "llama3_debugmodel", [], 1,
     "1 pipeline stages x TP 1 x DP 8 on island \"h100\", ONE_F_ONE_B, micro-batch 8 per replica, global batch 64"),
    # Derived from llama3_debugmodel of the other file: TP 2 with async TP under torch.compile.
    (H100, "llama3_debugmodel_tp2_asynctp_compile", [REGISTRY], 1,
     "1 pipeline stages x TP 2 x DP 4 on island \"h100\""),
    # Its config comes from DeepSeek-V3's registry, not among the files read.
    (H100, "deepseek_v3_debugmodel_minimal_async_ep_fsdp2_tp2_cp2_ep8", [REGISTRY], 1,
     "its config comes from deepseek_v3_debugmodel_minimal_async_ep(), a function not in the files read"),
]


def main():
    hetsim, source, out = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
    corpus = source / "tests/corpus/third_party/launch-corpus"
    cluster = source / "examples/cluster-16k-h100.pbtxt"
    out.mkdir(parents=True, exist_ok=True)
    failures = 0
    for file, function, others, nodes, expected in CASES:
        cmd = [sys.executable, str(source / "scripts/torchtitan_config.py"), str(corpus / file), function,
               "--package", "llama3"]
        for other in others:
            cmd += ["--with", str(corpus / other)]
        rendered = subprocess.run(cmd, capture_output=True, text=True)
        if rendered.returncode != 0:
            ok = expected in rendered.stderr and rendered.returncode == 2
            print(f"{'ok' if ok else 'FAIL'}: {function}: refused: {rendered.stderr.strip()}")
            failures += not ok
            continue
        toml = out / f"{function}.toml"
        toml.write_text(rendered.stdout)
        imported = subprocess.run([hetsim, "import", "torchtitan", str(toml), "--cluster", str(cluster), "--nodes",
                                   str(nodes), "--out", str(out / f"{function}.pbtxt")], capture_output=True, text=True)
        ok = imported.returncode == 0 and expected in imported.stdout
        print(f"{'ok' if ok else 'FAIL'}: {function}: {imported.stdout.strip() or imported.stderr.strip()}")
        failures += not ok
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
