#include "planner/layer_ranges.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/check.h"
#include "base/spec/grad_buckets.h"
#include "base/status_macros.h"
#include "base/units.h"
#include "planner/hapt_search_internal.h"
#include "planner/layers_internal.h"
#include "planner/mixed_replicas.h"
#include "planner/nccl_price.h"
#include "planner/plan_writer.h"
#include "planner/shared_links.h"
#include "sim/collectives/algorithms.h"
#include "sim/collectives/layout.h"
#include "sim/collectives/primitives.h"
#include "sim/workload/optimizer_step.h"
#include "sim/workload/stage_cost.h"
#include "sim/workload/tied_params.h"

namespace hetsim::planner {
namespace {

// The island of `cluster` named `name` (a type's cluster keeps the names).
int IslandNamed(const ClusterModel& cluster, const std::string& name) {
  for (const IslandModel& im : cluster.islands()) {
    if (im.name == name) return im.index;
  }
  HETSIM_CHECK(false, "planner: island of a GPU type's cluster missing from the cluster");
  return 0;
}

// The stage of `stages` holding model layer `layer`.
size_t StageHolding(const std::vector<SearchedStage>& stages, int layer) {
  for (size_t i = 0; i < stages.size(); ++i) {
    if (layer < stages[i].first_layer + stages[i].num_layers) return i;
  }
  return stages.size() - 1;
}

// One layer range's all-reduce over the stages that hold it (ZeRO-1/2: its reduce-scatter and the
// all-gather of its parameters, priced as an all-reduce of their mean, as for one pipeline's stage);
// or, `tied`, the tied embedding's all-reduce over every pipeline's first and last stage.
struct RangeRing {
  int first = 0, end = 0;  // its layers
  bool tied = false;
  bool without_tied = false;                       // beside a tied ring: its parameters without the matrix
  int zero_stage = 0;                              // its holders'
  std::vector<std::pair<size_t, size_t>> holders;  // (pipeline, stage), one per pipeline (tied: up to two)
  Time ready = 0;                                  // its last holder's last backward
  Time ring = 0;                                   // alone (MixedRingTime)
  MixedRing parts;                                 // its bytes, latency and links (MixedRingOf)
  int64_t grad_bytes = 0;                          // per GPU of a shard group: its gradients
  int64_t param_bytes = 0;                         // ZeRO-1/2/3: its parameters, which it all-gathers
  // Its first shard group's GPUs, holder after holder, each holder's replicas in order (TP rank 0 of
  // each), as the simulator's groups (executor::ShardGroups); empty when a holder is not placed (a mixed holder: its
  // groups' replicas, group after group).
  std::vector<GpuId> shard_gpus;
  // Per pair of islands its mixed holders' replica groups cross (MixedRingOf over them): what each ring gets.
  std::map<std::pair<int, int>, double> replica_crossings;
  // MoE: its experts' first expert-data-parallel group (executor::ExpertGroupsOf: expert rank 0 of
  // every block of ETP x EP GPUs of each holder) and their gradient and ZeRO parameter bytes per GPU.
  // Holders may lay the experts out differently: the groups are the finest split's (the largest ETP x EP),
  // and a GPU of a coarser holder carries finest / its own of them (expert_load, per holder: its busiest GPU's).
  std::vector<GpuId> expert_gpus;
  std::vector<double> expert_load;
  int64_t expert_bytes = 0, expert_param_bytes = 0;
  int expert_shards = 1, finest = 1;  // its expert groups (the finest ETP x EP); its holders' finest TP
  // Where placed: the NICs its dense shard rings leave their nodes through (MixedNicLinks: the simulator's
  // rate one way, the distinct rings of the range through it), and its experts' rings' (the same over the
  // experts' own copies: a NIC wired to one GPU carries that GPU's expert rings, not every one).
  std::map<int, std::pair<double, int>> nics, expert_nics;
  std::vector<int> shard_load;  // per holder (a mixed one: per replica group): the shard groups each of its GPUs joins
                                // (finest TP / its TP)

  bool Holds(size_t p, size_t i) const {
    return std::find(holders.begin(), holders.end(), std::make_pair(p, i)) != holders.end();
  }
};

// The GPUs of `ring`'s first shard group and each holder's shard load (RangeRing::shard_gpus), from
// the holders' `groups` (a mixed holder's replica groups each) placed at `first_gpu` (per group; -1:
// not placed); none when one is not placed. A GPU of replica r holds shard 0 at TP rank 0: mesh GPU r x CP x TP,
// node-major.
void ShardGroupOf(const ClusterModel& cluster, const std::vector<SearchedGroup>& groups,
                  const std::vector<int>& first_gpu, int finest, RangeRing& out) {
  std::vector<SearchedGroup> placed = groups;
  for (size_t k = 0; k < placed.size(); ++k) placed[k].first_gpu = first_gpu[k];
  std::vector<GpuId> gpus = MixedShardGpus(cluster, placed);
  if (gpus.empty()) return;
  for (const SearchedGroup& g : groups) out.shard_load.push_back(finest / std::max(1, g.tensor_parallel));
  out.shard_gpus = std::move(gpus);
  out.nics = MixedNicLinks(cluster, placed, finest);
}

// `out.holders`' groups on `cluster` with their readiness and zero stage into `out`; `finest` their
// finest TP.
std::vector<SearchedGroup> HolderGroups(const ClusterModel& cluster, const std::vector<PricedPipeline>& pipelines,
                                        RangeRing& out, int& finest) {
  std::vector<SearchedGroup> groups;
  std::vector<SearchedGroup> shard_groups;  // ShardGroupOf's: a mixed holder's replica groups each
  std::vector<int> first_gpu;
  finest = 1;
  for (const auto& [p, i] : out.holders) {
    const PricedPipeline& pipe = pipelines[p];
    const SearchedStage& s = (*pipe.stages)[i];
    SearchedGroup& g = groups.emplace_back();
    g.island = IslandNamed(cluster, pipe.cluster->island(s.island).name);
    g.shape = s.shape;
    g.first_node = i < pipe.first_node.size() ? pipe.first_node[i] : -1;  // -1: not placed
    first_gpu.push_back(i < pipe.first_gpu.size() ? pipe.first_gpu[i] : -1);
    g.tensor_parallel = s.option.config.tensor_parallel;
    g.data_parallel = s.option.config.data_parallel * pipe.context_parallel;  // DP x CP ranks per shard
    finest = std::max(finest, g.tensor_parallel);
    if (!s.groups.empty()) first_gpu.pop_back();
    // A mixed stage placed by its plan: its replica groups, replicas numbered group after group, each at
    // its own mesh (StageLayout::replica_groups); one its plan does not place is not priced.
    for (const SearchedGroup& rg : s.groups) {
      SearchedGroup& one = shard_groups.emplace_back(rg);
      one.island = IslandNamed(cluster, pipe.cluster->island(rg.island).name);
      one.data_parallel = rg.data_parallel * pipe.context_parallel;
      if (i >= pipe.first_node.size()) one.first_node = -1;
      first_gpu.push_back(one.first_node < 0 ? -1 : rg.first_gpu);
      finest = std::max(finest, rg.tensor_parallel);
    }
    if (s.groups.empty()) shard_groups.push_back(g);
    out.ready = std::max(out.ready, pipe.prediction->stages[i].last_backward_end);
    out.zero_stage = s.option.config.zero_stage;
  }
  ShardGroupOf(cluster, shard_groups, first_gpu, finest, out);
  // A mixed holder's groups on other islands than its first: the crossings its shard groups run over.
  if (shard_groups.size() > groups.size())
    out.replica_crossings = MixedRingOf(cluster, shard_groups).crossing_bytes_per_s;
  return groups;
}

// Prices `out`'s ring of `bytes` per GPU over its holders' `groups`.
void PriceRing(const ClusterModel& cluster, std::vector<SearchedGroup>& groups, int64_t bytes, RangeRing& out) {
  for (SearchedGroup& g : groups) g.option.grad_sync_bytes = bytes;
  out.ring = MixedRingTime(cluster, groups);
  out.parts = MixedRingOf(cluster, groups);
  for (const auto& [pair, rate] : out.replica_crossings) {
    auto [it, added] = out.parts.crossing_bytes_per_s.emplace(pair, rate);
    if (!added) it->second = std::min(it->second, rate);
  }
}

// MoE: where stage `s` of `pipe` (placed at stage `i`) holds copies of the experts, each with its own ETP x EP
// (`block`): its mesh, or each of a mixed stage's groups' (its plan's, every group laying the experts out over
// its own GPUs at its own layout, executor::StageLayout::ExpertShardGroup).
std::vector<std::pair<SearchedGroup, int>> ExpertPlaces(const PricedPipeline& pipe, size_t i) {
  const SearchedStage& s = (*pipe.stages)[i];
  const int stage_block = s.option.config.ExpertTensorParallel() * s.option.config.expert_parallel;
  std::vector<std::pair<SearchedGroup, int>> out;
  for (const SearchedGroup& g : s.groups) {
    const bool own = g.expert_parallel > 0 && g.expert_tensor_parallel > 0;
    out.emplace_back(g, own ? g.expert_parallel * g.expert_tensor_parallel : stage_block);
  }
  if (!out.empty()) return out;
  SearchedGroup& one = out.emplace_back(SearchedGroup(), stage_block).first;
  one.island = s.island;
  one.shape = s.shape;
  one.first_node = pipe.first_node[i];
  one.first_gpu = pipe.first_gpu[i];
  return out;
}

// MoE: `out`'s experts' first group of the finest expert split among its holders (the largest ETP x EP; the
// plan check makes every holder's divide it) and bytes (RangeRing::expert_gpus), as executor::AddExperts:
// expert rank 0 of every copy of every holder (a mixed holder's copies group after group), a GPU of a coarser
// holder carrying finest / its own of the split's rings (RangeRing::expert_load); none when a holder is not
// placed.
void ExpertGroupOf(const workload::ModelCost& model, const ClusterModel& cluster,
                   const std::vector<PricedPipeline>& pipelines, const RangeOptions& options, RangeRing& out) {
  if (workload::ExpertParamsOfLayers(model, out.first, out.end - out.first, 1) <= 0) return;
  std::vector<std::vector<std::pair<SearchedGroup, int>>> places;
  int shards = 1;
  for (const auto& [p, i] : out.holders) {
    const PricedPipeline& pipe = pipelines[p];
    if (i >= pipe.first_node.size() || ((*pipe.stages)[i].groups.empty() && i >= pipe.first_gpu.size())) return;
    places.push_back(ExpertPlaces(pipe, i));
    for (const auto& [at, block] : places.back()) shards = std::max(shards, block);
  }
  std::vector<GpuId> gpus;
  std::vector<double> load;
  std::vector<SearchedGroup> copies;  // every holder's copies on `cluster`, each at its own block (MixedNicLinks)
  for (size_t h = 0; h < out.holders.size(); ++h) {
    const PricedPipeline& pipe = pipelines[out.holders[h].first];
    load.push_back(1);
    for (const auto& [at, block] : places[h]) {
      load.back() = std::max(load.back(), static_cast<double>(shards) / std::max(1, block));
      const int island = IslandNamed(cluster, pipe.cluster->island(at.island).name);
      SearchedGroup& placed = copies.emplace_back(at);
      placed.island = island;
      placed.expert_parallel = std::max(1, block);
      placed.expert_tensor_parallel = 1;
      for (int k = 0; k < at.shape.gpus(); k += std::max(1, block)) {
        absl::StatusOr<GpuId> gpu = cluster.topology().GpuIdOf(island, at.first_node + k / at.shape.gpus_per_node,
                                                               at.first_gpu + k % at.shape.gpus_per_node);
        if (!gpu.ok()) return;
        gpus.push_back(*gpu);
      }
    }
  }
  out.expert_gpus = std::move(gpus);
  out.expert_load = std::move(load);
  out.expert_shards = shards;
  out.expert_nics = MixedNicLinks(cluster, copies, shards, shards);
  out.expert_bytes =
      workload::ExpertGradSyncBytes(model, out.first, out.end - out.first, shards, options.grad_reduce_in_fp32);
  if (out.zero_stage >= 1)
    out.expert_param_bytes = workload::ExpertGradSyncBytes(model, out.first, out.end - out.first, shards, false);
}

RangeRing RangeRingOf(const workload::ModelCost& model, const ClusterModel& cluster, const RangeOptions& options,
                      const std::vector<PricedPipeline>& pipelines, int first, int end) {
  RangeRing out;
  out.first = first;
  out.end = end;
  for (size_t p = 0; p < pipelines.size(); ++p) out.holders.emplace_back(p, StageHolding(*pipelines[p].stages, first));
  int finest = 1;
  std::vector<SearchedGroup> groups = HolderGroups(cluster, pipelines, out, finest);
  out.without_tied = options.tied_embedding_grad_sync;
  const auto range_bytes = [&](bool fp32) {
    return out.without_tied ? workload::RangeGradSyncBytesWithoutTied(model, first, end - first, finest, fp32)
                            : workload::DenseGradSyncBytes(model, first, end - first, finest, fp32);
  };
  int64_t bytes = range_bytes(options.grad_reduce_in_fp32);
  out.grad_bytes = bytes;
  if (out.zero_stage >= 1) out.param_bytes = range_bytes(false);
  if (out.zero_stage == 1 || out.zero_stage == 2) bytes = (bytes + out.param_bytes) / 2;
  PriceRing(cluster, groups, bytes, out);
  out.finest = finest;
  ExpertGroupOf(model, cluster, pipelines, options, out);
  return out;
}

// Plan.tied_embedding_grad_sync: the tied matrix's ring over the first and the last stage of every
// pipeline (a 1-stage pipeline's stage once), as the simulator's tied group (layer_range_sync.h).
RangeRing TiedRingOf(const workload::ModelCost& model, const ClusterModel& cluster, const RangeOptions& options,
                     const std::vector<PricedPipeline>& pipelines) {
  RangeRing out;
  out.end = model.num_layers();
  out.tied = true;
  for (size_t p = 0; p < pipelines.size(); ++p) {
    out.holders.emplace_back(p, 0);
    if (const size_t last = pipelines[p].stages->size() - 1; last > 0) out.holders.emplace_back(p, last);
  }
  int finest = 1;
  std::vector<SearchedGroup> groups = HolderGroups(cluster, pipelines, out, finest);
  int64_t bytes = workload::TiedGradSyncBytes(
      model, finest, workload::TiedGradientsInFp32(model.dtype(), options.grad_reduce_in_fp32));
  out.grad_bytes = bytes;
  // ZeRO-1/2: the matrix's reduce-scatter and all-gather over its copies, as a range's.
  if (out.zero_stage == 1 || out.zero_stage == 2) {
    out.param_bytes = workload::TiedGradSyncBytes(model, finest, false);
    bytes = (bytes + out.param_bytes) / 2;
  }
  PriceRing(cluster, groups, bytes, out);
  return out;
}

// The first key of the nodes' NICs' links (AddNodeNics), below every crossing's (-1 - island pair).
inline constexpr int kNodeNicKey = -(1 << 22);

// Where each stage's links sit among ShareLinks' keys: stage i of pipeline p is first_stage_key[p] + i
// (its NIC share), and `stage_keys` further when its ranges ring over its GPUs' links on one node.
struct StageKeys {
  std::vector<int> first_stage_key;
  int stage_keys = 0;
  int islands = 0;
};

StageKeys KeysOf(const ClusterModel& cluster, const std::vector<PricedPipeline>& pipelines) {
  StageKeys out;
  for (const PricedPipeline& p : pipelines) {
    out.first_stage_key.push_back(out.stage_keys);
    out.stage_keys += static_cast<int>(p.stages->size());
  }
  out.islands = cluster.num_islands();
  return out;
}

// One collective a flow stands for: its op and its bytes per GPU of a shard group.
struct RangeCollective {
  CollectiveOp op = CollectiveOp::kAllReduce;
  int64_t bytes = 0;
};

// NCCL's price of `collectives` one after another over `ring`'s first shard group; nullopt when any
// is not priced (the ring is not placed).
std::optional<NcclPrice> PriceOf(const RangeRing& ring, const std::vector<RangeCollective>& collectives,
                                 RangeNccl& nccl) {
  NcclPrice sum;
  sum.nic_load = 0;                     // the largest of the collectives'
  double crossing = 0, ring_bytes = 0;  // the collectives' crossing ratios by their ring bytes (steps x bytes)
  for (const RangeCollective& c : collectives) {
    const std::optional<NcclPrice> one = nccl.Of(ring.shard_gpus, c.op, c.bytes);
    if (!one) return std::nullopt;
    sum.seconds += one->seconds;
    sum.latency_s += one->latency_s;
    sum.payload_fraction = std::min(sum.payload_fraction, one->payload_fraction);
    sum.nic_load = std::max(sum.nic_load, one->nic_load);
    sum.nic_flows = std::max(sum.nic_flows, one->nic_flows);
    const double bytes = static_cast<double>(c.bytes) * (c.op == CollectiveOp::kAllReduce ? 2 : 1);
    crossing += one->crossing * bytes;
    ring_bytes += bytes;
  }
  if (ring_bytes > 0) sum.crossing = crossing / ring_bytes;
  return sum;
}

// Each NIC the placed `ring`'s shard rings leave a node through (RangeRing::nics), as one link per NIC
// (keys below the crossings') that every range's flow through it shares, as the simulator's flows share
// the NIC: its rate (the link's, line x NCCL's efficiency) in payload bytes of the flow's protocol (the
// simulator moves bytes / payload_fraction on the wire: LL 4 a byte) over the range's rings through it,
// beside the holding stages' NIC shares.
void AddNodeNics(const RangeRing& ring, const NcclPrice& price, SharedFlow& flow) {
  for (const auto& [key, nic] : ring.nics) {
    flow.links.push_back(price.NicLink(kNodeNicKey - (key - kMixedNicKey), nic.first, nic.second));
  }
}

// Collectives of `bytes` per GPU over range `ring` as one flow over the links it crosses: each
// holding stage's NIC share or, when its holders all sit on one node, the stage's GPUs' links on it, and
// each crossing between two of its islands (negative keys), with a ring's terms over n GPUs: `steps` x
// 1/n of the bytes and `steps` latencies (an all-reduce 2 (n - 1), as RingAllReduceSeconds; a
// reduce-scatter or an all-gather n - 1). Where its shard groups are placed (RangeRing::shard_gpus), as
// NCCL runs `collectives` (RangeNccl; ZeRO's reduce-scatter and all-gather each as itself, a ring, not as
// the all-reduce of their mean, which NCCL may run as a tree): its latency NCCL's, and one more link,
// its group's own hops (keys after the stages', shared with the rings over the same GPUs only: an SHM
// connection joins one pair), at the pace at which the group alone moves the flow's bytes in the
// estimates' bandwidth terms, shared by the shard groups a GPU joins (a TP-1 holder beside TP-2 ones
// carries both shard groups through its hops: each gets half).
SharedFlow RangeFlow(const RangeRing& ring, const StageKeys& keys, double bytes, double steps,
                     const std::vector<RangeCollective>& collectives, RangeNccl& nccl) {
  SharedFlow flow;
  flow.start = ring.ready;
  const MixedRing& m = ring.parts;
  if (m.replicas < 2 || bytes <= 0 || !(m.BytesPerS() > 0)) return flow;
  flow.bytes = steps * bytes / m.replicas;
  flow.latency = SecondsToTime(steps * TimeToSeconds(m.latency));
  for (size_t k = 0; k < ring.holders.size(); ++k) {
    const auto [p, i] = ring.holders[k];
    flow.links.emplace_back((m.one_node ? keys.stage_keys : 0) + keys.first_stage_key[p] + static_cast<int>(i),
                            m.hop_bytes_per_s[k]);
  }
  const std::optional<NcclPrice> price = PriceOf(ring, collectives, nccl);
  if (price) {
    flow.latency = SecondsToTime(price->latency_s);
    // The group's own hops (links shared only with rings over the same GPUs), at the estimate's pace.
    const int load = *std::max_element(ring.shard_load.begin(), ring.shard_load.end());
    if (price->bandwidth_s() > 0)
      flow.links.emplace_back(2 * keys.stage_keys + nccl.HopsOf(ring.shard_gpus),
                              flow.bytes / price->bandwidth_s() / load);
  }
  if (price && !m.one_node) AddNodeNics(ring, *price, flow);
  // Each crossing at the rate it gives a ring, the flow's bytes there as its algorithm moves them.
  const double crossing = price && price->crossing > 0 ? price->crossing : 1.0;
  for (const auto& [pair, rate] : m.crossing_bytes_per_s) {
    if (std::isfinite(rate)) flow.links.emplace_back(-1 - (pair.first * keys.islands + pair.second), rate / crossing);
  }
  return flow;
}

// The bytes of a range's buckets in the order they reduce, as executor::RangeBuckets cuts them: `bytes`
// in pieces of `bucket_bytes` (the last the remainder), or one bucket (none asked, a range no larger,
// the tied matrix: Megatron's _does_param_require_new_bucket).
std::vector<int64_t> BucketsOf(int64_t bytes, int64_t bucket_bytes, bool tied) {
  if (tied || bucket_bytes <= 0 || bytes <= bucket_bytes) return {bytes};
  std::vector<int64_t> out;
  for (int64_t done = 0; done < bytes; done += bucket_bytes) out.push_back(std::min(bucket_bytes, bytes - done));
  return out;
}

// When holder `i` of pipeline `pipe` is ready for bucket k of `ring`'s n: its last backward's end; with
// overlap_grad_reduce the point in that backward (layers last to first, each an equal part) where the
// stage's layers after the range and k + 1 n-ths of the range's are done; the tied ring waits for the
// head's backward on a stage without the embedding (the simulator's ReadyAt, in the same integers).
Time HolderReady(const RangeRing& ring, const PricedPipeline& pipe, size_t i, int k, int n, bool overlap) {
  const StagePrediction& sp = pipe.prediction->stages[i];
  if (!overlap) return sp.last_backward_end;
  const SearchedStage& st = (*pipe.stages)[i];
  const Time d = sp.backward;
  const Time begin = sp.last_backward_end - d;
  const int stage_end = st.first_layer + st.num_layers;
  if (ring.tied) {
    const int from = st.first_layer > 0 ? ring.end - 1 : ring.first;
    return begin + d * (stage_end - from) / st.num_layers;
  }
  const int64_t before = stage_end - ring.end;
  const int64_t done = before * n + int64_t{ring.end - ring.first} * (k + 1);  // in n-ths of a layer
  return begin + d * done / (int64_t{st.num_layers} * n);
}

// `ring`'s reduction as flows appended to `flows`, one per bucket, each after the one before and ready
// when its last holder is (HolderReady): an all-reduce of the bucket, under ZeRO-1/2 a reduce-scatter,
// the last one with the range's all-gather (an all-reduce of their mean, as without buckets) unless the
// gathers run at the start. The index of its last flow.
size_t AddRangeFlows(const RangeRing& ring, const RangeOptions& options, const std::vector<PricedPipeline>& pipelines,
                     const StageKeys& keys, RangeNccl& nccl, std::vector<SharedFlow>& flows, int after = -1) {
  const std::vector<int64_t> buckets = BucketsOf(ring.grad_bytes, options.grad_bucket_bytes, ring.tied);
  const bool zero = ring.zero_stage >= 1;  // ZeRO-3: the reduce-scatters alone, nothing gathers after the step
  const int n = static_cast<int>(buckets.size());
  const double ring_steps = ring.parts.replicas - 1.0;
  for (int k = 0; k < n; ++k) {
    int64_t bytes = buckets[k];
    double steps = zero ? ring_steps : 2 * ring_steps;
    std::vector<RangeCollective> collectives = {
        {zero ? CollectiveOp::kReduceScatter : CollectiveOp::kAllReduce, buckets[k]}};
    if (k == n - 1 && zero && ring.zero_stage < 3 && !options.overlap_param_gather) {
      bytes = (bytes + ring.param_bytes) / 2;
      steps = 2 * ring_steps;
      collectives.push_back({CollectiveOp::kAllGather, ring.param_bytes});
    }
    SharedFlow flow = RangeFlow(ring, keys, static_cast<double>(bytes), steps, collectives, nccl);
    flow.start = 0;
    for (const auto& [p, i] : ring.holders) {
      flow.start = std::max(flow.start, HolderReady(ring, pipelines[p], i, k, n, options.overlap_grad_reduce));
    }
    flow.after = after;
    after = static_cast<int>(flows.size());
    flows.push_back(std::move(flow));
  }
  // MoE: then the experts' buckets over their expert-data-parallel groups (executor::ExpertBuckets),
  // each GPU in one of them, crossing the same NIC shares and islands.
  if (ring.expert_gpus.size() > 1 && ring.expert_bytes > 0) {
    RangeRing experts = ring;
    experts.shard_gpus = ring.expert_gpus;
    experts.shard_load = {static_cast<int>(*std::max_element(ring.expert_load.begin(), ring.expert_load.end()))};
    experts.parts.replicas = static_cast<int>(ring.expert_gpus.size());
    // Each holder's hop carries its GPUs' expert rings (finest / own of them), not the dense shards (finest
    // TP / its TP) the dense ring's rate was divided by.
    for (size_t k = 0; k < ring.holders.size() && k < experts.parts.hop_bytes_per_s.size(); ++k) {
      const auto [p, i] = ring.holders[k];
      const int tp = std::max(1, (*pipelines[p].stages)[i].option.config.tensor_parallel);
      experts.parts.hop_bytes_per_s[k] *= static_cast<double>(ring.finest) / tp / ring.expert_load[k];
    }
    experts.grad_bytes = ring.expert_bytes;
    experts.param_bytes = ring.expert_param_bytes;
    experts.expert_gpus.clear();
    experts.nics = ring.expert_nics;  // each NIC over the expert rings of the GPUs wired to it
    // Every expert group crosses the islands at once (the dense rings' price shares a crossing by the finest TP).
    for (auto& [pair, rate] : experts.parts.crossing_bytes_per_s)
      rate *= static_cast<double>(ring.finest) / ring.expert_shards;
    return AddRangeFlows(experts, options, pipelines, keys, nccl, flows, after);
  }
  return static_cast<size_t>(after);
}

// ZeRO-1/2: what one GPU of stage `i` of `pipe` keeps of its ranges' states (`zero_stage`; 3: the
// optimizer step's shard), each range's over the GPUs of its ring; the tied ring's the matrix's over
// every copy, the ranges beside it theirs without it (sim/executor/layer_range_shards.h).
workload::StageMemory RangeStates(const workload::ModelCost& model, const std::vector<RangeRing>& rings, size_t p,
                                  size_t i, int tp, int expert_block, int zero_stage, bool grad_reduce_in_fp32) {
  workload::StageMemory out;
  for (const RangeRing& r : rings) {
    if (!r.Holds(p, i)) continue;
    const double params = r.tied           ? workload::TiedParamsPerGpu(model, tp)
                          : r.without_tied ? workload::DenseParamsWithoutTied(model, r.first, r.end - r.first, tp)
                                           : workload::DenseParamsOfLayers(model, r.first, r.end - r.first, tp);
    workload::StageMemory m = workload::ZeroShardedModelStates(params, model.dtype(), zero_stage,
                                                               std::max(1, r.parts.replicas), grad_reduce_in_fp32);
    // MoE: the experts (the GPU's own ETP x EP of them, `expert_block`: a holder coarser than the range's
    // finest split holds more) over their copies, as the simulator's RangeModelStates shards them (without
    // them a range's states left out every expert).
    if (!r.tied && !r.expert_gpus.empty()) {
      const workload::StageMemory e = workload::ZeroShardedModelStates(
          workload::ExpertParamsOfLayers(model, r.first, r.end - r.first, std::max(1, expert_block)), model.dtype(),
          zero_stage, static_cast<int>(r.expert_gpus.size()), grad_reduce_in_fp32);
      m.AddModelStates(e);
    }
    out.AddModelStates(m);
  }
  return out;
}

// One GPU of a `tp`-way replica of stage `i` of pipeline `p` on island `island` holding its experts at
// `expert_block` = ETP x EP, priced as `own`: its
// optimizer step (the passes, then the iteration's host work) and, in `state_delta`, how its model
// states differ from `own`'s: under ZeRO-1/2 they shard per range over the range's ring (`own` sharded
// them over the stage's own replicas).
Time ReplicaStep(const workload::ModelCost& model, const std::vector<RangeRing>& rings, const PricedPipeline& pipe,
                 size_t p, size_t i, int tp, int expert_block, int island, const StageOption& own,
                 bool grad_reduce_in_fp32, int64_t& state_delta) {
  const workload::GpuCompute& gpu = *pipe.cluster->island(island).gpu;
  const Time overhead = SecondsToTime(gpu.iteration_overhead_s());
  const int zero = own.config.zero_stage;
  state_delta = 0;
  if (zero < 1) return own.optimizer_passes + overhead;
  const workload::StageMemory held = RangeStates(model, rings, p, i, tp, expert_block, zero, grad_reduce_in_fp32);
  state_delta = held.ModelStateBytes() - own.state_bytes;
  return SecondsToTime(
             workload::OptimizerStepSeconds(RangeStates(model, rings, p, i, tp, expert_block, 3, grad_reduce_in_fp32),
                                            model.dtype(), gpu) -
             gpu.iteration_overhead_s()) +
         overhead;
}

// Stage `i` of pipeline `p`'s optimizer step with its host work (ReplicaStep) and, in `state_delta`, how
// its model states differ from its pricing's. A mixed stage (replica groups): each group's GPUs at their
// own TP on their own GPU type against the group's own pricing (`group_deltas`, in order; `state_delta`
// then 0), the stage's step the slowest group's, as the simulator's ShardStage
// (sim/executor/layer_range_shards.cc).
Time RangeStep(const workload::ModelCost& model, const std::vector<RangeRing>& rings, const PricedPipeline& pipe,
               size_t p, size_t i, bool grad_reduce_in_fp32, int64_t& state_delta, std::vector<int64_t>& group_deltas) {
  const SearchedStage& s = (*pipe.stages)[i];
  group_deltas.clear();
  state_delta = 0;
  const int stage_block = s.option.config.ExpertTensorParallel() * s.option.config.expert_parallel;
  if (s.groups.empty()) {
    return ReplicaStep(model, rings, pipe, p, i, s.option.config.tensor_parallel, stage_block, s.island, s.option,
                       grad_reduce_in_fp32, state_delta);
  }
  Time step = 0;
  for (const SearchedGroup& g : s.groups) {
    // MoE: the group's own ETP x EP (PriceMixedStage wrote it), else the stage's.
    const int block = g.expert_parallel > 0 && g.expert_tensor_parallel > 0
                          ? g.expert_parallel * g.expert_tensor_parallel
                          : stage_block;
    step = std::max(step, ReplicaStep(model, rings, pipe, p, i, g.tensor_parallel, block, g.island, g.option,
                                      grad_reduce_in_fp32, group_deltas.emplace_back()));
  }
  return step;
}

// Every layer range's ring over the stages that hold it (the cut points of every pipeline split the
// layers), and with the tied sync the tied matrix's ring last.
std::vector<RangeRing> RingsOf(const workload::ModelCost& model, const ClusterModel& cluster,
                               const RangeOptions& options, const std::vector<PricedPipeline>& pipelines) {
  std::vector<int> cuts = {0, model.num_layers()};
  for (const PricedPipeline& p : pipelines) {
    for (const SearchedStage& s : *p.stages) cuts.push_back(s.first_layer);
  }
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  std::vector<RangeRing> rings;
  for (size_t r = 0; r + 1 < cuts.size(); ++r) {
    rings.push_back(RangeRingOf(model, cluster, options, pipelines, cuts[r], cuts[r + 1]));
  }
  if (options.tied_embedding_grad_sync && workload::TiedGradSyncBytes(model, 1, false) > 0) {
    rings.push_back(TiedRingOf(model, cluster, options, pipelines));
  }
  return rings;
}

}  // namespace

LayerRangesPrice PriceLayerRanges(const workload::ModelCost& model, const ClusterModel& cluster,
                                  const RangeOptions& options, const std::vector<PricedPipeline>& pipelines) {
  const bool grad_reduce_in_fp32 = options.grad_reduce_in_fp32;
  // [pipeline][stage]: when its last range is reduced.
  std::vector<std::vector<Time>> reduced(pipelines.size());
  for (size_t p = 0; p < pipelines.size(); ++p) {
    for (const StagePrediction& sp : pipelines[p].prediction->stages) reduced[p].push_back(sp.last_backward_end);
  }
  LayerRangesPrice out;
  const std::vector<RangeRing> rings = RingsOf(model, cluster, options, pipelines);
  out.ranges = static_cast<int>(rings.size()) - (rings.empty() || !rings.back().tied ? 0 : 1);
  for (const RangeRing& ring : rings) out.slowest_ring = std::max(out.slowest_ring, ring.ring);
  // The ranges run at once where their times overlap, sharing the links they have in common: a stage's
  // NIC share among its ranges, a crossing between two islands among every range across it (ShareLinks,
  // max-min as the simulator's network); a range's buckets one after another; a stage steps once all its
  // ranges are reduced.
  const StageKeys keys = KeysOf(cluster, pipelines);
  RangeNccl nccl(cluster);
  std::vector<SharedFlow> flows;
  std::vector<size_t> last_flow;
  for (const RangeRing& ring : rings) last_flow.push_back(AddRangeFlows(ring, options, pipelines, keys, nccl, flows));
  const std::vector<Time> done = ShareLinks(flows);
  for (size_t r = 0, f = 0; r < rings.size(); ++r) {
    for (const auto& [p, i] : rings[r].holders) reduced[p][i] = std::max(reduced[p][i], done[last_flow[r]]);
    LayerRangesPrice::Range& times = out.range_times.emplace_back();
    times.first_layer = rings[r].first;
    times.end_layer = rings[r].end;
    times.tied = rings[r].tied;
    for (; f <= last_flow[r]; ++f) {
      times.bucket_start.push_back(flows[f].after < 0 ? flows[f].start : std::max(flows[f].start, done[f - 1]));
      times.bucket_end.push_back(done[f]);
    }
  }
  out.grad_sync.resize(pipelines.size());
  out.state_delta.resize(pipelines.size());
  out.group_state_delta.resize(pipelines.size());
  out.end.resize(pipelines.size());
  for (size_t p = 0; p < pipelines.size(); ++p) {
    const PricedPipeline& pipe = pipelines[p];
    out.end[p] = pipe.prediction->pipeline;
    for (size_t i = 0; i < pipe.stages->size(); ++i) {
      const Time step = RangeStep(model, rings, pipe, p, i, grad_reduce_in_fp32, out.state_delta[p].emplace_back(),
                                  out.group_state_delta[p].emplace_back());
      out.grad_sync[p].push_back(reduced[p][i] - pipe.prediction->stages[i].last_backward_end + step);
      out.end[p] = std::max(out.end[p], reduced[p][i] + step);
    }
    out.iteration = std::max(out.iteration, out.end[p]);
  }
  return out;
}

absl::Status CheckRangeBucketCount(const workload::ModelCost& model, const ClusterModel& cluster,
                                   const RangeOptions& options, const std::vector<PricedPipeline>& pipelines,
                                   std::string_view where) {
  int64_t buckets = 0, events = 0;
  for (const RangeRing& ring : RingsOf(model, cluster, options, pipelines)) {
    int64_t mine = ring.tied ? 1 : spec::GradBucketCount(ring.grad_bytes, options.grad_bucket_bytes);
    if (ring.expert_gpus.size() > 1) mine += spec::GradBucketCount(ring.expert_bytes, options.grad_bucket_bytes);
    buckets += mine;
    events += mine * static_cast<int64_t>(ring.holders.size());
    if (buckets > spec::kMaxGradBuckets || events > spec::kMaxGradBucketEvents) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: grad_bucket_bytes: %d cuts the layer ranges' gradients into more than %d buckets, or more than %d "
          "buckets x the stages holding them (layers %d-%d alone hold %d bytes per GPU, %d buckets on %d stages)",
          where, options.grad_bucket_bytes, spec::kMaxGradBuckets, spec::kMaxGradBucketEvents, ring.first, ring.end - 1,
          ring.grad_bytes, mine, ring.holders.size()));
    }
  }
  return absl::OkStatus();
}

std::vector<std::vector<Time>> EarlyGathers(const workload::ModelCost& model, const ClusterModel& cluster,
                                            const RangeOptions& options, const std::vector<PricedPipeline>& pipelines) {
  if (!options.overlap_param_gather) return {};
  const std::vector<RangeRing> rings = RingsOf(model, cluster, options, pipelines);
  const auto zero = [](const RangeRing& r) { return r.zero_stage == 1 || r.zero_stage == 2; };
  if (rings.empty() || !std::all_of(rings.begin(), rings.end(), zero)) return {};
  // Every range's all-gather (n - 1 steps of 1/n of its parameters) from the start, at once.
  const StageKeys keys = KeysOf(cluster, pipelines);
  RangeNccl nccl(cluster);
  std::vector<SharedFlow> flows;
  for (const RangeRing& ring : rings) {
    flows.push_back(RangeFlow(ring, keys, static_cast<double>(ring.param_bytes), ring.parts.replicas - 1.0,
                              {{CollectiveOp::kAllGather, ring.param_bytes}}, nccl));
    flows.back().start = 0;
  }
  const std::vector<Time> done = ShareLinks(flows);
  std::vector<std::vector<Time>> out;
  for (const PricedPipeline& p : pipelines) out.emplace_back(p.stages->size(), Time());
  for (size_t r = 0; r < rings.size(); ++r) {
    for (const auto& [p, i] : rings[r].holders) out[p][i] = std::max(out[p][i], done[r]);
  }
  return out;
}

namespace {

// `ring`'s collective `op` of `bytes` per GPU alone on its links (RangeFlow): its bytes at its slowest
// link's rate, then its latency.
Time AloneTime(const RangeRing& ring, const StageKeys& keys, double bytes, double steps, CollectiveOp op,
               RangeNccl& nccl) {
  const SharedFlow flow = RangeFlow(ring, keys, bytes, steps, {{op, static_cast<int64_t>(bytes)}}, nccl);
  double rate = std::numeric_limits<double>::infinity();
  for (const SharedLink& l : flow.links) rate = std::min(rate, l.bytes_per_s);
  return (flow.links.empty() || !(rate > 0) ? 0 : SecondsToTime(flow.bytes / rate)) + flow.latency;
}

// What one layer weighs in its range's ZeRO-3 gathers: its dense parameters, and the tied matrix where
// it holds it (the simulator's GatherWeight, sim/executor/setup.cc).
double LayerGatherWeight(const workload::ModelCost& model, int layer) {
  const workload::LayerCost& l = model.layer(layer);
  return static_cast<double>(l.param_count - l.expert_param_count) +
         (l.tied_with_embedding ? static_cast<double>(l.tied_param_count) : 0);
}

// Each layer of stage `i` of `pipe`: its gather's time over the shard groups of the range holding it;
// `first_layers` (when not null) receives each range's first layer in the stage, in layer order.
std::vector<Time> StageLayerGathers(const workload::ModelCost& model, const std::vector<RangeRing>& rings,
                                    const StageKeys& keys, RangeNccl& nccl, size_t p, size_t i, const SearchedStage& s,
                                    std::vector<std::pair<int, size_t>>* first_layers = nullptr) {
  std::vector<Time> out;
  for (const RangeRing& r : rings) {
    if (!r.tied && r.Holds(p, i) && first_layers != nullptr) {
      first_layers->emplace_back(std::max(r.first, s.first_layer), out.size());
    }
    if (r.tied || !r.Holds(p, i)) continue;
    const std::vector<int64_t> bytes = LayerGatherBytes(model, r.first, r.end, r.param_bytes);
    for (int l = std::max(r.first, s.first_layer); l < std::min(r.end, s.first_layer + s.num_layers); ++l) {
      out.push_back(AloneTime(r, keys, static_cast<double>(bytes[l - r.first]), r.parts.replicas - 1.0,
                              CollectiveOp::kAllGather, nccl));
    }
  }
  return out;
}

}  // namespace

std::vector<int64_t> LayerGatherBytes(const workload::ModelCost& model, int first, int end, int64_t bytes) {
  double weight = 0;
  for (int l = first; l < end; ++l) weight += LayerGatherWeight(model, l);
  std::vector<int64_t> out;
  double cumulative = 0;
  int64_t done = 0;
  for (int l = first; l < end; ++l) {
    cumulative += LayerGatherWeight(model, l);
    const int64_t upto = weight > 0 ? std::llround(static_cast<double>(bytes) * cumulative / weight) : int64_t{0};
    out.push_back(upto - done);
    done = upto;
  }
  return out;
}

ZeroThreeGathers RangeGathersOfZeroThree(const workload::ModelCost& model, const ClusterModel& cluster, bool prefetch,
                                         const std::vector<PricedPipeline>& pipelines) {
  ZeroThreeGathers out;
  const std::vector<RangeRing> rings = RingsOf(model, cluster, {}, pipelines);
  if (rings.empty() || !std::all_of(rings.begin(), rings.end(), [](const RangeRing& r) { return r.zero_stage == 3; }))
    return out;
  const StageKeys keys = KeysOf(cluster, pipelines);
  RangeNccl nccl(cluster);
  out.forward.resize(pipelines.size());
  out.backward.resize(pipelines.size());
  out.offsets.resize(pipelines.size());
  for (size_t p = 0; p < pipelines.size(); ++p) {
    for (size_t i = 0; i < pipelines[p].stages->size(); ++i) {
      const SearchedStage& s = (*pipelines[p].stages)[i];
      std::vector<std::pair<int, size_t>> first_layers;
      const std::vector<Time> gather = StageLayerGathers(model, rings, keys, nccl, p, i, s, &first_layers);
      const size_t n = gather.size();
      const auto parts = std::max<int64_t>(1, static_cast<int64_t>(n));
      std::vector<Time> forward_at(n + 1, 0), backward_at(n + 1, 0);  // pass time before layer k; after it
      Time forward = 0, backward = 0;
      for (size_t k = 0; k < n; ++k) {
        const ExposedGather exposed = ExposedLayerGather(gather, k, prefetch, s.option);
        forward += exposed.forward;
        backward += exposed.backward;
        forward_at[k + 1] = forward_at[k] + (s.option.forward - s.option.gather_forward) / parts + exposed.forward;
        backward_at[k + 1] = backward_at[k] + (s.option.backward - s.option.gather_backward) / parts + exposed.backward;
      }
      out.forward[p].push_back(forward);
      out.backward[p].push_back(backward);
      // A range's first layer in a forward comes after the layers before it, in a backward after those
      // after its last (the next range's first, or the stage's end).
      std::vector<ZeroThreeGathers::Offset>& offsets = out.offsets[p].emplace_back();
      for (size_t r = 0; r < first_layers.size(); ++r) {
        const size_t end = r + 1 < first_layers.size() ? first_layers[r + 1].second : n;
        offsets.push_back(
            {first_layers[r].first, forward_at[first_layers[r].second], backward_at[n] - backward_at[end]});
      }
    }
  }
  return out;
}

std::vector<ZeroThreeCallRange> ZeroThreeCallRanges(const workload::ModelCost& model, const ClusterModel& cluster,
                                                    const std::vector<PricedPipeline>& pipelines,
                                                    const ZeroThreeGathers& gathers) {
  std::vector<ZeroThreeCallRange> out;
  const std::vector<RangeRing> rings = RingsOf(model, cluster, {}, pipelines);
  if (rings.empty() || !std::all_of(rings.begin(), rings.end(), [](const RangeRing& r) { return r.zero_stage == 3; }))
    return out;
  for (const RangeRing& r : rings) {
    // The tied matrix's copies are not matched per call (sim/executor/gather_calls.cc, Matched, says why).
    if (r.tied || r.param_bytes <= 0 || r.parts.replicas <= 1 || r.holders.size() <= 1) continue;
    ZeroThreeCallRange& range = out.emplace_back();
    range.holders = r.holders;
    for (const auto& [p, i] : r.holders) {
      Time forward = 0, backward = 0;
      if (p < gathers.offsets.size() && i < gathers.offsets[p].size()) {
        for (const ZeroThreeGathers::Offset& o : gathers.offsets[p][i]) {
          if (o.first_layer != std::max(r.first, (*pipelines[p].stages)[i].first_layer)) continue;
          forward = o.forward;
          backward = o.backward;
        }
      }
      range.forward_offset.push_back(forward);
      range.backward_offset.push_back(backward);
    }
  }
  return out;
}

bool ZeroThreeCallReleases(const std::vector<ZeroThreeCallRange>& ranges, const std::vector<PredictedPasses>& passes,
                           std::vector<std::vector<Time>>& release) {
  bool changed = false;
  for (const ZeroThreeCallRange& range : ranges) {
    size_t most = 0;
    for (const auto& [p, i] : range.holders) most = std::max(most, passes[p].nodes[i].size());
    for (size_t k = 0; k < most; ++k) {
      // The k-th call's start: its last holder's call (when that pass was ready: a pass calls every range's
      // gathers then, as the simulator's GatherCalls), or a joined holder's last pass's end.
      Time at = 0;
      for (const auto& [p, i] : range.holders) {
        const std::vector<pipeline::NodeId>& nodes = passes[p].nodes[i];
        if (nodes.empty()) continue;
        at = std::max(at, k < nodes.size() ? passes[p].ready[nodes[k]] : passes[p].end[nodes.back()]);
      }
      for (size_t h = 0; h < range.holders.size(); ++h) {
        const auto [p, i] = range.holders[h];
        const std::vector<pipeline::NodeId>& nodes = passes[p].nodes[i];
        if (k >= nodes.size()) continue;
        // The pass reaches the range's first layer its offset after its start.
        const pipeline::NodeId node = nodes[k];
        const Time want = at - (passes[p].backward[node] ? range.backward_offset[h] : range.forward_offset[h]);
        // A pass already starting there is not moved (its start is at least its release).
        if (passes[p].start[node] >= want) continue;
        release[p][node] = std::max(release[p][node], want);
        changed = true;
      }
    }
  }
  return changed;
}

absl::Status IterateGatherCalls(
    const std::vector<ZeroThreeCallRange>& ranges, size_t n,
    absl::FunctionRef<absl::Status(size_t p, const std::vector<Time>& release, PredictedPasses& passes)> predict) {
  if (ranges.empty()) return absl::OkStatus();
  constexpr int kMaxRounds = 100'000;
  std::vector<std::vector<Time>> release(n);
  std::vector<PredictedPasses> passes(n);
  for (int round = 0; round < kMaxRounds; ++round) {
    for (size_t p = 0; p < n; ++p) {
      HETSIM_RETURN_IF_ERROR(predict(p, release[p], passes[p]));
      if (release[p].empty()) release[p].assign(passes[p].start.size(), Time());
    }
    if (!ZeroThreeCallReleases(ranges, passes, release)) return absl::OkStatus();
  }
  return absl::InternalError("planner: the ZeRO-3 gather calls of the pipelines found no fixed point");
}

void ApplyLayerRanges(const LayerRangesPrice& price, size_t p, Prediction& prediction) {
  // Judged again on the sharded states: a ZeRO stage of DP 1 priced alone holds them whole.
  prediction.fits_memory = true;
  for (size_t i = 0; i < prediction.stages.size(); ++i) {
    StagePrediction& sp = prediction.stages[i];
    sp.grad_sync = price.grad_sync[p][i] + sp.gather_wait;
    sp.peak_bytes += price.state_delta[p][i];
    for (size_t g = 0; g < sp.groups.size(); ++g) sp.groups[g].peak_bytes += price.group_state_delta[p][i][g];
    sp.SetTightestGroup();
    if (sp.peak_bytes > sp.capacity_bytes) prediction.fits_memory = false;
  }
  prediction.iteration = price.end[p];
}

}  // namespace hetsim::planner
