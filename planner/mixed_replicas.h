// Mixed replica groups (Stage.replica_groups, issue 39) in the planner: the price of a stage whose
// data-parallel replicas sit on different GPU types, and HAPT's family of plans made of such stages.
//
// Price, as the simulator runs a mixed stage (sim/executor/replica_groups.h, docs/cost-model.md): group g
// is a plain stage on its own mesh at its TP t_g with DP D (every replica of the stage: what ZeRO shards
// over) and a micro-batch of share_g x D samples, so each of its replicas computes share_g samples; the
// stage's forward and backward are the slowest group's; each group's memory is its own GPU's. The
// gradients reduce per shard of the finest TP split T over all D replicas, one ring per shard, all at
// once, as NCCL runs them on the placed groups (MixedSyncFlows below: NCCL's estimate on shard group 0,
// a GPU of a group with TP t_g carrying T / t_g shards, each NIC and each crossing between islands
// divided among the rings through it); an MoE stage's experts then per shard of the finest expert split,
// priced alike (MixedExpertRingFlow); groups not placed: each ring at the pace of its slowest hop through
// each GPU's NIC share (MixedRingOf).
//
// Search (the "mixed replicas" family, after HAPT's DP): ideas from Metis (USENIX ATC'24: a stage's
// device group spans GPU types, the batch split by their measured speed, every split priced by one cost
// model), Cephalo and HexiScale/FlashFlex (per-GPU-type batch shares bounded by each type's memory) and
// AMP (uniform stages over a heterogeneous mesh). For S = 1..8 stages, every island is cut into S equal
// slices (whole nodes, or equal parts of a node) and stage i holds slice i of every island, one replica
// group each; the layers are split so the stages' times on one GPU balance; per stage every TP per group
// (each dividing the largest), ZeRO 0-2, recompute none/selective/full and every split of the micro-batch
// into whole samples per replica are priced, and the fastest whose every group holds its 1F1B in-flight
// microbatches is kept (a split proportional to the groups' speed is among them, rounded to samples).
// Schedule 1F1B. Since session 40 (planner/mixed_search.h, where the search's code lives) also ETP > 1 per
// group, ZeRO-3 with prefetch where memory needs it, and interleaved chunks. MakePlan keeps such a plan
// only when its prediction beats HAPT's own.
#ifndef HETSIM_PLANNER_MIXED_REPLICAS_H_
#define HETSIM_PLANNER_MIXED_REPLICAS_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "base/spec/plan.h"
#include "planner/candidates_internal.h"
#include "planner/hapt_search_internal.h"
#include "planner/nccl_price.h"
#include "planner/profile.h"
#include "planner/shared_links.h"

namespace hetsim::planner {

// Profilers of one model, cluster and framework settings for every micro-batch size a group is priced
// at (share x replicas), made on first use from `base`'s settings (without its profile cache).
class GroupProfilers {
 public:
  explicit GroupProfilers(const Profiler& base) : base_(base) {}
  Profiler& For(uint64_t micro_batch_size);
  const Profiler& base() const { return base_; }
  // NCCL's prices of the placed groups' collectives on the base's cluster (made on first use, cached).
  RangeNccl& Nccl();
  // For(micro_batch_size).PriceDirect, each distinct call priced once (the family's search prices one
  // group's configuration again for every split of the other groups' shares).
  std::optional<StageOption> Price(uint64_t micro_batch_size, int island, MeshShape shape,
                                   const IntraStageConfig& config, int first, int count);

 private:
  const Profiler& base_;
  std::unique_ptr<RangeNccl> nccl_;
  std::map<uint64_t, std::unique_ptr<Profiler>> by_size_;
  using PriceKey =
      std::tuple<uint64_t, int, int, int, int, int, int, int, int, bool, int, int, int, double, double, int, int>;
  std::map<PriceKey, std::optional<StageOption>> prices_;
};

// Prices model layers [first, first + count) as one mixed stage of `groups` (their places, TP, DP and
// shares set; their options are filled) with the stage-wide `stage` settings (ZeRO, recompute, SP).
// nullopt when the cost model rejects a group.
std::optional<SearchedStage> PriceMixedStage(GroupProfilers& profilers, const IntraStageConfig& stage,
                                             std::vector<SearchedGroup> groups, int first, int count);

// The gradients' all-reduce over `groups` (see above) in parts: each ring's bytes, its latency and the
// rates its links give it, the slowest of which sets its pace. When every group sits on one node of one
// island (`first_node` set; `one_node`), the rings stay on the node's fabric as the simulator routes
// them: each group's hop at the intra-node rate of a ring of that many GPUs (IslandModel::IntraRing),
// not its NIC share, and the intra-node latency.
struct MixedRing {
  int replicas = 0;                     // every group's DP
  double bytes = 0;                     // per replica: the finest TP shard's gradients
  Time latency = 0;                     // per ring step: the slowest route's between the groups' islands
  bool one_node = false;                // every group on one node: the hops are intra-node links
  std::vector<double> hop_bytes_per_s;  // per group: what its GPUs' NIC share (one node: links) gives each ring
  // Per pair of the groups' islands (first < second): what the crossing between them gives each ring.
  // Per pair of the groups' islands (first < second) joined by links of their own (not one flat network,
  // whose crossing is the nodes' NICs): what the crossing between them gives each ring.
  std::map<std::pair<int, int>, double> crossing_bytes_per_s;
  double BytesPerS() const;  // the slowest of the above
};
// With `expert_block` (ETP x EP > 0) the experts' rings instead (MoE): one per expert rank, over that
// rank of every copy of the experts in every group (each group's GPUs over the block), each GPU in one
// ring with its group's expert_grad_sync_bytes, as the simulator's StageLayout::ExpertDataGroup.
MixedRing MixedRingOf(const ClusterModel& cluster, const std::vector<SearchedGroup>& groups, int expert_block = 0);

// The gradients' all-reduce over `groups` (see above), without the optimizer step; with `expert_block`
// the experts' (MixedRingOf).
Time MixedRingTime(const ClusterModel& cluster, const std::vector<SearchedGroup>& groups, int expert_block = 0);

// The GPUs of the first shard group of `groups` (placed at their first_node and first_gpu): TP rank 0 of
// every replica, group after group, each replica's mesh GPU r x (its GPUs / its DP), node-major, as the
// simulator's groups (executor::SyncGroupsOf); with `expert_block` the experts' first shard group instead:
// expert rank 0 of every copy, mesh GPU c x (its own ETP x EP) (StageLayout::ExpertDataGroup(0)). Empty
// when a group is not placed.
std::vector<GpuId> MixedShardGpus(const ClusterModel& cluster, const std::vector<SearchedGroup>& groups,
                                  int expert_block = 0);

// Where a node's NIC sits among a flow's link keys: kMixedNicKey + the GPU id of the NIC's first GPU.
inline constexpr int kMixedNicKey = 1 << 20;
// The NICs `groups`' (placed) shard rings leave their nodes through, keyed as above: (what the NIC carries
// one way in the simulator, the distinct shard rings through it, at most `finest`); with `expert_block` the
// experts' shard rings (a copy's ETP x EP in place of a replica's TP). The layer ranges of a plan of
// pipelines count their rings through each NIC with it too (planner/layer_ranges.cc, AddNodeNics).
std::map<int, std::pair<double, int>> MixedNicLinks(const ClusterModel& cluster,
                                                    const std::vector<SearchedGroup>& groups, int finest,
                                                    int expert_block = 0);

// The dense gradients' all-reduce over placed `groups` as the simulator runs it, as one flow of a
// shard group's ring bytes (2 (n - 1) / n of them, what a ring moves through each NIC it crosses each way)
// over: its own pace, NCCL's choice of algorithm, protocol and channels on the first shard group's GPUs
// and links (RangeNccl, as the layer ranges of a plan of pipelines), its bandwidth term stretched by the
// shard groups a GPU of a coarser group carries (finest / t_g), under key -1; each NIC it crosses (key
// kMixedNicKey + the GPU id of the NIC's first GPU) at its link's rate in the simulator (the line rate x
// NCCL's efficiency, since session 40) over the distinct shard rings through it (a ring leaves a node
// once, not once per GPU); each crossing between two islands at what it gives a ring (MixedRingOf). Its
// latency NCCL's. nullopt when a group is not placed or NCCL cannot price the group (MixedRingTime
// then). `bytes` (per GPU of a shard group) other than 0 prices a collective of that many bytes instead
// of the gradients' (a ZeRO-3 layer's gather, MixedLayerGathers).
std::optional<SharedFlow> MixedDenseRingFlow(const ClusterModel& cluster, const std::vector<SearchedGroup>& groups,
                                             RangeNccl& nccl, CollectiveOp op = CollectiveOp::kAllReduce,
                                             int64_t bytes = 0);

// An MoE stage's experts' rings (`expert_block`: the finest ETP x EP) as one flow, as the dense ring's
// (MixedDenseRingFlow) with the experts' shard groups in place of the TP ranks': NCCL's choice on the
// first expert shard group's GPUs (MixedShardGpus), its bandwidth term stretched by the rings a GPU of a
// coarser copy carries (block / its own ETP x EP), each NIC at its rate over the distinct expert rings
// through it, each crossing at what it gives a ring of `expert_block` at once (MixedRingOf with the
// block). The same links as the dense ring's (key -1: the stage's GPUs, in both). nullopt without an
// expert block or expert bytes, or where NCCL cannot price the group.
std::optional<SharedFlow> MixedExpertRingFlow(const ClusterModel& cluster, const std::vector<SearchedGroup>& groups,
                                              RangeNccl& nccl, int expert_block,
                                              CollectiveOp op = CollectiveOp::kAllReduce);

// A mixed stage's synchronisation as the simulator orders it (sim/executor: AppendBuckets, ParamGather),
// flows started at 0, each after the one it follows (SharedFlow::after), which Predict shares with the other
// mixed stages' (SearchedStage::grad_sync_flows): the dense all-reduce (MixedDenseRingFlow), with
// `expert_block` the experts' after it (MixedExpertRingFlow), then `step` as a latency; under ZeRO-1/2 the
// reduce-scatters in that order, `step`, then the dense and the experts' parameter all-gathers at once,
// sharing their links; under ZeRO-3 the reduce-scatters and `step`. Experts NCCL cannot price: their
// MixedExpertsTime added to `step`. Empty when there is no dense ring flow (groups not placed).
std::vector<SharedFlow> MixedSyncFlows(const ClusterModel& cluster, const std::vector<SearchedGroup>& groups,
                                       int zero_stage, Time step, RangeNccl& nccl, int expert_block = 0);

// When the last of a stage's synchronisation flows (MixedSyncFlows) ends, alone (ShareLinks); 0 for none.
Time MixedSyncEnd(const std::vector<SharedFlow>& flows);

// The dense ring's flow alone (ShareLinks), or MixedRingTime when there is none: the one price of a mixed
// stage's dense gradients that other rings (an MoE stage's experts') may follow.
Time MixedDenseRingTime(const ClusterModel& cluster, const std::vector<SearchedGroup>& groups, RangeNccl& nccl);

// ZeRO-3 on a placed stage, mixed or on one mesh (one group), as the simulator runs it
// (sim/executor/setup.cc, ZeroThreeGathers): before each layer's forward and again before its backward,
// every shard group of the stage (one per TP rank of the finest split, over every replica; a GPU of a
// coarser group in finest / t_g of them) all-gathers the layer's part of the stage's dense parameters per
// GPU of the finest shard (LayerGatherBytes: by parameter count), all at once, alone on the network. Each
// gather is priced as the gradients' ring (MixedDenseRingFlow as an all-gather of the layer's bytes:
// NCCL's choice on the first shard group's GPUs, each NIC and crossing divided among the rings through
// it); where the groups are not placed, the ring of MixedRingOf at its slowest hop. Per layer of
// [first, first + count); empty with one replica (nothing to gather).
std::vector<Time> MixedLayerGathers(const workload::ModelCost& model, const ClusterModel& cluster,
                                    const std::vector<SearchedGroup>& groups, int first, int count, RangeNccl& nccl);

// Layer k's gather (of `gather`, per layer) as a pass of `option` exposes it, before the layer's forward
// and again before its backward. With `prefetch` (Plan.zero3_prefetch) it hides behind the compute of the
// layer before it in pass order (forward first to last, backward last to first), each layer an equal part
// of the pass less its gathers: the first layer's forward gather and the last one's backward stay exposed
// (the simulator's AddGatherTimes, with each layer's own time).
struct ExposedGather {
  Time forward = 0;
  Time backward = 0;
};
ExposedGather ExposedLayerGather(const std::vector<Time>& gather, size_t k, bool prefetch, const StageOption& option);

// `gather` (per layer, MixedLayerGathers) added to a group's (or a stage's) priced passes as
// ExposedLayerGather exposes them; into gather_forward and gather_backward too.
void AddZeroThreeGathers(const std::vector<Time>& gather, bool prefetch, StageOption& option);

// The slowest group's optimizer step and host overhead after a mixed stage's synchronisation.
Time MixedStepTime(const ClusterModel& cluster, const std::vector<SearchedGroup>& groups);

// An MoE stage's experts' rings (`expert_block`: its ETP x EP; 0: none) at their slowest hop (MixedRingTime),
// for groups not placed (MixedExpertRingFlow otherwise).
Time MixedExpertsTime(const ClusterModel& cluster, const std::vector<SearchedGroup>& groups, int expert_block);

// The gradient synchronisation and optimizer step after a mixed stage's last backward at `zero_stage`:
// MixedSyncFlows alone (MixedSyncEnd), or when the groups are not placed MixedRingTime, with `expert_block`
// the experts' rings (MixedExpertsTime), and the step.
Time MixedGradSyncTime(const ClusterModel& cluster, const std::vector<SearchedGroup>& groups, int zero_stage,
                       RangeNccl& nccl, int expert_block = 0);

// MixedGradSyncTime together with the flows it shares (empty when the groups are not placed), built once
// for a stage that keeps both (PriceMixedStage).
struct MixedSync {
  Time time = 0;
  std::vector<SharedFlow> flows;
};
MixedSync MixedGradSync(const ClusterModel& cluster, const std::vector<SearchedGroup>& groups, int zero_stage,
                        RangeNccl& nccl, int expert_block = 0);

// The boundary transfer after stage `from` (mixed or not) to `to`, one of which is mixed: each sending
// group sends its replicas' share of the microbatch's `microbatch_bytes` to the receiving group on its
// own island (else the first), all at once; the slowest sets c_i.
Time MixedBoundaryTime(const ClusterModel& cluster, double microbatch_bytes, uint64_t micro_batch_size,
                       const SearchedStage& from, const SearchedStage& to);

// The deepest pipeline the mixed-replicas family tries.
inline constexpr int kMaxMixedStages = 8;

// HAPT's mixed-replicas family on `ctx`'s micro-batch size (see above): the best plan by predicted
// iteration, nullopt when none fits or the cluster has one island.
std::optional<PipelineCandidate> PlanMixedReplicas(const PlannerContext& ctx);

// A plan stage of mixed searched stage `s`: its groups' meshes, TP, DP and shares, the stage's mesh the
// first group's, its TP the largest and its DP all replicas (as the resolver writes them).
spec::StageSpec MixedStageSpec(const ClusterModel& cluster, const SearchedStage& s);

}  // namespace hetsim::planner

#endif  // HETSIM_PLANNER_MIXED_REPLICAS_H_
