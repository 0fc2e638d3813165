#include "proto/summary.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/counted.h"
#include "proto/cluster_networks_internal.h"
#include "proto/framework_profile.h"
#include "proto/gpu_presets.h"
#include "proto/intra_node_layout_internal.h"
#include "proto/layer_count.h"
#include "proto/pipeline_plans.h"
#include "proto/socket_transport_internal.h"
#include "proto/validate_model.h"
#include "proto/validate_plan.h"

namespace hetsim::proto {
namespace {

using namespace hetsim::v1;  // NOLINT: the schema's message names read best unqualified here

// The dtype a cluster summary quotes for a GPU: BF16, or FP16 when the GPU has no BF16 (V100), at
// the clock the GPU sustains (PeakTflops).
std::pair<double, const char*> HeadlineTflops(const GpuType& g) {
  if (g.peak_tflops_bf16() > 0) return {PeakTflops(g, BF16), "BF16"};
  if (g.peak_tflops_fp16() > 0) return {PeakTflops(g, FP16), "FP16"};
  return {PeakTflops(g, FP32), "FP32"};
}

std::string Bandwidth(double gbps) {
  return gbps >= 1000 ? absl::StrFormat("%g Tb/s", gbps / 1000) : absl::StrFormat("%g Gb/s", gbps);
}

std::string Latency(int64_t ns) {
  return ns >= 1000 ? absl::StrFormat("%g us", ns / 1000.0) : absl::StrFormat("%d ns", ns);
}

std::string Params(double n) {
  if (n >= 1e9) return absl::StrFormat("%.2f B", n / 1e9);
  if (n >= 1e6) return absl::StrFormat("%.2f M", n / 1e6);
  return absl::StrFormat("%.0f", n);
}

// A fabric as the summary names it, with what NCCL runs over it: ETHERNET is NCCL's TCP socket
// transport, not RoCE, and users choosing between the two should see it (docs/network.md).
std::string FabricName(InterNodeFabric fabric) {
  switch (fabric) {
    case INFINIBAND: return "INFINIBAND (NCCL over IB verbs, RDMA)";
    case ROCE: return "ROCE (NCCL over IB verbs on Ethernet, RDMA)";
    case ETHERNET: return "ETHERNET (NCCL over TCP sockets, no RDMA; RoCE is ROCE)";
    case INTER_NODE_FABRIC_UNSPECIFIED:
    case InterNodeFabric_INT_MIN_SENTINEL_DO_NOT_USE_:
    case InterNodeFabric_INT_MAX_SENTINEL_DO_NOT_USE_: break;
  }
  return InterNodeFabric_Name(fabric);
}

// A mixed stage: its layers, then a line per replica group (mesh, TP, DP, share of each microbatch).
void AppendMixedStage(const Stage& s, int i, std::string& out) {
  absl::StrAppendFormat(&out, "  stage %-3d layers %4d..%-4d (%3d)  %d replica groups", i, s.first_layer(),
                        s.first_layer() + s.num_layers() - 1, s.num_layers(), s.replica_groups_size());
  // MoE: the layout each group gives the experts over its own GPUs.
  uint32_t largest_tp = 1;
  for (const ReplicaGroup& g : s.replica_groups())
    largest_tp = std::max(largest_tp, spec::DegreeOrOne(g.tensor_parallel()));
  bool own = false;  // a group with its own expert layout (ReplicaGroup.expert_parallel / _tensor_parallel)
  for (const ReplicaGroup& g : s.replica_groups()) own |= g.expert_parallel() > 0 || g.expert_tensor_parallel() > 0;
  if (own) {
    const auto [ep, etp] = proto::FinestExperts(s);
    absl::StrAppendFormat(&out, "  experts per group, finest EP %d ETP %d", ep, etp);
  } else if (proto::ExpertParallel(s) > 1 || proto::ExpertTensorParallel(s) != largest_tp) {
    absl::StrAppendFormat(&out, "  EP %d ETP %d in each group", proto::ExpertParallel(s),
                          proto::ExpertTensorParallel(s));
  }
  if (s.warmup_forwards()) absl::StrAppendFormat(&out, "  warm-up %d", s.warmup_forwards());
  out += "\n";
  for (const ReplicaGroup& g : s.replica_groups()) {
    const Mesh& m = g.mesh();
    absl::StrAppendFormat(&out, "    group %-8s nodes %d..%d GPUs %d..%d  TP %d DP %d  share %d", m.island(),
                          m.first_node(), m.first_node() + m.node_count() - 1, m.first_gpu(),
                          m.first_gpu() + m.gpus_per_node() - 1, spec::DegreeOrOne(g.tensor_parallel()),
                          spec::DegreeOrOne(g.data_parallel()), g.micro_batch_share());
    if (own) {
      absl::StrAppendFormat(&out, "  EP %d ETP %d", proto::GroupExpertParallel(s, g),
                            proto::GroupExpertTensorParallel(s, g));
    }
    out += "\n";
  }
}

// A PCIe tree's shape and NVLinks, after the fabric's name and PCIe rate; empty for one switch.
std::string IntraNodeLayout(const NodeType& n) {
  std::string out;
  if (n.nvlink_bandwidth_gbps() > 0) absl::StrAppendFormat(&out, " + NVLink %s", Bandwidth(n.nvlink_bandwidth_gbps()));
  if (!IsPcieTreeFabric(n.intra_node_fabric())) return out;
  const PcieTree& p = n.pcie();
  absl::StrAppendFormat(&out, " (%d socket%s", std::max<uint32_t>(1, p.sockets()), p.sockets() > 1 ? "s" : "");
  if (p.gpus_per_switch() > 1) absl::StrAppendFormat(&out, ", %d GPUs per PCIe switch", p.gpus_per_switch());
  if (p.no_p2p()) {
    absl::StrAppendFormat(&out, ", no P2P: through host memory %g GB/s", p.host_memory_bandwidth_gbytes_per_s());
    if (p.shm_connection_gbytes_per_s() > 0)
      absl::StrAppendFormat(&out, ", %g GB/s per SHM connection", p.shm_connection_gbytes_per_s());
  }
  return out + ")";
}

// How a node's GPUs use its NICs (Island.nic_sharing): "one per GPU", "one per 4 GPUs", "shared by 8
// GPUs", "bonded, shared by 8 GPUs".
std::string NicSharingText(const Island& is, uint32_t gpus) {
  const uint32_t nics = is.nics_per_node();
  if (nics == 0) return "";
  if (is.nic_sharing() == NIC_SHARED && nics > 1) return absl::StrFormat("bonded, shared by %d GPUs", gpus);
  if (nics == 1 && gpus > 1) return absl::StrFormat("shared by %d GPUs", gpus);
  if (nics >= gpus) return "one per GPU";
  return absl::StrFormat("one per %d GPUs", gpus / nics);
}

// A line per flat network (Island.network): its nodes, switches, and each node type's NICs on it
// (count, rate, sharing, transport), so a network of node types with different NICs reads at once.
std::string SummarizeNetworks(const Cluster& c, const absl::flat_hash_map<std::string, const NodeType*>& nodes) {
  std::string out;
  for (const IslandNetwork& n : IslandNetworks(c)) {
    uint32_t node_count = 0;
    std::vector<std::string> nics;
    for (int i : n.islands) {
      const Island& is = c.islands(i);
      const uint32_t gpus = nodes.at(is.node_type())->gpus_per_node();
      node_count += is.node_count();
      nics.push_back(absl::StrFormat("%s %d x %s %s (%s)", is.node_type(), is.nics_per_node(),
                                     Bandwidth(is.nic_bandwidth_gbps()), InterNodeFabric_Name(is.fabric()),
                                     NicSharingText(is, gpus)));
    }
    const Island& first = c.islands(n.islands.front());
    absl::StrAppendFormat(&out, "  network %s: %s of %s on one %s; NICs per node type: %s\n", n.name,
                          Counted(node_count, "node"), Counted(n.islands.size(), "island"),
                          FabricTopology_Name(first.topology()), absl::StrJoin(nics, "; "));
  }
  return out;
}

}  // namespace

std::string SummarizeCluster(const Cluster& c, absl::string_view file) {
  absl::flat_hash_map<std::string, const NodeType*> nodes;
  absl::flat_hash_map<std::string, const GpuType*> gpus;
  for (const NodeType& n : c.node_types()) nodes[n.name()] = &n;
  for (const GpuType& g : c.gpu_types()) gpus[g.name()] = &g;
  std::string lines;
  int64_t total_gpus = 0;
  double total_pflops = 0;
  for (const Island& is : c.islands()) {
    const NodeType& n = *nodes.at(is.node_type());
    const GpuType& g = *gpus.at(n.gpu_type());
    const int64_t count = int64_t{is.node_count()} * n.gpus_per_node();
    const auto [tflops, dtype] = HeadlineTflops(g);
    total_gpus += count;
    total_pflops += count * tflops / 1000;
    absl::StrAppendFormat(&lines, "  island %-10s %4d nodes x %d %-12s = %5d GPUs  %8.2f PFLOP/s %s  %4g GiB HBM",
                          is.name(), is.node_count(), n.gpus_per_node(), g.name(), count, count * tflops / 1000, dtype,
                          g.hbm_gib());
    if (g.sustained_clock_fraction() > 0) {
      absl::StrAppendFormat(&lines, " (at %.0f%% of the boost clock)", 100 * g.sustained_clock_fraction());
    }
    absl::StrAppendFormat(&lines, "  %s %s", IntraNodeFabric_Name(n.intra_node_fabric()),
                          Bandwidth(n.intra_node_bandwidth_gbps()));
    lines += IntraNodeLayout(n);
    if (is.node_count() > 1 || is.nics_per_node() > 0) {
      absl::StrAppendFormat(&lines, ", %s %s %d x %s", FabricName(is.fabric()), FabricTopology_Name(is.topology()),
                            is.nics_per_node(), Bandwidth(is.nic_bandwidth_gbps()));
      if (is.nics_per_node() > 0) absl::StrAppendFormat(&lines, " (%s)", NicSharingText(is, n.gpus_per_node()));
    }
    if (is.tcp_stream_gbps() > 0) {
      absl::StrAppendFormat(&lines, ", NCCL sockets %d threads x %d x %s", SocketThreads(is), SocketsPerThread(is),
                            Bandwidth(is.tcp_stream_gbps()));
    }
    if (!is.network().empty()) absl::StrAppendFormat(&lines, ", shared network \"%s\"", is.network());
    lines += "\n";
  }
  lines += SummarizeNetworks(c, nodes);
  for (const InterIslandLink& l : c.inter_island_links()) {
    absl::StrAppendFormat(&lines, "  link   %s <-> %s: %d x %s %s, %s\n", l.island_a(), l.island_b(),
                          l.count() ? l.count() : 1, Bandwidth(l.bandwidth_gbps()), FabricName(l.fabric()),
                          Latency(l.latency_ns()));
  }
  return absl::StrFormat("%s: cluster \"%s\": %s in %s, %.2f PFLOP/s peak\n%s", file, c.name(),
                         Counted(total_gpus, "GPU"), Counted(c.islands_size(), "island"), total_pflops, lines);
}

std::string SummarizeModel(const Model& m, absl::string_view file) {
  std::string what;
  if (m.has_transformer()) {
    const Transformer& t = m.transformer();
    what = absl::StrFormat("transformer, %s, hidden %d, %s, seq %d, vocab %d", Counted(t.num_layers(), "block"),
                           t.hidden_size(), Counted(t.num_attention_heads(), "head"), t.seq_length(), t.vocab_size());
    if (t.head_dim() > 0) absl::StrAppendFormat(&what, ", head_dim %d", t.head_dim());
    if (t.has_mla()) {
      absl::StrAppendFormat(&what, ", MLA (latents Q %d, KV %d; QK %d+%d, V %d)", t.mla().q_lora_rank(),
                            t.mla().kv_lora_rank(), t.mla().qk_head_dim(), t.mla().qk_pos_emb_head_dim(),
                            t.mla().v_head_dim());
    }
    if (t.num_experts() > 1) {
      absl::StrAppendFormat(&what, ", %s top-%d", Counted(t.num_experts(), "expert"), t.moe_top_k());
      if (t.moe_shared_expert_ffn_hidden_size() > 0) {
        absl::StrAppendFormat(&what, " + shared %d", t.moe_shared_expert_ffn_hidden_size());
      }
      if (t.moe_first_dense_layers() > 0) absl::StrAppendFormat(&what, ", first %d dense", t.moe_first_dense_layers());
      if (t.moe_layer_freq() > 1) absl::StrAppendFormat(&what, ", MoE every %d", t.moe_layer_freq());
      if (t.moe_grouped_gemm()) what += ", grouped GEMM";
    }
    if (t.mtp_num_layers() > 0) absl::StrAppendFormat(&what, ", %s", Counted(t.mtp_num_layers(), "MTP module"));
    if (t.no_attention_dropout()) what += ", no dropout on the attention probabilities";
  } else {
    what = absl::StrFormat("layer list, seq %d", m.layer_list().seq_length());
  }
  return absl::StrFormat("%s: model \"%s\": %s, %s, %s parameters, %s to place\n", file, m.name(), what,
                         DType_Name(proto::EffectiveDType(m)), Params(proto::ModelParamCount(m)),
                         Counted(proto::LayerCount(m), "layer"));
}

namespace {

// A plan's (or a pipeline's) stages, a line each, after `indent`.
void AppendStages(const google::protobuf::RepeatedPtrField<Stage>& stages, absl::string_view indent, std::string& out) {
  for (int i = 0; i < stages.size(); ++i) {
    const Stage& s = stages[i];
    if (!s.replica_groups().empty()) {
      AppendMixedStage(s, i, out);
      continue;
    }
    const Mesh& m = s.mesh();
    absl::StrAppendFormat(&out, "%sstage %-3d layers %4d..%-4d (%3d)  %-8s nodes %d..%d GPUs %d..%d  TP %d DP %d",
                          indent, i, s.first_layer(), s.first_layer() + s.num_layers() - 1, s.num_layers(), m.island(),
                          m.first_node(), m.first_node() + m.node_count() - 1, m.first_gpu(),
                          m.first_gpu() + m.gpus_per_node() - 1, proto::TensorParallel(s), proto::DataParallel(s));
    if (proto::ExpertParallel(s) > 1 || proto::ExpertTensorParallel(s) != proto::TensorParallel(s)) {
      absl::StrAppendFormat(&out, " EP %d ETP %d", proto::ExpertParallel(s), proto::ExpertTensorParallel(s));
    }
    if (s.warmup_forwards()) absl::StrAppendFormat(&out, "  warm-up %d", s.warmup_forwards());
    out += "\n";
  }
}

// ZeRO-3 across pipelines: a line per stage whose layers span more than one layer range (another pipeline
// cuts inside them). Its passes call every range's gathers when ready (sim/executor/gather_calls.h); stock
// FSDP and DeepSpeed ZeRO-3 issue them layer by layer on one stream, where holders whose orders cross hang
// (docs/heterogeneous.md, "Calls in a different order").
std::string DescribeCallOrder(const Plan& p) {
  std::vector<uint32_t> cuts;
  for (const hetsim::v1::Pipeline& pl : p.pipelines()) {
    for (const Stage& st : pl.stages()) cuts.push_back(st.first_layer());
  }
  std::string out;
  for (int i = 0; i < p.pipelines_size(); ++i) {
    for (int s = 0; s < p.pipelines(i).stages_size(); ++s) {
      const Stage& st = p.pipelines(i).stages(s);
      const uint32_t end = st.first_layer() + st.num_layers();
      std::vector<uint32_t> inside;
      for (const uint32_t c : cuts) {
        if (c > st.first_layer() && c < end) inside.push_back(c);
      }
      std::sort(inside.begin(), inside.end());
      inside.erase(std::unique(inside.begin(), inside.end()), inside.end());
      if (inside.empty()) continue;
      absl::StrAppendFormat(&out,
                            "  ZeRO-3 calls: pipelines[%d] stage %d holds %s; a pass calls all their "
                            "gathers when it is ready and waits for each at its first layer (stock FSDP and DeepSpeed "
                            "call them layer by layer on one stream, and hang where holders' orders cross)\n",
                            i, s, Counted(inside.size() + 1, "layer range"));
    }
  }
  return out;
}

// A plan of pipelines under ZeRO (one zero_stage for every stage): what each layer range shards over
// its holders and what it gathers (sim/executor/layer_range_sync.h); empty otherwise.
std::string DescribeRangeZero(const Plan& p) {
  if (p.pipelines().empty() || p.pipelines(0).stages().empty()) return "";
  const uint32_t zero = p.pipelines(0).stages(0).zero_stage();
  if (zero == 3) {
    std::string out =
        "  ZeRO-3 per layer range: parameters, gradients and optimizer states shard over every GPU that holds "
        "the range; each pass gathers its layers' parameters over them, starting once every holder has made the "
        "same gather call, the gradients reduce-scatter\n";
    if (p.tied_embedding_grad_sync()) {
      out +=
          "  ZeRO-3 tied matrix: shards over every pipeline's first and last stage, gathered with the embedding "
          "(or the head) before every pass, timed as if every copy joined each gather at once (matched per call, "
          "a pipeline's first stage would wait for its last)\n";
    }
    std::vector<uint64_t> counts;
    for (const hetsim::v1::Pipeline& pl : p.pipelines()) {
      const uint64_t micro = proto::PipelineMicroBatchSize(p, pl);
      counts.push_back(micro > 0 ? pl.batch_share() / micro : 0);
    }
    if (std::adjacent_find(counts.begin(), counts.end(), std::not_equal_to<>()) != counts.end()) {
      absl::StrAppendFormat(&out,
                            "  ZeRO-3 at %s microbatches: a GPU done with its own joins the other pipelines' remaining "
                            "gathers of its layers without computing (collectives match per call); each range "
                            "reduce-scatters after its last holder's last backward\n",
                            absl::StrJoin(counts, ", "));
    }
    return out + DescribeCallOrder(p);
  }
  if (zero == 0) return "";
  return absl::StrFormat(
      "  ZeRO-%d per layer range: optimizer states%s shard over every GPU that holds the range; the gradients "
      "reduce-scatter, the parameters all-gather after the steps\n",
      zero, zero == 2 ? " and gradients" : "");
}

// MoE in a plan of pipelines: a line per layer range whose holders lay the experts out differently (each
// holder's EP x ETP, a mixed holder's groups' joined by " / "): its experts reduce per shard of the finest
// split (sim/executor/layer_range_sync.h); empty when every holder's layout is the same.
std::string DescribeRangeExperts(const Plan& p, const hetsim::v1::Model& model) {
  if (p.pipelines().empty() || !model.has_transformer() || model.transformer().num_experts() <= 1) return "";
  std::vector<uint32_t> cuts;
  for (const hetsim::v1::Pipeline& pl : p.pipelines()) {
    for (const Stage& st : pl.stages()) cuts.push_back(st.first_layer() + st.num_layers());
  }
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  const auto layout = [](uint32_t ep, uint32_t etp) { return absl::StrFormat("EP %d x ETP %d", ep, etp); };
  std::string out;
  uint32_t first = 0;
  for (const uint32_t end : cuts) {
    std::vector<std::string> holders, layouts;
    std::pair<uint32_t, uint32_t> finest = {1, 1};
    for (const hetsim::v1::Pipeline& pl : p.pipelines()) {
      for (const Stage& st : pl.stages()) {
        if (first < st.first_layer() || first >= st.first_layer() + st.num_layers()) continue;
        std::vector<std::string> own;
        if (st.replica_groups().empty()) own.push_back(layout(FinestExperts(st).first, FinestExperts(st).second));
        for (const hetsim::v1::ReplicaGroup& g : st.replica_groups())
          own.push_back(layout(GroupExpertParallel(st, g), GroupExpertTensorParallel(st, g)));
        layouts.push_back(absl::StrJoin(own, " / "));
        holders.push_back(absl::StrFormat("%s (%s)", layouts.back(), pl.name()));
        const std::pair<uint32_t, uint32_t> mine = FinestExperts(st);
        if (uint64_t{mine.first} * mine.second > uint64_t{finest.first} * finest.second) finest = mine;
      }
    }
    if (std::adjacent_find(layouts.begin(), layouts.end(), std::not_equal_to<>()) != layouts.end()) {
      absl::StrAppendFormat(&out, "  experts of layers %d-%d: held at %s; reduced per shard of the finest split, %s\n",
                            first, end - 1, absl::StrJoin(holders, ", "), layout(finest.first, finest.second));
    }
    first = end;
  }
  return out;
}

// The fused elementwise kernels the plan runs apart (Plan.unfused_elementwise, unfused_kernels), and
// whether the causal mask runs in place on a view of the scores (autograd's CopySlices in the backward).
std::string DescribeUnfused(const Plan& p) {
  const hetsim::v1::UnfusedKernels& u = p.unfused_kernels();
  const bool all = p.unfused_elementwise();
  std::vector<std::string> parts;
  if (all || u.bias_activation()) parts.push_back("the bias add before the activation");
  if (all || u.bias_dropout_add()) parts.push_back("the bias and residual adds apart from dropout");
  if (all || u.masked_softmax()) {
    parts.push_back(u.masked_fill_on_view()
                        ? "the causal mask before the softmax, in place on a view of the scores (masked_fill_on_view: "
                          "autograd's CopySlices and AsStridedBackward0 in the backward)"
                        : "the causal mask before the softmax");
  }
  if (parts.empty()) return "";
  return absl::StrCat("  unfused kernels, each a pass of its own: ", absl::StrJoin(parts, ", "), "\n");
}

}  // namespace

std::string SummarizePlan(const proto::PlanInputs& in) {
  const Plan& p = in.plan;
  std::string out = absl::StrFormat(
      "%s: plan \"%s\": model \"%s\"%s on cluster \"%s\", %s, global batch %d, microbatch %d -> %s, %s\n", in.plan_path,
      p.name(), in.model.name(), in.model_path.empty() ? " (inline)" : absl::StrCat(" (", in.model_path, ")"),
      in.cluster.name(), Schedule_Name(p.schedule()), p.global_batch_size(), p.micro_batch_size(),
      Counted(in.microbatches, "microbatch"),
      p.pipelines().empty() ? Counted(p.stages_size(), "stage") : Counted(p.pipelines_size(), "pipeline"));
  if (proto::ContextParallel(p) > 1) {
    absl::StrAppendFormat(&out, "  context parallel %d (%s)\n", proto::ContextParallel(p),
                          spec::ContextParallelExchangeName(proto::ContextParallelCommOf(p)));
  }
  out += DescribeFramework(p);
  out += DescribeUnfused(p);
  if (p.moe_a2a_overlap()) out += "  experts' dispatch hidden behind the paired pass (combined 1F1B)\n";
  if (p.has_reference_policy()) {
    out += p.reference_policy().cpu_weight_swap()
               ? "  DPO reference model: its forward once more a microbatch, its weights swapped in from host memory "
                 "each step (3 copies of the GPU's weights at pinned_copy_gbytes_per_s)\n"
               : "  DPO reference model: its forward once more a microbatch, its weights on the GPU\n";
  }
  if (p.virtual_stage_layers_size() > 0) {
    absl::StrAppendFormat(&out, "  virtual stages' layers %s\n", absl::StrJoin(p.virtual_stage_layers(), " "));
  }
  absl::flat_hash_map<std::string, const Island*> islands;
  for (const Island& is : in.cluster.islands()) islands[is.name()] = &is;
  if (p.pipelines().empty()) AppendStages(p.stages(), "  ", out);
  out += DescribeRangeZero(p);
  out += DescribeRangeExperts(p, in.model);
  for (const Pipeline& pl : p.pipelines()) {
    const uint64_t micro = proto::PipelineMicroBatchSize(p, pl);
    absl::StrAppendFormat(
        &out, "  pipeline %s: %s, microbatch %d -> %s, %s", pl.name(), Counted(pl.batch_share(), "sample"), micro,
        Counted(micro > 0 ? pl.batch_share() / micro : 0, "microbatch"), Counted(pl.stages_size(), "stage"));
    // Pipeline.context_parallel: its own degree where it sets one.
    if (pl.context_parallel() > 0 && pl.context_parallel() != proto::ContextParallel(p)) {
      absl::StrAppendFormat(&out, ", context parallel %d (%s)", pl.context_parallel(),
                            spec::ContextParallelExchangeName(proto::ContextParallelCommOf(p)));
    }
    out += "\n";
    AppendStages(pl.stages(), "    ", out);
  }
  return out;
}

std::string SummarizeSweep(const Sweep& s, absl::string_view file) {
  std::string out =
      absl::StrFormat("%s: sweep \"%s\": cluster %s, %s\n", file, s.name(), s.cluster_path(),
                      s.plan_path().empty() ? absl::StrCat("model ", s.model_path(), ", planner ", s.planner())
                                            : absl::StrCat("plan ", s.plan_path()));
  for (const SweepAxis& a : s.axes()) {
    if (a.values().empty()) {
      const int64_t points = static_cast<int64_t>(std::floor((a.to() - a.from()) / a.step() + 1e-9)) + 1;
      absl::StrAppendFormat(&out, "  axis %s: %g..%g step %g (%s)\n", a.path(), a.from(), a.to(), a.step(),
                            Counted(points, "value"));
    } else {
      absl::StrAppendFormat(&out, "  axis %s: %s\n", a.path(), absl::StrJoin(a.values(), ", "));
    }
  }
  if (!s.filter().empty()) absl::StrAppendFormat(&out, "  filter: %s\n", s.filter());
  return out;
}

}  // namespace hetsim::proto
