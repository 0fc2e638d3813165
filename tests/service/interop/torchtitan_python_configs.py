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
FEATURES = "torchtitan-2026_recipes_tests_features.py"
INIT = "torchtitan-2026_recipes_tests_init.py"  # torchtitan_recipes/tests/__init__.py: _use_spmd_types
# (file, function, --with files, nodes, what the import prints (or its refusal), or the script's refusal)
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
    # Held out in session 35 (docs/corpus.md). _use_spmd_types(config, typechecking=True) turns activation
    # checkpointing off: followed when its file is given, refused (it may change the config) when not.
    (FEATURES, "llama3_debugmodel_ddp4", [REGISTRY, INIT], 1,
     "1 pipeline stages x TP 1 x DP 4 on island \"h100\", ONE_F_ONE_B, micro-batch 8 per replica, global batch 32"),
    (FEATURES, "llama3_debugmodel_ddp4", [REGISTRY], 1,
     "_use_spmd_types(config, typechecking=True) calls _use_spmd_types, which is not in the files read"),
    (FEATURES, "llama3_debugmodel_fsdp2_tp2_cp2", [REGISTRY, INIT], 1,
     "1 pipeline stages x TP 2 x DP 2 on island \"h100\""),
    (FEATURES, "llama3_debugmodel_pp4_zero_bubble", [REGISTRY, INIT], 1,
     "parallelism.pipeline_parallel_schedule: \"InterleavedZeroBubble\": not modelled"),
    # Qwen3's flavors import since session 41 (docs/torchtitan.md): 14B on 8 GPUs, FSDP over all.
    ("torchtitan-2026_qwen3_config_registry.py", "qwen3_14b", [], 1,
     "1 pipeline stages x TP 1 x DP 8 on island \"h100\", ONE_F_ONE_B, micro-batch 4 per replica, global batch 32"),
    ("torchtitan-2026_torchft_llama3_config_registry.py", "llama3_torchft_debugmodel", [], 1,
     "fault_tolerance.semi_sync_method: \"diloco\": torchft's semi-synchronous training"),
]
PACKAGES = {"torchtitan-2026_qwen3_config_registry.py": "qwen3"}


def main():
    hetsim, source, out = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
    corpus = source / "tests/corpus/third_party/launch-corpus"
    cluster = source / "examples/cluster-16k-h100.pbtxt"
    out.mkdir(parents=True, exist_ok=True)
    failures = 0
    for file, function, others, nodes, expected in CASES:
        cmd = [sys.executable, str(source / "scripts/torchtitan_config.py"), str(corpus / file), function,
               "--package", PACKAGES.get(file, "llama3")]
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
        ok = expected in imported.stdout + imported.stderr and imported.returncode in (0, 2)
        print(f"{'ok' if ok else 'FAIL'}: {function}: {imported.stdout.strip() or imported.stderr.strip()}")
        failures += not ok
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
