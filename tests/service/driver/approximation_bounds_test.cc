// Bounds measured, not assumed (issue 43): each approximation the default may choose
// (service/driver/fidelity_choice.h) against the exact simulation on small shapes of every class (sizes,
// oversubscription, interleaving, MoE, context parallelism, heterogeneous islands, compute and link
// faults). A shape whose error exceeds its class's recorded bound (MeasuredBoundOf) fails the test, so
// the bound the report prints is the worst measured; the classes the default approximates stay under
// kDefaultErrorLimitPct. Bigger runs are in bench/executor_run.cc and docs/performance.md.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>

#include "google/protobuf/text_format.h"
#include "service/driver/fidelity_choice.h"
#include "sim/executor/flow_estimate.h"
#include "tests/sim/executor/executor_test_util.h"
#include "tests/topology/topology_clusters.h"

namespace hetsim {
namespace {

using driver::MeasuredBound;
using driver::ShapeClass;

struct ShapeErrors {
  double rings_pct = 0;
  double boundary_pct = 0;
  double both_pct = 0;
};

double ErrorPct(double exact, double approx) { return 100 * std::abs(approx - exact) / exact; }

driver::SimulateOptions ApproxOptions(const v1::Faults& faults, bool rings, bool boundary) {
  driver::SimulateOptions o;
  o.faults = faults;
  o.fault_sources = driver::SourcesOf(faults, "faults.pbtxt");
  if (rings) o.grad_sync_ring_steps = collectives::RingSteps::kAggregated;
  if (boundary) o.boundary_flows = executor::BoundaryFlows::kRepresentative;
  return o;
}

// Each approximation alone and both together against the exact run, iteration time.
ShapeErrors MeasureShape(const proto::PlanInputs& in, const v1::Faults& faults = {}) {
  const double exact = testing::MakeSimulation(in, ApproxOptions(faults, false, false)).report.iteration_time_ms();
  ShapeErrors e;
  e.rings_pct =
      ErrorPct(exact, testing::MakeSimulation(in, ApproxOptions(faults, true, false)).report.iteration_time_ms());
  e.boundary_pct =
      ErrorPct(exact, testing::MakeSimulation(in, ApproxOptions(faults, false, true)).report.iteration_time_ms());
  e.both_pct =
      ErrorPct(exact, testing::MakeSimulation(in, ApproxOptions(faults, true, true)).report.iteration_time_ms());
  return e;
}

// The shape's errors are within its class's recorded bounds.
void CheckWithinBound(const std::string& name, const proto::PlanInputs& in, ShapeClass shape,
                      const v1::Faults& faults = {}) {
  const auto setup = testing::MakeSetup(in, network::NetworkMode::kMaxMinFair);
  REQUIRE(driver::ClassifyShape(*setup, faults) == shape);
  const ShapeErrors e = MeasureShape(in, faults);
  const MeasuredBound b = driver::MeasuredBoundOf(shape);
  INFO(name << ": rings " << e.rings_pct << "%, boundary " << e.boundary_pct << "%, both " << e.both_pct << "% (bounds "
            << b.rings_pct << ", " << b.boundary_pct << ", " << b.both_pct << ")");
  CHECK(e.rings_pct <= b.rings_pct);
  CHECK(e.boundary_pct <= b.boundary_pct);
  CHECK(e.both_pct <= b.both_pct);
}

proto::PlanInputs Gpt(v1::Cluster c) { return testing::Gpt256(std::move(c)); }

v1::Cluster FatTree(int nodes_per_leaf, double oversubscription) {
  return testing::H100Island(32, v1::FAT_TREE, 8, nodes_per_leaf, oversubscription);
}

// The bundled 16K cluster's three-tier Clos (ToR, pod, aggregation at 7:1) cut to 32 nodes in 4 pods:
// both stages span pods, so boundaries and rings meet ECMP collisions on the aggregation tier.
v1::Cluster SmallClos() {
  const std::string dir = std::string(HETSIM_SOURCE_DIR) + "/examples/";
  absl::StatusOr<proto::PlanInputs> in =
      proto::LoadPlanInputs(dir + "plan-llama3-405b.pbtxt", dir + "cluster-16k-h100.pbtxt");
  REQUIRE(in.ok());
  v1::Cluster c = in->cluster;
  v1::Island* island = c.mutable_islands(0);
  island->set_name("a");
  island->set_node_count(32);
  island->mutable_clos()->set_racks_per_pod(4);
  return c;
}

proto::PlanInputs Interleaved() {
  proto::PlanInputs in = Gpt(FatTree(8, 2));
  in.plan.set_schedule(v1::INTERLEAVED_1F1B);
  in.plan.set_virtual_stages(3);
  return testing::MakeInputs(in.cluster, in.plan);
}

// 8 experts over EP 8 in each stage's DP 16.
proto::PlanInputs Moe() {
  proto::PlanInputs in = Gpt(FatTree(8, 2));
  v1::Transformer* t = in.plan.mutable_model()->mutable_transformer();
  t->set_num_experts(8);
  t->set_moe_top_k(2);
  t->set_moe_token_dispatcher(v1::MOE_DISPATCHER_ALL_TO_ALL);
  for (v1::Stage& s : *in.plan.mutable_stages()) s.set_expert_parallel(8);
  return testing::MakeInputs(in.cluster, in.plan);
}

// TP 8 x CP 2 x DP 8 per stage.
proto::PlanInputs ContextParallel() {
  proto::PlanInputs in = Gpt(FatTree(8, 2));
  in.plan.set_context_parallel(2);
  in.plan.mutable_model()->mutable_transformer()->set_seq_length(8192);
  in.plan.set_global_batch_size(in.plan.micro_batch_size() / 2 * 8);
  in.plan.set_micro_batch_size(in.plan.micro_batch_size() / 2);
  for (v1::Stage& s : *in.plan.mutable_stages()) s.set_data_parallel(8);
  return testing::MakeInputs(in.cluster, in.plan);
}

proto::PlanInputs Example(const std::string& plan, const std::string& cluster) {
  const std::string dir = std::string(HETSIM_SOURCE_DIR) + "/examples/";
  absl::StatusOr<proto::PlanInputs> in =
      proto::LoadPlanInputs(dir + "plan-" + plan + ".pbtxt", dir + "cluster-" + cluster + ".pbtxt");
  INFO(in.status().message());
  REQUIRE(in.ok());
  return *std::move(in);
}

v1::Faults FaultsOf(const std::string& text) {
  v1::Faults f;
  REQUIRE(google::protobuf::TextFormat::ParseFromString(text, &f));
  return f;
}

TEST_CASE("approximation bounds: one island (switch, 2:1 and 4:1 fat trees, interleaved, MoE, CP)", "[approx]") {
  CheckWithinBound("256 GPUs, one switch", Gpt(testing::H100Island(32)), ShapeClass::kOneIsland);
  CheckWithinBound("256 GPUs, 2:1 fat tree", Gpt(FatTree(8, 2)), ShapeClass::kOneIsland);
  CheckWithinBound("256 GPUs, 4:1 fat tree", Gpt(FatTree(4, 4)), ShapeClass::kOneIsland);
  CheckWithinBound("256 GPUs, 3-tier Clos at 7:1 (the 16K cluster's)", Gpt(SmallClos()), ShapeClass::kOneIsland);
  CheckWithinBound("256 GPUs, interleaved 3 chunks", Interleaved(), ShapeClass::kOneIsland);
  CheckWithinBound("256 GPUs, MoE EP 8", Moe(), ShapeClass::kOneIsland);
  CheckWithinBound("256 GPUs, CP 2", ContextParallel(), ShapeClass::kOneIsland);
  CheckWithinBound("Megatron 39B on 512 A100", Example("megatron-39b", "a100-512"), ShapeClass::kOneIsland);
}

TEST_CASE("approximation bounds: several islands and mixed stages", "[approx]") {
  CheckWithinBound("512-GPU heterogeneous example", Example("512gpu", "512gpu"), ShapeClass::kIslands);
  CheckWithinBound("HAPT case", Example("hapt-case", "hapt-case"), ShapeClass::kIslands);
  CheckWithinBound("mixed replicas", Example("mixed-replicas", "mixed-cloud"), ShapeClass::kIslands);
}

TEST_CASE("approximation bounds: compute faults (stragglers, jitter)", "[approx]") {
  const v1::Faults faults = FaultsOf(R"pb(faults { gpu: 37 kind: SLOW factor: 1.5 }
                                          jitter { seed: 7 distribution: LOGNORMAL spread: 0.05 })pb");
  CheckWithinBound("256 GPUs, 2:1 fat tree, straggler and jitter", Gpt(FatTree(8, 2)), ShapeClass::kComputeFaults,
                   faults);
  CheckWithinBound("512-GPU example, straggler node", Example("512gpu", "512gpu"), ShapeClass::kComputeFaults,
                   FaultsOf(R"pb(faults { gpu: 300 kind: SLOW factor: 2 at_ms: 10 duration_ms: 200 })pb"));
}

TEST_CASE("approximation bounds: link faults (the default stays exact)", "[approx]") {
  CheckWithinBound("256 GPUs, 2:1 fat tree, one NIC link 8x slower", Gpt(FatTree(8, 2)), ShapeClass::kLinkFaults,
                   FaultsOf(R"pb(faults { link: "a/node3/nic2->a/leaf0" kind: SLOW factor: 8 })pb"));
  CheckWithinBound("256 GPUs, 2:1 fat tree, one NIC link 100x slower", Gpt(FatTree(8, 2)), ShapeClass::kLinkFaults,
                   FaultsOf(R"pb(faults { link: "a/node3/nic2->a/leaf0" kind: SLOW factor: 100 })pb"));
  CheckWithinBound("256 GPUs, 2:1 fat tree, a receiving NIC link 100x slower", Gpt(FatTree(8, 2)),
                   ShapeClass::kLinkFaults,
                   FaultsOf(R"pb(faults { link: "a/leaf2->a/node21/nic5" kind: SLOW factor: 100 })pb"));
  CheckWithinBound("HAPT case, the straggler example's faults", Example("hapt-case", "hapt-case"),
                   ShapeClass::kLinkFaults,
                   FaultsOf(R"pb(faults { inter_island_link: 0 kind: FLAP at_ms: 100 period_ms: 1000 down_ms: 20 }
                                 faults { link_class: "INFINIBAND" kind: SLOW factor: 2 })pb"));
}

TEST_CASE("approximation choice: the default is exact while affordable and for unmeasured or unbounded shapes",
          "[approx]") {
  const proto::PlanInputs in = Gpt(FatTree(8, 2));
  const auto setup = testing::MakeSetup(in, network::NetworkMode::kMaxMinFair);
  const int64_t flows = executor::EstimateExactFlows(*setup).total();
  // 8 microbatches x 2 directions x 128 boundary flows; per stage, 8 TP ranks' DP groups of 16 ranks.
  CHECK(executor::EstimateExactFlows(*setup).boundary_flows == 8 * 2 * 128);
  CHECK(flows > 8 * 2 * 128);
  const driver::FidelityChoice small = driver::ChooseFidelity(*setup, {});
  CHECK_FALSE(small.approximated());
  // The same setup judged against a lower limit: both approximations, with the class's bound.
  const driver::FidelityChoice large = driver::ChooseFidelity(*setup, {}, flows - 1);
  CHECK(large.approximated());
  CHECK(large.chosen_by_default);
  CHECK(large.bound_pct() == driver::MeasuredBoundOf(ShapeClass::kOneIsland).both_pct);
  CHECK(large.bound_pct() < driver::kDefaultErrorLimitPct);
  const v1::ApproximationChoice r = driver::ApproximationChoiceOf(large);
  CHECK(r.approximations_size() == 2);
  CHECK_THAT(r.note(), Catch::Contains("--exact"));
  for (const char* text : {R"pb(faults { link_class: "INFINIBAND" kind: SLOW factor: 2 })pb",
                           R"pb(faults { gpu: 3 kind: FAIL at_ms: 5 })pb"}) {
    const driver::FidelityChoice faulty = driver::ChooseFidelity(*setup, FaultsOf(text), flows - 1);
    INFO(text);
    CHECK_FALSE(faulty.approximated());
    CHECK_THAT(driver::ApproximationChoiceOf(faulty).note(), Catch::Contains("exact simulation"));
  }
}

TEST_CASE("approximation choice: the classes the default approximates are measured under the limit", "[approx]") {
  for (ShapeClass shape : {ShapeClass::kOneIsland, ShapeClass::kIslands, ShapeClass::kComputeFaults,
                           ShapeClass::kLinkFaults, ShapeClass::kFailures}) {
    const MeasuredBound b = driver::MeasuredBoundOf(shape);
    const double worst = std::max({b.rings_pct, b.boundary_pct, b.both_pct});
    INFO(driver::ShapeClassName(shape));
    const bool measured = b.rings_pct >= 0 && b.boundary_pct >= 0 && b.both_pct >= 0;
    // Link faults and failures must not be approximated by default; the others are, being under the limit.
    const bool defaulted = shape != ShapeClass::kLinkFaults && shape != ShapeClass::kFailures;
    CHECK((measured && worst < driver::kDefaultErrorLimitPct) == defaulted);
  }
}

TEST_CASE("approximation choice: small runs are untouched, the bundled 16K run is approximated and says so",
          "[approx]") {
  driver::SimulateOptions chosen;
  chosen.choose_fidelity = true;
  const proto::PlanInputs small = Gpt(FatTree(8, 2));
  const driver::Simulation a = testing::MakeSimulation(small, chosen);
  const driver::Simulation b = testing::MakeSimulation(small);
  CHECK_FALSE(a.report.has_approximation_choice());
  CHECK(a.report.SerializeAsString() == b.report.SerializeAsString());

  const driver::Simulation large = testing::MakeSimulation(Example("llama3-405b", "16k-h100"), chosen);
  const v1::ApproximationChoice& c = large.report.approximation_choice();
  CHECK(c.chosen_by_default());
  CHECK(c.approximations_size() == 2);
  CHECK(c.estimated_exact_flows() == 20'791'296);  // what the exact run starts (docs/performance.md)
  CHECK(c.bound_percent() == driver::MeasuredBoundOf(ShapeClass::kOneIsland).both_pct);
  CHECK(large.result.flows < 200'000);
  CHECK(large.report.approximations_size() == 2);
}

}  // namespace
}  // namespace hetsim
