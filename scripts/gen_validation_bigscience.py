#!/usr/bin/env python3
"""Writes validation/bigscience-jeanzay-a100.pbtxt (BigScience's 3D-layout benchmarks of a 181B GPT on 48
nodes of Jean Zay, February 2022, before BLOOM's training), its cluster
(validation/clusters/jean-zay-a100-48.pbtxt) and one plan per run (validation/plans/bigscience-*.pbtxt).

Source: the BigScience workshop's training notes, https://github.com/bigscience-workshop/bigscience,
train/tr11-176B-ml/chronicles-prequel.md (commit 053adaf; written as train/tr11-200B-ml/README.md until
commit ddfe9cc of 2022-03-02 moved it), sections "GBS Variations", "some more configs with lower PP" and
"Tweaking TP", every row dated 02-25: one model (NLAYERS=72, NHIDDEN=14336, NHEADS=64, "181B") on 48 nodes
of 8 A100 80GB (384 GPUs), DP x TP x PP from 4 x 8 x 12 to 24 x 8 x 2 and 16 x 2 x 12, micro-batch 1 to 6,
global batch 1568, 2016 or 2048, each row with "Sec/it", the seconds of the 2nd iteration (the notes:
"I take the snapshot of a single iteration (always 2nd) the data isn't exact and can fluctuate a bit"),
and TFLOPs by the fork's own formula (which changed on 02-21, bigscience-workshop/Megatron-DeepSpeed#251):
the set uses Sec/it, as tokens/s per GPU = GBS x 2048 / (Sec/it x 384). The same day's "NHIDDEN=12288 /
NLAYERS=96" row (DP 8, TP 1, PP 48, "177B") is a group of its own.

The launch (the slurm script of the same days, train/tr11-200B-ml/tr11-200B-ml.slurm at commit f658243 of
2022-02-25, whose TP/PP/MBS/GBS/NLAYERS/NHIDDEN the runs edited): Megatron-DeepSpeed (the fork's
tr8b-104B branch) on DeepSpeed's pipeline engine, --fp16 (DeepSpeed's FP16 optimizer with dynamic loss
scaling; FP16 gradients: the notes' "BF16 optimizer ... accumulate gradients in fp32" arrived on 02-28,
after these rows), ZeRO stage 1 (ZERO_STAGE=1 in the config), --checkpoint-activations with
--deepspeed-activation-checkpointing (every block recomputed), sequence 2048, ALiBi positions
(--position-embedding-type alibi: no position-embedding table), --embed-layernorm, PyTorch 1.11
(start-py38-pt111), `export CUDA_LAUNCH_BLOCKING=1` commented out in the committed script ("XXX: remove for
main training!!!"), whose 10 nodes did not need it. The 48-node runs are taken to have set it
(Plan.cuda_launch_blocking, session 41): the same notes, "dealing with JZ hanging" (commit 57f4e9b of
2022-02-21, four days before these rows), found 320 GPUs "always hangs" without it on the 200B model
(TP 8 x PP 10) and hanging whenever inter-node traffic passed 100B-145B models on 20-40 nodes ("Hanging
Issue"), while these rows ran a 181B model on 384 GPUs to their 2nd iteration; every script from 02-28 on
exports it ("do not remove or the training will hang"). The vocabulary: the notes give "VOCAB_LENGTH=250k"
and the 181B size fits 250k (72 x (12h^2 + 13h) + v h); the multilingual tokenizer has 250,680 tokens
(train/tr11-176B-ml/README.md), padded by Megatron to a multiple of 128 x TP: 250,880 at TP 2, 4 and 8,
250,752 at TP 1 (commit b4aaa19 of 2022-03-01 fixed 250,880 for every TP later).

The layout, from the framework: DeepSpeed's PipeModelDataParallelTopology (axes pipe, data, model; the
model axis fastest) numbers ranks stage-major with TP inside a node, and torch.distributed.run numbers
them node by node: stage i holds nodes i x DP x TP / 8 onwards. GPTModelPipe is partitioned with
'type:transformer' (the notes, "Re-do": 78 blocks over 12 stages put 7 on each but the last): 72 blocks
split evenly over every PP here, the embedding on the first stage and the tied head on the last.

The hardware (train/tr11-176B-ml/README.md, "Hardware"): Jean Zay's A100 partition (gpu_p5), 8 A100 80GB a
node "using NVLink", 4 Omni-Path (OPA) links a node, "NCCL-communications network: a fully dedicated
subnet". Each OPA link at the 40.5 Gb/s that BigScience measured NCCL to deliver on four of these nodes
(experiments/bandwidth/all_reduce_bench-a100-n4.txt, 2022-01-28; experiments/bandwidth/README.md: "we have
an issue with nccl that doesn't fully utilize Intel OPA full bandwidth"), not Omni-Path's 100 Gb/s line
rate: the cluster's measured network, as the Sailor MIT cluster takes the artifact's measured profile
(docs/validation.md, "BigScience on Jean Zay", gives both readings). Assumptions: the node's NVLink as
NVSWITCH at the A100's 300 GB/s per GPU and direction (an HGX A100 board; the README does not name the
switch); the links as INFINIBAND (NCCL's IB transport, which the log shows) on a non-blocking fat tree;
the A100-80GB preset's clocks.

Not bundled: the "GBS Variations" row DP 8 x TP 8 x PP 6, MBS 4, GBS 1568 (113.01 s), which the same
table contradicts: the same layout at GBS 2048 took 114.11 s, while its two other GBS pairs scale with the
batch (PP 12: 92.75 / 117.07 = 0.79 and 99.93 / 128.82 = 0.78 for 1568 / 2048 = 0.77), and its own
TFLOPs (109.22 against 141.27) say the same; the second "8 x 4 x 12, MBS 2" row of "Tweaking TP" (38GB against the first's 44GB at the same
stated layout: something unstated differs), the rows of other days (the notes: "A100s PCI-Express/NUMA
was improved today so all TFLOPs have changed ... do not compare today's numbers to yesterday's", 02-25)
and the 02-28 rows (BF16 optimizer, a new partition method).

ZeRO-1's gradient reduction (Plan.zero_reduce_per_rank, session 44): DeepSpeed at 2151c78 (2022-02-18),
runtime/zero/stage_1_and_2.py, reduce_gradients copies the gradients into buckets of reduce_bucket_size (5e8
elements, runtime/zero/constants.py; the ds_config sets only "stage": 1), and average_tensor (reduce_scatter
on by default) reduces each bucket with one dist.reduce per data-parallel rank, after the last backward
(overlap_comm off by default).

Run from the repository root: scripts/gen_validation_bigscience.py (writes files only; needs no build).
"""
import math
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, _HERE)
import gen_validation_sailor as sailor  # noqa: E402  (its case_text: a set's case in tokens/s per GPU)
SEQ = 2048
VOCAB = 250680  # train/tr11-176B-ml/README.md: "Vocabulary size is 250,680 tokens"
GPUS_PER_NODE = 8
CLUSTER = "clusters/jean-zay-a100-48.pbtxt"
SRC = ("https://github.com/bigscience-workshop/bigscience/blob/053adafee86d8b0beb10ddd95e5bbbbe3d702f3c/"
       "train/tr11-176B-ml/chronicles-prequel.md")

# (section, layers, hidden, dp, tp, pp, mbs, gbs, sec/it), rows of the notes dated 02-25, in their order.
RUNS = [
    ("GBS Variations", 72, 14336, 8, 8, 6, 4, 2048, 114.11),
    ("GBS Variations", 72, 14336, 8, 8, 6, 6, 2016, 123.57),
    ("GBS Variations", 72, 14336, 4, 8, 12, 4, 1568, 92.75),
    ("GBS Variations", 72, 14336, 4, 8, 12, 4, 2048, 117.07),
    ("GBS Variations", 72, 14336, 4, 8, 12, 2, 1568, 99.93),
    ("GBS Variations", 72, 14336, 4, 8, 12, 2, 2048, 128.82),
    ("lower PP", 72, 14336, 6, 8, 8, 4, 2016, 113.16),
    ("lower PP", 72, 14336, 12, 8, 4, 2, 2016, 125.52),
    ("lower PP", 72, 14336, 12, 8, 4, 4, 2016, 114.81),
    ("lower PP", 72, 14336, 24, 8, 2, 1, 2016, 145.45),
    ("lower PP", 72, 14336, 24, 8, 2, 2, 2016, 136.13),
    ("Tweaking TP", 72, 14336, 8, 4, 12, 4, 2048, 111.89),
    ("Tweaking TP", 72, 14336, 8, 4, 12, 2, 2048, 110.48),
    ("Tweaking TP", 72, 14336, 16, 4, 6, 4, 2048, 117.11),
    ("Tweaking TP", 72, 14336, 16, 4, 6, 2, 2048, 111.71),
    ("Tweaking TP", 72, 14336, 16, 2, 12, 2, 2048, 112.50),
    ("Tweaking TP", 72, 14336, 8, 2, 24, 1, 2048, 119.53),
    ("Tweaking TP", 72, 14336, 8, 2, 24, 2, 2048, 122.75),
    ("Tweaking TP", 72, 14336, 4, 4, 24, 1, 2048, 130.60),
    ("NHIDDEN=12288 / NLAYERS=96", 96, 12288, 8, 1, 48, 1, 2048, 142.17),
]
HEADS = 64  # "all NHEADS=64 (above too)"; "NLAYERS=72 NHIDDEN=14336 NHEADS=64" heads the 02-25 tables


def padded_vocab(tp):
    """Megatron's _vocab_size_with_padding: a multiple of make_vocab_size_divisible_by (128) x TP."""
    step = 128 * tp
    return int(math.ceil(VOCAB / step) * step)


def case_name(run):
    _, layers, hidden, dp, tp, pp, mbs, gbs, _ = run
    size = "181b" if layers == 72 else "177b"
    return f"{size}-dp{dp}-tp{tp}-pp{pp}-mbs{mbs}-gbs{gbs}"


def stage_text(index, pp, per_stage, nodes_per_stage, dp, tp):
    first = 0 if index == 0 else 1 + index * per_stage
    count = per_stage + (1 if index == 0 else 0) + (1 if index == pp - 1 else 0)
    lines = ["stages {"]
    if first:
        lines.append(f"  first_layer: {first}")
    first_node = f"first_node: {index * nodes_per_stage} " if index else ""
    lines += [f"  num_layers: {count}",
              f'  mesh {{ island: "jean-zay" {first_node}node_count: {nodes_per_stage} '
              f'gpus_per_node: {GPUS_PER_NODE} }}',
              f"  tensor_parallel: {tp}", f"  data_parallel: {dp}", "  zero_stage: 1",
              "  recompute: RECOMPUTE_FULL", "}"]
    return "\n".join(lines) + "\n"


def plan_text(run):
    section, layers, hidden, dp, tp, pp, mbs, gbs, seconds = run
    assert layers % pp == 0 and gbs % (dp * mbs) == 0 and (dp * tp) % GPUS_PER_NODE == 0
    assert dp * tp * pp == 384
    name = "bigscience-" + case_name(run)
    text = "\n".join([
        f"# BigScience tr11 prequel, {SRC}",
        f'# ("{section}", 02-25): DP {dp}, TP {tp}, PP {pp}, micro-batch {mbs} per replica, global batch {gbs};',
        f"# measured {seconds} s for the 2nd iteration. Generated by scripts/gen_validation_bigscience.py.",
        f'name: "{name}"',
        "model {", f'  name: "bigscience-{layers}x{hidden}"', "  dtype: FP16", "  transformer {",
        f"    num_layers: {layers}", f"    hidden_size: {hidden}", f"    num_attention_heads: {HEADS}",
        f"    seq_length: {SEQ}", f"    vocab_size: {padded_vocab(tp)}",
        "    # GPTModelPipe ties the head to the embedding (TiedLayerSpec).", "    tied_embeddings: true",
        "    granularity: BLOCK", "  }", "}",
        f"global_batch_size: {gbs}", f"micro_batch_size: {dp * mbs}", "schedule: ONE_F_ONE_B",
        "# Megatron-DeepSpeed (BigScience's fork) on DeepSpeed's pipeline engine, FP16 with FP16 gradients,",
        "# ZeRO-1 over each stage's replicas, every block recomputed (--checkpoint-activations).",
        "framework: MEGATRON_DEEPSPEED",
        "# CUDA_LAUNCH_BLOCKING=1, BigScience's workaround for NCCL hangs on 40+ nodes (docs/validation.md,",
        "# BigScience's section, \"Session 41\").",
        "cuda_launch_blocking: true",
        "# ZeRO-1 registers no gradient hooks: autograd's AccumulateGrad adds each microbatch's FP16 gradients.",
        "autograd_grad_accumulation: true",
        "# ZeRO-1's reduction (DeepSpeed's stage_1_and_2.py, defaults: the ds_config sets only the stage): buckets of",
        "# reduce_bucket_size 5e8 FP16 elements, each reduced with one NCCL Reduce per data-parallel rank",
        "# (zero_reduce_per_rank, which MEGATRON_DEEPSPEED's profile turns on with ZeRO-1/2).",
        "grad_bucket_bytes: 1000000000"]) + "\n"
    per_stage = layers // pp
    nodes_per_stage = dp * tp // GPUS_PER_NODE
    for i in range(pp):
        text += stage_text(i, pp, per_stage, nodes_per_stage, dp, tp)
    return name, text


def set_case(name, run):
    """The run's `cases` entry, measured in tokens/s per GPU (scripts/gen_validation_sailor.py's case_text)."""
    section, layers, hidden, dp, tp, pp, mbs, gbs, seconds = run
    source = (f"BigScience tr11 chronicles-prequel.md, '{section}' (02-25): {layers} x {hidden}, 384 A100 80GB, "
              f"DP {dp}, TP {tp}, PP {pp}, MBS {mbs}, GBS {gbs}, {seconds} s per iteration")
    group = "181B on 48 nodes" if layers == 72 else "177B on 48 nodes"
    return sailor.case_text(case_name(run), source, name, CLUSTER, gbs * SEQ / (seconds * dp * tp * pp), group)


CLUSTER_TEXT = """# Jean Zay (IDRIS), the A100 partition BigScience benchmarked and trained BLOOM on: 48 of its 52 nodes.
# bigscience-workshop/bigscience, train/tr11-176B-ml/README.md, "Hardware": 8 A100 80GB a node "using
# NVLink", 4 Omni-Path links a node, "NCCL-communications network: a fully dedicated subnet".
# Generated by scripts/gen_validation_bigscience.py; assumptions there.
name: "jean-zay-a100-48"
gpu_types {
  name: "a100-80gb"
  preset: "A100-80GB"
}
# Assumed: an HGX A100 board, NVSwitch at the A100's 300 GB/s per GPU and direction.
node_types {
  name: "jz-a100"
  gpu_type: "a100-80gb"
  gpus_per_node: 8
  intra_node_fabric: NVSWITCH
  intra_node_bandwidth_gbps: 2400
  intra_node_latency_ns: 1000
}
# Four Omni-Path links a node (hfi1_0..3), each at the 40.5 Gb/s BigScience measured NCCL to deliver on
# these nodes: experiments/bandwidth/all_reduce_bench-a100-n4.txt (commit 358e3c8, 2022-01-28): a 4 GB
# FP32 all-reduce over 4 nodes x 8 A100, NCCL 2.10.3 over its IB transport on the hfi1 verbs, no
# GPUDirect RDMA in the log, the ring's two channels entering each node on hfi1_1 and leaving on hfi1_3:
# busbw 40.5 Gb/s (median of 160 timings, 1.53 s each), 41% of Omni-Path's 100 Gb/s line rate. As
# INFINIBAND on a non-blocking fat tree (assumed; the README says only "a fully dedicated subnet").
islands {
  name: "jean-zay"
  node_type: "jz-a100"
  node_count: 48
  fabric: INFINIBAND
  topology: FAT_TREE
  nics_per_node: 4
  nic_bandwidth_gbps: 40.5
  oversubscription: 1
  nodes_per_leaf: 16
}
"""

HEADER = """# Generated by scripts/gen_validation_bigscience.py from BigScience's training notes,
# {src}
# (02-25 rows): Megatron-DeepSpeed (DeepSpeed's pipeline engine, FP16, ZeRO-1, full recomputation) training
# a 181B GPT (72 x 14336, 64 heads) and a 177B one (96 x 12288) on 48 nodes of 8 A100 80GB (Jean Zay, 4 x
# Omni-Path a node) in 20 layouts: seconds per iteration as tokens/s per GPU. Format: validation/README.md;
# assumptions: docs/validation.md, "BigScience on Jean Zay".
"""

# Bounds at today's level (session 44, docs/validation.md, "BigScience on Jean Zay", with DeepSpeed's per-rank
# reduce calls): MAPE 5.62%, every case within 12.92% (177b-dp8-tp1-pp48), calibrated (k = 3) 6.22%, mean regret
# 1.1% (the top plan wrong in the one group: hetsim picks DP 16 x TP 4 x PP 6 at MBS 2, 1.1% slower measured than
# DP 8 x TP 4 x PP 12). A regression guard a little above them; what is left is TP 8 at micro-batches 1, 2 and 6
# (+6% to +10%) and the deep pipelines at TP 1-2 (-8% to -13%).
DESCRIPTION = ('description: "BigScience tr11 prequel (02-25): Megatron-DeepSpeed, FP16, ZeRO-1, full recomputation, '
               '181B GPT in 19 DP x TP x PP x MBS x GBS layouts and a 177B one on 384 A100 80GB of Jean Zay: '
               '20 runs, tokens/s per GPU"\n')
BOUNDS = ("bounds {\n  max_mape_percent: 6\n  max_abs_error_percent: 14\n  max_calibrated_mape_percent: 6.5\n"
          "  max_mean_regret_percent: 2.5\n}\n")


def owned_files():
    """Every file this script owns, relative to validation/: the cluster, a plan per run, the set."""
    plans = [plan_text(run) for run in RUNS]
    files = {f"plans/{name}.pbtxt": text for name, text in plans}
    files[CLUSTER] = CLUSTER_TEXT
    files["bigscience-jeanzay-a100.pbtxt"] = "".join(
        [HEADER.format(src=SRC), 'name: "bigscience-jeanzay-a100"\n', DESCRIPTION, BOUNDS]
        + [set_case(name, run) for (name, _), run in zip(plans, RUNS)])
    return files


def main():
    root = os.path.join(_HERE, "..", "validation")
    for path, text in owned_files().items():
        with open(os.path.join(root, path), "w") as out:
            out.write(text)


if __name__ == "__main__":
    main()
