#include "planner/mixed_replicas.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <tuple>

#include "base/units.h"
#include "planner/layer_ranges.h"
#include "planner/prediction.h"
#include "sim/collectives/estimate.h"

namespace hetsim::planner {

Profiler& GroupProfilers::For(uint64_t micro_batch_size) {
  std::unique_ptr<Profiler>& p = by_size_[micro_batch_size];
  if (!p) {
    ProfilerOptions options = base_.options();
    options.cache = nullptr;  // the cache is bound to the base's micro-batch-free island keys only
    p = std::make_unique<Profiler>(base_.model(), base_.cluster(), micro_batch_size, options, base_.context_parallel());
  }
  return *p;
}

std::optional<StageOption> GroupProfilers::Price(uint64_t micro_batch_size, int island, MeshShape shape,
                                                 const IntraStageConfig& c, int first, int count) {
  const PriceKey key{micro_batch_size,
                     island,
                     shape.nodes,
                     shape.gpus_per_node,
                     c.tensor_parallel,
                     c.data_parallel,
                     c.zero_stage,
                     static_cast<int>(c.recompute),
                     c.recompute_num_layers,
                     c.sequence_parallel,
                     c.expert_parallel,
                     c.expert_tensor_parallel,
                     c.expert_data_parallel,
                     c.measured_forward_ms,
                     c.measured_backward_ms,
                     first,
                     count};
  auto [it, added] = prices_.try_emplace(key);
  if (added) it->second = For(micro_batch_size).PriceDirect(island, shape, c, first, count);
  return it->second;
}

RangeNccl& GroupProfilers::Nccl() {
  if (!nccl_) nccl_ = std::make_unique<RangeNccl>(base_.cluster());
  return *nccl_;
}

std::optional<SearchedStage> PriceMixedStage(GroupProfilers& profilers, const IntraStageConfig& stage,
                                             std::vector<SearchedGroup> groups, int first, int count) {
  int replicas = 0, finest = 1, gpus = 0;
  for (const SearchedGroup& g : groups) {
    replicas += g.data_parallel;
    finest = std::max(finest, g.tensor_parallel);
    gpus += g.tensor_parallel * g.data_parallel;
  }
  SearchedStage s;
  s.first_layer = s.first_group = first;
  s.num_layers = count;
  s.last_group = first + count - 1;
  // MoE: each group lays the experts out over its own GPUs at its own EP and ETP (its own, else the
  // stage's; ETP the stage's or its largest TP), ETP x EP of them a copy, their states sharded over every
  // group's copies; the stage's layout is the finest group's (the largest ETP x EP), as the simulator's
  // GroupConfig and StageLayout::ExpertDataGroup.
  const bool moe = profilers.base().model().num_experts() > 1;
  IntraStageConfig experts = stage;
  experts.expert_parallel = std::max(1, stage.expert_parallel);
  experts.expert_tensor_parallel = stage.expert_tensor_parallel > 0 ? stage.expert_tensor_parallel : finest;
  experts.expert_data_parallel = std::max(1, gpus / (experts.expert_tensor_parallel * experts.expert_parallel));
  if (moe) {
    const IntraStageConfig own = experts;
    int copies = 0, block = 0;
    for (SearchedGroup& g : groups) {
      if (g.expert_parallel <= 0) g.expert_parallel = own.expert_parallel;
      if (g.expert_tensor_parallel <= 0) g.expert_tensor_parallel = own.expert_tensor_parallel;
      copies += g.shape.gpus() / (g.expert_parallel * g.expert_tensor_parallel);
      if (g.expert_parallel * g.expert_tensor_parallel > block) {
        block = g.expert_parallel * g.expert_tensor_parallel;
        experts.expert_parallel = g.expert_parallel;
        experts.expert_tensor_parallel = g.expert_tensor_parallel;
      }
    }
    experts.expert_data_parallel = std::max(1, copies);
  }
  for (SearchedGroup& g : groups) {
    IntraStageConfig cfg = experts;
    cfg.tensor_parallel = g.tensor_parallel;
    cfg.sequence_parallel = stage.sequence_parallel && g.tensor_parallel > 1;  // Megatron-LM's: off at TP 1
    if (moe) {
      cfg.expert_parallel = g.expert_parallel;
      cfg.expert_tensor_parallel = g.expert_tensor_parallel;
    } else {  // a dense model's groups: ETP is each group's TP (no experts to lay out)
      cfg.expert_tensor_parallel = 0;
      cfg.expert_data_parallel = 0;
    }
    cfg.data_parallel = replicas;
    std::optional<StageOption> o =
        profilers.Price(g.share * static_cast<uint64_t>(replicas), g.island, g.shape, cfg, first, count);
    if (!o) return std::nullopt;
    g.option = *o;
    s.option.forward = std::max(s.option.forward, o->forward);
    s.option.backward = std::max(s.option.backward, o->backward);
  }
  s.option.config = experts;
  s.option.config.tensor_parallel = finest;
  s.option.config.data_parallel = replicas;
  s.option.max_in_flight = std::numeric_limits<int>::max();
  for (const SearchedGroup& g : groups)
    s.option.max_in_flight = std::min(s.option.max_in_flight, g.option.max_in_flight);
  s.island = groups.front().island;
  s.shape = groups.front().shape;
  const ClusterModel& cluster = profilers.base().cluster();
  const int expert_block = experts.expert_tensor_parallel * experts.expert_parallel;
  MixedSync sync = MixedGradSync(cluster, groups, stage.zero_stage, profilers.Nccl(), expert_block);
  s.option.grad_sync = sync.time;
  s.grad_sync_flows = std::move(sync.flows);
  s.groups = std::move(groups);
  return s;
}

namespace {

// The rate a ring member of island `from`'s mesh `sender` gets towards island `to` when `rings` rings
// cross there at once: what the mesh's paths to that island carry, shared by the rings.
double CrossingBytesPerS(const ClusterModel& cluster, int from, int to, MeshShape sender, int rings) {
  constexpr double kProbeBytes = 1e9;
  const Time t = cluster.BoundaryTime(from, to, kProbeBytes, sender) - cluster.BoundaryLink(from, to).latency;
  if (t <= 0) return std::numeric_limits<double>::infinity();
  return kProbeBytes / TimeToSeconds(t) / std::max(1, rings);
}

// Whether every group sits on the one node of one island (placed meshes of one node each; a negative
// first_node is a group not placed).
bool OnOneNode(const std::vector<SearchedGroup>& groups) {
  return std::all_of(groups.begin(), groups.end(), [&](const SearchedGroup& g) {
    return g.first_node >= 0 && g.island == groups.front().island && g.shape.nodes == 1 &&
           g.first_node == groups.front().first_node;
  });
}

}  // namespace

double MixedRing::BytesPerS() const {
  double rate = std::numeric_limits<double>::infinity();
  for (double r : hop_bytes_per_s) rate = std::min(rate, r);
  for (const auto& [pair, r] : crossing_bytes_per_s) rate = std::min(rate, r);
  return rate;
}

namespace {

// MoE: group g's own ETP x EP (PriceMixedStage wrote it), else the stage's `expert_block`.
int OwnExpertBlock(const SearchedGroup& g, int expert_block) {
  return g.expert_parallel > 0 && g.expert_tensor_parallel > 0 ? g.expert_parallel * g.expert_tensor_parallel
                                                               : expert_block;
}

}  // namespace

MixedRing MixedRingOf(const ClusterModel& cluster, const std::vector<SearchedGroup>& groups, int expert_block) {
  MixedRing out;
  int finest = 1;
  for (const SearchedGroup& g : groups) {
    out.replicas += expert_block > 0 ? g.shape.gpus() / std::max(1, OwnExpertBlock(g, expert_block)) : g.data_parallel;
    finest = std::max(finest, g.tensor_parallel);
  }
  // The experts: ETP x EP rings, one per expert rank, each GPU in one of them.
  const int rings = expert_block > 0 ? expert_block : finest;
  // One node: each shard's ring of `replicas` GPUs over the node's links, every shard's ring at once.
  out.one_node = !groups.empty() && OnOneNode(groups);
  int busy = 0;
  for (const SearchedGroup& g : groups) busy += g.shape.gpus();
  const LinkFigures* intra =
      out.one_node ? &cluster.island(groups.front().island).IntraRing(out.replicas, busy) : nullptr;
  for (const SearchedGroup& g : groups) {
    const IslandModel& im = cluster.island(g.island);
    const int own_block = expert_block > 0 ? std::max(1, OwnExpertBlock(g, expert_block)) : 0;
    if (expert_block > 0 && own_block == expert_block) {  // the finest expert split's shard
      out.bytes = std::max(out.bytes, static_cast<double>(g.option.expert_grad_sync_bytes));
    } else if (expert_block == 0 && g.tensor_parallel == finest) {
      out.bytes = std::max(out.bytes, static_cast<double>(g.option.grad_sync_bytes));
    }
    // A GPU of a coarser group joins finest / t_g rings (the experts': block / its own block) through its
    // own NIC share (one node: its links).
    const double shards = expert_block > 0 ? static_cast<double>(expert_block) / own_block
                                           : static_cast<double>(finest) / g.tensor_parallel;
    if (intra != nullptr) {
      out.hop_bytes_per_s.push_back(intra->bytes_per_s / shards);
      out.latency = intra->latency;
      continue;
    }
    out.hop_bytes_per_s.push_back(cluster.NicShare(im, g.shape.gpus_per_node) / shards);
    for (const SearchedGroup& other : groups) {
      out.latency = std::max(out.latency, cluster.BoundaryLink(g.island, other.island).latency);
      // On one flat network the islands' crossing is each node's NICs (the hops, and where placed the NIC
      // links): no link of its own that every ring between them shares.
      if (other.island == g.island || cluster.SharesNetwork(g.island, other.island)) continue;
      const std::pair<int, int> pair = std::minmax(g.island, other.island);
      const double r = CrossingBytesPerS(cluster, g.island, other.island, g.shape, rings);
      auto [it, added] = out.crossing_bytes_per_s.emplace(pair, r);
      if (!added) it->second = std::min(it->second, r);
    }
  }
  return out;
}

Time MixedRingTime(const ClusterModel& cluster, const std::vector<SearchedGroup>& groups, int expert_block) {
  const MixedRing ring = MixedRingOf(cluster, groups, expert_block);
  const double rate = ring.BytesPerS();
  return ring.replicas > 1 && ring.bytes > 0 && rate > 0
             ? SecondsToTime(collectives::RingAllReduceSeconds(ring.replicas, Bytes(ring.bytes), Bandwidth(rate),
                                                               TimeAsSeconds(ring.latency)))
             : 0;
}

std::vector<GpuId> MixedShardGpus(const ClusterModel& cluster, const std::vector<SearchedGroup>& groups,
                                  int expert_block) {
  std::vector<GpuId> gpus;
  for (const SearchedGroup& g : groups) {
    if (g.first_node < 0 || g.first_gpu < 0) return {};
    // A replica's CP x TP GPUs, or (the experts) a copy's ETP x EP.
    const int per_replica =
        expert_block > 0 ? std::max(1, OwnExpertBlock(g, expert_block)) : g.shape.gpus() / std::max(1, g.data_parallel);
    const int copies = expert_block > 0 ? g.shape.gpus() / per_replica : g.data_parallel;
    for (int r = 0; r < copies; ++r) {
      const int at = r * per_replica;
      absl::StatusOr<GpuId> gpu = cluster.topology().GpuIdOf(g.island, g.first_node + at / g.shape.gpus_per_node,
                                                             g.first_gpu + at % g.shape.gpus_per_node);
      if (!gpu.ok()) return {};
      gpus.push_back(*gpu);
    }
  }
  return gpus;
}

// The NICs (key: (its capacity one way, the rings through it)) `groups`' shard rings cross on each node: a
// NIC carries the distinct shard rings of the GPUs wired to it (all `finest` once it sees every TP rank of
// a replica). The experts' (`expert_block` > 0): the same with a copy's ETP x EP in place of a replica's TP
// and `finest` the block.
std::map<int, std::pair<double, int>> MixedNicLinks(const ClusterModel& cluster,
                                                    const std::vector<SearchedGroup>& groups, int finest,
                                                    int expert_block) {
  std::map<int, int> rings;
  std::map<int, double> capacity;
  for (const SearchedGroup& g : groups) {
    const IslandModel& im = cluster.island(g.island);
    const int nics = std::max(1, im.nics_per_node);
    const int per_nic = std::max(1, im.gpus_per_node / nics);
    for (int node = g.first_node; node < g.first_node + g.shape.nodes; ++node) {
      std::map<int, int> wired;  // NIC -> the group's GPUs wired to it on this node
      for (int k = 0; k < g.shape.gpus_per_node; ++k) ++wired[(g.first_gpu + k) / per_nic];
      for (const auto& [nic, count] : wired) {
        const absl::StatusOr<GpuId> first = cluster.topology().GpuIdOf(g.island, node, nic * per_nic);
        if (!first.ok()) continue;
        const int key = kMixedNicKey + first->value();
        const int t = std::max(1, expert_block > 0 ? OwnExpertBlock(g, expert_block) : g.tensor_parallel);
        rings[key] = std::min(finest, rings[key] + std::min(t, count) * (finest / t));
        capacity[key] = im.nic_link_bytes_per_s;  // as the simulator's NIC link carries it
      }
    }
  }
  std::map<int, std::pair<double, int>> out;
  for (const auto& [key, n] : rings) out[key] = {capacity[key], std::max(1, n)};
  return out;
}

namespace {

// MixedDenseRingFlow, or with `expert_block` > 0 the experts' (MixedExpertRingFlow).
std::optional<SharedFlow> MixedRingFlow(const ClusterModel& cluster, const std::vector<SearchedGroup>& groups,
                                        RangeNccl& nccl, CollectiveOp op, int64_t bytes, int expert_block) {
  MixedRing ring = MixedRingOf(cluster, groups, expert_block);
  if (bytes > 0) ring.bytes = static_cast<double>(bytes);
  if (!(ring.bytes > 0)) return std::nullopt;
  const std::optional<NcclPrice> price =
      nccl.Of(MixedShardGpus(cluster, groups, expert_block), op, static_cast<int64_t>(ring.bytes));
  if (!price) return std::nullopt;
  // The rings at once (the finest TP split's, or the experts' block) and the most a GPU carries of them.
  int finest = 1, load = 1;
  for (const SearchedGroup& g : groups) finest = std::max(finest, g.tensor_parallel);
  if (expert_block > 0) finest = expert_block;
  for (const SearchedGroup& g : groups) {
    load = std::max(load, finest / std::max(1, expert_block > 0 ? OwnExpertBlock(g, expert_block) : g.tensor_parallel));
  }
  SharedFlow flow;
  const double steps = (op == CollectiveOp::kAllReduce ? 2.0 : 1.0) * (ring.replicas - 1);
  flow.bytes = steps / ring.replicas * ring.bytes;
  flow.latency = SecondsToTime(price->latency_s);
  // One ring alone moves at NCCL's pace, which has seen every link it crosses: a NIC or a crossing never
  // gives a lone ring less, only divides among the rings through it (this stage's, and in Predict others'),
  // each NIC in its protocol's payload bytes over the busiest NIC's share of a ring's (NcclPrice::NicBytesPerS,
  // as the layer ranges' node NICs).
  const double alone = price->bandwidth_s() > 0 ? flow.bytes / price->bandwidth_s() : 0;
  if (alone > 0) flow.links.emplace_back(-1, alone / load);
  if (!ring.one_node) {
    // Each NIC shared per flow (NcclPrice::NicLink): the rings through it x the flows one puts there, the
    // lone ring's pace its floor.
    for (const auto& [key, nic] : MixedNicLinks(cluster, groups, finest, expert_block))
      flow.links.push_back(price->NicLink(key, nic.first, nic.second, alone));
  }
  for (const auto& [pair, rate] : ring.crossing_bytes_per_s) {
    if (std::isfinite(rate)) {
      flow.links.emplace_back(-2 - (pair.first * cluster.num_islands() + pair.second),
                              std::max(rate * finest, alone) / finest);
    }
  }
  return flow;
}

}  // namespace

std::optional<SharedFlow> MixedDenseRingFlow(const ClusterModel& cluster, const std::vector<SearchedGroup>& groups,
                                             RangeNccl& nccl, CollectiveOp op, int64_t bytes) {
  return MixedRingFlow(cluster, groups, nccl, op, bytes, 0);
}

std::optional<SharedFlow> MixedExpertRingFlow(const ClusterModel& cluster, const std::vector<SearchedGroup>& groups,
                                              RangeNccl& nccl, int expert_block, CollectiveOp op) {
  if (expert_block <= 0) return std::nullopt;
  return MixedRingFlow(cluster, groups, nccl, op, 0, expert_block);
}

std::vector<SharedFlow> MixedSyncFlows(const ClusterModel& cluster, const std::vector<SearchedGroup>& groups,
                                       int zero_stage, Time step, RangeNccl& nccl, int expert_block) {
  const CollectiveOp reduce = zero_stage < 1 ? CollectiveOp::kAllReduce : CollectiveOp::kReduceScatter;
  std::optional<SharedFlow> dense = MixedDenseRingFlow(cluster, groups, nccl, reduce);
  if (!dense) return {};
  std::vector<SharedFlow> flows = {*std::move(dense)};
  // The experts' buckets follow the dense ones (the simulator's AppendBuckets); where NCCL cannot price
  // their rings, their ring at its slowest hop before the step.
  std::optional<SharedFlow> experts = MixedExpertRingFlow(cluster, groups, nccl, expert_block, reduce);
  if (experts) {
    experts->after = 0;
    flows.push_back(*std::move(experts));
  } else {
    step += MixedExpertsTime(cluster, groups, expert_block);
  }
  flows.push_back(SharedFlow{.after = static_cast<int>(flows.size()) - 1, .latency = step, .bytes = 0, .links = {}});
  if (zero_stage < 1 || zero_stage >= 3) return flows;  // ZeRO-3 gathers before each pass, not after the step
  // ZeRO-1/2: both parameter all-gathers at once after the step (the simulator's ParamGather).
  const int after_step = static_cast<int>(flows.size()) - 1;
  std::optional<SharedFlow> gather = MixedDenseRingFlow(cluster, groups, nccl, CollectiveOp::kAllGather);
  if (!gather) return {};
  gather->after = after_step;
  flows.push_back(*std::move(gather));
  if (std::optional<SharedFlow> g =
          MixedExpertRingFlow(cluster, groups, nccl, expert_block, CollectiveOp::kAllGather)) {
    g->after = after_step;
    flows.push_back(*std::move(g));
  }
  return flows;
}

Time MixedSyncEnd(const std::vector<SharedFlow>& flows) {
  const std::vector<Time> ends = ShareLinks(flows);
  return ends.empty() ? Time() : *std::max_element(ends.begin(), ends.end());
}

Time MixedDenseRingTime(const ClusterModel& cluster, const std::vector<SearchedGroup>& groups, RangeNccl& nccl) {
  const std::optional<SharedFlow> flow = MixedDenseRingFlow(cluster, groups, nccl);
  return flow ? ShareLinks({*flow}).front() : MixedRingTime(cluster, groups);
}

std::vector<Time> MixedLayerGathers(const workload::ModelCost& model, const ClusterModel& cluster,
                                    const std::vector<SearchedGroup>& groups, int first, int count, RangeNccl& nccl) {
  int finest = 1, replicas = 0;
  for (const SearchedGroup& g : groups) {
    finest = std::max(finest, g.tensor_parallel);
    replicas += g.data_parallel;
  }
  if (replicas < 2 || count <= 0) return {};
  const MixedRing ring = MixedRingOf(cluster, groups);
  const double rate = ring.BytesPerS();
  std::vector<Time> out;
  for (const int64_t bytes : LayerGatherBytes(model, first, first + count,
                                              workload::DenseGradSyncBytes(model, first, count, finest, false))) {
    const std::optional<SharedFlow> flow =
        bytes > 0 ? MixedDenseRingFlow(cluster, groups, nccl, CollectiveOp::kAllGather, bytes) : std::nullopt;
    if (flow) {
      out.push_back(ShareLinks({*flow}).front());
    } else if (bytes > 0 && rate > 0) {
      out.push_back(SecondsToTime(collectives::RingAllGatherSeconds(replicas, Bytes(static_cast<double>(bytes)),
                                                                    Bandwidth(rate), TimeAsSeconds(ring.latency))));
    } else {
      out.push_back(0);
    }
  }
  return out;
}

ExposedGather ExposedLayerGather(const std::vector<Time>& gather, size_t k, bool prefetch, const StageOption& option) {
  const size_t n = gather.size();
  const auto parts = std::max<int64_t>(1, static_cast<int64_t>(n));
  const Time layer_forward = (option.forward - option.gather_forward) / parts;
  const Time layer_backward = (option.backward - option.gather_backward) / parts;
  return {prefetch && k > 0 ? std::max<Time>(0, gather[k] - layer_forward) : gather[k],
          prefetch && k + 1 < n ? std::max<Time>(0, gather[k] - layer_backward) : gather[k]};
}

void AddZeroThreeGathers(const std::vector<Time>& gather, bool prefetch, StageOption& option) {
  ExposedGather total;
  for (size_t k = 0; k < gather.size(); ++k) {
    const ExposedGather layer = ExposedLayerGather(gather, k, prefetch, option);
    total.forward += layer.forward;
    total.backward += layer.backward;
  }
  option.forward += total.forward;
  option.backward += total.backward;
  option.gather_forward += total.forward;
  option.gather_backward += total.backward;
}

Time MixedStepTime(const ClusterModel& cluster, const std::vector<SearchedGroup>& groups) {
  Time optimizer = 0, overhead = 0;
  for (const SearchedGroup& g : groups) {
    optimizer = std::max(optimizer, g.option.optimizer_passes);
    overhead = std::max(overhead, SecondsToTime(cluster.island(g.island).gpu->iteration_overhead_s()));
  }
  return optimizer + overhead;
}

Time MixedExpertsTime(const ClusterModel& cluster, const std::vector<SearchedGroup>& groups, int expert_block) {
  // The experts' buckets follow the dense ones, as a plain stage's (SyncTimeOf).
  return expert_block > 0 ? MixedRingTime(cluster, groups, expert_block) : Time();
}

MixedSync MixedGradSync(const ClusterModel& cluster, const std::vector<SearchedGroup>& groups, int zero_stage,
                        RangeNccl& nccl, int expert_block) {
  const Time step = MixedStepTime(cluster, groups);
  MixedSync sync{.flows = MixedSyncFlows(cluster, groups, zero_stage, step, nccl, expert_block)};
  sync.time = sync.flows.empty()
                  ? MixedRingTime(cluster, groups) + MixedExpertsTime(cluster, groups, expert_block) + step
                  : MixedSyncEnd(sync.flows);
  return sync;
}

Time MixedGradSyncTime(const ClusterModel& cluster, const std::vector<SearchedGroup>& groups, int zero_stage,
                       RangeNccl& nccl, int expert_block) {
  return MixedGradSync(cluster, groups, zero_stage, nccl, expert_block).time;
}

Time MixedBoundaryTime(const ClusterModel& cluster, double microbatch_bytes, uint64_t micro_batch_size,
                       const SearchedStage& from, const SearchedStage& to) {
  const auto island_of_receiver = [&](int island) {
    for (const SearchedGroup& g : to.groups) {
      if (g.island == island) return island;
    }
    return to.groups.empty() ? to.island : to.groups.front().island;
  };
  if (from.groups.empty())
    return cluster.BoundaryTime(from.island, island_of_receiver(from.island), microbatch_bytes, from.shape);
  Time slowest = 0;
  for (const SearchedGroup& g : from.groups) {
    const double part =
        static_cast<double>(g.share) * g.data_parallel / static_cast<double>(std::max<uint64_t>(1, micro_batch_size));
    slowest = std::max(slowest,
                       cluster.BoundaryTime(g.island, island_of_receiver(g.island), microbatch_bytes * part, g.shape));
  }
  return slowest;
}

spec::StageSpec MixedStageSpec(const ClusterModel& cluster, const SearchedStage& s) {
  spec::StageSpec out;
  static_cast<spec::StageParallelism&>(out) = s.option.config;
  out.measured_forward_ms = out.measured_backward_ms = 0;
  static_cast<spec::LayerRange&>(out) = s;
  for (const SearchedGroup& g : s.groups) {
    spec::ReplicaGroupSpec& rg = out.replica_groups.emplace_back();
    rg.mesh = {.island = cluster.island(g.island).name,
               .first_node = static_cast<uint32_t>(g.first_node),
               .node_count = static_cast<uint32_t>(g.shape.nodes),
               .first_gpu = static_cast<uint32_t>(g.first_gpu),
               .gpus_per_node = static_cast<uint32_t>(g.shape.gpus_per_node)};
    rg.tensor_parallel = g.tensor_parallel;
    rg.data_parallel = g.data_parallel;
    rg.micro_batch_share = g.share;
    rg.expert_parallel = g.expert_parallel;
    rg.expert_tensor_parallel = g.expert_tensor_parallel;
  }
  out.mesh = out.replica_groups.front().mesh;
  return out;
}

}  // namespace hetsim::planner
