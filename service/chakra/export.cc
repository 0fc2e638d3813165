#include "service/chakra/export.h"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <system_error>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/spec/dtype.h"
#include "base/status_macros.h"
#include "proto/io.h"
#include "service/chakra/attributes_internal.h"
#include "sim/pipeline/dag.h"
#include "sim/workload/optimizer_step.h"

namespace hetsim::chakra {
namespace {

using ChakraProtoMsg::Node;
using executor::ExecutionSetup;
using pipeline::DagNode;
using pipeline::NodeId;
using pipeline::NodeKind;

bool IsCompute(NodeKind kind) { return kind == NodeKind::kForward || kind == NodeKind::kBackward; }

class Exporter {
 public:
  explicit Exporter(const ExecutionSetup& setup) : setup_(setup), dag_(*setup.dag) {
    out_.ranks.resize(setup.topology->num_gpus());
    for (proto::ChakraStream& rank : out_.ranks) {
      rank.metadata.set_version(std::string(kSchemaVersion));
      rank.metadata.add_attr()->CopyFrom(StringAttr("generator", "hetsim export chakra"));
      rank.metadata.add_attr()->CopyFrom(StringAttr("dtype", spec::DTypeName(setup.spec.model.dtype)));
    }
    exits_.resize(dag_.num_nodes());
  }

  ChakraExport Run() {
    for (int s = 0; s < setup_.num_stages(); ++s) AddEarlyGathers(s);
    for (NodeId id : dag_.topological_order()) {
      const DagNode& node = dag_.node(id);
      if (IsCompute(node.kind)) {
        AddCompute(id);
      } else if (node.kind != NodeKind::kSink) {
        AddTransfer(id);
      }
    }
    for (int s = 0; s < setup_.num_stages(); ++s) AddGradSync(s);
    for (int r = 0; r < static_cast<int>(out_.ranks.size()); ++r) {
      if (out_.ranks[r].nodes.empty()) Add(r, IdleNode());
    }
    return std::move(out_);
  }

 private:
  // What a GPU the plan leaves idle runs: ASTRA-sim's workload layer needs a file per NPU and its
  // feeder refuses a file without a dependency-free node, so the rank gets one COMP node of no time
  // (ASTRA-sim replays it in 1 ns; with its roofline on, tensor_size 0 makes it skip the node).
  static Node IdleNode() {
    Node n;
    n.set_name("idle (the plan gives this GPU no work)");
    n.set_type(ChakraProtoMsg::COMP_NODE);
    n.set_duration_micros(0);
    n.add_attr()->CopyFrom(Int64Attr(kNumOps, 0));
    n.add_attr()->CopyFrom(Uint64Attr(kTensorSize, 0));
    n.add_attr()->CopyFrom(BoolAttr(kIsCpuOp, false));
    return n;
  }

  // Appends `node` to `rank`'s trace with the next id of that rank.
  uint64_t Add(int rank, Node node) {
    auto& nodes = out_.ranks[rank].nodes;
    node.set_id(nodes.size());
    nodes.push_back(std::move(node));
    return nodes.back().id();
  }

  Node& At(int rank, uint64_t id) { return out_.ranks[rank].nodes[id]; }

  // Dependencies of DAG node v's first nodes on `rank`: the rank's last nodes of each predecessor.
  void AddDeps(NodeId v, int rank, Node& node) {
    const DagNode& dv = dag_.node(v);
    for (NodeId u : dag_.predecessors(v)) {
      const DagNode& du = dag_.node(u);
      auto it = exits_[u].find(rank);
      if (it == exits_[u].end()) continue;
      for (uint64_t id : it->second) {
        const bool compute_u = IsCompute(du.kind), compute_v = IsCompute(dv.kind);
        const bool recv = At(rank, id).type() == ChakraProtoMsg::COMM_RECV_NODE;
        const bool same_pass_data = compute_u && compute_v && du.microbatch == dv.microbatch &&
                                    du.virtual_stage == dv.virtual_stage;  // F(i,K-1) -> B(i,K-1): the loss
        const bool data = (compute_u && !compute_v) || (!compute_u && compute_v && recv) || same_pass_data;
        if (data) {
          node.add_data_deps(id);
        } else {
          node.add_ctrl_deps(id);
        }
      }
    }
  }

  // The first gradient bucket an overlapped reduction fills during compute node `id`, or -1.
  int FirstBucketOf(NodeId id) const { return setup_.spec.plan.overlap_grad_reduce ? setup_.first_bucket[id] : -1; }

  void AddCompute(NodeId id) {
    const DagNode& node = dag_.node(id);
    const bool forward = node.kind == NodeKind::kForward;
    const auto& layout = setup_.stages[node.stage].layout;
    // An overlapped reduction's buckets become ready (j+1)/n of the way through the last backward of
    // their model chunk.
    const int first_bucket = FirstBucketOf(id);
    const int pieces = first_bucket < 0 ? 1 : setup_.stages[node.stage].bucket_ready[first_bucket].pieces;
    for (size_t i = 0; i < layout.gpus.size(); ++i) {
      const GpuId gpu = layout.gpus[i];
      // A mixed stage's rank does its own group's work; the wait for the slowest group is left to the
      // replay (the next dependency holds it).
      const auto& stage_vs = setup_.virtual_stages[node.virtual_stage];
      const auto& vs = layout.mixed() ? stage_vs.replica_groups[layout.GroupOfGpu(i)] : stage_vs;
      const double flop = forward ? vs.cost.forward_flop_per_gpu : vs.cost.backward_flop_per_gpu;
      const Time wait =
          forward ? stage_vs.forward_time() - vs.forward_time() : stage_vs.backward_time() - vs.backward_time();
      const Time d = setup_.durations[id] - wait;
      uint64_t previous = 0;
      for (int j = 0; j < pieces; ++j) {
        const Time begin = d * j / pieces, end = d * (j + 1) / pieces;
        Node n;
        n.set_name(pieces == 1
                       ? absl::StrFormat("%s mb%d vs%d", forward ? "F" : "B", node.microbatch, node.virtual_stage)
                       : absl::StrFormat("B mb%d vs%d part%d/%d", node.microbatch, node.virtual_stage, j + 1, pieces));
        n.set_type(ChakraProtoMsg::COMP_NODE);
        n.set_duration_micros(RoundToMicros(end - begin));
        n.add_attr()->CopyFrom(Int64Attr(kNumOps, static_cast<int64_t>(flop / pieces)));
        n.add_attr()->CopyFrom(Uint64Attr(kTensorSize, static_cast<uint64_t>(vs.cost.memory.param_bytes / pieces)));
        n.add_attr()->CopyFrom(BoolAttr(kIsCpuOp, false));
        if (j == 0) {
          AddDeps(id, gpu.value(), n);
          if (const auto it = early_gather_.find({gpu.value(), id}); it != early_gather_.end()) {
            for (uint64_t g : it->second) n.add_data_deps(g);
          }
        } else {
          n.add_ctrl_deps(previous);
        }
        previous = Add(gpu.value(), std::move(n));
        if (first_bucket >= 0) {
          std::vector<uint64_t>& ready = bucket_ready_[gpu.value()];
          ready.resize(setup_.stages[node.stage].grad_buckets.size());
          ready[first_bucket + j] = previous;
        }
      }
      exits_[id][gpu.value()] = {previous};
    }
  }

  void AddTransfer(NodeId id) {
    const DagNode& node = dag_.node(id);
    const bool forward = node.kind == NodeKind::kCommForward;
    const auto& bt = setup_.boundaries[node.virtual_stage];
    const auto& flows = forward ? bt.forward_flows : bt.backward_flows;
    for (const executor::BoundaryFlow& f : flows) {
      const int32_t tag = next_tag_++;
      const std::string name =
          absl::StrFormat("%s mb%d vs%d", forward ? "CF" : "CB", node.microbatch, node.virtual_stage);
      for (const bool send : {true, false}) {
        const GpuId rank = send ? f.src : f.dst;
        Node n;
        n.set_name(absl::StrCat(name, send ? " send" : " recv"));
        n.set_type(send ? ChakraProtoMsg::COMM_SEND_NODE : ChakraProtoMsg::COMM_RECV_NODE);
        n.add_attr()->CopyFrom(Int32Attr(kCommSrc, f.src.value()));
        n.add_attr()->CopyFrom(Int32Attr(kCommDst, f.dst.value()));
        n.add_attr()->CopyFrom(Int64Attr(kCommSize, f.bytes));
        n.add_attr()->CopyFrom(Int32Attr(kCommTag, tag));
        n.add_attr()->CopyFrom(BoolAttr(kIsCpuOp, false));
        AddDeps(id, rank.value(), n);
        pending_exits_.emplace_back(rank.value(), Add(rank.value(), std::move(n)));
      }
    }
    // Added after every flow: the flows of one transfer never depend on each other.
    for (const auto& [rank, nid] : pending_exits_) exits_[id][rank].push_back(nid);
    pending_exits_.clear();
  }

  // The communicators of stage `s`'s data-parallel groups (one per TP rank) or, `experts`, of its
  // expert-data-parallel groups (SyncGroupsOf), created once: indices into out_.comm_groups.
  const std::vector<size_t>& SyncGroups(int s, bool experts) {
    const executor::StageSetup& st = setup_.stages[s];
    auto [it, inserted] = sync_groups_.try_emplace({s, experts});
    if (!inserted) return it->second;
    for (const std::vector<GpuId>& gpus : executor::SyncGroupsOf(st.layout, experts)) {
      proto::ChakraCommGroup group{absl::StrCat(out_.comm_groups.size() + 1), {}};
      for (GpuId g : gpus) group.ranks.push_back(g.value());
      it->second.push_back(out_.comm_groups.size());
      out_.comm_groups.push_back(std::move(group));
    }
    return it->second;
  }

  // The synchronisation groups the stage's `i`-th GPU joins: one (its TP rank's, or its expert rank's),
  // or in a mixed stage every finest shard's group its own shard covers (StageLayout::DataGroup).
  std::vector<int> SyncGroupsOfGpu(int s, size_t i, bool experts) const {
    const executor::StageLayout& l = setup_.stages[s].layout;
    if (!l.mixed() || experts) {
      return {static_cast<int>(i % (experts ? l.expert_data_groups() : l.tensor_parallel))};
    }
    std::vector<int> out;
    for (int t = 0; t < l.tensor_parallel; ++t) {
      const std::vector<GpuId> group = l.DataGroup(t);
      if (std::find(group.begin(), group.end(), l.gpus[i]) != group.end()) out.push_back(t);
    }
    return out;
  }

  // The collectives of one synchronisation step on the stage's `i`-th GPU: its dense part on the GPU's
  // data-parallel group and its experts' part on its expert-data-parallel group, side by side, each
  // after `deps` (data) and `after` (control). Returns their ids (none for an empty step).
  std::vector<uint64_t> AddSyncStep(int s, size_t i, const executor::GradSyncStep& step, const std::string& name,
                                    const std::vector<uint64_t>& deps, const std::vector<uint64_t>& after) {
    const executor::StageLayout& l = setup_.stages[s].layout;
    std::vector<uint64_t> ids;
    for (const bool experts : {false, true}) {
      const int64_t bytes = step.BytesOf(experts);
      if (bytes <= 0) continue;
      for (const int group : SyncGroupsOfGpu(s, i, experts)) {
        Node n = CollectiveNode(step.op, bytes, experts ? name + " (experts)" : name,
                                out_.comm_groups[SyncGroups(s, experts)[group]]);
        for (uint64_t d : deps) n.add_data_deps(d);
        for (uint64_t d : after) n.add_ctrl_deps(d);
        ids.push_back(Add(l.gpus[i].value(), std::move(n)));
      }
    }
    return ids;
  }

  // Plan.overlap_param_gather: the step before's parameter all-gathers open the trace, chunk by chunk,
  // and each chunk's first forward depends on its own (AddCompute), as the executor runs them.
  void AddEarlyGathers(int s) {
    const executor::StageSetup& st = setup_.stages[s];
    if (st.early_param_gathers.empty()) return;
    for (size_t i = 0; i < st.layout.gpus.size(); ++i) {
      const GpuId gpu = st.layout.gpus[i];
      std::vector<uint64_t> previous;
      for (size_t c = 0; c < st.early_param_gathers.size(); ++c) {
        std::vector<uint64_t> ids =
            AddSyncStep(s, i, st.early_param_gathers[c], absl::StrFormat("param all-gather chunk %d", c), {}, previous);
        if (!ids.empty()) previous = std::move(ids);
        early_gather_[{gpu.value(), dag_.Forward(0, static_cast<int>(c) * setup_.num_stages() + s)}] = previous;
      }
    }
  }

  // comm_size is each rank's input (attributes.h): an all-gather's `bytes` over the group's size.
  static Node CollectiveNode(CollectiveOp op, int64_t bytes, const std::string& name,
                             const proto::ChakraCommGroup& group) {
    Node n;
    n.set_name(name);
    n.set_type(ChakraProtoMsg::COMM_COLL_NODE);
    n.add_attr()->CopyFrom(Int64Attr(kCommType, CommTypeOf(op)));
    n.add_attr()->CopyFrom(Int64Attr(kCommSize, CommSizeOf(op, bytes, static_cast<int>(group.ranks.size()))));
    n.add_attr()->CopyFrom(StringAttr(kPgName, group.name));
    n.add_attr()->CopyFrom(BoolAttr(kIsCpuOp, false));
    return n;
  }

  // Gradient buckets on every member of each data-parallel group, then the optimizer step and the
  // ZeRO-1/2 parameter all-gather, as the executor runs them after the stage's last backward.
  void AddGradSync(int s) {
    const executor::StageSetup& st = setup_.stages[s];
    const auto& order = dag_.stage_compute_order()[s];
    if (order.empty()) return;
    const NodeId last = order.back();
    for (size_t i = 0; i < st.layout.gpus.size(); ++i) {
      const GpuId gpu = st.layout.gpus[i];
      const uint64_t last_backward = exits_[last][gpu.value()][0];
      std::vector<uint64_t> previous;
      const std::vector<uint64_t>& ready = bucket_ready_[gpu.value()];
      for (size_t j = 0; j < st.grad_buckets.size(); ++j) {
        const executor::GradSyncStep& bucket = st.grad_buckets[j];
        std::vector<uint64_t> ids =
            AddSyncStep(s, i, bucket, absl::StrFormat("grad %s bucket %d", CollectiveOpName(bucket.op), j),
                        {ready.empty() ? last_backward : ready[j]}, previous);
        if (!ids.empty()) previous = std::move(ids);
      }
      Node opt;
      opt.set_name("optimizer step");
      opt.set_type(ChakraProtoMsg::COMP_NODE);
      opt.set_duration_micros(RoundToMicros(st.optimizer_time));
      // After the last bucket and the stage's last backward: under interleaving the buckets may all
      // be of chunks that ended before it.
      opt.add_data_deps(last_backward);
      for (uint64_t d : previous) opt.add_data_deps(d);
      // The HBM traffic of the step's passes over this GPU's shard, as the executor times them.
      const workload::OptimizerStepPasses passes =
          workload::PlanOptimizerStep(st.cost.optimizer_shard, setup_.model->dtype());
      opt.add_attr()->CopyFrom(Int64Attr(kNumOps, 0));
      opt.add_attr()->CopyFrom(Uint64Attr(
          kTensorSize, static_cast<uint64_t>(passes.unscale_bytes + passes.grad_norm_bytes + passes.adam_bytes)));
      opt.add_attr()->CopyFrom(BoolAttr(kIsCpuOp, false));
      const uint64_t step = Add(gpu.value(), std::move(opt));
      if (st.param_gather && st.early_param_gathers.empty()) {
        AddSyncStep(s, i, *st.param_gather, "param all-gather", {step}, {});
      }
    }
  }

  const ExecutionSetup& setup_;
  const pipeline::PipelineDag& dag_;
  ChakraExport out_;
  std::vector<absl::flat_hash_map<int, std::vector<uint64_t>>> exits_;  // per DAG node: rank -> last nodes
  absl::flat_hash_map<int, std::vector<uint64_t>> bucket_ready_;        // rank -> per bucket, the piece filling it
  absl::flat_hash_map<std::pair<int, bool>, std::vector<size_t>> sync_groups_;  // (stage, experts)
  // (rank, first forward) -> the gathers it waits for
  absl::flat_hash_map<std::pair<int, NodeId>, std::vector<uint64_t>> early_gather_;
  std::vector<std::pair<int, uint64_t>> pending_exits_;
  int32_t next_tag_ = 0;
};

}  // namespace

uint64_t RoundToMicros(Time t) { return t <= 0 ? 0 : static_cast<uint64_t>((t + kMicrosecond / 2) / kMicrosecond); }

ChakraExport ExportChakra(const ExecutionSetup& setup) { return Exporter(setup).Run(); }

int64_t ExportNodesLowerBound(const spec::PlanSpec& plan) {
  const int64_t passes_per_gpu = plan.microbatches * std::max(1, plan.virtual_stages) * 2;
  int64_t nodes = 0;
  for (const spec::StageSpec& s : plan.stages) {
    int64_t gpus = 0;
    for (const spec::ReplicaGroupSpec& g : s.ReplicaGroups(plan.micro_batch_size)) {
      gpus += static_cast<int64_t>(g.data_parallel) * g.tensor_parallel;
    }
    nodes += gpus * std::max(1, plan.context_parallel) * passes_per_gpu;
  }
  return nodes;
}

std::string RankFileName(absl::string_view prefix, int rank) { return absl::StrCat(prefix, ".", rank, ".et"); }
std::string CommGroupsFileName(absl::string_view prefix) { return absl::StrCat(prefix, ".comm_groups.json"); }

absl::Status WriteChakraExport(const ChakraExport& out, absl::string_view dir, absl::string_view prefix) {
  std::vector<std::pair<std::string, std::string>> files;
  for (size_t r = 0; r < out.ranks.size(); ++r) {
    files.emplace_back(RankFileName(prefix, static_cast<int>(r)), proto::SerializeChakraStream(out.ranks[r]));
  }
  files.emplace_back(CommGroupsFileName(prefix), proto::ChakraCommGroupsJson(out.comm_groups));
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(std::string(dir)), ec);
  if (ec) return absl::InvalidArgumentError(absl::StrFormat("%s: cannot create the folder: %s", dir, ec.message()));
  for (const auto& [name, bytes] : files) {
    HETSIM_RETURN_IF_ERROR(
        proto::WriteFileAtomically((std::filesystem::path(std::string(dir)) / name).string(), bytes));
  }
  return absl::OkStatus();
}

}  // namespace hetsim::chakra
