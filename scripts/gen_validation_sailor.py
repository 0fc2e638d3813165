#!/usr/bin/env python3
"""Writes validation/sailor-mit-lab.pbtxt (Sailor's measured runs on a lab cluster of three GPU
generations), its cluster (validation/clusters/mit-lab-3090-titan-2080ti.pbtxt) and one plan per run
(validation/plans/sailor-mit-*.pbtxt).

Source: Strati et al., "Sailor: Automating Distributed Training over Dynamic, Heterogeneous, and
Geo-distributed Clusters" (SOSP'25, arXiv 2504.17096), and its artifact, https://github.com/eth-easl/sailor
(commit 4b2404 of the mirror read here): sailor/Planner/simulations/validation/mit/N*/plan_config_*.json,
the runs its simulator validation compares against. Each file holds one training run of Sailor's framework
(Megatron-DeepSpeed with DeepSpeed's pipeline engine, third_party/Megatron-DeepSpeed) on the "cluster from
the MIT university containing 8-Titan-RTX, 8-RTX-2080, and 8-RTX-3090" nodes (the artifact's README):
its plan (stages, the layers of each, and per stage the data-parallel replicas, each on one GPU type
with its TP degree), the micro-batch size, the global batch and `real`, the mean seconds per
iteration (ae_scripts/clariden_scripts/process_results.py: the mean of the "Iteration took ... sec" lines
that the fork's megatron/training.py writes around PipelineEngine.train_batch into
sailor_log_worker_rank_0, after the first three). The measurement is seconds per iteration; the set
states it as tokens/s per GPU (gbs x 2048 / (seconds x GPUs)).

What the artifact says and what is assumed (docs/validation.md, "Sailor on a lab cluster"):
- Model: OPT-350M as Sailor runs it (simulations/configs/training_config_opt_350.json and
  ae_scripts/clariden_scripts/run_opt.slurm): Megatron's GPT, 24 layers, hidden 1024, 16 heads,
  sequence 2048, the GPT-2 vocabulary (50257, padded by Megatron to a multiple of 128 x TP), untied
  embeddings since session 44: the fork's OPTModelPipe (megatron/model/opt_model.py) builds the embedding
  (OPTEmbeddingPipe) and the head (OPTLMHeadPipe, its own ColumnParallelLinear lm_head) as plain LayerSpecs,
  no TiedLayerSpec (until then read as GPTModelPipe's). Sailor's 26 "layers" are the embedding, the 24
  blocks and the head: hetsim's BLOCK granularity, index for index.
- Precision: FP32. The launch (run_opt.slurm) passes neither --fp16 nor --bf16 (megatron/arguments.py of
  the fork: both store_true), and validate.py calls the simulator with fp16=False.
- Framework: MEGATRON_DEEPSPEED with its profile's defaults: DeepSpeed's pipeline engine (1F1B), the
  fork's deepspeed/pipe_engine.py with partitioned activations and gradients between stages (the
  config's pipe_partitioned / grad_partitioned defaults), every transfer a rendezvous of its stage pair
  (DeepSpeed's TrainSchedule; the profile's p2p_rendezvous), the data-parallel all-reduce after the last
  backward (_exec_reduce_grads); _exec_reduce_tied_grads finds no tied weight (the model ties none).
  None of the AMP set's v1.1.5 quirks (block_forward_passes, unfused elementwise, ...) applies.
- Replicas of a stage on different GPU types each take the same micro-batch (the plan has one `mbs`;
  GA_STEPS = gbs / (mbs x dp) in run_opt.slurm): `micro_batch_share` equal, the fast replica waits.
- The cluster: node types from the artifact's basic_cluster_config.json (8 GPUs per node; the "RTX-2080"
  has 11 GiB, so it is the RTX 2080 Ti: the RTX 2080 has 8 GB); node names from the Aceso scripts of the
  same lab (baselines/Aceso/scripts_mit/run_mit.sh: "k1: RTX-3090; n2-n3: Titan-RTX; r4-r6: RTX-2080"):
  1 RTX 3090 node, 2 TITAN RTX nodes, 3 RTX 2080 Ti nodes. The network is the artifact's measured
  send/recv profile (sailor/providers/network_coeffs_all_homo.json, "inter", profiling/networking/
  test_sendrecv.py: the aggregate over 1 to 8 concurrent GPU pairs): 2.86 GB/s (22.9 Gb/s, 25 GbE) from
  the TITAN RTX and RTX 2080 Ti nodes, 0.116 GB/s (0.93 Gb/s, 1 GbE) from the RTX 3090 node, at every
  pair count: one NIC per node. Inside a node the same profile ("intra"): the RTX 3090 node 49.8 GB/s
  between a GPU pair and 5.3 GB/s over 4 concurrent pairs of its 8 GPUs (NVLink bridges on pairs, no PCIe
  peer-to-peer: GeForce Ampere); the Turing nodes 10.8 GB/s for a pair and 6.1 GB/s a pair over 4 pairs
  (PCIe Gen3, no bridges). Since session 36 the Turing nodes have no peer-to-peer either (GeForce Turing
  refuses it without a bridge, NVIDIA/nccl-tests#117; NCCL uses SHM across PCIe switches on Intel hosts,
  src/graph/paths.cc) and each host-bounced hop runs at 3.9 GB/s, NVIDIA/nccl#384's SHM all-reduce on a
  Gen3 host; the artifact's per-layer profiles at TP 2 to 8 (simulations/profiles_tmp.json) agree
  (docs/network.md, "Host-bounced rings").
- Not in the artifact (assumptions): TCP sockets without RDMA (fabric ETHERNET, NCCL's defaults: one
  thread, one socket); one CPU socket per node; the RTX 3090 host's DRAM at 204.8 GB/s (8 channels of
  DDR4-3200) and the Turing hosts' at 128 GB/s (6 channels of DDR4-2666) for the no-P2P path (neither
  binds: the SHM connections do); the TITAN RTX without PCIe P2P like its GeForce sibling; GPU pairs (2k, 2k+1) bridged on the RTX 3090 node; the replicas'
  nodes taken in plan order (first stage first) from each type's nodes.
- Left out: N3/plan_config_N3_D1.json, whose `real`, `red_grads` and `max_mem` equal N6_D2's to the last
  digit (59.45533 s, 5.4637 s, 6305087488 B) while it has no data parallelism (its gradient reduction
  cannot take 5.5 s; the other pipelines without DP reduce in 0.002-0.008 s): a copy, not a run.

Run from the repository root: scripts/gen_validation_sailor.py (writes files only; needs no build).
"""
import math
import os

SEQ = 2048
VOCAB = 50257  # GPT-2's vocab file (gpt2-vocab.json), before Megatron's padding
CLUSTER = "clusters/mit-lab-3090-titan-2080ti.pbtxt"
SRC = "https://github.com/eth-easl/sailor/blob/main/sailor/Planner/simulations/validation/mit/"

# The artifact's GPU type names -> (hetsim island, nodes in the lab).
TYPES = {"RTX-3090": ("rtx3090", 1), "Titan-RTX": ("titan", 2), "RTX-2080": ("rtx2080ti", 3)}

# One run per artifact file: (file, gbs, mbs, [(layers, [(gpu type, GPUs of the node used, TP), ...
# one per data-parallel replica]) per stage], measured seconds per iteration), as the files have them.
RUNS = [
    ("N2/plan_config_N2_D1.json", 256, 2,
     [(range(0, 12), [("RTX-3090", 2, 2)]), (range(12, 26), [("Titan-RTX", 2, 2)])], 119.83914),
    ("N2/plan_config_N2_D2.json", 256, 2,
     [(range(0, 26), [("Titan-RTX", 2, 2), ("RTX-3090", 2, 2)])], 91.78),
    ("N4/plan_config_N4_D1.json", 256, 2,
     [(range(0, 5), [("RTX-3090", 8, 8)]), (range(5, 12), [("RTX-2080", 8, 8)]),
      (range(12, 19), [("Titan-RTX", 8, 8)]), (range(19, 26), [("RTX-2080", 8, 8)])], 83.76622),
    ("N4/plan_config_N4_D2.json", 256, 2,
     [(range(0, 12), [("RTX-3090", 8, 8), ("RTX-2080", 8, 8)]),
      (range(12, 26), [("Titan-RTX", 8, 8), ("RTX-2080", 8, 8)])], 66.06712),
    ("N4/plan_config_N4_D4.json", 256, 2,
     [(range(0, 26), [("RTX-3090", 8, 8), ("RTX-2080", 8, 8), ("Titan-RTX", 8, 8), ("RTX-2080", 8, 8)])],
     83.45238),
    ("N6/plan_config_N6_D2.json", 288, 2,
     [(range(0, 8), [("RTX-3090", 8, 8), ("RTX-2080", 8, 8)]),
      (range(8, 17), [("RTX-2080", 8, 8), ("Titan-RTX", 8, 8)]),
      (range(17, 26), [("RTX-2080", 8, 8), ("Titan-RTX", 8, 8)])], 59.45533),
    ("N6/plan_config_N6_D3.json", 288, 2,
     [(range(0, 12), [("RTX-3090", 8, 8), ("RTX-2080", 8, 8), ("RTX-2080", 8, 8)]),
      (range(12, 26), [("Titan-RTX", 8, 8), ("RTX-2080", 8, 8), ("Titan-RTX", 8, 8)])], 54.2392),
    ("N6/plan_config_N6_D6.json", 288, 2,
     [(range(0, 26), [("RTX-3090", 8, 8), ("RTX-2080", 8, 8), ("RTX-2080", 8, 8), ("Titan-RTX", 8, 8),
                      ("RTX-2080", 8, 8), ("Titan-RTX", 8, 8)])], 70.78508),
]


def case_name(path):
    """N4/plan_config_N4_D2.json -> n4-d2 (nodes, data-parallel degree)."""
    stem = os.path.basename(path)[len("plan_config_"):-len(".json")]
    return stem.lower().replace("_", "-")


def padded_vocab(tp):
    """Megatron's _vocab_size_with_padding: a multiple of make_vocab_size_divisible_by (128) x TP."""
    step = 128 * tp
    return int(math.ceil(VOCAB / step) * step)


def model_text(tp):
    return f"""model {{
  name: "opt-350m"
  dtype: FP32
  transformer {{
    num_layers: 24
    hidden_size: 1024
    num_attention_heads: 16
    seq_length: {SEQ}
    vocab_size: {padded_vocab(tp)}
    # Untied (session 44): the fork's OPTModelPipe builds the embedding and the head as plain LayerSpecs, the
    # head (OPTLMHead) with its own ColumnParallelLinear lm_head (megatron/model/opt_model.py): no TiedLayerSpec,
    # so no ReduceTiedGrads all-reduce, and the head's vocabulary matrix is a parameter of its own.
    tied_embeddings: false
    granularity: BLOCK
    # The fork's OPTParallelAttention calls no dropout (megatron/model/opt_model.py; the block's hidden
    # dropouts are commented out too).
    no_attention_dropout: true
  }}
}}
"""


def assign_nodes(stages):
    """Each replica's (island, node index) in plan order, taking each type's nodes in turn."""
    used = {t: 0 for t in TYPES}
    out = []
    for _, replicas in stages:
        row = []
        for gpu, _, _ in replicas:
            island, count = TYPES[gpu]
            assert used[gpu] < count, f"more {gpu} nodes than the lab has"
            row.append((island, used[gpu]))
            used[gpu] += 1
        out.append(row)
    return out


def mesh(island, node, gpus):
    first = f"first_node: {node} " if node else ""
    return f'mesh {{ island: "{island}" {first}node_count: 1 gpus_per_node: {gpus} }}'


def stage_text(layers, replicas, nodes, mbs):
    lines = ["stages {"]
    if layers.start:
        lines.append(f"  first_layer: {layers.start}")
    lines.append(f"  num_layers: {len(layers)}")
    if len(replicas) == 1:
        (gpu, gpus, tp), (island, node) = replicas[0], nodes[0]
        lines += ["  " + mesh(island, node, gpus), f"  tensor_parallel: {tp}", "  data_parallel: 1"]
    else:
        for (gpu, gpus, tp), (island, node) in zip(replicas, nodes):
            lines += ["  replica_groups {", "    " + mesh(island, node, gpus), f"    tensor_parallel: {tp}",
                      "    data_parallel: 1", f"    micro_batch_share: {mbs}", "  }"]
    lines.append("}")
    return "\n".join(lines) + "\n"


# FP32 (no --fp16 or --bf16): the fork's FusedScaleMaskSoftmax runs its fused kernel only on 16-bit input
# (third_party/Megatron-DeepSpeed/megatron/model/fused_softmax.py, is_kernel_available needs input_in_float16),
# so OPTParallelAttention's causal mask is a masked_fill_ of its own (megatron/model/utils.py,
# attention_mask_func) before torch.nn.Softmax, both over the FP32 scores (session 37).
# The scores are FP32 and OPT's FusedScaleMaskSoftmax has no scale (coeff None), so forward_torch_softmax
# hands attention_mask_func the scores as they come: a .view() of baddbmm's output, masked in place, whose
# backward autograd runs through CopySlices and AsStridedBackward0 (masked_fill_on_view, session 38).
UNFUSED_SOFTMAX = [
    "# FP32: the fork's fused scaled masked softmax needs 16-bit input (megatron/model/fused_softmax.py), so",
    "# the causal mask is a masked_fill_ of its own before torch's softmax, in place on a view of the FP32",
    "# scores (no scale, no cast first): its backward runs through autograd's CopySlices.",
    "unfused_kernels { masked_softmax: true masked_fill_on_view: true }"]

# The fork's own pipeline boundary (session 42): pipe_engine.py's _exec_forward_pass and _exec_backward_pass
# rebuild every received tensor with the artifact's reconstruct_tensor (deepspeed/utils.py), which builds the
# full FP32 tensor on the host (torch.zeros(...).cuda()) between device synchronizations, where upstream
# DeepSpeed's PartitionedTensor.full() allocates on the GPU. The rates it runs at are the cluster file's.
BOUNDARY_REBUILD = [
    "# The fork rebuilds each received boundary tensor on the host (deepspeed/utils.py, reconstruct_tensor:",
    "# .to('cpu'), torch.zeros(numel, dtype=torch.float32).cuda()), the GPU idle meanwhile.",
    "boundary_host_rebuild: true"]


def plan_text(run):
    path, gbs, mbs, stages, seconds = run
    dps = {len(r) for _, r in stages}
    tps = {tp for _, r in stages for _, _, tp in r}
    assert len(dps) == 1 and len(tps) == 1, "one DP and one TP degree per plan, as the artifact's runs"
    dp, tp = dps.pop(), tps.pop()
    assert gbs % (dp * mbs) == 0
    nodes = assign_nodes(stages)
    name = "sailor-mit-" + case_name(path)
    text = "\n".join([
        f"# Sailor (SOSP'25) artifact, {SRC}{path}:", f"# {len(stages)} stages, DP {dp}, TP {tp},",
        f"# micro-batch {mbs} per replica, global batch {gbs}; measured {seconds} s per iteration.",
        "# Generated by scripts/gen_validation_sailor.py.", f'name: "{name}"', model_text(tp).rstrip(),
        f"global_batch_size: {gbs}", f"micro_batch_size: {dp * mbs}", "schedule: ONE_F_ONE_B",
        "# Megatron-DeepSpeed with DeepSpeed's pipeline engine (third_party/Megatron-DeepSpeed, deepspeed/).",
        "# Its profile turns p2p_rendezvous on (DeepSpeed's TrainSchedule: every pipeline transfer a blocking",
        "# send/recv of the stage pair at the start of its step; the fork's pipe_engine.py sends through",
        "# p2p.send_with_group_idx).",
        "framework: MEGATRON_DEEPSPEED"] + UNFUSED_SOFTMAX + BOUNDARY_REBUILD) + "\n"
    for (layers, replicas), row in zip(stages, nodes):
        text += stage_text(layers, replicas, row, mbs)
    return name, text


def gpus_of(stages):
    return sum(g for _, replicas in stages for _, g, _ in replicas)


def case_text(case, source, plan, cluster, tokens, group):
    """One `cases` entry of a set measured in tokens/s per GPU (also scripts/gen_validation_sailor_clariden.py)."""
    return "\n".join([
        "cases {", f'  name: "{case}"', f'  source: "{source}"', "  training_run {", f'    plan: "plans/{plan}.pbtxt"',
        f'    cluster: "{cluster}"', f"    measured_tokens_per_second_per_gpu: {tokens:.2f}", "  }",
        f'  group: "{group}"', "}"]) + "\n"


def set_case(name, run):
    path, gbs, mbs, stages, seconds = run
    n = gpus_of(stages)
    tokens = gbs * SEQ / (seconds * n)
    nodes = case_name(path).split("-")[0]
    source = (f"Sailor artifact, simulations/validation/mit/{path}: {n} GPUs, DP {len(stages[0][1])}, "
              f"PP {len(stages)}, real {seconds} s per iteration")
    return case_text(case_name(path), source, name, CLUSTER, tokens, f"{nodes} nodes")


# What a node's GPUs are joined by; sources in the module docstring and docs/validation.md.
CLUSTER_TEXT = """# The MIT lab cluster of Sailor's simulator validation (SOSP'25 artifact, README: "8-Titan-RTX,
# 8-RTX-2080, and 8-RTX-3090" nodes; basic_cluster_config.json; Aceso's scripts_mit/run_mit.sh: k1 RTX 3090,
# n2-n3 TITAN RTX, r4-r6 RTX 2080 Ti). Generated by scripts/gen_validation_sailor.py; assumptions there.
name: "mit-lab-3090-titan-2080ti"
# iteration_overhead_ms: the fork's "Iteration took" window brackets PipelineEngine.train_batch alone
# (megatron/training.py, train_step): no loss scaler (FP32), no timers (wall_clock_breakdown false), no
# logging inside; beyond the microbatches and the optimizer's kernels it issues about five operators (the
# loss aggregation's division, two clones and stack; FusedAdam's multi-tensor launch), 5 x the presets'
# 10 us (docs/validation.md, "Sailor on Clariden", session 38).
# max_efficiency (session 43): the GEMM model's share of the FP32 peak these cards' SIMT GEMMs reach, measured on
# the lab's own GPUs by the artifact's operator profiler (sailor/Planner/baselines/Aceso/profiler/{Titan-RTX,
# RTX-2080,RTX-3090}/profiled-data-fp32/OPT-350_mbs{1,2,4,8}_tp{1,2,4,8}_algo0.csv, op_profiler.py: each operator
# alone, forward averaged between two torch.cuda.synchronize()): the bias-free linears (MLP GEMM-1 at every TP,
# GEMM-2 and the attention dense at TP 1; 24 GEMMs a card) reach 0.72-0.85 (TITAN RTX), 0.89-1.08 (RTX 2080 Ti)
# and 0.58-0.98 (RTX 3090) of the rated FP32 peak. The efficiency with which the tile model prices their summed
# time is 0.904, 1.037 and 1.096; the GeForce cards run above the boost clock their peak is rated at, and the model
# takes at most 1, so they stay 4% and 9% slow. The presets' 0.67 (Turing) is the V100's tensor-core GEMM share,
# not an FP32 one (docs/validation.md, "Sailor on a lab cluster", session 43).
# unfused_softmax_speed (session 43, as the Clariden GH200's, session 40): in the same files, at micro-batch 2 and
# TP 1, the unfused softmax region (scale, the causal mask's masked_fill_, torch softmax: 6 passes over the FP32
# scores forward, 2 x 16 x 2048 x 2048, 537 MB a pass) runs at 481 (TITAN RTX), 462 (RTX 2080 Ti) and 663 GB/s
# (RTX 3090), where the attention dropout on the same scores (2.25 passes) moves 521, 495 and 792 GB/s: 0.92, 0.93
# and 0.84 of the plain elementwise kernels' rate.
gpu_types {
  name: "rtx3090"
  preset: "RTX-3090"
  efficiency { iteration_overhead_ms: 0.05 max_efficiency: 1 unfused_softmax_speed: 0.84 }
}
gpu_types {
  name: "titan-rtx"
  preset: "TITAN-RTX"
  efficiency { iteration_overhead_ms: 0.05 max_efficiency: 0.904 unfused_softmax_speed: 0.92 }
}
gpu_types {
  name: "rtx2080ti"
  preset: "RTX-2080-Ti"
  efficiency { iteration_overhead_ms: 0.05 max_efficiency: 1 unfused_softmax_speed: 0.93 }
}
# RTX 3090: PCIe Gen4 x16 (252 Gb/s), NVLink bridges on pairs (112.5 GB/s both ways: 450 Gb/s each way;
# the artifact measured 49.8 GB/s for a pair), no PCIe peer-to-peer (8 GPUs: 5.3 GB/s measured).
node_types {
  name: "rtx3090x8"
  gpu_type: "rtx3090"
  gpus_per_node: 8
  intra_node_fabric: NVLINK_BRIDGE
  intra_node_bandwidth_gbps: 252
  intra_node_latency_ns: 2000
  nvlink_bandwidth_gbps: 450
  pcie {
    sockets: 1
    no_p2p: true
    host_memory_bandwidth_gbytes_per_s: 204.8
  }
}
# TITAN RTX and RTX 2080 Ti: PCIe Gen3 x16 (126 Gb/s; Turing is a Gen3 part), no bridges, no PCIe
# peer-to-peer: GeForce Turing refuses peer access without an NVLink bridge (NVIDIA/nccl-tests#117: eight
# RTX 2080 Ti, "CANNOT Access Peer"; tensorflow#24677; NVIDIA/nvbandwidth#13), the TITAN RTX taken as its
# sibling, and NCCL on an Intel host uses SHM between GPUs under different PCIe switches anyway
# (src/graph/paths.cc: P2P up to PATH_PXB). NCCL therefore bounces every ring hop through host memory:
# 3.9 GB/s a connection, the all-reduce bus bandwidth NVIDIA/nccl#384 measured over SHM on a PCIe Gen3 x16
# host (NCCL 2.4.8, CUDA 10, 2020; a one-way broadcast there reached 10.3 GB/s, as the artifact's 10.8 GB/s
# for one send/recv pair). The host's DRAM: 6 channels of DDR4-2666 (128 GB/s, a Xeon Scalable socket),
# an assumption that binds nothing (M / 2n = 8 GB/s for 8 GPUs).
node_types {
  name: "titanx8"
  gpu_type: "titan-rtx"
  gpus_per_node: 8
  intra_node_fabric: PCIE_TREE
  intra_node_bandwidth_gbps: 126
  intra_node_latency_ns: 2000
  pcie {
    sockets: 1
    no_p2p: true
    host_memory_bandwidth_gbytes_per_s: 128
    shm_connection_gbytes_per_s: 3.9
  }
}
node_types {
  name: "rtx2080tix8"
  gpu_type: "rtx2080ti"
  gpus_per_node: 8
  intra_node_fabric: PCIE_TREE
  intra_node_bandwidth_gbps: 126
  intra_node_latency_ns: 2000
  pcie {
    sockets: 1
    no_p2p: true
    host_memory_bandwidth_gbytes_per_s: 128
    shm_connection_gbytes_per_s: 3.9
  }
}
# The Turing nodes on one 25 GbE network (2.86 GB/s measured between nodes at 1 to 8 GPU pairs).
# nccl.bandwidth_efficiency (session 44): that measurement's share of the line rate, where the ETHERNET preset
# has 0.80: the artifact's send/recv profile (sailor/providers/network_coeffs_all_homo.json, "inter", the fitted
# peak of profiling/networking/test_sendrecv.py's NCCL send/recv) reads 2857.7 MB/s for Titan-RTX and RTX-2080,
# 22.86 Gb/s of 25 (0.914). The 1 GbE node's logged gradient all-reduces (red_grads of N4_D4 and N6_D6, 21.6 and
# 22.6 s) agree with its own 0.926 once the untied head's matrix is counted (docs/validation.md, session 44).
islands {
  name: "titan"
  node_type: "titanx8"
  node_count: 2
  fabric: ETHERNET
  topology: SINGLE_SWITCH
  nics_per_node: 1
  nic_bandwidth_gbps: 25
  network: "lab"
  nccl { bandwidth_efficiency: 0.914 }
}
islands {
  name: "rtx2080ti"
  node_type: "rtx2080tix8"
  node_count: 3
  fabric: ETHERNET
  topology: SINGLE_SWITCH
  nics_per_node: 1
  nic_bandwidth_gbps: 25
  network: "lab"
  nccl { bandwidth_efficiency: 0.914 }
}
# The RTX 3090 node on 1 GbE (0.116 GB/s measured at 1 to 8 GPU pairs) on the same switch as the others:
# one flat network, each node type at its own NIC's rate (session 35; before, made-up 25 Gb/s gateway
# links of 10 us joined it to the others). nccl.bandwidth_efficiency (session 44): the same profile's 115.7 MB/s
# for RTX-3090, 0.926 of 1 Gb/s.
islands {
  name: "rtx3090"
  node_type: "rtx3090x8"
  node_count: 1
  fabric: ETHERNET
  topology: SINGLE_SWITCH
  nics_per_node: 1
  nic_bandwidth_gbps: 1
  network: "lab"
  nccl { bandwidth_efficiency: 0.926 }
}
"""

HEADER = """# Generated by scripts/gen_validation_sailor.py from the Sailor artifact (SOSP'25, arXiv 2504.17096),
# {src}N*/plan_config_*.json:
# Sailor's framework (Megatron-DeepSpeed, DeepSpeed's pipeline engine, FP32)
# training OPT-350M on a lab of RTX 3090, TITAN RTX and RTX 2080 Ti nodes, every stage's replicas on
# different GPU types. Measured seconds per iteration as tokens/s per GPU. Format: validation/README.md;
# assumptions: docs/validation.md, "Sailor on a lab cluster".
"""

# Bounds at the level of session 36 (docs/validation.md, "Sailor on a lab cluster"), after the Turing nodes'
# host-bounced hops (3.9 GB/s, NVIDIA/nccl#384) and collectives chosen as NCCL's tuner chooses them (the ring
# for the RTX 3090 node's TP all-reduces and the data-parallel all-reduces over the 1 GbE node): MAPE
# 10.41%, every case within 17.29% (n4-d2), calibrated (k = 3) 11.78%, the top plan right in 1 of the 3
# groups, mean regret 14.7%. A regression guard a point or so above them, still short of issue 40's goals.
# Session 37 read two more behaviours of the fork (docs/validation.md, "Sailor on Clariden", session 37):
# the TP backward all-reduce is synchronous under --deepspeed (the profile's tp_backward_overlap off), and
# FP32 runs the causal mask apart from the softmax (UNFUSED_SOFTMAX). Both lengthen the passes of a set
# whose pipelined runs were already slow: MAPE 10.41% -> 12.18%, max 18.03% (n4-d2), k = 3 11.81%.
# Session 38 priced the fork's FP32 attention core as it runs (no dropout, the mask in place on a view of
# the scores: docs/validation.md, "Sailor on Clariden", session 38): 12.18% -> 12.52%, max 18.12% (n4-d2),
# k = 3 11.90%; the MAPE bound moves to 13%.
# Session 43 gave the lab's GPU types the FP32 GEMM share and the unfused softmax region's rate their own operator
# profile measures (CLUSTER_TEXT): 12.58% -> 10.21%, max 18.03% (n4-d2), k = 3 11.92% -> 11.49%; the MAPE bound moves
# to 11.5%, the calibrated one to 12.5%.
BOUNDS = ("bounds {\n  max_mape_percent: 8.5\n  max_abs_error_percent: 13.5\n  max_calibrated_mape_percent: 10.5\n"
          "  min_top1_agreement: 0.66\n  max_mean_regret_percent: 7.5\n}\n")


def main():
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "validation")
    with open(os.path.join(root, CLUSTER), "w") as f:
        f.write(CLUSTER_TEXT)
    cases = ""
    for run in RUNS:
        name, text = plan_text(run)
        with open(os.path.join(root, "plans", name + ".pbtxt"), "w") as f:
            f.write(text)
        cases += set_case(name, run)
    with open(os.path.join(root, "sailor-mit-lab.pbtxt"), "w") as f:
        f.write(HEADER.format(src=SRC) + 'name: "sailor-mit-lab"\n'
                'description: "Sailor (SOSP\'25) artifact: Megatron-DeepSpeed, OPT-350M in FP32 on RTX 3090 + '
                'TITAN RTX + RTX 2080 Ti nodes (25 GbE, the RTX 3090 node on 1 GbE), stages whose replicas sit '
                'on different GPU types: 8 measured runs, one group per node count"\n' + BOUNDS + cases)


if __name__ == "__main__":
    main()
