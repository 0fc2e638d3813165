#include "service/chakra/replay.h"

#include <algorithm>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "base/wall_limit.h"
#include "proto/limits.h"
#include "proto/resolve.h"
#include "sim/collectives/algorithms.h"
#include "sim/collectives/execution.h"
#include "sim/collectives/simulate.h"
#include "sim/engine/limited_run.h"
#include "sim/engine/simulator.h"
#include "sim/workload/gpu_compute.h"

namespace hetsim::chakra {
namespace {

constexpr int kKindShift = 60, kRankShift = 36;
enum EventKind : uint64_t { kComputeDone = 1 };

struct NodeRef {
  int32_t rank;
  int32_t node;
};

class Replay : private engine::EventHandler, private network::FlowObserver {
 public:
  Replay(const ChakraWorkload& w, const topology::Topology& topology, const ReplayOptions& options)
      : w_(w), topology_(topology), router_(topology), options_(options) {}

  absl::StatusOr<ReplayResult> Go() {
    HETSIM_ASSIGN_OR_RETURN(
        network_, network::Network::Create(&sim_, collectives::NetworkLinks(topology_), options_.network_mode));
    HETSIM_RETURN_IF_ERROR(Prepare());
    for (size_t r = 0; r < w_.ranks.size(); ++r) {
      for (size_t i = 0; i < w_.ranks[r].nodes.size(); ++i) {
        if (pending_[r][i] == 0) ready_.push_back({static_cast<int32_t>(r), static_cast<int32_t>(i)});
      }
    }
    Drain();
    HETSIM_RETURN_IF_ERROR(RunEngine());
    if (!failure_.ok()) return failure_;
    HETSIM_RETURN_IF_ERROR(CheckAllRan());
    r_.events = sim_.events_processed();
    r_.network_stats = network_->stats();
    for (LinkId l : IdsBelow<LinkId>(network_->num_links())) r_.link_counters.push_back(network_->link_counters(l));
    for (size_t r = 0; r < w_.ranks.size(); ++r) {
      for (Time t : r_.node_finish[r]) r_.rank_end[r] = std::max(r_.rank_end[r], t);
      r_.iteration_time = std::max(r_.iteration_time, r_.rank_end[r]);
      // Time saturates rather than wrapping (ScheduleAfter); a saturated end is an error, not a figure.
      if (TimeToPicosecondsDouble(r_.rank_end[r]) >= proto::limits::kMaxSimulatedPs) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "%s: the rank's operations end after %.0f s, past the %.0f s hetsim can time: a duration in the "
            "trace is wrong",
            w_.ranks[r].file, TimeToSeconds(r_.rank_end[r]), proto::limits::kMaxSimulatedPs * 1e-12));
      }
    }
    return std::move(r_);
  }

 private:
  struct Stream {
    std::deque<int32_t> queue;
    bool busy = false;
  };
  struct CollectiveInstance {
    std::vector<NodeRef> members;
    const collectives::TransferGraph* graph = nullptr;
  };
  using MessageKey = std::tuple<int32_t, int32_t, int64_t>;
  struct Mailbox {
    std::deque<NodeRef> waiting;  // recvs issued before their message arrived
    int64_t arrived = 0;          // messages arrived before their recv was issued
  };

  absl::Status Prepare() {
    const size_t n = w_.ranks.size();
    pending_.resize(n);
    succ_.resize(n);
    streams_.resize(n);
    collective_seq_.assign(n, std::vector<int64_t>(w_.groups.size(), 0));
    r_.node_start.resize(n);
    r_.node_finish.resize(n);
    r_.rank_end.assign(n, 0);
    r_.compute_busy.assign(n, 0);
    for (size_t r = 0; r < n; ++r) {
      const auto& nodes = w_.ranks[r].nodes;
      pending_[r].assign(nodes.size(), 0);
      succ_[r].assign(nodes.size(), {});
      r_.node_start[r].assign(nodes.size(), kNoTime);
      r_.node_finish[r].assign(nodes.size(), kNoTime);
      streams_[r].resize(2);
      for (size_t i = 0; i < nodes.size(); ++i) {
        pending_[r][i] = static_cast<int32_t>(nodes[i].deps.size());
        for (int32_t d : nodes[i].deps) succ_[r][d].push_back(static_cast<int32_t>(i));
      }
    }
    if (options_.retime_compute) {
      for (int32_t island = 0; island < topology_.num_islands(); ++island) {
        const spec::GpuSpec& spec = topology_.island(island).gpu;
        const std::string where = absl::StrFormat("gpu_types[\"%s\"]", spec.name);
        HETSIM_ASSIGN_OR_RETURN(
            workload::GpuCompute gpu,
            workload::GpuCompute::Create(spec, proto::DTypeOf(options_.dtype), where, topology_.cluster().ideal));
        gpus_.push_back(std::move(gpu));
      }
    }
    return absl::OkStatus();
  }

  absl::Status RunEngine() {  // a handler's Stop() leaves its reason in failure_
    const WallLimit wall_limit(options_.max_wall_seconds);
    return engine::RunWithinLimits(sim_, options_.max_events, wall_limit, [] { return absl::OkStatus(); }).status();
  }

  const TraceNode& At(NodeRef ref) const { return w_.ranks[ref.rank].nodes[ref.node]; }
  const std::string& File(NodeRef ref) const { return w_.ranks[ref.rank].file; }

  void Fail(absl::Status status) {
    if (failure_.ok()) failure_ = std::move(status);
    sim_.Stop();
  }

  // Starts every ready node; nodes that end at once make more nodes ready (no recursion).
  void Drain() {
    while (!ready_.empty() && failure_.ok()) {
      const NodeRef ref = ready_.front();
      ready_.pop_front();
      Start(ref);
    }
  }

  void Start(NodeRef ref) {
    r_.node_start[ref.rank][ref.node] = sim_.now();
    const TraceNode& n = At(ref);
    switch (n.type) {
      case TraceNodeType::kCompute: {
        Stream& s = streams_[ref.rank][n.is_cpu_op ? 1 : 0];
        s.queue.push_back(ref.node);
        if (!s.busy) NextCompute(ref.rank, n.is_cpu_op ? 1 : 0);
        return;
      }
      case TraceNodeType::kSend: StartSend(ref); return;
      case TraceNodeType::kRecv: {
        Mailbox& box = mail_[MessageKey{n.src, n.dst, n.tag}];
        if (box.arrived > 0) {
          --box.arrived;
          Finish(ref);
        } else {
          box.waiting.push_back(ref);
        }
        return;
      }
      case TraceNodeType::kCollective: JoinCollective(ref); return;
      case TraceNodeType::kNoOp: Finish(ref); return;
    }
  }

  Time ComputeDuration(NodeRef ref) const {
    const TraceNode& n = At(ref);
    if (!options_.retime_compute || (n.num_ops <= 0 && n.tensor_size <= 0)) return n.duration;
    const absl::StatusOr<topology::GpuLocation> where = topology_.Locate(GpuId(ref.rank));
    const workload::GpuCompute& gpu = gpus_[where->island];
    const double s = std::max(n.num_ops > 0 ? gpu.GemmSeconds(n.num_ops) : 0.0,
                              n.tensor_size > 0 ? gpu.MemorySeconds(static_cast<double>(n.tensor_size), 1) : 0.0);
    return SecondsToTime(s);
  }

  void NextCompute(int32_t rank, int stream) {
    Stream& s = streams_[rank][stream];
    if (s.queue.empty()) {
      s.busy = false;
      return;
    }
    s.busy = true;
    const NodeRef ref{rank, s.queue.front()};
    s.queue.pop_front();
    const Time d = ComputeDuration(ref);
    // A queued node starts when the stream takes it.
    r_.node_start[rank][ref.node] = sim_.now();
    // Saturating: a hostile trace's durations may add up past the largest Time.
    if (stream == 0)
      r_.compute_busy[rank] = d > kTimeMax - r_.compute_busy[rank] ? kTimeMax : r_.compute_busy[rank] + d;
    sim_.ScheduleAfter(d, this,
                       (uint64_t{kComputeDone} << kKindShift) | (uint64_t(rank) << kRankShift) |
                           (uint64_t(stream) << 35) | uint64_t(ref.node));
  }

  void OnEvent(uint64_t payload) override {
    const auto rank = static_cast<int32_t>((payload >> kRankShift) & ((uint64_t{1} << 24) - 1));
    const int stream = static_cast<int>((payload >> 35) & 1);
    const auto node = static_cast<int32_t>(payload & ((uint64_t{1} << 35) - 1));
    Finish({rank, node});
    NextCompute(rank, stream);
    Drain();
  }

  void StartSend(NodeRef ref) {
    const TraceNode& n = At(ref);
    absl::StatusOr<const topology::Route*> route =
        router_.GpuRoute(GpuId(n.src), GpuId(n.dst), static_cast<uint64_t>(n.tag));
    if (!route.ok()) {
      Fail(absl::InvalidArgumentError(absl::StrFormat("%s: node %d: no route from GPU %d to GPU %d: %s", File(ref),
                                                      n.id, n.src, n.dst, route.status().message())));
      return;
    }
    sends_.push_back(ref);
    network_->StartFlow(std::span<const LinkId>((*route)->data(), (*route)->size()), n.comm_bytes, this,
                        sends_.size() - 1);
  }

  void OnFlowCompleted(network::FlowId, uint64_t tag) override {
    const NodeRef send = sends_[tag];
    const TraceNode& n = At(send);
    Finish(send);
    Mailbox& box = mail_[MessageKey{n.src, n.dst, n.tag}];
    if (box.waiting.empty()) {
      ++box.arrived;
    } else {
      const NodeRef recv = box.waiting.front();
      box.waiting.pop_front();
      Finish(recv);
    }
    Drain();
  }

  void JoinCollective(NodeRef ref) {
    const TraceNode& n = At(ref);
    const int64_t seq = collective_seq_[ref.rank][n.group]++;
    const auto key = std::make_pair(n.group, seq);
    CollectiveInstance& inst = instances_[key];
    if (!inst.members.empty()) {
      const TraceNode& first = At(inst.members[0]);
      if (first.op != n.op || first.comm_bytes != n.comm_bytes) {
        Fail(absl::InvalidArgumentError(absl::StrFormat(
            "%s: node %d: %s of %d bytes is collective %d on group \"%s\", where %s node %d issues %s of %d bytes",
            File(ref), n.id, CollectiveOpName(n.op), n.comm_bytes, seq, w_.groups[n.group].name, File(inst.members[0]),
            first.id, CollectiveOpName(first.op), first.comm_bytes)));
        return;
      }
    }
    inst.members.push_back(ref);
    const auto& ranks = w_.groups[n.group].ranks;
    if (inst.members.size() < ranks.size()) return;
    ++r_.collectives;
    if (ranks.size() == 1) {
      Finish(ref);
      instances_.erase(key);
      return;
    }
    absl::StatusOr<const collectives::TransferGraph*> graph = GraphFor(ref);
    if (!graph.ok()) {
      Fail(graph.status());
      return;
    }
    executions_.emplace_back(network_.get(), &router_, *graph, [this, key](Time) { CollectiveDone(key); });
    if (absl::Status s = executions_.back().Start(&sim_); !s.ok()) Fail(s);
  }

  // One transfer graph per (group, operation, bytes), built when first needed.
  absl::StatusOr<const collectives::TransferGraph*> GraphFor(NodeRef ref) {
    const TraceNode& n = At(ref);
    const auto key = std::make_tuple(n.group, static_cast<int>(n.op), n.comm_bytes);
    if (auto it = graphs_.find(key); it != graphs_.end()) return it->second;
    collectives::CollectiveRequest request;
    request.op = n.op;
    for (int64_t r : w_.groups[n.group].ranks) request.gpus.push_back(static_cast<GpuId>(r));
    request.bytes = n.comm_bytes;
    auto where = [&](const absl::Status& s) {
      return absl::InvalidArgumentError(absl::StrFormat("%s: node %d: %s on group \"%s\": %s", File(ref), n.id,
                                                        CollectiveOpName(n.op), w_.groups[n.group].name, s.message()));
    };
    if (absl::Status s = collectives::ValidateRequest(topology_, request); !s.ok()) return where(s);
    absl::StatusOr<collectives::ShapeChoice> choice = collectives::ChooseShape(topology_, router_, request);
    if (!choice.ok()) return where(choice.status());
    graph_store_.push_back(collectives::BuildTransferGraph(topology_, request, choice->shape));
    if (absl::Status s = CurrentWallLimit().Check("building a collective's transfers"); !s.ok()) return s;
    graphs_.emplace(key, &graph_store_.back());
    return &graph_store_.back();
  }

  void CollectiveDone(std::pair<int32_t, int64_t> key) {
    auto it = instances_.find(key);
    for (NodeRef m : it->second.members) Finish(m);
    instances_.erase(it);
    Drain();
  }

  void Finish(NodeRef ref) {
    r_.node_finish[ref.rank][ref.node] = sim_.now();
    for (int32_t s : succ_[ref.rank][ref.node]) {
      if (--pending_[ref.rank][s] == 0) ready_.push_back({ref.rank, s});
    }
  }

  // A node that never ran means the traces wait on each other forever: name the first one and why.
  absl::Status CheckAllRan() const {
    for (size_t r = 0; r < w_.ranks.size(); ++r) {
      const auto& nodes = w_.ranks[r].nodes;
      for (size_t i = 0; i < nodes.size(); ++i) {
        if (r_.node_finish[r][i] >= 0) continue;
        const TraceNode& n = nodes[i];
        std::string why = "a dependency never finished";
        if (r_.node_start[r][i] >= 0 && n.type == TraceNodeType::kRecv) {
          why = absl::StrFormat("its send (rank %d to %d, tag %d) never ran", n.src, n.dst, n.tag);
        } else if (r_.node_start[r][i] >= 0 && n.type == TraceNodeType::kCollective) {
          why = absl::StrFormat("a member of group \"%s\" never reached the same collective", w_.groups[n.group].name);
        }
        return absl::InvalidArgumentError(
            absl::StrFormat("%s: node %d: never completed (deadlock: %s)", w_.ranks[r].file, n.id, why));
      }
    }
    return absl::OkStatus();
  }

  const ChakraWorkload& w_;
  const topology::Topology& topology_;
  topology::Router router_;
  const ReplayOptions& options_;
  engine::Simulator sim_;
  std::unique_ptr<network::Network> network_;
  std::vector<std::vector<int32_t>> pending_;
  std::vector<std::vector<std::vector<int32_t>>> succ_;
  std::vector<std::vector<Stream>> streams_;  // [rank][0 GPU, 1 CPU]
  std::deque<NodeRef> ready_;
  std::vector<NodeRef> sends_;  // flow tag -> send node
  std::map<MessageKey, Mailbox> mail_;
  std::vector<std::vector<int64_t>> collective_seq_;  // [rank][group]: collectives issued so far
  std::map<std::pair<int32_t, int64_t>, CollectiveInstance> instances_;
  std::deque<collectives::TransferGraph> graph_store_;
  std::map<std::tuple<int32_t, int, int64_t>, const collectives::TransferGraph*> graphs_;
  std::deque<collectives::CollectiveExecution> executions_;
  std::vector<workload::GpuCompute> gpus_;  // per island, for retime_compute
  absl::Status failure_;
  ReplayResult r_;
};

}  // namespace

absl::StatusOr<ReplayResult> ReplayChakra(const ChakraWorkload& workload, const topology::Topology& topology,
                                          const ReplayOptions& options) {
  if (static_cast<int>(workload.ranks.size()) > topology.num_gpus()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%d ranks but the cluster has %d GPUs", workload.ranks.size(), topology.num_gpus()));
  }
  Replay replay(workload, topology, options);
  // The collectives it builds check the limit too (sim/collectives/algorithms.h).
  const WallLimit limit(options.max_wall_seconds);
  std::optional<WallLimitScope> scope;
  if (limit.limited()) scope.emplace(limit);
  return replay.Go();
}

}  // namespace hetsim::chakra
