#include "service/chakra/export.h"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/spec/dtype.h"
#include "base/status_macros.h"
#include "proto/io.h"
#include "proto/output_files.h"
#include "service/chakra/attributes_internal.h"
#include "sim/executor/gather_calls.h"
#include "sim/executor/layer_range_sync.h"
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

// A trace per GPU of `setup`'s cluster, metadata only.
ChakraExport EmptyExport(const ExecutionSetup& setup) {
  ChakraExport out;
  out.ranks.resize(setup.topology->num_gpus());
  for (proto::ChakraStream& rank : out.ranks) {
    rank.metadata.set_version(std::string(kSchemaVersion));
    rank.metadata.add_attr()->CopyFrom(StringAttr("generator", "hetsim export chakra"));
    rank.metadata.add_attr()->CopyFrom(StringAttr("dtype", spec::DTypeName(setup.spec.model.dtype)));
  }
  return out;
}

// Appends `node` to `rank`'s trace with the next id of that rank.
uint64_t AddNode(ChakraExport& out, int rank, Node node) {
  auto& nodes = out.ranks[rank].nodes;
  node.set_id(nodes.size());
  nodes.push_back(std::move(node));
  return nodes.back().id();
}

// What a GPU the plan leaves idle runs: ASTRA-sim's workload layer needs a file per NPU and its
// feeder refuses a file without a dependency-free node, so the rank gets one COMP node of no time
// (ASTRA-sim replays it in 1 ns; with its roofline on, tensor_size 0 makes it skip the node).
void AddIdleNodes(ChakraExport& out) {
  for (int r = 0; r < static_cast<int>(out.ranks.size()); ++r) {
    if (!out.ranks[r].nodes.empty()) continue;
    Node n;
    n.set_name("idle (the plan gives this GPU no work)");
    n.set_type(ChakraProtoMsg::COMP_NODE);
    n.set_duration_micros(0);
    n.add_attr()->CopyFrom(Int64Attr(kNumOps, 0));
    n.add_attr()->CopyFrom(Uint64Attr(kTensorSize, 0));
    n.add_attr()->CopyFrom(BoolAttr(kIsCpuOp, false));
    AddNode(out, r, std::move(n));
  }
}

// comm_size is each rank's input (attributes.h): an all-gather's `bytes` over the group's size.
Node CollectiveNode(CollectiveOp op, int64_t bytes, const std::string& name, const proto::ChakraCommGroup& group) {
  Node n;
  n.set_name(name);
  n.set_type(ChakraProtoMsg::COMM_COLL_NODE);
  n.add_attr()->CopyFrom(Int64Attr(kCommType, CommTypeOf(op)));
  n.add_attr()->CopyFrom(Int64Attr(kCommSize, CommSizeOf(op, bytes, static_cast<int>(group.ranks.size()))));
  n.add_attr()->CopyFrom(StringAttr(kPgName, group.name));
  n.add_attr()->CopyFrom(BoolAttr(kIsCpuOp, false));
  return n;
}

// A new communicator of `gpus` in `out`, named by its place ("1", "2", ...): its index.
size_t AddCommGroup(ChakraExport& out, const std::vector<GpuId>& gpus) {
  proto::ChakraCommGroup group{absl::StrCat(out.comm_groups.size() + 1), {}};
  for (GpuId g : gpus) group.ranks.push_back(g.value());
  out.comm_groups.push_back(std::move(group));
  return out.comm_groups.size() - 1;
}

// Per rank, nodes its stage's optimizer step also waits for (a plan of pipelines: its layer ranges'
// all-reduces).
using StepDeps = absl::flat_hash_map<int, std::vector<uint64_t>>;

// One setup's iteration into `out` (its ranks' traces; the setup's GPUs are global ids of `out`'s
// cluster), boundary tags from `next_tag` on.
class Exporter {
 public:
  Exporter(const ExecutionSetup& setup, ChakraExport& out, int32_t& next_tag)
      : setup_(setup), dag_(*setup.dag), out_(out), next_tag_(next_tag) {
    exits_.resize(dag_.num_nodes());
  }

  // Every pass and boundary transfer (and the early parameter gathers before them).
  void AddPasses() {
    for (int s = 0; s < setup_.num_stages(); ++s) AddEarlyGathers(s);
    for (NodeId id : dag_.topological_order()) {
      const DagNode& node = dag_.node(id);
      if (IsCompute(node.kind)) {
        AddCompute(id);
      } else if (node.kind != NodeKind::kSink) {
        AddTransfer(id);
      }
    }
  }

  // Every stage's gradient synchronisation and optimizer step, the step also after `step_deps`.
  void AddGradSyncs(const StepDeps& step_deps) {
    for (int s = 0; s < setup_.num_stages(); ++s) AddGradSync(s, step_deps);
  }

  // The optimizer step of `gpu`'s stage on `gpu` (after AddGradSyncs).
  uint64_t Step(GpuId gpu) const { return steps_.at(gpu.value()); }

  // The node ending stage `s`'s last backward on `gpu` (after AddPasses).
  uint64_t LastBackward(int s, GpuId gpu) const {
    return exits_[dag_.stage_compute_order()[s].back()].at(gpu.value())[0];
  }

  // Before AddPasses, ZeRO-3 across pipelines: the gather calls (communicator, name) each GPU makes for a
  // pass before it (per DAG node: rank -> calls), each a collective of no bytes after the pass's own
  // dependencies that the pass waits for, as the executor's GatherCalls holds it for its ranges' holders.
  struct GatherCall {
    size_t group = 0;  // its communicator
    int range = 0;     // its layer range (index into executor::LayerRangeGroups)
    std::string name;
    Time offset = 0;  // where in the pass the range's first layer waits for it (executor::GatherCallOffset)
  };
  using GatherCallsOfNode = absl::flat_hash_map<int, std::vector<GatherCall>>;
  void MatchGatherCalls(std::vector<GatherCallsOfNode> calls) { gather_calls_ = std::move(calls); }

  // The nodes ending DAG node `id` on `rank` (after AddPasses).
  const std::vector<uint64_t>& Exits(NodeId id, int rank) const { return exits_[id].at(rank); }

  // Before AddPasses: stage `s`'s first forward on `gpu` also depends on `gathers` (a plan of pipelines'
  // layer ranges' parameter all-gathers at the iteration's start), as the executor starts it once they
  // have ended.
  void WaitForGathers(int s, GpuId gpu, std::vector<uint64_t> gathers) {
    early_gather_[{gpu.value(), dag_.Forward(0, s)}] = std::move(gathers);
  }

 private:
  uint64_t Add(int rank, Node node) { return AddNode(out_, rank, std::move(node)); }

  Node& At(int rank, uint64_t id) { return out_.ranks[rank].nodes[id]; }

  // Dependencies of DAG node v's first nodes on `rank`: the rank's last nodes of each predecessor. A
  // pass that follows a transfer its rank takes no part in (no flow of the transfer reaches it) waits
  // for a message of no bytes from the transfer's first participant on its stage (RelayTransferDone),
  // as the executor starts the pass when the whole transfer has ended.
  void AddDeps(NodeId v, int rank, Node& node) {
    const DagNode& dv = dag_.node(v);
    for (NodeId u : dag_.predecessors(v)) {
      const DagNode& du = dag_.node(u);
      auto it = exits_[u].find(rank);
      if (it == exits_[u].end()) {
        if (IsCompute(dv.kind) && !IsCompute(du.kind)) {
          if (const std::optional<uint64_t> done = RelayTransferDone(u, dv.stage, rank)) node.add_data_deps(*done);
        }
        continue;
      }
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

  // Transfer `u` has ended for `rank` of stage `stage`, which it does not reach: the stage's first GPU
  // (in layout order) the transfer reaches sends `rank` a message of no bytes after its own part of
  // the transfer. The receipt's id on `rank`, or none when the transfer reaches no GPU of the stage.
  std::optional<uint64_t> RelayTransferDone(NodeId u, int stage, int rank) {
    for (const GpuId gpu : setup_.stages[stage].layout.gpus) {
      const auto it = exits_[u].find(gpu.value());
      if (it == exits_[u].end()) continue;
      const DagNode& du = dag_.node(u);
      const std::string name = absl::StrFormat("%s mb%d vs%d done", du.kind == NodeKind::kCommForward ? "CF" : "CB",
                                               du.microbatch, du.virtual_stage);
      const executor::BoundaryFlow done{.src = gpu, .dst = GpuId(rank), .bytes = 0, .route = {}};
      const int32_t tag = next_tag_++;
      Node send = MessageNode(true, done, tag, name);
      for (uint64_t id : it->second) send.add_ctrl_deps(id);
      Add(gpu.value(), std::move(send));
      return Add(rank, MessageNode(false, done, tag, name));
    }
    return std::nullopt;
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
      // The pass's parts end at its buckets' pieces and (ZeRO-3 across pipelines) where a later layer range's
      // first layer waits for that range's gather call (GatherCall::offset), as the executor holds it.
      std::vector<Time> ends;
      for (int j = 0; j < pieces; ++j) ends.push_back(d * (j + 1) / pieces);
      for (const GatherCall& c : CallsOf(id, gpu.value())) {
        if (c.offset > 0 && c.offset < d) ends.push_back(c.offset);
      }
      std::sort(ends.begin(), ends.end());
      ends.erase(std::unique(ends.begin(), ends.end()), ends.end());
      const bool split = static_cast<int>(ends.size()) > pieces;
      std::vector<std::pair<Time, uint64_t>> calls;
      uint64_t previous = 0;
      Time begin = 0;
      int piece = 0;
      for (size_t k = 0; k < ends.size(); ++k) {
        const Time end = ends[k];
        Node n;
        if (split) {
          n.set_name(absl::StrFormat("%s mb%d vs%d part%d/%d", forward ? "F" : "B", node.microbatch, node.virtual_stage,
                                     k + 1, ends.size()));
        } else {
          n.set_name(
              pieces == 1
                  ? absl::StrFormat("%s mb%d vs%d", forward ? "F" : "B", node.microbatch, node.virtual_stage)
                  : absl::StrFormat("B mb%d vs%d part%d/%d", node.microbatch, node.virtual_stage, k + 1, pieces));
        }
        n.set_type(ChakraProtoMsg::COMP_NODE);
        n.set_duration_micros(RoundToMicros(end - begin));
        const double part = split ? TimeToSeconds(end - begin) / TimeToSeconds(d) : 1.0 / pieces;
        n.add_attr()->CopyFrom(Int64Attr(kNumOps, static_cast<int64_t>(split ? flop * part : flop / pieces)));
        n.add_attr()->CopyFrom(Uint64Attr(
            kTensorSize, static_cast<uint64_t>(split ? static_cast<double>(vs.cost.memory.param_bytes) * part
                                                     : static_cast<double>(vs.cost.memory.param_bytes / pieces))));
        n.add_attr()->CopyFrom(BoolAttr(kIsCpuOp, false));
        if (k == 0) {
          AddDeps(id, gpu.value(), n);
          if (const auto it = early_gather_.find({gpu.value(), id}); it != early_gather_.end()) {
            for (uint64_t g : it->second) n.add_data_deps(g);
          }
          calls = AddGatherCalls(id, gpu.value(), d, n);
        } else {
          n.add_ctrl_deps(previous);
          for (const auto& [offset, call] : calls) {
            if (offset == begin) n.add_data_deps(call);
          }
        }
        previous = Add(gpu.value(), std::move(n));
        if (first_bucket >= 0 && end == d * (piece + 1) / pieces) {
          std::vector<uint64_t>& ready = bucket_ready_[gpu.value()];
          ready.resize(setup_.stages[node.stage].grad_buckets.size());
          ready[first_bucket + piece++] = previous;
        }
        begin = end;
      }
      exits_[id][gpu.value()] = {previous};
    }
  }

  // The gather calls `rank` makes for pass `id` (MatchGatherCalls; none: empty).
  const std::vector<GatherCall>& CallsOf(NodeId id, int rank) const {
    static const std::vector<GatherCall> kNone;
    if (gather_calls_.empty()) return kNone;
    const auto it = gather_calls_[id].find(rank);
    return it == gather_calls_[id].end() ? kNone : it->second;
  }

  // The gather calls `rank` makes for pass `id` (MatchGatherCalls): each after the pass's dependencies
  // (`pass`'s so far, its first part's); `pass` after those of its first range, the others (offset, node) for
  // the part of the pass (of duration `d`) that starts at their range's first layer.
  std::vector<std::pair<Time, uint64_t>> AddGatherCalls(NodeId id, int rank, Time d, Node& pass) {
    std::vector<std::pair<Time, uint64_t>> later;
    for (const GatherCall& c : CallsOf(id, rank)) {
      Node call = CollectiveNode(CollectiveOp::kAllGather, 0, c.name, out_.comm_groups[c.group]);
      for (const uint64_t dep : pass.data_deps()) call.add_data_deps(dep);
      for (const uint64_t dep : pass.ctrl_deps()) call.add_ctrl_deps(dep);
      later.emplace_back(c.offset > 0 && c.offset < d ? c.offset : Time(), Add(rank, std::move(call)));
    }
    for (const auto& [offset, call] : later) {
      if (offset == 0) pass.add_data_deps(call);
    }
    return later;
  }

  // A point-to-point message's node on `rank` (its send when `send`), after DAG node `id`'s
  // predecessors on that rank.
  uint64_t AddMessage(NodeId id, bool send, const executor::BoundaryFlow& f, int32_t tag, const std::string& name) {
    const GpuId rank = send ? f.src : f.dst;
    Node n = MessageNode(send, f, tag, name);
    AddDeps(id, rank.value(), n);
    return Add(rank.value(), std::move(n));
  }

  // The send (or the receive) of point-to-point message `f`, without dependencies.
  static Node MessageNode(bool send, const executor::BoundaryFlow& f, int32_t tag, const std::string& name) {
    Node n;
    n.set_name(absl::StrCat(name, send ? " send" : " recv"));
    n.set_type(send ? ChakraProtoMsg::COMM_SEND_NODE : ChakraProtoMsg::COMM_RECV_NODE);
    n.add_attr()->CopyFrom(Int32Attr(kCommSrc, f.src.value()));
    n.add_attr()->CopyFrom(Int32Attr(kCommDst, f.dst.value()));
    n.add_attr()->CopyFrom(Int64Attr(kCommSize, f.bytes));
    n.add_attr()->CopyFrom(Int32Attr(kCommTag, tag));
    n.add_attr()->CopyFrom(BoolAttr(kIsCpuOp, false));
    return n;
  }

  void AddTransfer(NodeId id) {
    const DagNode& node = dag_.node(id);
    const bool forward = node.kind == NodeKind::kCommForward;
    const auto& bt = setup_.boundaries[node.virtual_stage];
    const auto& flows = forward ? bt.forward_flows : bt.backward_flows;
    const std::string name =
        absl::StrFormat("%s mb%d vs%d", forward ? "CF" : "CB", node.microbatch, node.virtual_stage);
    for (const executor::BoundaryFlow& f : flows) {
      // Plan.p2p_rendezvous (E_step): the transfer starts when both its stages have reached it. A
      // Chakra rank waits on its own nodes only, so the receiver, once there, sends the sender a
      // message of no bytes that the send waits for (as NCCL's receiver posts its buffer before the
      // sender writes): one route latency the simulator's rendezvous does not charge.
      std::optional<uint64_t> receiver_ready;
      if (setup_.spec.plan.p2p_rendezvous) {
        const executor::BoundaryFlow ready{.src = f.dst, .dst = f.src, .bytes = 0, .route = {}};
        const int32_t tag = next_tag_++;
        AddMessage(id, true, ready, tag, name + " ready");
        receiver_ready = AddMessage(id, false, ready, tag, name + " ready");
      }
      const int32_t tag = next_tag_++;
      const uint64_t send = AddMessage(id, true, f, tag, name);
      if (receiver_ready) At(f.src.value(), send).add_ctrl_deps(*receiver_ready);
      pending_exits_.emplace_back(f.src.value(), send);
      pending_exits_.emplace_back(f.dst.value(), AddMessage(id, false, f, tag, name));
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
      it->second.push_back(AddCommGroup(out_, gpus));
    }
    return it->second;
  }

  // The synchronisation groups the stage's `i`-th GPU joins: one (its TP rank's, or its expert rank's),
  // or in a mixed stage every finest shard's group its own shard covers (StageLayout::DataGroup, and for
  // the experts StageLayout::ExpertDataGroup: a group of a coarser EP x ETP than the finest's).
  std::vector<int> SyncGroupsOfGpu(int s, size_t i, bool experts) const {
    const executor::StageLayout& l = setup_.stages[s].layout;
    if (!l.mixed()) return {static_cast<int>(i % (experts ? l.expert_data_groups() : l.tensor_parallel))};
    std::vector<int> out;
    for (int t = 0; t < (experts ? l.expert_data_groups() : l.tensor_parallel); ++t) {
      const std::vector<GpuId> group = experts ? l.ExpertDataGroup(t) : l.DataGroup(t);
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

  // Plan.tied_embedding_grad_sync on the first or the last stage: the `i`-th GPU's all-reduce of the
  // tied embedding's gradients with its peer of the other stage (ExecutionSetup::tied_grad_sync_groups,
  // one communicator per pair), after the GPU's last backward, as the executor starts it once both
  // stages have run theirs. Its id, or none (another stage, no sync, or a GPU without a peer).
  std::optional<uint64_t> AddTiedSync(int s, size_t i, uint64_t last_backward) {
    const auto& groups = setup_.tied_grad_sync_groups;
    if (setup_.stages[s].tied_grad_sync_time <= 0 || i >= groups.size()) return std::nullopt;
    if (tied_comm_groups_.empty()) {
      for (const std::vector<GpuId>& gpus : groups) tied_comm_groups_.push_back(AddCommGroup(out_, gpus));
    }
    Node n = CollectiveNode(CollectiveOp::kAllReduce, setup_.tied_grad_sync_bytes, "tied embedding grad all-reduce",
                            out_.comm_groups[tied_comm_groups_[i]]);
    n.add_data_deps(last_backward);
    return Add(setup_.stages[s].layout.gpus[i].value(), std::move(n));
  }

  // Gradient buckets on every member of each data-parallel group, then the optimizer step and the
  // ZeRO-1/2 parameter all-gather, as the executor runs them after the stage's last backward.
  void AddGradSync(int s, const StepDeps& step_deps) {
    const executor::StageSetup& st = setup_.stages[s];
    const auto& order = dag_.stage_compute_order()[s];
    if (order.empty()) return;
    const NodeId last = order.back();
    for (size_t i = 0; i < st.layout.gpus.size(); ++i) {
      const GpuId gpu = st.layout.gpus[i];
      const uint64_t last_backward = exits_[last][gpu.value()][0];
      // Plan.tied_embedding_grad_sync: the stage's reduction and step wait for the tied all-reduce.
      const std::optional<uint64_t> tied = AddTiedSync(s, i, last_backward);
      const uint64_t after_backward = tied.value_or(last_backward);
      std::vector<uint64_t> previous;
      const std::vector<uint64_t>& ready = bucket_ready_[gpu.value()];
      for (size_t j = 0; j < st.grad_buckets.size(); ++j) {
        const executor::GradSyncStep& bucket = st.grad_buckets[j];
        std::vector<uint64_t> ids =
            AddSyncStep(s, i, bucket, absl::StrFormat("grad %s bucket %d", CollectiveOpName(bucket.op), j),
                        {ready.empty() ? after_backward : ready[j]}, previous);
        if (!ids.empty()) previous = std::move(ids);
      }
      Node opt;
      opt.set_name("optimizer step");
      opt.set_type(ChakraProtoMsg::COMP_NODE);
      opt.set_duration_micros(RoundToMicros(st.optimizer_time));
      // After the last bucket and the stage's last backward: under interleaving the buckets may all
      // be of chunks that ended before it.
      opt.add_data_deps(after_backward);
      for (uint64_t d : previous) opt.add_data_deps(d);
      if (const auto it = step_deps.find(gpu.value()); it != step_deps.end()) {
        for (uint64_t d : it->second) opt.add_data_deps(d);
      }
      // The HBM traffic of the step's passes over this GPU's shard, as the executor times them.
      const workload::OptimizerStepPasses passes =
          workload::PlanOptimizerStep(st.cost.optimizer_shard, setup_.model->dtype());
      opt.add_attr()->CopyFrom(Int64Attr(kNumOps, 0));
      opt.add_attr()->CopyFrom(Uint64Attr(
          kTensorSize, static_cast<uint64_t>(passes.unscale_bytes + passes.grad_norm_bytes + passes.adam_bytes)));
      opt.add_attr()->CopyFrom(BoolAttr(kIsCpuOp, false));
      const uint64_t step = Add(gpu.value(), std::move(opt));
      steps_[gpu.value()] = step;
      if (st.param_gather && st.early_param_gathers.empty()) {
        AddSyncStep(s, i, *st.param_gather, "param all-gather", {step}, {});
      }
    }
  }

  const ExecutionSetup& setup_;
  const pipeline::PipelineDag& dag_;
  ChakraExport& out_;
  std::vector<absl::flat_hash_map<int, std::vector<uint64_t>>> exits_;  // per DAG node: rank -> last nodes
  absl::flat_hash_map<int, std::vector<uint64_t>> bucket_ready_;        // rank -> per bucket, the piece filling it
  absl::flat_hash_map<std::pair<int, bool>, std::vector<size_t>> sync_groups_;  // (stage, experts)
  // (rank, first forward) -> the gathers it waits for
  absl::flat_hash_map<std::pair<int, NodeId>, std::vector<uint64_t>> early_gather_;
  std::vector<std::pair<int, uint64_t>> pending_exits_;
  absl::flat_hash_map<int, uint64_t> steps_;     // rank -> its optimizer step
  std::vector<size_t> tied_comm_groups_;         // per tied all-reduce pair: its communicator
  std::vector<GatherCallsOfNode> gather_calls_;  // per DAG node (MatchGatherCalls); empty: none
  int32_t& next_tag_;
};

// Plan.pipelines: every layer range (executor::LayerRangeGroups) with a communicator per shard group,
// and its reduction on each GPU of each of its shard groups after that GPU's stage's last backward, as
// the executor starts a range when its holders have run it; the ranges of a stage run side by side,
// and its optimizer step waits for all of them (`reduced`, per rank). An MoE range's experts then reduce
// over their own communicators, one per shard of the finest expert split (executor::ExpertBuckets over the
// range's expert_groups), each GPU's after its own dense buckets, as the executor reduces a range's
// buckets one at a time. Under ZeRO-1/2 the range reduce-scatters instead, and all-gathers its parameters
// (its experts' beside its dense ones) after the steps (AddRangeGathers) or, with
// Plan.overlap_param_gather, at the iteration's start (AddEarlyRangeGathers).
struct LayerRanges {
  std::vector<executor::LayerRangeGroup> ranges;
  std::vector<std::vector<size_t>> comm_groups;            // [range][shard]: its communicator in the export
  std::vector<std::vector<size_t>> expert_comm_groups;     // [range][expert shard]: none without ExpertBuckets
  StepDeps reduced;                                        // rank -> its ranges' reductions
  absl::flat_hash_map<int, std::pair<int, int>> stage_of;  // rank -> (pipeline, stage)
  bool gathers_at_start = false;                           // ZeRO-1/2 with Plan.overlap_param_gather
};

// The ranges and their communicators, created before any node (so numbered in the ranges' order).
LayerRanges RangeCommunicators(const std::vector<const ExecutionSetup*>& setups, ChakraExport& out) {
  LayerRanges ranges{executor::LayerRangeGroups(setups), {}, {}, {}, {}};
  for (size_t p = 0; p < setups.size(); ++p) {
    for (int s = 0; s < setups[p]->num_stages(); ++s) {
      for (GpuId g : setups[p]->stages[s].layout.gpus) ranges.stage_of[g.value()] = {static_cast<int>(p), s};
    }
  }
  for (const executor::LayerRangeGroup& range : ranges.ranges) {
    std::vector<size_t>& groups = ranges.comm_groups.emplace_back();
    for (const std::vector<GpuId>& gpus : range.groups) groups.push_back(AddCommGroup(out, gpus));
    std::vector<size_t>& experts = ranges.expert_comm_groups.emplace_back();
    if (executor::ExpertBuckets(range).empty()) continue;
    for (const std::vector<GpuId>& gpus : range.expert_groups) experts.push_back(AddCommGroup(out, gpus));
  }
  const auto zero = [](const executor::LayerRangeGroup& r) { return r.zero_stage == 1 || r.zero_stage == 2; };
  ranges.gathers_at_start = setups.front()->spec.plan.overlap_param_gather && !ranges.ranges.empty() &&
                            std::all_of(ranges.ranges.begin(), ranges.ranges.end(), zero);
  return ranges;
}

// One kind of a range's parameters, as the executor reduces and gathers it (layer_range_sync.cc): the dense
// ones over the shard groups, or an MoE range's experts over their expert shard groups.
struct RangePart {
  const std::vector<std::vector<GpuId>>& groups;
  const std::vector<size_t>& comm;  // per group, its communicator
  std::vector<int64_t> buckets;     // per GPU of a group, in the order they reduce
  int64_t param_bytes = 0;          // ZeRO-1/2: what each GPU of a group gathers
  std::string suffix;               // of the nodes' names
};

// Range `r`'s parts: its dense parameters, then (executor::ExpertBuckets) its experts'.
std::vector<RangePart> PartsOf(const LayerRanges& ranges, size_t r) {
  const executor::LayerRangeGroup& range = ranges.ranges[r];
  std::vector<RangePart> parts;
  parts.push_back({range.groups, ranges.comm_groups[r], executor::RangeBuckets(range), range.param_bytes, ""});
  if (std::vector<int64_t> experts = executor::ExpertBuckets(range); !experts.empty()) {
    parts.push_back({range.expert_groups, ranges.expert_comm_groups[r], std::move(experts), range.expert_param_bytes,
                     " (experts)"});
  }
  return parts;
}

// Range `range`'s all-gather of `part`'s parameters over communicator `group`, named by its layers.
Node RangeGather(const executor::LayerRangeGroup& range, const RangePart& part, const proto::ChakraCommGroup& group) {
  const std::string name = absl::StrFormat("param all-gather layers %d-%d%s", range.first_layer,
                                           range.first_layer + range.num_layers - 1, part.suffix);
  return CollectiveNode(CollectiveOp::kAllGather, part.param_bytes, name, group);
}

// Plan.overlap_param_gather under ZeRO-1/2: every range's all-gather of the step before's parameters
// opens the trace of each GPU of its shard groups, without dependencies (the executor starts them all
// at the iteration's start, RangeSync::StartGathers), and each GPU's stage's first forward depends on
// the GPU's gathers (Exporter::WaitForGathers). Per rank, those gathers.
StepDeps AddEarlyRangeGathers(const LayerRanges& ranges, ChakraExport& out) {
  StepDeps gathers;
  if (!ranges.gathers_at_start) return gathers;
  for (size_t r = 0; r < ranges.ranges.size(); ++r) {
    for (const RangePart& part : PartsOf(ranges, r)) {
      for (size_t k = 0; k < part.groups.size(); ++k) {
        const proto::ChakraCommGroup& group = out.comm_groups[part.comm[k]];
        for (GpuId g : part.groups[k]) {
          gathers[g.value()].push_back(AddNode(out, g.value(), RangeGather(ranges.ranges[r], part, group)));
        }
      }
    }
  }
  return gathers;
}

void AddLayerRanges(const std::vector<Exporter>& exporters, ChakraExport& out, LayerRanges& ranges) {
  for (size_t r = 0; r < ranges.ranges.size(); ++r) {
    const executor::LayerRangeGroup& range = ranges.ranges[r];
    const CollectiveOp op = range.zero_stage > 0 ? CollectiveOp::kReduceScatter : CollectiveOp::kAllReduce;
    // Per rank, where its dense buckets end (a GPU of a coarser TP ends one chain per shard group it joins):
    // what its experts' first bucket waits for.
    absl::flat_hash_map<int, std::vector<uint64_t>> dense_end;
    for (const RangePart& part : PartsOf(ranges, r)) {
      const bool experts = !part.suffix.empty();
      const std::string name = absl::StrFormat("grad %s layers %d-%d%s", CollectiveOpName(op), range.first_layer,
                                               range.first_layer + range.num_layers - 1, part.suffix);
      for (size_t k = 0; k < part.groups.size(); ++k) {
        const proto::ChakraCommGroup& group = out.comm_groups[part.comm[k]];
        for (GpuId g : part.groups[k]) {
          const auto [p, s] = ranges.stage_of.at(g.value());
          std::vector<uint64_t> before = {exporters[p].LastBackward(s, g)};
          if (const auto it = dense_end.find(g.value()); experts && it != dense_end.end()) before = it->second;
          // Plan.grad_bucket_bytes: the part's buckets one after another over its communicator.
          for (size_t b = 0; b < part.buckets.size(); ++b) {
            Node n = CollectiveNode(op, part.buckets[b],
                                    part.buckets.size() == 1 ? name : absl::StrFormat("%s bucket %d", name, b), group);
            for (const uint64_t d : before) n.add_data_deps(d);
            before = {AddNode(out, g.value(), std::move(n))};
          }
          if (!experts) dense_end[g.value()].push_back(before.front());
          ranges.reduced[g.value()].push_back(before.front());
        }
      }
    }
  }
}

// ZeRO-1/2 ranges gathering after the steps: once every holder has stepped its shard, the range's
// parameters all-gather over the same communicators (the collective waits for the group's last
// member, as the executor waits for the last holder's step). ZeRO-3 ranges gather nothing after the
// step: their passes' gathers are in the passes' COMP durations (ExecutionSetup::range_gathers), as one
// pipeline's ZeRO-3 gathers are.
void AddRangeGathers(const LayerRanges& ranges, const std::vector<Exporter>& exporters, ChakraExport& out) {
  if (ranges.gathers_at_start) return;
  for (size_t r = 0; r < ranges.ranges.size(); ++r) {
    const executor::LayerRangeGroup& range = ranges.ranges[r];
    if (range.zero_stage != 1 && range.zero_stage != 2) continue;
    // The dense and the experts' gathers at once, as the executor starts both parts together.
    for (const RangePart& part : PartsOf(ranges, r)) {
      for (size_t k = 0; k < part.groups.size(); ++k) {
        const proto::ChakraCommGroup& group = out.comm_groups[part.comm[k]];
        for (GpuId g : part.groups[k]) {
          Node n = RangeGather(range, part, group);
          n.add_data_deps(exporters[ranges.stage_of.at(g.value()).first].Step(g));
          AddNode(out, g.value(), std::move(n));
        }
      }
    }
  }
}

// ZeRO-3 across pipelines (executor::MatchedGatherRanges): each pass's gather calls of every range it
// gathers, on each GPU of its stage over a communicator of its own per shard group holding the GPU (the
// range's reduce-scatter keeps its own), so that the replay starts a pass once every holder has made the
// same call, as the executor's GatherCalls does; the passes' gathers stay inside their COMP durations. A
// holder with fewer passes over a range makes the rest after its last one (it joins them). Per pipeline,
// per DAG node, what Exporter::MatchGatherCalls takes.
std::vector<std::vector<Exporter::GatherCallsOfNode>> GatherCallNodes(const std::vector<const ExecutionSetup*>& setups,
                                                                      const LayerRanges& ranges, ChakraExport& out,
                                                                      std::vector<std::vector<size_t>>& comm) {
  const std::vector<std::vector<std::vector<int>>> matched = executor::MatchedGatherRanges(setups, ranges.ranges);
  std::vector<std::vector<Exporter::GatherCallsOfNode>> calls(setups.size());
  comm.assign(ranges.ranges.size(), {});
  for (size_t p = 0; p < setups.size(); ++p) {
    calls[p].resize(matched[p].size());
    for (size_t id = 0; id < matched[p].size(); ++id) {
      const int stage = setups[p]->dag->node(static_cast<NodeId>(id)).stage;
      for (const int r : matched[p][id]) {
        const executor::LayerRangeGroup& range = ranges.ranges[r];
        if (comm[r].empty()) {
          for (const std::vector<GpuId>& gpus : range.groups) comm[r].push_back(AddCommGroup(out, gpus));
        }
        const std::string name = absl::StrFormat("ZeRO-3 gather call layers %d-%d", range.first_layer,
                                                 range.first_layer + range.num_layers - 1);
        const DagNode& node = setups[p]->dag->node(static_cast<NodeId>(id));
        const Time offset = executor::GatherCallOffset(range, setups[p]->virtual_stages[node.virtual_stage],
                                                       node.kind == NodeKind::kBackward);
        for (const GpuId gpu : setups[p]->stages[stage].layout.gpus) {
          for (size_t k = 0; k < range.groups.size(); ++k) {
            if (std::find(range.groups[k].begin(), range.groups[k].end(), gpu) == range.groups[k].end()) continue;
            calls[p][id][gpu.value()].push_back({comm[r][k], r, name, offset});
          }
        }
      }
    }
  }
  return calls;
}

// The calls a holder with fewer passes over a range than another joins after its last one (GatherCallNodes),
// chained one after another on each of its GPUs' communicators of the range.
void AddJoinedGatherCalls(const std::vector<const ExecutionSetup*>& setups, const LayerRanges& ranges,
                          const std::vector<std::vector<Exporter::GatherCallsOfNode>>& calls,
                          const std::vector<Exporter>& exporters, ChakraExport& out) {
  for (size_t r = 0; r < ranges.ranges.size(); ++r) {
    const executor::LayerRangeGroup& range = ranges.ranges[r];
    std::vector<std::vector<NodeId>> passes;  // per holder: its passes making the range's calls
    size_t most = 0;
    for (const executor::LayerRangeHolder& h : range.holders) {
      std::vector<NodeId>& mine = passes.emplace_back();
      for (const NodeId id : setups[h.pipeline]->dag->stage_compute_order()[h.stage]) {
        const Exporter::GatherCallsOfNode& of = calls[h.pipeline][id];
        const bool makes = std::any_of(of.begin(), of.end(), [&](const auto& rank_calls) {
          return std::any_of(rank_calls.second.begin(), rank_calls.second.end(),
                             [&](const Exporter::GatherCall& c) { return c.range == static_cast<int>(r); });
        });
        if (makes) mine.push_back(id);
      }
      most = std::max(most, mine.size());
    }
    for (size_t h = 0; h < range.holders.size(); ++h) {
      if (passes[h].empty() || passes[h].size() >= most) continue;
      const int p = range.holders[h].pipeline;
      const NodeId last = passes[h].back();
      for (const auto& [rank, rank_calls] : calls[p][last]) {
        for (const Exporter::GatherCall& c : rank_calls) {
          if (c.range != static_cast<int>(r)) continue;
          std::vector<uint64_t> after = exporters[p].Exits(last, rank);
          for (size_t k = passes[h].size(); k < most; ++k) {
            Node call = CollectiveNode(CollectiveOp::kAllGather, 0, c.name + " (joined)", out.comm_groups[c.group]);
            for (const uint64_t d : after) call.add_ctrl_deps(d);
            after = {AddNode(out, rank, std::move(call))};
          }
        }
      }
    }
  }
}

}  // namespace

uint64_t RoundToMicros(Time t) { return t <= 0 ? 0 : static_cast<uint64_t>((t + kMicrosecond / 2) / kMicrosecond); }

ChakraExport ExportChakra(const ExecutionSetup& setup) {
  ChakraExport out = EmptyExport(setup);
  int32_t next_tag = 0;
  Exporter exporter(setup, out, next_tag);
  exporter.AddPasses();
  exporter.AddGradSyncs({});
  AddIdleNodes(out);
  return out;
}

ChakraExport ExportChakraPipelines(const std::vector<const ExecutionSetup*>& setups) {
  ChakraExport out = EmptyExport(*setups.front());
  int32_t next_tag = 0;
  LayerRanges ranges = RangeCommunicators(setups, out);
  StepDeps early = AddEarlyRangeGathers(ranges, out);
  std::vector<Exporter> exporters;
  exporters.reserve(setups.size());
  for (const ExecutionSetup* setup : setups) exporters.emplace_back(*setup, out, next_tag);
  for (auto& [rank, gathers] : early) {
    const auto [p, s] = ranges.stage_of.at(rank);
    exporters[p].WaitForGathers(s, GpuId(rank), std::move(gathers));
  }
  std::vector<std::vector<size_t>> call_comm;
  const std::vector<std::vector<Exporter::GatherCallsOfNode>> calls = GatherCallNodes(setups, ranges, out, call_comm);
  for (size_t p = 0; p < setups.size(); ++p) exporters[p].MatchGatherCalls(calls[p]);
  for (Exporter& e : exporters) e.AddPasses();
  AddJoinedGatherCalls(setups, ranges, calls, exporters, out);
  AddLayerRanges(exporters, out, ranges);
  for (Exporter& e : exporters) e.AddGradSyncs(ranges.reduced);
  AddRangeGathers(ranges, exporters, out);
  AddIdleNodes(out);
  return out;
}

int64_t ExportNodesLowerBound(const spec::PlanSpec& plan) {
  int64_t nodes = 0;
  for (const spec::PipelineSpec& p : plan.pipelines) {  // each a plan of its own
    spec::PlanSpec one = plan;
    one.pipelines.clear();
    one.stages = p.stages;
    one.context_parallel = p.context_parallel;
    one.micro_batch_size = p.micro_batch_size > 0 ? p.micro_batch_size : plan.micro_batch_size;
    one.microbatches = static_cast<int64_t>(p.batch_share / std::max<uint64_t>(1, one.micro_batch_size));
    nodes += ExportNodesLowerBound(one);
  }
  const int64_t passes_per_gpu = plan.microbatches * std::max(1, plan.virtual_stages) * 2;
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

absl::Status WriteChakraExport(const ChakraExport& out, absl::string_view dir, absl::string_view prefix,
                               std::vector<std::string> inputs) {
  const std::filesystem::path folder{std::string(dir)};
  std::error_code ec;
  if (std::filesystem::exists(folder, ec) && !std::filesystem::is_directory(folder, ec)) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: not a folder", dir));
  }
  // The folder's first missing ancestor: what this call creates, and removes again if nothing is written.
  std::filesystem::path created;
  for (std::filesystem::path p = folder; !p.empty() && !std::filesystem::exists(p, ec); p = p.parent_path()) {
    created = p;
    if (p == p.parent_path()) break;
  }
  std::filesystem::create_directories(folder, ec);
  if (ec) return absl::InvalidArgumentError(absl::StrFormat("%s: cannot create the folder: %s", dir, ec.message()));
  // Every file staged, then all written or none (proto/output_files.h): a name the file system refuses
  // (a prefix too long for the groups file) or a full disk leaves no rank file behind.
  proto::OutputFiles files(std::move(inputs));
  absl::Status status = absl::OkStatus();
  for (size_t r = 0; r < out.ranks.size() && status.ok(); ++r) {
    status = files.Add((folder / RankFileName(prefix, static_cast<int>(r))).string(),
                       proto::SerializeChakraStream(out.ranks[r]));
  }
  if (status.ok()) {
    status = files.Add((folder / CommGroupsFileName(prefix)).string(), proto::ChakraCommGroupsJson(out.comm_groups));
  }
  if (status.ok()) status = files.Commit();
  if (!status.ok() && !created.empty()) std::filesystem::remove_all(created, ec);
  return status;
}

}  // namespace hetsim::chakra
