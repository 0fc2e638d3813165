// The planners with context parallelism (Plan.context_parallel): the K/V ring priced from link
// figures against hand computation and against the simulator's routed ring, the CP search, and a
// planned CP plan simulated.
#include <catch2/catch.hpp>

#include "base/units.h"
#include "planner/context_parallel_cost_internal.h"
#include "planner/planner.h"
#include "planner/profile.h"
#include "proto/resolve.h"
#include "proto/validate_plan.h"
#include "service/driver/simulate.h"
#include "sim/workload/model_cost.h"
#include "tests/base/spec/spec_test_util.h"
#include "tests/base/time_io.h"
#include "tests/planner/planner_test_util.h"
#include "tests/sim/executor/context_parallel_util.h"
#include "tests/sim/executor/executor_test_util.h"
#include "tests/topology/topology_clusters.h"

namespace hetsim::planner {
namespace {

v1::Model Gqa(uint64_t seq) { return testing::GqaModel(4, seq); }

IslandModel Figures(int gpus_per_node, double intra_gbps, double inter_gbps, double node_nic_gbps) {
  IslandModel im;
  im.nodes = 4;
  im.gpus_per_node = gpus_per_node;
  im.intra_node = {GbpsToBytesPerSecond(intra_gbps), SecondsToTime(1e-6)};
  im.inter_node = {GbpsToBytesPerSecond(inter_gbps), SecondsToTime(5e-6)};
  im.node_nic_bytes_per_s = GbpsToBytesPerSecond(node_nic_gbps);
  return im;
}

TEST_CASE("planner CP: one ring step from the link figures, by hand", "[planner][cp]") {
  const IslandModel im = Figures(8, 3600, 400, 1600);  // 4 NICs of 400 Gb/s per node
  const double bytes = 1e8;
  const auto seconds = [&](int tp, int cp, MeshShape shape) {
    return TimeToSeconds(ContextParallelStepTime(im, shape, tp, cp, bytes));
  };
  // TP 2 x CP 4 fits in a node: NVSwitch.
  CHECK(seconds(2, 4, {2, 8}) == Approx(1e-6 + bytes / GbpsToBytesPerSecond(3600)));
  // TP 8 x CP 2: every GPU's next CP rank is on the next node; 8 edges leave a node on 4 NICs.
  CHECK(seconds(8, 2, {2, 8}) == Approx(5e-6 + bytes / GbpsToBytesPerSecond(1600.0 / 8)));
  // TP 4 x CP 4: half a node passes within it, the other 4 GPUs leave it (on 4 NICs: line rate).
  CHECK(seconds(4, 4, {2, 8}) == Approx(5e-6 + bytes / GbpsToBytesPerSecond(400)));
  CHECK(seconds(4, 1, {2, 8}) == 0);
}

TEST_CASE("planner CP: exposed ring time = (CP - 1) x max(0, step - core / CP), per attention layer", "[planner][cp]") {
  const IslandModel im = Figures(8, 3600, 400, 3200);
  workload::ContextParallelAttention a;
  a.step_bytes = 50'000'000;
  a.core_forward_s = 1e-3;
  a.core_backward_s = 1e-2;  // hides the backward's steps entirely
  const MeshShape shape{4, 8};
  const double step = 5e-6 + 5e7 / GbpsToBytesPerSecond(400);  // TP 8 x CP 4: every edge leaves its node
  const ContextParallelTime t = ContextParallelCost(im, shape, 8, 4, spec::ContextParallelComm::kRing, {a, a});
  CHECK(TimeToSeconds(t.forward_exchange) == Approx(2 * 3 * step).epsilon(1e-9));
  CHECK(TimeToSeconds(t.forward_exposed) == Approx(2 * 3 * (step - 1e-3 / 4)).epsilon(1e-9));
  const double grad_step = 5e-6 + 1e8 / GbpsToBytesPerSecond(400);
  CHECK(TimeToSeconds(t.backward_exchange) == Approx(2 * 3 * grad_step).epsilon(1e-9));
  CHECK(t.backward_exposed == 0);
  a.recomputed = true;  // the forward ring runs again in the backward
  const ContextParallelTime r = ContextParallelCost(im, shape, 8, 4, spec::ContextParallelComm::kRing, {a});
  CHECK(r.backward_exposed == t.forward_exposed / 2);
  CHECK(ContextParallelCost(im, shape, 8, 1, spec::ContextParallelComm::kRing, {a}).forward_exchange == 0);
}

TEST_CASE("planner CP: all-gathered K/V cost (CP - 1) steps forward, 2 (CP - 1) backward, all exposed",
          "[planner][cp]") {
  const IslandModel im = Figures(8, 3600, 400, 3200);
  workload::ContextParallelAttention a;
  a.step_bytes = 50'000'000;
  a.core_forward_s = 1;  // would hide a ring entirely
  a.core_backward_s = 2;
  // K and V a collective each: two steps of B/2, each with its latency.
  const double step = 2 * (5e-6 + 2.5e7 / GbpsToBytesPerSecond(400));
  const ContextParallelTime t = ContextParallelCost(im, {4, 8}, 8, 4, spec::ContextParallelComm::kAllGather, {a, a});
  CHECK(TimeToSeconds(t.forward_exposed) == Approx(2 * 3 * step).epsilon(1e-9));
  CHECK(TimeToSeconds(t.backward_exposed) == Approx(2 * 2 * 3 * step).epsilon(1e-9));
  CHECK(t.forward_exchange == t.forward_exposed);
}

TEST_CASE("planner CP: the profiler's ring is the simulator's, on a fabric where each GPU has its NIC",
          "[planner][cp]") {
  const proto::PlanInputs in = testing::CpStageInputs(4);
  const auto setup = testing::MakeSetup(in, network::NetworkMode::kMaxMinFair);
  const executor::VirtualStageCost& vs = setup->virtual_stages[0];
  REQUIRE(vs.cp_forward_exchange_time > 0);

  const workload::ModelCost model = workload::ModelCost::Create(proto::ResolveModel(in.model, "model"));
  auto cluster = testing::ClusterModelOf(in.cluster, model.dtype());
  REQUIRE(cluster.ok());
  workload::StageConfig sc;
  sc.num_layers = 6;
  sc.tensor_parallel = 2;
  sc.context_parallel = 4;
  auto stage = workload::ComputeStageCost(model, sc, *(*cluster)->island(0).gpu, "stage");
  REQUIRE(stage.ok());
  const ContextParallelTime t =
      ContextParallelCost((*cluster)->island(0), {4, 2}, 2, 4, spec::ContextParallelComm::kRing, stage->cp_attention);
  CHECK(TimeToSeconds(t.forward_exchange) == Approx(TimeToSeconds(vs.cp_forward_exchange_time)).epsilon(1e-6));
  CHECK(TimeToSeconds(t.backward_exchange) == Approx(TimeToSeconds(vs.cp_backward_exchange_time)).epsilon(1e-6));
  CHECK(TimeToSeconds(t.forward_exposed) == Approx(TimeToSeconds(vs.cp_forward_exposed_time)).margin(1e-9));

  // The profiler adds exactly that to the stage; validate's profiler takes the plan's CP.
  Profiler with_cp(model, **cluster, 1, {}, 4);
  Profiler without(model, **cluster, 1, {}, 1);
  IntraStageConfig cfg{.tensor_parallel = 2, .data_parallel = 1};
  const auto a = with_cp.PriceDirect(0, {4, 2}, cfg, 0, 6);
  REQUIRE(a.has_value());
  CHECK(a->forward > t.forward_exposed);
  CHECK(with_cp.DataParallelOf(8, 2) == 1);
  CHECK(without.DataParallelOf(8, 2) == 4);
  CHECK(with_cp.DataParallelOf(8, 4) == 0);  // TP x CP = 16 does not divide 8 GPUs
}

// The planned plan (its model inline), simulated: iteration time in seconds.
double Simulated(const v1::Cluster& cluster, const driver::Planned& o) {
  auto sim = driver::SimulatePlan(testing::MakeInputs(cluster, o.plan));
  REQUIRE(sim.ok());
  return TimeToSeconds(sim->result.iteration_time);
}

TEST_CASE("planner CP: the search splits a 128K-token sequence, and the simulation agrees it pays", "[planner][cp]") {
  PlanRequest req;
  const v1::Model model = Gqa(131072);
  v1::Cluster cluster = testing::H100Island(4, v1::SINGLE_SWITCH, 8);
  cluster.mutable_gpu_types(0)->set_preset("H100-SXM");
  req.global_batch_size = 8;
  req.micro_batch_size = 1;
  req.threads = 1;
  auto without = testing::PlanOf(model, cluster, req);
  REQUIRE(without.ok());
  CHECK(without->plan.context_parallel() == 0);
  req.context_parallel = 0;
  auto searched = testing::PlanOf(model, cluster, req);
  INFO(searched.status().message());
  REQUIRE(searched.ok());
  // Eight samples on 32 GPUs: without CP each is a pipeline's microbatch on TP 8; with CP the
  // attention of one sample spreads over more GPUs than one node's TP group could.
  CHECK(proto::ContextParallel(searched->plan) > 1);
  CHECK(searched->outcome.prediction.iteration < without->outcome.prediction.iteration);
  const double with_cp = Simulated(cluster, *searched);
  CHECK(with_cp < Simulated(cluster, *without));
  // The planner's iteration (its CP ring priced from link figures) is within 10% of the simulation.
  CHECK(TimeToSeconds(searched->outcome.prediction.iteration) == Approx(with_cp).epsilon(0.10));
  req.context_parallel = 3;
  CHECK(absl::IsInvalidArgument(testing::PlanOf(model, cluster, req).status()));  // 131072 is not a multiple of 6
}

}  // namespace
}  // namespace hetsim::planner
