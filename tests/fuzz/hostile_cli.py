#!/usr/bin/env python3
"""Hostile command lines against the hetsim binary (session 44, issue 41): the plan, cluster and model fields
of sessions 41-43 (proto fields 1080-1108), `import nemo --model`, `import megatron` with NVTE_* lines and
functional-test ENV_VARS, DPO plans, mixed replicas and uneven shares, and every subcommand with extreme values
(0, negative, nan, inf, 1e300, huge repeated fields, empty files, binary garbage, truncated protobuf, wrong enum
numbers, deep nesting, unterminated quotes).

Each case runs in a fresh folder with a timeout. A case passes when it exits 0 or 2, prints no sanitizer report,
leaves its output folder empty on exit 2, and on exit 2 names a file or a flag. Prints one line per failure and
a count per command and outcome. Usage (from the source tree):
  tests/fuzz/hostile_cli.py --hetsim build-asan/hetsim [--work /tmp/hostile] [--only REGEX] [--timeout 60]
docs/reliability.md, "Session 44"."""
import argparse
import collections
import os
import re
import shutil
import struct
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EX = os.path.join(ROOT, "examples")
CORPUS = os.path.join(ROOT, "tests", "corpus", "third_party", "launch-corpus")
SANITIZER = re.compile(r"ERROR: AddressSanitizer|runtime error:|LeakSanitizer|ERROR: UndefinedBehaviorSanitizer")

# Numbers a field might be given: text-format spellings, each a separate case.
DOUBLES = ["0", "-0", "-1", "nan", "inf", "-inf", "1e300", "1e-320", "1e6", "1e7", "4.9e-324", "0.5"]
UINTS = ["0", "1", "100", "101", "4294967295", "4294967296", "-1", "18446744073709551615", "1.5", "nan"]
BOOLS = ["true", "2", "-1", "yes", "\"true\""]


def read(path):
    with open(path) as f:
        return f.read()


class Case:
    def __init__(self, command, args, files=None, outputs_expected=True):
        self.command = command  # the subcommand, for the counts
        self.args = args        # hetsim's arguments; {d} is the case folder, {o} its output folder
        self.files = files or {}  # name -> bytes or str, written in the case folder
        self.outputs_expected = outputs_expected


def plan_cases():
    """The plan fields of 1080-1108 on three plans: one pipeline, mixed replicas, pipelines of uneven shares."""
    plans = [("hapt", read(os.path.join(EX, "plan-hapt-case.pbtxt")), os.path.join(EX, "cluster-hapt-case.pbtxt")),
             ("mixed", read(os.path.join(EX, "plan-mixed-replicas.pbtxt")),
              os.path.join(EX, "cluster-mixed-cloud.pbtxt")),
             ("lab", read(os.path.join(EX, "plan-lab-pipelines.pbtxt")), os.path.join(EX, "cluster-lab-pcie.pbtxt"))]
    extras = []
    for b in BOOLS:
        for field in ["megatron_v2_fp16_optimizer", "megatron_local_ddp_copies", "layer_norm_weight_grad_pass",
                      "boundary_host_rebuild", "autograd_grad_accumulation", "cuda_launch_blocking"]:
            extras.append(f"{field}: {b}")
    for v in UINTS:
        for sub in ["load_micro_batch", "last_backward_pass", "pipe_transfer"]:
            extras.append(f"deepspeed_timer_syncs {{ {sub}: {v} }}")
    extras += ["reference_policy {}", "reference_policy { cpu_weight_swap: true }",
               "reference_policy { cpu_weight_swap: 2 }", "reference_policy { reference_policy {} }",
               "reference_policy: 1", "deepspeed_timer_syncs: 5",
               "megatron_v2_fp16_optimizer: true megatron_local_ddp_copies: true grad_reduce_in_fp32: false",
               "megatron_v2_fp16_optimizer: true grad_reduce_in_fp32: true",
               "megatron_local_ddp_copies: true reference_policy { cpu_weight_swap: true } boundary_host_rebuild: true",
               "framework: 999", "framework: -1", "schedule: 77", "framework: MEGATRON_LM_2021",
               "framework: MEGATRON_DEEPSPEED deepspeed_timer_syncs { forward_pass: 100 pipe_transfer: 100 }",
               "framework_off: \"layer_norm_weight_grad_pass\"" * 1,
               " ".join(["framework_off: \"p2p_rendezvous\""] * 20000),
               "global_batch_size: 0", "global_batch_size: -5", "micro_batch_size: 18446744073709551615",
               "context_parallel: 4294967295", "reference_policy { cpu_weight_swap: true } context_parallel: 2"]
    # Model fields: qk_layernorm with odd heads and dtypes.
    model_edits = ["qk_layernorm: true", "qk_layernorm: 2", "qk_layernorm: true num_attention_heads: 0",
                   "qk_layernorm: true hidden_size: 1", "qk_layernorm: true seq_length: 4294967295"]
    # Issue 39's shares: a replica group's micro_batch_share and a pipeline's batch_share, replaced once.
    shares = ["0", "-1", "1", "3", "7", "2147483647", "4294967295", "18446744073709551615", "1e300", "nan"]
    for i, v in enumerate(shares):
        mixed = plans[1][1].replace("micro_batch_share: 8", f"micro_batch_share: {v}", 1)
        yield from plan_commands(f"mixed-share{i}", mixed, plans[1][2])
        lab = plans[2][1].replace("batch_share: 24", f"batch_share: {v}", 1)
        yield from plan_commands(f"lab-share{i}", lab, plans[2][2])
    for name, text, cluster in plans:
        for i, extra in enumerate(extras):
            plan = text + "\n" + extra + "\n"
            yield from plan_commands(f"{name}-field{i}", plan, cluster)
        for i, edit in enumerate(model_edits):
            plan = text.replace("granularity: BLOCK", "granularity: BLOCK " + edit, 1)
            yield from plan_commands(f"{name}-model{i}", plan, cluster, few=True)


def plan_commands(tag, plan, cluster, few=False):
    files = {"p.pbtxt": plan}
    yield Case("check", ["check", "{d}/p.pbtxt", "--cluster", cluster, "--out", "{o}/s.txt"], files)
    yield Case("run", ["run", "{d}/p.pbtxt", "--cluster", cluster, "--report", "{o}/r.json", "--max-events",
                       "2000000", "--max-wall-seconds", "20", "--quiet"], files)
    if few:
        return
    yield Case("validate", ["validate", "{d}/p.pbtxt", "--cluster", cluster, "--max-wall-seconds", "20",
                            "--html", "{o}/v.html"], files)
    for fmt, out in [("megatron", "l.sh"), ("deepspeed", "ds.json"), ("nemo", "n.yaml"), ("torchtitan", "t.toml")]:
        yield Case("export", ["export", fmt, "{d}/p.pbtxt", "--cluster", cluster, "--out", "{o}/" + out], files)
    yield Case("export", ["export", "chakra", "{d}/p.pbtxt", "--cluster", cluster, "--out", "{o}/et", "--quiet"],
               files)


def cluster_cases():
    """GPU efficiency fields of sessions 41-43 (pinned_copy_gbytes_per_s, host_fill, pageable_h2d) on a DPO plan."""
    cluster = read(os.path.join(EX, "cluster-hapt-case.pbtxt"))
    plan = read(os.path.join(EX, "plan-hapt-case.pbtxt")) + "\nreference_policy { cpu_weight_swap: true }\n"
    for field in ["pinned_copy_gbytes_per_s", "host_fill_gbytes_per_s", "pageable_h2d_gbytes_per_s",
                  "sync_round_trip_us", "host_op_us"]:
        for v in DOUBLES:
            c = re.sub(r"(gpu_types \{[^}]*?preset: \"[^\"]+\")", r"\1 efficiency { %s: %s }" % (field, v), cluster,
                       count=1)
            files = {"c.pbtxt": c, "p.pbtxt": plan}
            yield Case("check", ["check", "{d}/c.pbtxt", "--out", "{o}/s.txt"], files)
            yield Case("run", ["run", "{d}/p.pbtxt", "--cluster", "{d}/c.pbtxt", "--report", "{o}/r.json",
                               "--max-wall-seconds", "20", "--quiet"], files)


def garbage_cases():
    """Files that are not what they claim: empty, garbage, truncated protobuf, wrong enum numbers, deep nesting."""
    os.makedirs(ARGS.work, exist_ok=True)
    pb = os.path.join(ARGS.work, "plan-hapt-case.pb")
    subprocess.run([ARGS.hetsim, "convert", os.path.join(EX, "plan-hapt-case.pbtxt"), pb], capture_output=True)
    plan_pb = open(pb, "rb").read() if os.path.exists(pb) else b""
    blobs = {"empty": b"", "garbage": bytes(range(256)) * 7, "nul": b"\0" * 1000,
             "deep_text": b"model { " * 5000, "deep_json": b"[" * 100000, "unterminated": b'name: "abc',
             "utf8": b"name: \"\xff\xfe\"", "bom": b"\xef\xbb\xbfname: \"x\"",
             # field 1106 (reference_policy) as a varint, field 1080 (timer syncs) with a bad length
             "wrong_wire": bytes([0xd0, 0x45, 0x01]) + bytes([0xc2, 0x43, 0xff, 0xff, 0xff, 0xff, 0x0f]),
             "enum_999": b"\x58\xe7\x07"}
    if plan_pb:
        for cut in [1, 7, len(plan_pb) // 2, len(plan_pb) - 1]:
            blobs[f"truncated_{cut}"] = plan_pb[:cut]
        blobs["huge_repeated"] = plan_pb + b"".join(b"\xc2\x45\x02\x08\x01" for _ in range(50000))
    cluster = os.path.join(EX, "cluster-hapt-case.pbtxt")
    for name, blob in blobs.items():
        for ext in ["pb", "pbtxt", "json"]:
            files = {f"x.{ext}": blob}
            yield Case("check", ["check", "{d}/x." + ext, "--cluster", cluster, "--out", "{o}/s.txt"], files)
            yield Case("run", ["run", "{d}/x." + ext, "--cluster", cluster, "--report", "{o}/r.json"], files)
        files = {"x.yaml": blob, "x.sh": blob, "x.toml": blob, "x.log": blob, "x.csv": blob}
        yield Case("import", ["import", "nemo", "{d}/x.yaml", "--cluster", cluster, "--out", "{o}/p.pbtxt"], files)
        yield Case("import", ["import", "megatron", "{d}/x.sh", "--cluster", cluster, "--out", "{o}/p.pbtxt"],
                   files)
        yield Case("import", ["import", "megatron", "{d}/x.yaml", "--cluster", cluster, "--out", "{o}/p.pbtxt"],
                   files)
        yield Case("import", ["import", "torchtitan", "{d}/x.toml", "--cluster", cluster, "--out", "{o}/p.pbtxt"],
                   files)
        yield Case("calibrate", ["calibrate", "{d}/x.log", "--cluster", cluster, "--out", "{o}/c.pbtxt"], files)
        yield Case("calibrate", ["calibrate", "--gemm", "{d}/x.csv", "--cluster", cluster, "--out", "{o}/c.pbtxt"],
                   files)
        yield Case("fidelity", ["fidelity", "{d}/x.pbtxt", "--json", "{o}/f.json", "--quiet"],
                   {"x.pbtxt": blob})
        yield Case("sweep", ["sweep", "{d}/x.pbtxt", "-o", "{o}/rows.csv", "--jobs", "1"], {"x.pbtxt": blob})
        yield Case("run", ["run", "--chakra", "{d}/et", "--cluster", cluster, "--report", "{o}/r.json"],
                   {"et/x.0.et": blob, "et/x.comm_groups.json": blob})
        yield Case("import", ["import", "nemo", os.path.join(CORPUS, "nemo-aligner_gpt_dpo.yaml"), "--model",
                              "{d}/x.yaml", "--cluster", cluster, "--out", "{o}/p.pbtxt"], files)


def nemo_model_cases():
    """`import nemo --model`: NeMo-Aligner's DPO config over hostile checkpoint model configs."""
    dpo = os.path.join(CORPUS, "nemo-aligner_gpt_dpo.yaml")
    base = read(os.path.join(CORPUS, "nemo-launcher_llama3_8b.yaml"))
    cluster = os.path.join(EX, "cluster-16k-h100.pbtxt")
    edits = {}
    for key in ["num_layers", "hidden_size", "num_attention_heads", "encoder_seq_length", "ffn_hidden_size",
                "tensor_model_parallel_size", "pipeline_model_parallel_size", "context_parallel_size",
                "micro_batch_size", "global_batch_size", "num_query_groups", "max_position_embeddings"]:
        for v in ["0", "-1", "1e300", ".nan", ".inf", "2147483648", "9223372036854775808", "[1, 2]", "{a: 1}",
                  "null", "'\"unterminated", "${model.%s}" % key, "3"]:
            edits[f"{key}={v}"] = re.sub(rf"(\n\s+{key}:)[^\n]*", rf"\1 {v}", base, count=1)
    edits["deep"] = "model:\n" + "".join("  " * i + f"k{i}:\n" for i in range(1, 300)) + "  " * 300 + "x: 1\n"
    edits["alias_bomb"] = "a: &a [1,1,1,1,1,1,1,1,1]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},"
        f"*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)}]\n" for i in range(9)) + base
    edits["two_docs"] = base + "\n---\nmodel: {}\n"
    edits["not_mapping"] = "- 1\n- 2\n"
    edits["model_scalar"] = "model: 5\n"
    edits["key_twice"] = base.replace("model:\n", "model:\n  num_layers: 4\n  num_layers: 8\n", 1)
    edits["optim_not_map"] = re.sub(r"\n  optim:\n", "\n  optim: 5\n  optim_x:\n", base, count=1)
    edits["overlap_grad_sync_word"] = base.replace("model:\n", "model:\n  optim:\n    overlap_grad_sync: maybe\n", 1)
    for name, text in edits.items():
        files = {"m.yaml": text}
        yield Case("import", ["import", "nemo", dpo, "--model", "{d}/m.yaml", "--cluster", cluster, "--out",
                              "{o}/p.pbtxt"], files)
    # The DPO config itself, hostile.
    dpo_text = read(dpo)
    for key in ["micro_batch_size", "global_batch_size", "num_nodes", "devices", "ref_policy_kl_penalty"]:
        for v in ["0", "-1", "1e300", ".nan", "[1]", "{a: 1}", "null", "2147483648"]:
            text = re.sub(rf"(\n\s+{key}:)[^\n]*", rf"\1 {v}", dpo_text, count=1)
            yield Case("import", ["import", "nemo", "{d}/dpo.yaml", "--model",
                                  os.path.join(CORPUS, "nemo-launcher_llama3_8b.yaml"), "--cluster", cluster,
                                  "--out", "{o}/p.pbtxt"], {"dpo.yaml": text})
    yield Case("import", ["import", "nemo", dpo, "--model", dpo, "--cluster", cluster, "--out", "{o}/p.pbtxt"])
    yield Case("import", ["import", "nemo", dpo, "--model", "{d}", "--cluster", cluster, "--out", "{o}/p.pbtxt"])
    yield Case("import", ["import", "nemo", dpo, "--model", "/dev/zero", "--cluster", cluster, "--out",
                          "{o}/p.pbtxt"])
    yield Case("import", ["import", "nemo", dpo, "--model", "", "--cluster", cluster, "--out", "{o}/p.pbtxt"])
    yield Case("import", ["import", "nemo", dpo, "--model", "{d}/missing.yaml", "--cluster", cluster, "--out",
                          "{o}/p.pbtxt"])


LINE = ("torchrun --nproc_per_node 8 --nnodes 1 pretrain_gpt.py --num-layers 4 --hidden-size 1024 --num-attention-heads 16 "
        "--seq-length 2048 --max-position-embeddings 2048 --micro-batch-size 2 --global-batch-size 16 "
        "--vocab-size 50257 --bf16 --tensor-model-parallel-size 2")


def megatron_cases():
    """`import megatron`: NVTE_* environment lines, functional-test ENV_VARS, 2021 lines with the v2 step."""
    cluster = os.path.join(EX, "cluster-a100-512.pbtxt")
    envs = []
    for var in ["NVTE_FLASH_ATTN", "NVTE_FUSED_ATTN", "NVTE_MASKED_SOFTMAX_FUSION", "NVTE_X"]:
        for v in ["0", "1", "", "00", "-0", "'0", "\"0", "$((1/0))", "${UNSET:?x}", "$(cat /dev/zero)", "0 1",
                  "x" * 100000]:
            envs.append(f"export {var}={v}\n")
            envs.append(f"{var}={v} ")
            envs.append(f"env {var}={v} ")
    envs += ["export NVTE_FLASH_ATTN=0 NVTE_FUSED_ATTN=0\n" * 5000, "export " + "NVTE_A=0 " * 20000 + "\n",
             "export NVTE_FLASH_ATTN\n", "unset NVTE_FLASH_ATTN\n", "readonly NVTE_FUSED_ATTN=0\n"]
    for i, env in enumerate(envs):
        for extra in ["", " --attention-backend unfused", " --transformer-impl local"]:
            script = env + LINE + extra + ("\n" if env.endswith("\n") else "")
            if not env.endswith("\n"):
                script = env + LINE + extra + "\n"
            yield Case("import", ["import", "megatron", "{d}/l.sh", "--cluster", cluster, "--out", "{o}/p.pbtxt"],
                       {"l.sh": script})
    line2021 = ("python pretrain_gpt.py --num-layers 4 --hidden-size 1024 --num-attention-heads 16 --seq-length 2048 "
                "--max-position-embeddings 2048 --micro-batch-size 2 --global-batch-size 16 --vocab-size 50257 "
                "--tensor-model-parallel-size 2 --fp16")
    for extra in ["", " --DDP-impl local", " --DDP-impl torch", " --DDP-impl", " --DDP-impl 7", " --DDP-impl local "
                  "--use-contiguous-buffers-in-ddp", " --checkpoint-activations", " --checkpoint-activations "
                  "--activations-checkpoint-method uniform --activations-checkpoint-num-layers 0",
                  " --activations-checkpoint-method block --activations-checkpoint-num-layers -1",
                  " --activations-checkpoint-num-layers 4294967296 --checkpoint-activations",
                  " --fp16 --bf16", " --fp16 --accumulate-allreduce-grads-in-fp32", " --qk-layernorm",
                  " --qk-layernorm --num-attention-heads 0", " --loss-scale nan", " --loss-scale -inf"]:
        yield Case("import", ["import", "megatron", "{d}/l.sh", "--nodes", "1", "--cluster", cluster, "--out",
                              "{o}/p.pbtxt"], {"l.sh": line2021 + extra + "\n"})
    # Functional-test configs with ENV_VARS.
    for env in ["NVTE_FLASH_ATTN: 0\n  NVTE_FUSED_ATTN: 0", "NVTE_FLASH_ATTN: [0]", "NVTE_FLASH_ATTN: {a: 0}",
                "NVTE_FLASH_ATTN: null", "NVTE_FLASH_ATTN: '0'\n  NVTE_FLASH_ATTN: '1'", "? [a]\n  : 0",
                "NVTE_FLASH_ATTN: 0\n  NVTE_FUSED_ATTN: 0\n  NVTE_MASKED_SOFTMAX_FUSION: 0", "'NVTE_$(x)': 0",
                "NVTE_FLASH_ATTN: 1e300", "NVTE_FLASH_ATTN: \"\\0\""]:
        for body in ["ENV_VARS:\n  %s\n", "ENV_VARS: 5\n", "ENV_VARS: [a, b]\n", "ENV_VARS:\n"]:
            text = (body % env if "%s" in body else body) + (
                "MODEL_ARGS:\n  --num-layers: 4\n  --hidden-size: 1024\n  --num-attention-heads: 16\n"
                "  --seq-length: 2048\n  --max-position-embeddings: 2048\n  --micro-batch-size: 2\n"
                "  --global-batch-size: 16\n  --vocab-size: 50257\n  --bf16: true\n  --transformer-impl: "
                "transformer_engine\n  --attention-backend: auto\n")
            yield Case("import", ["import", "megatron", "{d}/t.yaml", "--nodes", "1", "--cluster", cluster, "--out",
                                  "{o}/p.pbtxt"], {"t.yaml": text})
    # Unterminated quotes and deep nesting in scripts.
    for s in ["TP='2\n" + LINE + " --tensor-model-parallel-size $TP\n", "X=\"$(" * 40 + "\n" + LINE + "\n",
              LINE + " --num-layers \"4\n", "cat <<EOF\n" + LINE + "\n", LINE + " \\\n", "$((" * 5000 + "\n",
              "export NVTE_FLASH_ATTN=\"0\n" + LINE + "\n"]:
        yield Case("import", ["import", "megatron", "{d}/l.sh", "--cluster", cluster, "--out", "{o}/p.pbtxt"],
                   {"l.sh": s})


def command_cases():
    """Every subcommand's flags with extreme values."""
    cl = os.path.join(EX, "cluster-hapt-case.pbtxt")
    pl = os.path.join(EX, "plan-hapt-case.pbtxt")
    model = os.path.join(EX, "model-gpt39b.pbtxt")
    for v in ["0", "-1", "nan", "inf", "1e300", "4294967296", "", "x", "0x10", "1,5"]:
        yield Case("run", ["run", pl, "--cluster", cl, "--max-events", v, "--report", "{o}/r.json"])
        yield Case("run", ["run", pl, "--cluster", cl, "--max-wall-seconds", v, "--report", "{o}/r.json"])
        yield Case("run", ["run", pl, "--cluster", cl, "--max-memory", v, "--report", "{o}/r.json"])
        yield Case("run", ["run", pl, "--cluster", cl, "--trace-replica", v, "--trace", "{o}/t.json"])
        yield Case("plan", ["plan", "--model", model, "--cluster", cl, "--global-batch", v, "--out", "{o}/p.pbtxt",
                            "--max-wall-seconds", "20", "-j", "1"])
        yield Case("plan", ["plan", "--model", model, "--cluster", cl, "--micro-batch", v, "--out", "{o}/p.pbtxt",
                            "--max-wall-seconds", "20", "-j", "1"])
        yield Case("plan", ["plan", "--model", model, "--cluster", cl, "--context-parallel", v, "--out",
                            "{o}/p.pbtxt", "--max-wall-seconds", "20", "-j", "1"])
        yield Case("plan", ["plan", "--model", model, "--cluster", cl, "--threads", v, "--out", "{o}/p.pbtxt",
                            "--max-wall-seconds", "20"])
        yield Case("sweep", ["sweep", os.path.join(EX, "sweep-bandwidth.pbtxt"), "-o", "{o}/rows.csv", "--jobs", v])
        yield Case("sweep", ["sweep", os.path.join(EX, "sweep-bandwidth.pbtxt"), "-o", "{o}/rows.csv", "--shard",
                             v + "/2"])
        yield Case("validate", ["validate", pl, "--cluster", cl, "--top-k", v, "--html", "{o}/v.html",
                                "--max-wall-seconds", "20"])
        yield Case("calibrate", ["calibrate", "--log-ranks", v, "--log-hosts", "1", "--cluster", cl, "--out",
                                 "{o}/c.pbtxt", os.path.join(ROOT, "tests", "bad_inputs", "calibrate_floor.md")])
        yield Case("fidelity", ["fidelity", os.path.join(ROOT, "validation", "nemo-h100-fp8.pbtxt"), "--max-wall-seconds",
                                v, "--json", "{o}/f.json", "--quiet"])
        yield Case("import", ["import", "megatron", "--line", LINE, "--cluster", cl, "--nodes", v, "--out",
                              "{o}/p.pbtxt"])
        yield Case("export", ["export", "chakra", pl, "--cluster", cl, "--out", "{o}/et", "--prefix", v])
        yield Case("example", ["example", "--out", "{o}/" + v, "--format", v])
        yield Case("example", ["example", "--out", "{o}/x" + v])
    for args in [["example"], ["example", "--out", "{o}/a", "--out", "{o}/b"], ["example", "--out", "/dev/null"],
                 ["example", "--out", "{d}/file"], ["example", "--out", "{d}/file/x"], ["example", "--out", ""],
                 ["check"], ["run"], ["run", "--chakra"], ["import"], ["import", "nemo"], ["export"],
                 ["export", "nope", pl], ["fidelity", "--json"], ["calibrate"], ["sweep"], ["validate"],
                 ["plan"], ["run", pl, "--cluster", cl, "--report", "{o}/r.json", "--report", "{o}/s.json"],
                 ["run", pl, "--cluster", pl, "--report", "{o}/r.json"], ["run", cl, "--cluster", cl],
                 ["check", pl, "--cluster", cl, "--type", "Nope"], ["run", pl, "--cluster", cl, "--fault", "x",
                                                                    "--report", "{o}/r.json"],
                 ["run", pl, "--cluster", cl, "--fault", "gpu: 99999999999 kind: SLOW factor: 2"],
                 ["run", pl, "--cluster", cl, "--jitter", "seed: -1 spread: nan"]]:
        yield Case(args[0] if args else "none", args, {"file": "x"})


def run_case(i, case, work):
    d = os.path.join(work, f"c{i}")
    o = os.path.join(d, "out")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(o)
    for name, data in case.files.items():
        path = os.path.join(d, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data.encode("utf-8", "surrogateescape") if isinstance(data, str) else data)
    args = [a.replace("{d}", d).replace("{o}", o) for a in case.args]
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1", UBSAN_OPTIONS="print_stacktrace=1")
    try:
        p = subprocess.run([ARGS.hetsim] + args, capture_output=True, timeout=ARGS.timeout, env=env, cwd=d)
        rc, err = p.returncode, p.stderr.decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        rc, err = "timeout", ""
    problems = []
    if rc not in (0, 2):
        problems.append(f"exit {rc}")
    if SANITIZER.search(err):
        problems.append("sanitizer report")
    if rc == 2 and os.listdir(o):
        problems.append("output left: " + ", ".join(sorted(os.listdir(o))))
    if rc == 2:
        named = [a for a in args if a and (a.startswith("--") or os.path.basename(a) in err)]
        if not any((os.path.basename(a) in err) or (a.startswith("--") and a in err) for a in named) and \
                "usage" not in err.lower() and "hetsim" not in err:
            problems.append("message names no file or flag")
    if not problems:
        shutil.rmtree(d, ignore_errors=True)
    return rc, problems, err, args


def main():
    cases = []
    for gen in [plan_cases, cluster_cases, garbage_cases, nemo_model_cases, megatron_cases, command_cases]:
        cases += list(gen())
    only = re.compile(ARGS.only) if ARGS.only else None
    os.makedirs(ARGS.work, exist_ok=True)
    counts = collections.Counter()
    failures = 0
    log = open(os.path.join(ARGS.work, "cases.tsv"), "w")  # every case: index, command, exit, first line of stderr
    for i, case in enumerate(cases):
        if only and not only.search(" ".join(case.args)):
            continue
        rc, problems, err, args = run_case(i, case, ARGS.work)
        counts[(case.command, "fail" if problems else f"exit {rc}")] += 1
        first = next((l for l in err.splitlines() if l.strip()), "")[:300]
        log.write(f"c{i}\t{case.command}\t{rc}\t{' '.join(a[:60] for a in args)}\t{first}\n")
        if problems:
            failures += 1
            print(f"FAIL c{i} {'; '.join(problems)}: hetsim {' '.join(a[:80] for a in args)}\n    {first}",
                  flush=True)
    total = sum(counts.values())
    for cmd in sorted({c for c, _ in counts}):
        row = {k: v for (c, k), v in counts.items() if c == cmd}
        print(f"{cmd}: {sum(row.values())} ({', '.join(f'{k} {v}' for k, v in sorted(row.items()))})")
    print(f"total {total} invocations, {failures} failing")
    return 1 if failures else 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hetsim", required=True)
    parser.add_argument("--work", default="/tmp/hetsim-hostile")
    parser.add_argument("--only")
    parser.add_argument("--timeout", type=float, default=60)
    ARGS = parser.parse_args()
    ARGS.hetsim = os.path.abspath(ARGS.hetsim)
    sys.exit(main())
