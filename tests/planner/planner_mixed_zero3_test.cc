// ZeRO-3 (FSDP) on a placed stage in the planner: each layer's parameter gathers over the stage's shard
// groups (MixedLayerGathers), a mixed stage's and a plain one's alike, and `validate`'s pricing of an
// interleaved mixed stage chunk by chunk (issue 39's review, session 38; docs/heterogeneous.md).
#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "planner/layer_ranges.h"
#include "planner/mixed_replicas.h"
#include "planner/plan_reader.h"
#include "proto/inputs.h"
#include "proto/resolve.h"
#include "sim/collectives/algorithms.h"
#include "sim/workload/model_cost.h"
#include "sim/workload/stage_cost.h"
#include "tests/base/time_io.h"
#include "tests/planner/planner_test_util.h"
#include "topology/routing.h"

namespace hetsim::planner {
namespace {

constexpr char kMixedCloud[] = HETSIM_SOURCE_DIR "/examples/cluster-mixed-cloud.pbtxt";

// A plan file on the mixed cloud (2 A100 and 2 L40S nodes of 8 GPUs, one 100 Gb/s NIC a node), resolved
// as `hetsim validate` reads it.
struct PlanOnCloud {
  proto::PlanInputs in;
  std::unique_ptr<workload::ModelCost> model;
  std::unique_ptr<ClusterModel> cluster;
  spec::PlanSpec plan;
};

std::unique_ptr<PlanOnCloud> Load(const v1::Plan* plan_message, const std::string& path = "") {
  auto out = std::make_unique<PlanOnCloud>();
  if (plan_message == nullptr) {
    absl::StatusOr<proto::PlanInputs> in = proto::LoadPlanInputs(path, kMixedCloud);
    INFO(in.status().message());
    REQUIRE(in.ok());
    out->in = *std::move(in);
  } else {
    absl::StatusOr<v1::Cluster> cluster = proto::LoadCluster(kMixedCloud);
    REQUIRE(cluster.ok());
    out->in = testing::MakeInputs(*cluster, *plan_message);
  }
  out->model =
      std::make_unique<workload::ModelCost>(workload::ModelCost::Create(proto::ResolveModel(out->in.model, "model")));
  absl::StatusOr<std::unique_ptr<ClusterModel>> cluster = testing::ClusterModelOf(out->in.cluster, spec::DType::kBf16);
  REQUIRE(cluster.ok());
  out->cluster = *std::move(cluster);
  out->plan = proto::ResolvePlan(out->in.plan, "plan");
  return out;
}

// The review's FSDP plan with its groups replaced: both A100 nodes, as two groups of 8 replicas of 3 samples
// each (`mixed`) or as one stage of 16 replicas on the island's 2 nodes.
v1::Plan TwoA100Nodes(bool mixed) {
  std::unique_ptr<PlanOnCloud> base =
      Load(nullptr, HETSIM_SOURCE_DIR "/tests/planner_data/plan-mixed-cloud-fsdp.pbtxt");
  v1::Plan plan = base->in.plan;
  plan.set_global_batch_size(48);
  plan.set_micro_batch_size(48);
  v1::Stage* st = plan.mutable_stages(0);
  st->clear_replica_groups();
  if (!mixed) {
    st->mutable_mesh()->set_island("a100");
    st->mutable_mesh()->set_node_count(2);
    st->mutable_mesh()->set_gpus_per_node(8);
    st->set_data_parallel(16);
    return plan;
  }
  for (int node = 0; node < 2; ++node) {
    v1::ReplicaGroup* g = st->add_replica_groups();
    g->mutable_mesh()->set_island("a100");
    g->mutable_mesh()->set_first_node(node);
    g->mutable_mesh()->set_node_count(1);
    g->mutable_mesh()->set_gpus_per_node(8);
    g->set_data_parallel(8);
    g->set_micro_batch_share(3);
  }
  return plan;
}

TEST_CASE("ZeRO-3 gathers: two groups of one GPU type are priced exactly as the uniform stage", "[planner][mixed]") {
  const v1::Plan uniform_plan = TwoA100Nodes(false), mixed_plan = TwoA100Nodes(true);
  std::unique_ptr<PlanOnCloud> uniform = Load(&uniform_plan), mixed = Load(&mixed_plan);
  Profiler uniform_profiler = PlanProfiler(*uniform->model, *uniform->cluster, uniform->plan);
  Profiler mixed_profiler = PlanProfiler(*mixed->model, *mixed->cluster, mixed->plan);
  absl::StatusOr<std::vector<SearchedStage>> u = StagesOfPlan(uniform_profiler, uniform->plan);
  absl::StatusOr<std::vector<SearchedStage>> m = StagesOfPlan(mixed_profiler, mixed->plan);
  absl::StatusOr<std::vector<SearchedStage>> without = StagesOfPlan(mixed_profiler, mixed->plan, false);
  REQUIRE(u.ok());
  REQUIRE(m.ok());
  REQUIRE(without.ok());
  const StageOption& plain = u->front().option;
  const StageOption& groups = m->front().option;
  CHECK(groups.forward == plain.forward);
  CHECK(groups.backward == plain.backward);
  CHECK(m->front().groups.at(0).option.gather_forward == plain.gather_forward);
  // The gathers are there: each pass longer by them than without (a plan of pipelines' stages, whose
  // ranges gather instead), the same before the forward and the backward without prefetch.
  CHECK(plain.gather_forward > 0);
  CHECK(plain.gather_forward == plain.gather_backward);
  CHECK(groups.forward - without->front().option.forward == plain.gather_forward);
}

TEST_CASE("ZeRO-3 gathers: one node's layer gather is NCCL's all-gather of its bytes over the replicas",
          "[planner][mixed]") {
  // An A100 node of 8 GPUs at TP 2: two shard groups of 4 replicas (GPUs 0, 2, 4, 6 and 1, 3, 5, 7) on
  // its NVSwitch. Each layer gathers its share of the stage's parameters per GPU of a TP-2 shard, split
  // by parameter count; alone on the node it takes NCCL's estimate on TP rank 0's GPUs.
  const std::unique_ptr<PlanOnCloud> cloud =
      Load(nullptr, HETSIM_SOURCE_DIR "/tests/planner_data/plan-mixed-cloud-fsdp.pbtxt");
  SearchedGroup g;
  g.island = 0;
  g.shape = {1, 8};
  g.tensor_parallel = 2;
  g.data_parallel = 4;
  const int first = 0, count = 5;
  RangeNccl nccl(*cloud->cluster);
  const std::vector<Time> gathers = MixedLayerGathers(*cloud->model, *cloud->cluster, {g}, first, count, nccl);
  const std::vector<int64_t> bytes = LayerGatherBytes(
      *cloud->model, first, first + count, workload::DenseGradSyncBytes(*cloud->model, first, count, 2, false));
  REQUIRE(gathers.size() == static_cast<size_t>(count));
  REQUIRE(bytes.size() == static_cast<size_t>(count));
  int64_t sum = 0;
  for (int64_t b : bytes) sum += b;
  CHECK(sum == workload::DenseGradSyncBytes(*cloud->model, first, count, 2, false));
  topology::Router router(cloud->cluster->topology());
  for (int k = 0; k < count; ++k) {
    INFO("layer " << k);
    collectives::CollectiveRequest req;
    req.op = CollectiveOp::kAllGather;
    req.bytes = bytes[k];
    for (int gpu : {0, 2, 4, 6}) req.gpus.push_back(GpuId(gpu));
    absl::StatusOr<collectives::ShapeChoice> shape = collectives::ChooseShape(cloud->cluster->topology(), router, req);
    REQUIRE(shape.ok());
    CHECK(TimeToSeconds(gathers[k]) == Approx(shape->shape.estimated_seconds.value()).epsilon(1e-6));
  }
  // One replica gathers nothing.
  g.tensor_parallel = 8;
  g.data_parallel = 1;
  CHECK(MixedLayerGathers(*cloud->model, *cloud->cluster, {g}, first, count, nccl).empty());
}

TEST_CASE("ZeRO-3 gathers: with prefetch a gather hides behind the layer before it in pass order", "[planner][mixed]") {
  // Three layers of 10 ms a pass (30 ms), gathers of 4, 12 and 6 ms: the forward's first gather stays
  // exposed, the others hide up to 10 ms (4 + 2 + 0); the backward's first is the last layer's (0 + 2 + 6).
  const std::vector<Time> gather = {MillisecondsToTime(4), MillisecondsToTime(12), MillisecondsToTime(6)};
  StageOption o;
  o.forward = o.backward = MillisecondsToTime(30);
  StageOption exposed = o;
  AddZeroThreeGathers(gather, false, exposed);
  CHECK(exposed.forward == MillisecondsToTime(52));
  CHECK(exposed.backward == MillisecondsToTime(52));
  CHECK(exposed.gather_forward == MillisecondsToTime(22));
  AddZeroThreeGathers(gather, true, o);
  CHECK(o.gather_forward == MillisecondsToTime(6));
  CHECK(o.gather_backward == MillisecondsToTime(8));
  CHECK(o.forward == MillisecondsToTime(36));
  CHECK(o.backward == MillisecondsToTime(38));
}

TEST_CASE("an interleaved mixed stage is priced chunk by chunk, each chunk's slowest group", "[planner][mixed]") {
  const std::unique_ptr<PlanOnCloud> cloud =
      Load(nullptr, HETSIM_SOURCE_DIR "/tests/planner_data/plan-mixed-replicas-interleaved.pbtxt");
  Profiler profiler = PlanProfiler(*cloud->model, *cloud->cluster, cloud->plan);
  absl::StatusOr<std::vector<SearchedStage>> stages = StagesOfPlan(profiler, cloud->plan);
  INFO(stages.status().message());
  REQUIRE(stages.ok());
  for (const SearchedStage& s : *stages) {
    REQUIRE(s.chunks.size() == 2);
    REQUIRE(s.groups.size() == 2);
    CHECK(s.option.forward == s.chunks[0].forward + s.chunks[1].forward);
    CHECK(s.option.backward == s.chunks[0].backward + s.chunks[1].backward);
    for (const SearchedGroup& g : s.groups) {
      REQUIRE(g.chunk_activation_bytes.size() == 2);
      CHECK(g.option.activation_bytes == g.chunk_activation_bytes[0] + g.chunk_activation_bytes[1]);
      CHECK(g.option.forward <= s.option.forward);  // no group's passes outlast the chunks' slowest
    }
    CHECK(s.option.grad_sync > 0);
    CHECK(!s.grad_sync_flows.empty());
  }
  // Predicted as a whole (refused before session 39): each group's memory over its own chunks.
  absl::StatusOr<Prediction> p = PredictPlan(profiler, cloud->plan);
  INFO(p.status().message());
  REQUIRE(p.ok());
  for (const StagePrediction& sp : p->stages) {
    REQUIRE(sp.groups.size() == 2);
    for (const StagePrediction::Group& g : sp.groups) CHECK(g.peak_bytes > 0);
  }
}

}  // namespace
}  // namespace hetsim::planner
