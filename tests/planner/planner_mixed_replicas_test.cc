// HAPT's mixed-replicas family (planner/mixed_replicas.h, issue 39): a mixed stage priced group by
// group against the plain stage and the ring's closed form; on a cluster of two GPU types on one fast
// network the planner proposes a mixed plan that simulates faster than its best plan keeping every
// stage inside one island, and `validate` judges its prediction; a cluster of one GPU type is planned
// as before.
#include <catch2/catch.hpp>

#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/units.h"
#include "planner/mixed_replicas.h"
#include "planner/planner.h"
#include "proto/inputs.h"
#include "proto/io.h"
#include "proto/resolve.h"
#include "proto/validate_cluster.h"
#include "service/evaluation/own_prediction.h"
#include "sim/collectives/algorithms.h"
#include "sim/collectives/estimate.h"
#include "sim/workload/model_cost.h"
#include "tests/base/time_io.h"
#include "tests/planner/planner_test_util.h"
#include "topology/routing.h"

namespace hetsim::planner {
namespace {

constexpr char kMixedCluster[] = HETSIM_SOURCE_DIR "/tests/planner_data/cluster-a100-rtx4090.pbtxt";
constexpr char kGpt13b[] = HETSIM_SOURCE_DIR "/tests/planner_data/gpt-1.3b.pbtxt";

struct MixedInputs {
  v1::Model model;
  v1::Cluster cluster;
};

MixedInputs LoadMixedInputs() {
  absl::StatusOr<v1::Model> model = proto::LoadAs<v1::Model>(kGpt13b);
  absl::StatusOr<v1::Cluster> cluster = proto::LoadCluster(kMixedCluster);
  REQUIRE(model.ok());
  REQUIRE(cluster.ok());
  return {*model, *cluster};
}

PlanRequest HaptRequest(uint64_t global_batch) {
  PlanRequest req;
  req.planner = PlannerKind::kHapt;
  req.global_batch_size = global_batch;
  req.threads = 1;
  return req;
}

// The planned plan simulated, with the inputs `hetsim run` would read.
proto::PlanInputs InputsOf(const MixedInputs& in, const driver::Planned& planned) {
  proto::PlanInputs inputs;
  inputs.cluster = in.cluster;
  inputs.model = planned.model;
  inputs.plan = planned.plan;
  inputs.plan.clear_model_path();
  *inputs.plan.mutable_model() = planned.model;
  const absl::Status valid = proto::ValidatePlanInputs(inputs);
  INFO(valid.message());
  REQUIRE(valid.ok());
  return inputs;
}

// HAPT's plan for 16 samples with the mixed-replica search, and without it.
std::pair<driver::Planned, driver::Planned> PlannedWithAndWithoutMixing(const MixedInputs& in) {
  absl::StatusOr<driver::Planned> searched = testing::PlanOf(in.model, in.cluster, HaptRequest(16));
  PlanRequest off = HaptRequest(16);
  off.search_mixed_replicas = false;
  absl::StatusOr<driver::Planned> not_searched = testing::PlanOf(in.model, in.cluster, off);
  REQUIRE(searched.ok());
  REQUIRE(not_searched.ok());
  return {*std::move(searched), *std::move(not_searched)};
}

TEST_CASE("mixed replicas: one group of a whole mesh is priced as the plain stage", "[planner][mixed]") {
  const MixedInputs in = LoadMixedInputs();
  absl::StatusOr<std::unique_ptr<ClusterModel>> cluster = testing::ClusterModelOf(in.cluster, spec::DType::kBf16);
  REQUIRE(cluster.ok());
  const workload::ModelCost cost = workload::ModelCost::Create(proto::ResolveModel(in.model, "gpt-1.3b.pbtxt"));
  // Micro-batch 8 over DP 4 (TP 2 on a node of 8): each replica computes 2 samples.
  Profiler base(cost, **cluster, 8);
  GroupProfilers profilers(base);
  SearchedGroup g;
  g.island = 0;
  g.shape = {1, 8};
  g.tensor_parallel = 2;
  g.data_parallel = 4;
  g.share = 2;
  const IntraStageConfig stage{.zero_stage = 1};
  std::optional<SearchedStage> mixed = PriceMixedStage(profilers, stage, {g}, 0, 10);
  IntraStageConfig plain_config = stage;
  plain_config.tensor_parallel = 2;
  plain_config.data_parallel = 4;
  std::optional<StageOption> plain = base.PriceDirect(0, {1, 8}, plain_config, 0, 10);
  REQUIRE(mixed);
  REQUIRE(plain);
  CHECK(mixed->option.forward == plain->forward);
  CHECK(mixed->option.backward == plain->backward);
  CHECK(mixed->groups.front().option.state_bytes == plain->state_bytes);
  CHECK(mixed->groups.front().option.activation_bytes == plain->activation_bytes);
  // Its gradients: one ring of the 4 replicas (2 (n-1)/n S/B + 2 (n-1) a), inside the one node over its
  // NVSwitch as the simulator runs it (through the GPUs' NIC share until session 32), then the optimizer
  // step.
  const IslandModel& im = (*cluster)->island(0);
  const double ring_s =
      collectives::RingAllReduceSeconds(4, Bytes(static_cast<double>(plain->grad_sync_bytes)),
                                        Bandwidth(im.intra_node.bytes_per_s), TimeAsSeconds(im.intra_node.latency))
          .value();
  CHECK(im.intra_node.bytes_per_s > 2 * (*cluster)->NicShare(im, 8));  // NVSwitch, not the 400 Gb/s NIC
  // Placed (node 0, GPU 0): under ZeRO-1 the reduce-scatter, the step and the all-gather, each at NCCL's
  // estimate on TP rank 0 of the replicas, GPUs 0, 2, 4 and 6, as the simulator runs them (since session
  // 38; the alpha-beta ring of their mean above before).
  topology::Router router((*cluster)->topology());
  double nccl_s = 0;
  for (CollectiveOp op : {CollectiveOp::kReduceScatter, CollectiveOp::kAllGather}) {
    collectives::CollectiveRequest req;
    req.op = op;
    req.bytes = plain->grad_sync_bytes;
    for (int gpu : {0, 2, 4, 6}) req.gpus.push_back(GpuId(gpu));
    absl::StatusOr<collectives::ShapeChoice> nccl = collectives::ChooseShape((*cluster)->topology(), router, req);
    REQUIRE(nccl.ok());
    nccl_s += nccl->shape.estimated_seconds.value();
  }
  const Time rest = plain->optimizer_passes + SecondsToTime(im.gpu->iteration_overhead_s());
  CHECK(TimeToSeconds(mixed->option.grad_sync - rest) == Approx(nccl_s).epsilon(1e-6));
  CHECK(std::abs(TimeToSeconds(mixed->option.grad_sync - rest) - ring_s) > 1e-6);  // not the old ring
}

TEST_CASE("mixed replicas: a coarser group's GPU carries every finer shard through its NIC share", "[planner][mixed]") {
  const MixedInputs in = LoadMixedInputs();
  absl::StatusOr<std::unique_ptr<ClusterModel>> cluster = testing::ClusterModelOf(in.cluster, spec::DType::kBf16);
  REQUIRE(cluster.ok());
  SearchedGroup fine, coarse;
  fine.island = 0;
  fine.shape = {1, 8};
  fine.tensor_parallel = 4;
  fine.data_parallel = 2;
  fine.option.grad_sync_bytes = int64_t{1} << 30;
  coarse.island = 1;
  coarse.shape = {1, 8};
  coarse.tensor_parallel = 1;
  coarse.data_parallel = 8;
  fine.first_node = coarse.first_node = -1;  // not placed: the alpha-beta ring through the NIC shares
  // Ten replicas; the TP-1 GPUs each join 4 rings, so each ring gets a quarter of their NIC share
  // (the two islands share one network: no narrower crossing).
  const double rate = (*cluster)->NicShare((*cluster)->island(1), 8) / 4;
  Time latency = 0;
  for (int a : {0, 1}) {
    for (int b : {0, 1}) latency = std::max(latency, (*cluster)->BoundaryLink(a, b).latency);
  }
  const Time overhead = SecondsToTime(
      std::max((*cluster)->island(0).gpu->iteration_overhead_s(), (*cluster)->island(1).gpu->iteration_overhead_s()));
  const double ring_s =
      collectives::RingAllReduceSeconds(10, Bytes(1 << 30), Bandwidth(rate), TimeAsSeconds(latency)).value();
  RangeNccl nccl(**cluster);
  CHECK(MixedGradSyncTime(**cluster, {fine, coarse}, 0, nccl) == SecondsToTime(ring_s) + overhead);
}

// The mixed cloud (examples/cluster-mixed-cloud.pbtxt): 2 A100 and 2 L40S nodes of 8 GPUs, one
// 100 Gb/s NIC a node, one network.
std::unique_ptr<ClusterModel> MixedCloud() {
  absl::StatusOr<v1::Cluster> c = proto::LoadCluster(HETSIM_SOURCE_DIR "/examples/cluster-mixed-cloud.pbtxt");
  REQUIRE(c.ok());
  absl::StatusOr<std::unique_ptr<ClusterModel>> cluster = testing::ClusterModelOf(*c, spec::DType::kBf16);
  REQUIRE(cluster.ok());
  return *std::move(cluster);
}

SearchedGroup PlacedGroup(int island, int gpus, int tp, int64_t bytes) {
  SearchedGroup g;
  g.island = island;
  g.shape = {1, gpus};
  g.tensor_parallel = tp;
  g.data_parallel = gpus / tp;
  g.option.grad_sync_bytes = bytes;
  return g;
}

TEST_CASE("mixed replicas: a placed ring leaves each node once at NCCL's estimate on its GPUs", "[planner][mixed]") {
  // Issue 39's review: an A100 node's 8 GPUs beside an L40S node's 8, TP 1, 1 GiB of gradients. One
  // ring of 16 GPUs crosses each node's one NIC once each way: the simulator's (and NCCL's) ring, where
  // the alpha-beta ring through each GPU's eighth of the NIC took 6.2 times as long.
  const std::unique_ptr<ClusterModel> cluster = MixedCloud();
  const std::vector<SearchedGroup> groups = {PlacedGroup(0, 8, 1, int64_t{1} << 30),
                                             PlacedGroup(1, 8, 1, int64_t{1} << 30)};
  topology::Router router(cluster->topology());
  collectives::CollectiveRequest req;
  req.op = CollectiveOp::kAllReduce;
  req.bytes = int64_t{1} << 30;
  for (int gpu = 0; gpu < 8; ++gpu) req.gpus.push_back(GpuId(gpu));
  for (int gpu = 16; gpu < 24; ++gpu) req.gpus.push_back(GpuId(gpu));
  absl::StatusOr<collectives::ShapeChoice> nccl = collectives::ChooseShape(cluster->topology(), router, req);
  REQUIRE(nccl.ok());
  RangeNccl pricer(*cluster);
  const Time ring = MixedDenseRingTime(*cluster, groups, pricer);
  CHECK(TimeToSeconds(ring) == Approx(nccl->shape.estimated_seconds.value()).epsilon(1e-6));
  CHECK(MixedRingTime(*cluster, groups) > 4 * ring);
}

// An A100 TP 4 replica (GPUs 0-3) beside `l40s_gpus` / 4 L40S TP 4 replicas on the first L40S node, each shard
// `bytes` of gradients: four shard rings of 1 + l40s_gpus / 4 GPUs, one A100 and the L40S GPUs 16, 20, ... each
// (shard 0's), each crossing both nodes' one NIC.
struct TpFourRings {
  std::unique_ptr<ClusterModel> cluster;
  std::vector<SearchedGroup> groups;
  SharedFlow flow;
  NcclPrice alone;                    // one shard ring alone: NCCL's estimate on its GPUs
  collectives::CollectiveShape nccl;  // the shape the simulator runs it in
  double wire = 0;                    // a ring's bytes: 2 (n - 1) / n of the shard's
  double pace = 0;                    // one ring alone at NCCL's estimate
  std::vector<SharedLink> nics;       // the flow's NIC links
};

TpFourRings TpFourRingsOf(int l40s_gpus, int64_t bytes) {
  TpFourRings r;
  r.cluster = MixedCloud();
  r.groups = {PlacedGroup(0, 4, 4, bytes), PlacedGroup(1, l40s_gpus, 4, bytes)};
  RangeNccl pricer(*r.cluster);
  const std::optional<SharedFlow> flow = MixedDenseRingFlow(*r.cluster, r.groups, pricer);
  REQUIRE(flow);
  r.flow = *flow;
  collectives::CollectiveRequest req;
  req.op = CollectiveOp::kAllReduce;
  req.bytes = bytes;
  req.gpus = {GpuId(0)};
  for (int gpu = 16; gpu < 16 + l40s_gpus; gpu += 4) req.gpus.push_back(GpuId(gpu));
  const std::optional<NcclPrice> alone = pricer.Of(req.gpus, CollectiveOp::kAllReduce, bytes);
  REQUIRE(alone);
  r.alone = *alone;
  topology::Router router(r.cluster->topology());
  absl::StatusOr<collectives::ShapeChoice> nccl = collectives::ChooseShape(r.cluster->topology(), router, req);
  REQUIRE(nccl.ok());
  r.nccl = nccl->shape;
  const double n = static_cast<double>(req.gpus.size());
  r.wire = 2 * (n - 1) / n * static_cast<double>(bytes);
  CHECK(r.flow.bytes == Approx(r.wire).epsilon(1e-12));
  r.pace = r.wire / r.alone.bandwidth_s();
  for (const SharedLink& l : r.flow.links) {
    if (l.key >= kMixedNicKey) r.nics.push_back(l);
  }
  return r;
}

TEST_CASE("mixed replicas: the shard rings of TP 4 groups share each node's one NIC", "[planner][mixed]") {
  // The bundled example's stage 0: an A100 TP 4 replica beside two L40S TP 4 replicas (the L40S node's 8 GPUs):
  // four shard rings of three GPUs. A NIC gives each ring a quarter of what it carries, but never less than a
  // quarter of NCCL's own pace for one ring alone: between two nodes NCCL takes the double tree, which sends each
  // byte once each way (sim/collectives, NcclTwoNodeTreeRatio), 3/4 of a ring's 2 (n - 1) / n = 4/3 through the
  // NIC (NicLoadRatio, since session 42: the NIC link C = 100 Gb/s x Ethernet's 0.80 carries C / (3/4) of a
  // ring's bytes). Shared per flow (session 43): each double tree crosses between the nodes on one edge a tree,
  // so a NIC carries 2 flows a channel each way (NicFlows), 4 x 2 x channels of the four rings, each flow's share
  // moving flows x bytes_per_s / C of a ring's bytes (the weight).
  const TpFourRings r = TpFourRingsOf(8, int64_t{700} << 20);
  const double nic = r.cluster->island(0).node_nic_bytes_per_s;
  REQUIRE(nic == r.cluster->island(1).node_nic_bytes_per_s);
  CHECK(r.pace > nic / 4);
  CHECK(r.alone.nic_load == Approx(3.0 / 4).epsilon(1e-12));
  REQUIRE(r.nccl.algorithm == collectives::CollectiveAlgorithm::kTree);
  CHECK(r.alone.nic_flows == 2 * r.nccl.channels);
  const double link = 0.8 * nic;  // the simulator's NIC link
  REQUIRE(r.nics.size() == 2);
  for (const SharedLink& l : r.nics) {
    CHECK(l.bytes_per_s == Approx(std::max(link / (3.0 / 4), r.pace) / 4).epsilon(1e-12));
    CHECK(l.flows == 4 * 2 * r.nccl.channels);
    CHECK(l.link_bytes_per_s == Approx(link).epsilon(1e-12));
    CHECK(l.Weight() == Approx(2 * r.nccl.channels * std::max(1 / (3.0 / 4), r.pace / link)).epsilon(1e-12));
  }
  // The islands share one flat network: what crosses from the A100 to the L40S island goes through the
  // nodes' NICs, no link of its own (before session 42 a boundary transfer's rate, shared by every ring
  // between the islands as if a gateway joined them). The slowest is the NICs' quarter.
  const MixedRing parts = MixedRingOf(*r.cluster, r.groups);
  CHECK(parts.crossing_bytes_per_s.empty());
  RangeNccl pricer(*r.cluster);
  CHECK(TimeToSeconds(MixedDenseRingTime(*r.cluster, r.groups, pricer)) ==
        Approx(r.alone.latency_s + r.wire / std::min(r.pace, std::max(link / (3.0 / 4), r.pace) / 4)).epsilon(1e-6));
}

TEST_CASE("mixed replicas: a stage's NICs carry LL's wire bytes, four of them a payload byte", "[planner][mixed]") {
  // Session 42: an A100 TP 4 replica beside an L40S TP 4 replica, 16 KiB of gradients a shard: four shard rings of
  // two GPUs, one a node, each NCCL's LL (the fastest for so few bytes: its step latency the smallest), whose
  // 8-byte lines carry 4 bytes of payload (NCCL's LL, ProtocolBandwidthFraction 1/4). Each node's one NIC (the
  // simulator's link: 100 Gb/s x Ethernet's 0.80 = C) carries the four rings' wire bytes: each ring gets
  // C x 1/4 / 4 of payload, no less than its own pace alone over the 4 rings; a ring of 2 GPUs on 2 nodes leaves
  // each node once a channel (NicLoadRatio 1, NicFlows its channels). Before, each got C / 4, four times the
  // payload.
  const TpFourRings r = TpFourRingsOf(4, int64_t{16} << 10);
  const double nic = 0.8 * 100e9 / 8;
  CHECK(r.cluster->island(0).nic_link_bytes_per_s == Approx(nic).epsilon(1e-12));
  CHECK(r.alone.payload_fraction == 0.25);  // LL
  CHECK(r.alone.nic_load == 1);
  REQUIRE(r.nccl.algorithm == collectives::CollectiveAlgorithm::kRing);
  CHECK(r.alone.nic_flows == r.nccl.channels);
  REQUIRE(r.nics.size() == 2);
  for (const SharedLink& l : r.nics) {
    CHECK(l.bytes_per_s == Approx(std::max(nic / 4, r.pace) / 4).epsilon(1e-12));
    CHECK(l.bytes_per_s < nic / 4 / 2);
    CHECK(l.flows == 4 * r.nccl.channels);
  }
}

TEST_CASE("mixed replicas: an MoE stage's expert rings are NCCL flows through each node's NIC after the dense ring",
          "[planner][mixed][experts]") {
  // Session 40: an A100 node at EP 8 beside an L40S node at EP 4 (each L40S GPU holds two of the 8 experts,
  // so it joins two of the 8 expert rings). Expert shard 0 is A100 GPU 0 and L40S GPUs 0 and 4 (the
  // simulator's ExpertDataGroup(0)); the 8 rings cross each node's one NIC once each way, each at an
  // eighth of what the simulator's NIC link carries (its line rate x the island's NCCL efficiency), and
  // never below NCCL's own pace for a ring alone, which an L40S GPU divides between its two rings.
  const std::unique_ptr<ClusterModel> cluster = MixedCloud();
  const int64_t bytes = int64_t{900} << 20;  // the finest expert shard's gradients
  std::vector<SearchedGroup> groups = {PlacedGroup(0, 8, 1, 0), PlacedGroup(1, 8, 1, 0)};
  groups[0].expert_parallel = 8;
  groups[1].expert_parallel = 4;
  for (SearchedGroup& g : groups) g.expert_tensor_parallel = 1;
  groups[0].option.expert_grad_sync_bytes = bytes;
  groups[1].option.expert_grad_sync_bytes = 2 * bytes;
  groups[0].option.grad_sync_bytes = groups[1].option.grad_sync_bytes = int64_t{300} << 20;
  const topology::Topology& t = cluster->topology();
  CHECK(MixedShardGpus(*cluster, groups, 8) == std::vector<GpuId>{GpuId(0), GpuId(16), GpuId(20)});
  RangeNccl pricer(*cluster);
  const std::optional<SharedFlow> flow = MixedExpertRingFlow(*cluster, groups, pricer, 8);
  REQUIRE(flow);
  const double wire = 2.0 * 2 / 3 * static_cast<double>(bytes);
  CHECK(flow->bytes == Approx(wire).epsilon(1e-12));
  const std::optional<NcclPrice> alone = pricer.Of({GpuId(0), GpuId(16), GpuId(20)}, CollectiveOp::kAllReduce, bytes);
  REQUIRE(alone);
  const double pace = wire / alone->bandwidth_s();
  // The NIC link as the simulator has it: 100 Gb/s x ETHERNET's 0.80 (docs/network.md), not the line rate.
  const double nic = t.link(t.nic_uplink(t.nic_of(GpuId(0)))).bandwidth.bytes_per_second();
  CHECK(nic == Approx(0.8 * cluster->island(0).node_nic_bytes_per_s).epsilon(1e-12));
  int nics = 0;
  for (const auto& [key, rate, flows, link_rate] : flow->links) {
    if (key == -1) CHECK(rate == Approx(pace / 2).epsilon(1e-12));
    if (key < kMixedNicKey) continue;
    ++nics;
    // The expert ring of 3 GPUs on 2 nodes runs as a double tree: 3/4 of a ring's bytes through each NIC.
    CHECK(alone->nic_load == Approx(3.0 / 4).epsilon(1e-12));
    CHECK(rate == Approx(std::max(nic / (3.0 / 4), pace) / 8).epsilon(1e-12));
    // Shared per flow (session 43): the 8 rings' flows through the NIC, each putting its double tree's there.
    CHECK(flows == 8 * alone->nic_flows);
    CHECK(link_rate == Approx(nic).epsilon(1e-12));
  }
  CHECK(nics == 2);
  // The NIC-share price (each L40S GPU's eighth of the line rate over its two rings) is far slower.
  CHECK(TimeToSeconds(MixedExpertsTime(*cluster, groups, 8)) > 1.3 * TimeToSeconds(ShareLinks({*flow}).front()));
  // ZeRO-1 as the simulator orders it: the dense reduce-scatter, the experts', the step, then both
  // parameter all-gathers at once; the synchronisation ends with the later of them.
  const Time step = MixedStepTime(*cluster, groups);
  const std::vector<SharedFlow> flows = MixedSyncFlows(*cluster, groups, 1, step, pricer, 8);
  REQUIRE(flows.size() == 5);
  CHECK(flows[1].after == 0);
  CHECK(flows[2].after == 1);
  CHECK(flows[2].latency == step);
  CHECK(flows[3].after == 2);
  CHECK(flows[4].after == 2);
  const std::vector<Time> ends = ShareLinks(flows);
  CHECK(MixedSyncEnd(flows) == std::max(ends[3], ends[4]));
  CHECK(MixedGradSyncTime(*cluster, groups, 1, pricer, 8) == MixedSyncEnd(flows));
  // The two gathers share the NICs: together they take longer than the later one alone.
  Time later_alone = 0;
  for (SharedFlow gather : {flows[3], flows[4]}) {
    gather.after = -1;
    later_alone = std::max(later_alone, ShareLinks({gather}).front());
  }
  CHECK(MixedSyncEnd(flows) - ends[2] > later_alone);
}

TEST_CASE("mixed replicas: HAPT proposes a mixed plan that simulates faster than its best one-island plan",
          "[planner][mixed]") {
  const MixedInputs in = LoadMixedInputs();
  // 8 A100 and 8 RTX 4090 on one 8 x 400 Gb/s network, a 1.3B GPT, 16 samples per iteration.
  auto [mixed, one_island] = PlannedWithAndWithoutMixing(in);
  REQUIRE(mixed.outcome.plan.stages.front().mixed());
  for (const spec::StageSpec& st : one_island.outcome.plan.stages) CHECK_FALSE(st.mixed());
  // The note says why: the two predictions side by side.
  bool noted = false;
  for (const std::string& n : mixed.outcome.notes) noted = noted || n.find("chosen: ") == 0;
  CHECK(noted);
  CHECK(mixed.outcome.prediction.iteration < one_island.outcome.prediction.iteration);
  // The written plans run, and the mixed one is faster in the simulation too.
  const proto::PlanInputs mixed_inputs = InputsOf(in, mixed);
  const proto::PlanInputs one_island_inputs = InputsOf(in, one_island);
  absl::StatusOr<evaluation::SimulatedStages> mixed_sim = evaluation::SimulateStages(mixed_inputs);
  absl::StatusOr<evaluation::SimulatedStages> one_island_sim = evaluation::SimulateStages(one_island_inputs);
  REQUIRE(mixed_sim.ok());
  REQUIRE(one_island_sim.ok());
  CHECK(mixed_sim->iteration < one_island_sim->iteration);
  // `validate` prices the mixed plan with the same cost model and reports its error (measured +3.0%).
  absl::StatusOr<evaluation::OwnValidation> v = evaluation::ValidateOwnPrediction(mixed_inputs, 0, PlannerKind::kHapt);
  REQUIRE(v.ok());
  const double error = TimeToSeconds(v->prediction.iteration) / TimeToSeconds(v->simulated.iteration) - 1;
  CHECK(std::abs(error) < 0.05);
  CHECK(v->prediction.iteration == mixed.outcome.prediction.iteration);
  CHECK(v->prediction.stages.front().peak_bytes == v->simulated.peak.front());
}

TEST_CASE("mixed replicas: HAPT searches an MoE model's mixed stages, each group at its own expert layout",
          "[planner][mixed][experts]") {
  // The 8-expert GPT on 8 A100 and 8 RTX 4090 (session 39; the family skipped MoE models before): the
  // candidates carry each group's EP x ETP, priced by PriceMixedStage; the plan written runs and validates.
  MixedInputs in = LoadMixedInputs();
  absl::StatusOr<v1::Model> moe = proto::LoadAs<v1::Model>(HETSIM_SOURCE_DIR "/tests/planner_data/moe-hapt-case.pbtxt");
  REQUIRE(moe.ok());
  in.model = *moe;
  absl::StatusOr<driver::Planned> planned = testing::PlanOf(in.model, in.cluster, HaptRequest(96));
  REQUIRE(planned.ok());
  const spec::PlanSpec& plan = planned->outcome.plan;
  REQUIRE(plan.stages.front().mixed());
  for (const spec::StageSpec& st : plan.stages) {
    for (const spec::ReplicaGroupSpec& g : st.replica_groups) {
      CHECK(g.expert_parallel > 1);
      CHECK(st.expert_parallel % g.expert_parallel == 0);  // the stage's is the finest group's
    }
  }
  // The note says what was chosen, with each group's experts, and against what.
  bool noted = false;
  for (const std::string& n : planned->outcome.notes)
    noted = noted || (n.find("chosen: ") == 0 && n.find(" at EP ") != std::string::npos);
  CHECK(noted);
  // Measured: predicted 503.541 ms against 511.375 ms simulated (-1.5%), the memory exact.
  const proto::PlanInputs inputs = InputsOf(in, *planned);
  absl::StatusOr<evaluation::OwnValidation> v = evaluation::ValidateOwnPrediction(inputs, 0, PlannerKind::kHapt);
  INFO(v.status().message());
  REQUIRE(v.ok());
  const double error = TimeToSeconds(v->prediction.iteration) / TimeToSeconds(v->simulated.iteration) - 1;
  CHECK(std::abs(error) < 0.05);
  CHECK(v->prediction.stages.front().peak_bytes == v->simulated.peak.front());
}

TEST_CASE("mixed replicas: a cluster of one GPU type is planned as before", "[planner][mixed]") {
  MixedInputs in = LoadMixedInputs();
  in.cluster.mutable_node_types(1)->set_gpu_type("a100");
  in.cluster.mutable_gpu_types()->RemoveLast();
  auto [searched, not_searched] = PlannedWithAndWithoutMixing(in);
  CHECK(searched.plan.SerializeAsString() == not_searched.plan.SerializeAsString());
  CHECK(searched.outcome.notes == not_searched.outcome.notes);
  for (const std::string& n : searched.outcome.notes) CHECK(n.find("mixed") == std::string::npos);
}

}  // namespace
}  // namespace hetsim::planner
