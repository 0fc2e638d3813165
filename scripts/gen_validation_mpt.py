#!/usr/bin/env python3
"""Writes validation/mpt-composer-fsdp-a100.pbtxt and validation/mpt-composer-fsdp-h100.pbtxt (MosaicML's
published MPT training throughputs with Composer's PyTorch FSDP on one node of 8 A100 80GB or 8 H100 80GB,
one set per GPU type, as a user calibrates on their own cluster) and one plan per run
(validation/plans/mpt-*.pbtxt).

Source: mosaicml/llm-foundry, scripts/train/benchmarking/README.md ("MPT Training Benchmarks") as commit
b2a43a147 (2023-10-19, "Update_pretrain_benchmarks", #543) wrote its tables "H100 80GB BF16" and
"A100 80GB with 1600 Gbps node-node interconnect (RoCE)"; the same rows are in the README today. Each row
gives the model, the sequence length, the GPUs and their type, the micro-batch per GPU (MicroBatchSize),
the gradient accumulation (GradAccum), the global batch (GlobalBatchSize = 8 x micro-batch x accumulation
here), the measured throughput (Throughput (T/s/GPU), tokens per second per GPU, the value bundled),
Precision (amp_bf16), the FSDP mixed-precision mode (DEFAULT), the sharding (FULL_SHARD), activation
checkpointing (True/False), CPU offload (False everywhere) and NumParams. The models are the MPT configs of
the same commit (scripts/train/yamls/pretrain/mpt-*.yaml: d_model, n_heads, n_layers, expansion_ratio 4,
vocab_size 50368, attn_impl triton); submit_benchmarks.py of the commit sets max_seq_len to the row's and
norm_type low_precision_layernorm. Every row's NumParams equals 12 L h^2 + 13 L h + 2 h + (50368 + seq) h
(blocks with biases and LayerNorm weights and biases, the final LayerNorm, the tied token embedding and
the learned position embedding): the generator checks it, so the shapes are the runs'.

What is assumed (docs/validation.md, "MPT with Composer FSDP"):
- Framework: FSDP2_TORCHTITAN, hetsim's PyTorch-native profile, for Composer's FSDP (FSDP1, FULL_SHARD,
  one unit per block, limit_all_gathers, backward prefetch): parameters gathered block by block and
  resharded after the forward, gradients reduce-scattered per block in FP32 (DEFAULT mixed precision's
  reduce_dtype, the profile's grad_reduce_in_fp32), eager kernels (no torch.compile in these runs), the
  FlashAttention-2 backward ratio for MPT's Triton FlashAttention (same algorithm, a different kernel).
- Attention: ATTENTION_FLASH_TRITON, the yamls' attn_impl triton: llm-foundry's flash_attn_triton.py (copied
  from flash-attn at eff9fe6b), on triton-pre-mlir (llm-foundry v0.3.0's setup.py, vchiley/triton
  triton_pre_mlir_sm90, which submit_benchmarks.py installs with -e .[gpu]), whose legacy code generator
  builds its dot products from Ampere's mma.sync on the H100 too: priced at the GPU's mma_sync_speed
  (docs/hardware.md; 1 on the A100).
  The profile's `eager_kernels` is switched off (framework_off): it prices torchtitan's Llama block run
  eagerly (an FP32 RMSNorm of seven kernels, complex-FP32 RoPE, SwiGLU as separate ops; docs/frameworks.md),
  none of which MPT's block has (llm-foundry's MPTBlock: low_precision_layernorm, one F.layer_norm each, a
  GELU MLP, a learned position table and no rotary embedding).
- Model: a standard GPT block (4h GELU MLP, multi-head attention, tied embeddings); the biases and the
  learned position table are not modelled (0.02-0.2% of the parameters; 13 L h and seq x h above).
- Hardware: one node of 8 GPUs on NVSwitch (HGX), the A100 80GB SXM and H100 SXM 80GB presets, through the
  SC'21 set's DGX A100 cluster file and the NeMo set's DGX H100 file; single-node rows only, so the network
  between nodes plays no part (the H100 table does not name its network).
- Left out, with the reason: the tables' multi-node rows (16 to 64 H100, whose network is not given, and
  the 70b rows in PURE mode), the H100 FP8 table (`amp_fp8` with the yamls' default torch Linear layers:
  which GEMMs ran in FP8 is not stated), the A100 40GB table (PURE bf16, a different precision mode), and
  the later "Large Scale" H100 table (2024, another commit).

Run from the repository root: scripts/gen_validation_mpt.py (writes files only; needs no build).
"""
import os

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "validation")
SRC = "https://github.com/mosaicml/llm-foundry/blob/b2a43a147/scripts/train/benchmarking/README.md"
VOCAB = 50368
# The node files: (cluster, island) per GPU type; both DGX files hold 8-GPU NVSwitch nodes.
CLUSTERS = {"a100": ("clusters/selene-a100-3072.pbtxt", "selene"), "h100": ("clusters/dgx-h100-1024.pbtxt", "h100")}
TABLES = {"a100": "A100 80GB with 1600 Gbps node-node interconnect (RoCE)", "h100": "H100 80GB BF16"}

# mpt-<size>.yaml at b2a43a147: d_model, n_heads, n_layers.
MPT = {"125m": (768, 12, 12), "350m": (1024, 16, 24), "760m": (1536, 12, 24), "1b": (2048, 16, 24),
       "3b": (2560, 20, 32), "7b": (4096, 32, 32), "13b": (5120, 40, 40), "30b": (7168, 56, 48)}

# The 8-GPU amp_bf16 / DEFAULT / FULL_SHARD rows, as the README has them: (GPU, model, SeqLen,
# MicroBatchSize, GradAccum, GlobalBatchSize, Throughput (T/s/GPU), Activation Checkpointing, NumParams).
ROWS = [
    ("h100", "30b", 8192, 1, 21, 168, 1384, True, 30019254272),
    ("h100", "30b", 4096, 1, 21, 168, 1802, True, 29989894144),
    ("h100", "30b", 2048, 3, 21, 504, 2002, True, 29975214080),
    ("h100", "30b", 1024, 6, 21, 1008, 2084, True, 29967874048),
    ("h100", "13b", 32768, 1, 3, 24, 1976, True, 13011240960),
    ("h100", "13b", 16384, 3, 3, 72, 2985, True, 12927354880),
    ("h100", "13b", 4096, 10, 3, 240, 4717, True, 12864440320),
    ("h100", "13b", 2048, 2, 1, 16, 4792, False, 12853954560),
    ("h100", "13b", 1024, 40, 3, 960, 5502, True, 12848711680),
    ("h100", "7b", 65536, 1, 2, 16, 1956, True, 6918905856),
    ("h100", "7b", 32768, 2, 2, 32, 3318, True, 6784688128),
    ("h100", "7b", 8192, 8, 2, 128, 6935, True, 6684024832),
    ("h100", "7b", 4096, 16, 2, 256, 8611, True, 6667247616),
    ("h100", "7b", 2048, 6, 1, 48, 10643, False, 6658859008),
    ("h100", "7b", 1024, 64, 2, 1024, 10203, True, 6654664704),
    ("h100", "3b", 65536, 1, 2, 16, 3262, True, 2814366720),
    ("h100", "3b", 32768, 3, 6, 144, 5873, True, 2730480640),
    ("h100", "3b", 16384, 1, 6, 48, 11152, False, 2688537600),
    ("h100", "3b", 8192, 3, 6, 144, 16578, False, 2667566080),
    ("h100", "3b", 4096, 5, 6, 240, 20964, False, 2657080320),
    ("h100", "3b", 1024, 20, 6, 960, 27046, False, 2649216000),
    ("h100", "3b", 512, 40, 6, 1920, 27965, False, 2647905280),
    ("h100", "1b", 65536, 1, 2, 16, 5506, True, 1445974016),
    ("h100", "1b", 32768, 1, 4, 32, 12025, False, 1378865152),
    ("h100", "1b", 16384, 2, 4, 64, 19649, False, 1345310720),
    ("h100", "1b", 8192, 3, 4, 96, 29157, False, 1328533504),
    ("h100", "1b", 4096, 7, 4, 224, 38535, False, 1320144896),
    ("h100", "1b", 2048, 14, 1, 112, 45455, False, 1315950592),
    ("h100", "1b", 1024, 18, 4, 576, 48910, False, 1313853440),
    ("h100", "1b", 512, 56, 4, 1792, 52275, False, 1312804864),
    ("h100", "760m", 32768, 1, 2, 16, 16291, False, 807656448),
    ("h100", "760m", 16384, 3, 2, 48, 27815, False, 782490624),
    ("h100", "760m", 8192, 6, 2, 96, 41825, False, 769907712),
    ("h100", "760m", 4096, 12, 2, 192, 55459, False, 763616256),
    ("h100", "760m", 2048, 24, 2, 384, 63147, False, 760470528),
    ("h100", "760m", 1024, 48, 2, 768, 78581, False, 758897664),
    ("h100", "760m", 512, 96, 2, 1536, 83749, False, 758111232),
    ("a100", "30b", 8192, 1, 21, 168, 574, True, 30019254272),
    ("a100", "30b", 4096, 1, 21, 168, 814, True, 29989894144),
    ("a100", "30b", 2048, 3, 21, 504, 916, True, 29975214080),
    ("a100", "30b", 1024, 6, 21, 1008, 946, True, 29967874048),
    ("a100", "30b", 512, 12, 21, 2016, 967, True, 29964204032),
    ("a100", "13b", 32768, 1, 3, 24, 1016, True, 13011240960),
    ("a100", "13b", 16384, 3, 3, 72, 1431, True, 12927354880),
    ("a100", "13b", 8192, 5, 3, 120, 1795, True, 12885411840),
    ("a100", "13b", 4096, 10, 3, 240, 2060, True, 12864440320),
    ("a100", "13b", 2048, 2, 3, 48, 2262, False, 12853954560),
    ("a100", "13b", 1024, 40, 3, 960, 2330, True, 12848711680),
    ("a100", "7b", 65536, 1, 2, 16, 1013, True, 6918905856),
    ("a100", "7b", 32768, 2, 2, 32, 1672, True, 6784688128),
    ("a100", "7b", 16384, 4, 2, 64, 2453, True, 6717579264),
    ("a100", "7b", 8192, 8, 2, 128, 3206, True, 6684024832),
    ("a100", "7b", 4096, 16, 2, 256, 3684, True, 6667247616),
    ("a100", "7b", 2048, 6, 2, 96, 4641, False, 6658859008),
    ("a100", "7b", 1024, 64, 2, 1024, 4357, True, 6654664704),
    ("a100", "3b", 65536, 1, 2, 16, 1767, True, 2814366720),
    ("a100", "3b", 32768, 3, 6, 144, 3029, True, 2730480640),
    ("a100", "3b", 16384, 1, 6, 48, 5529, False, 2688537600),
    ("a100", "3b", 8192, 3, 6, 144, 7695, False, 2667566080),
    ("a100", "3b", 4096, 5, 6, 240, 9457, False, 2657080320),
    ("a100", "3b", 2048, 10, 2, 160, 10811, False, 2651837440),
    ("a100", "3b", 1024, 20, 6, 960, 11580, False, 2649216000),
    ("a100", "3b", 512, 40, 6, 1920, 12127, False, 2647905280),
    ("a100", "1b", 65536, 1, 2, 16, 3044, True, 1445974016),
    ("a100", "1b", 32768, 1, 4, 32, 6275, False, 1378865152),
    ("a100", "1b", 16384, 2, 4, 64, 9956, False, 1345310720),
    ("a100", "1b", 8192, 3, 4, 96, 13814, False, 1328533504),
    ("a100", "1b", 4096, 7, 4, 224, 17807, False, 1320144896),
    ("a100", "1b", 2048, 14, 4, 448, 20513, False, 1315950592),
    ("a100", "1b", 1024, 18, 4, 576, 22112, False, 1313853440),
    ("a100", "1b", 512, 56, 4, 1792, 23148, False, 1312804864),
    ("a100", "760m", 65536, 1, 2, 16, 4143, True, 857988096),
    ("a100", "760m", 32768, 1, 2, 16, 8802, False, 807656448),
    ("a100", "760m", 16384, 3, 2, 48, 14274, False, 782490624),
    ("a100", "760m", 8192, 6, 2, 96, 20933, False, 769907712),
    ("a100", "760m", 4096, 12, 2, 192, 27351, False, 763616256),
    ("a100", "760m", 2048, 24, 2, 384, 32434, False, 760470528),
    ("a100", "760m", 1024, 48, 2, 768, 29765, False, 758897664),
    ("a100", "760m", 512, 96, 2, 1536, 29446, False, 758111232),
    ("a100", "350m", 65536, 1, 2, 16, 7524, False, 420997120),
    ("a100", "350m", 32768, 2, 2, 32, 13652, False, 387442688),
    ("a100", "350m", 16384, 4, 2, 64, 23559, False, 370665472),
    ("a100", "350m", 8192, 8, 2, 128, 36569, False, 362276864),
    ("a100", "350m", 4096, 16, 2, 256, 49555, False, 358082560),
    ("a100", "350m", 2048, 32, 2, 512, 58782, False, 355985408),
    ("a100", "350m", 1024, 64, 2, 1024, 64813, False, 354936832),
    ("a100", "350m", 512, 128, 2, 2048, 69330, False, 354412544),
    ("a100", "125m", 65536, 1, 2, 16, 20368, False, 174070272),
    ("a100", "125m", 32768, 2, 2, 32, 36407, False, 148904448),
    ("a100", "125m", 16384, 4, 2, 64, 60040, False, 136321536),
    ("a100", "125m", 8192, 8, 2, 128, 90392, False, 130030080),
    ("a100", "125m", 4096, 16, 2, 256, 118396, False, 126884352),
    ("a100", "125m", 2048, 40, 2, 640, 142830, False, 125311488),
    ("a100", "125m", 2048, 32, 2, 512, 141737, False, 125311488),
    ("a100", "125m", 1024, 64, 2, 1024, 156468, False, 124525056),
    ("a100", "125m", 512, 128, 2, 2048, 165681, False, 124131840),
]


def check_params(row):
    """The model config reproduces the row's NumParams (see the docstring)."""
    _, model, seq, _, _, _, _, _, params = row
    h, _, layers = MPT[model]
    expected = 12 * layers * h * h + 13 * layers * h + 2 * h + (VOCAB + seq) * h
    assert expected == params, f"{row}: {expected} parameters from the config"


def case_name(row, seen):
    gpu, model, seq, mbs = row[:4]
    name = f"{gpu}-{model}-{seq}"
    if name in seen:  # the A100 125m table has two 2048-token rows (micro-batch 40 and 32)
        name += f"-mb{mbs}"
    seen.add(name)
    return name


def plan_text(name, row):
    gpu, model, seq, mbs, accum, gbs, tps, ckpt, params = row
    h, heads, layers = MPT[model]
    island = CLUSTERS[gpu][1]
    assert gbs == 8 * mbs * accum
    lines = [f"# MPT-{model} with Composer FSDP on 8 x {gpu.upper()} 80GB: {SRC}, table \"{TABLES[gpu]}\",",
             f"# row {model} / {seq} tokens: micro-batch {mbs}, accumulation {accum}, global batch {gbs}, "
             f"activation checkpointing {ckpt}; {tps} tokens/s per GPU measured.",
             "# Generated by scripts/gen_validation_mpt.py.", f'name: "mpt-{name}"', "model {",
             f'  name: "mpt-{model}"', "  dtype: BF16", "  transformer {", f"    num_layers: {layers}",
             f"    hidden_size: {h}", f"    num_attention_heads: {heads}", f"    seq_length: {seq}",
             f"    vocab_size: {VOCAB}", "    tied_embeddings: true", "    granularity: BLOCK",
             "    attention: ATTENTION_FLASH_TRITON", "  }", "}", f"global_batch_size: {gbs}",
             f"micro_batch_size: {8 * mbs}", "schedule: ONE_F_ONE_B", "stages {", f"  num_layers: {layers + 2}",
             f'  mesh {{ island: "{island}" node_count: 1 gpus_per_node: 8 }}', "  data_parallel: 8",
             "  zero_stage: 3"]
    if ckpt:
        lines.append("  recompute: RECOMPUTE_FULL")
    lines += ["}", "# Composer's FSDP (FULL_SHARD, DEFAULT mixed precision: FP32 gradient reduction), eager PyTorch;",
              "# eager_kernels prices torchtitan's Llama block (FP32 RMSNorm, complex RoPE, SwiGLU as separate ops),",
              "# none of which MPT's block has (one LayerNorm kernel each, GELU MLP, a learned position table).",
              "framework: FSDP2_TORCHTITAN", 'framework_off: "eager_kernels"',
              "# low_precision_layernorm is F.layer_norm, PyTorch's native kernel: its backward reads the output",
              "# gradient and the input again for gamma and beta (docs/cost-model.md, the LayerNorm kernels by stack).",
              "layer_norm_weight_grad_pass: true"]
    return "\n".join(lines) + "\n"


def set_case(name, row):
    gpu, model, seq, mbs, accum, gbs, tps, ckpt, _ = row
    return "\n".join([
        "cases {", f'  name: "{name}"',
        f'  source: "llm-foundry benchmarking README (b2a43a147), {TABLES[gpu]}: {model}, {seq} tokens, 8 GPUs, '
        f'micro-batch {mbs}, accumulation {accum}, activation checkpointing {ckpt}, {tps} tokens/s per GPU"',
        "  training_run {", f'    plan: "plans/mpt-{name}.pbtxt"', f'    cluster: "{CLUSTERS[gpu][0]}"',
        f"    measured_tokens_per_second_per_gpu: {tps}", "  }", f'  group: "{model}"', "}"]) + "\n"


HEADER = f"""# Generated by scripts/gen_validation_mpt.py from MosaicML's published MPT training benchmarks,
# {SRC}, table "{{table}}":
# llm-foundry / Composer with PyTorch FSDP (FULL_SHARD, amp_bf16, Triton FlashAttention), MPT-{{models}} at
# 512 to 65,536 tokens on one node of 8 {{gpu}} 80GB; tokens/s per GPU as the table gives them.
# Held out (never fitted). Format: validation/README.md; assumptions: docs/validation.md, "MPT with Composer FSDP".
"""

# Bounds at the level of session 43 (docs/validation.md, "MPT with Composer FSDP"; a Triton kernel's
# forward-to-backward split): A100 MAPE 9.49%, max 25.18%, k = 3 6.60%, top plan right in 6 of 8 groups, regret
# 1.5% (session 42: 9.87%, 25.18%, 7.03%); H100 MAPE 8.73%, max 23.90% (30b at 8,192 tokens, which the split
# moves from 22.53%: its case bound rises from 23.5% to 24%), k = 3 8.89%, 6 of 6, regret 0.0% (session 42:
# 9.21%, 22.53%, 9.40%). Regression guards a little above them, not issue 40's 8%.
BOUNDS = {
    "a100": ("bounds {\n  max_mape_percent: 9.75\n  max_abs_error_percent: 25.5\n  max_calibrated_mape_percent: 7\n"
             "  min_top1_agreement: 0.75\n  max_mean_regret_percent: 2\n}\n"),
    "h100": ("bounds {\n  max_mape_percent: 9.25\n  max_abs_error_percent: 24\n  max_calibrated_mape_percent: 9.25\n"
             "  min_top1_agreement: 0.8\n  max_mean_regret_percent: 1\n}\n"),
}


def main():
    seen = set()
    cases = {"a100": "", "h100": ""}
    for row in ROWS:
        check_params(row)
        name = case_name(row, seen)
        with open(os.path.join(ROOT, "plans", f"mpt-{name}.pbtxt"), "w") as f:
            f.write(plan_text(name, row))
        cases[row[0]] += set_case(name, row)
    for gpu, text in cases.items():
        rows = [r for r in ROWS if r[0] == gpu]
        models = f"{rows[-1][1].upper()} to {rows[0][1].upper()}"
        header = HEADER.format(table=TABLES[gpu], models=models, gpu=gpu.upper())
        with open(os.path.join(ROOT, f"mpt-composer-fsdp-{gpu}.pbtxt"), "w") as f:
            f.write(header + f'name: "mpt-composer-fsdp-{gpu}"\n'
                    f'description: "MosaicML llm-foundry benchmarks: MPT-{models} with Composer FSDP (FULL_SHARD, '
                    f'amp_bf16) on 8 {gpu.upper()} 80GB, 512 to 65,536 tokens: {len(rows)} runs, tokens/s per GPU, one '
                    f'group per model"\n' + BOUNDS[gpu] + text)


if __name__ == "__main__":
    main()
