// `validate` on MoE experts on a mixed stage (session 38): the planner prices each replica group's expert
// layout (its all-to-alls on its own GPUs and links, its experts' states sharded over every group's copies)
// and the experts' rings over the groups after the dense ones, as NCCL flows sharing the NICs (session 40,
// planner/mixed_replicas.h: MixedExpertRingFlow), against the simulation of the same plan.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <utility>

#include "proto/inputs.h"
#include "service/evaluation/own_prediction.h"
#include "tests/base/time_io.h"

namespace hetsim::evaluation {
namespace {

// `validate` on tests/planner_data/`plan` over the A100 + RTX 4090 cluster (or `cluster`): one stage predicted.
OwnValidation ValidateOnMixedCluster(const std::string& plan, const std::string& cluster = HETSIM_SOURCE_DIR
                                                              "/tests/planner_data/cluster-a100-rtx4090.pbtxt") {
  absl::StatusOr<proto::PlanInputs> inputs =
      proto::LoadPlanInputs(HETSIM_SOURCE_DIR "/tests/planner_data/" + plan, cluster);
  INFO(inputs.status().message());
  REQUIRE(inputs.ok());
  absl::StatusOr<OwnValidation> v = ValidateOwnPrediction(*inputs, 0, planner::PlannerKind::kHapt);
  INFO(v.status().message());
  REQUIRE(v.ok());
  REQUIRE(v->prediction.stages.size() == 1);
  return *std::move(v);
}

TEST_CASE("validate: an MoE stage of replica groups on two GPU types is judged as priced",
          "[evaluation][replicas][experts]") {
  const OwnValidation v = ValidateOnMixedCluster("plan-moe-mixed-stage.pbtxt");
  INFO("iteration " << TimeToMilliseconds(v.prediction.iteration) << " / " << TimeToMilliseconds(v.simulated.iteration)
                    << " ms, t " << TimeToMilliseconds(v.prediction.stages[0].t) << " / "
                    << TimeToMilliseconds(v.simulated.t[0]) << " ms, peak " << v.prediction.stages[0].peak_bytes
                    << " / " << v.simulated.peak[0]);
  // Measured: t -0.5%, the iteration -0.3% (508.878 against 510.223 ms), the memory exact (session 40; the
  // experts' rings as NCCL flows, docs/heterogeneous.md, "MoE experts on a mixed stage").
  CHECK(std::abs(RelativeError(v.prediction.stages[0].t, v.simulated.t[0])) < 0.01);
  CHECK(std::abs(RelativeError(v.prediction.iteration, v.simulated.iteration)) < 0.05);
  CHECK(v.prediction.stages[0].peak_bytes == v.simulated.peak[0]);
}

TEST_CASE("validate: an MoE stage whose replica groups lay the experts out each their own way is judged as priced",
          "[evaluation][replicas][experts]") {
  // The RTX 4090 group at EP 4 beside the A100 group's EP 8 (session 39): the planner prices each group at its
  // own EP and the experts' rings per shard of the finest split, each RTX 4090 carrying 2 of them.
  const OwnValidation v = ValidateOnMixedCluster("plan-moe-mixed-own-ep.pbtxt");
  INFO("iteration " << TimeToMilliseconds(v.prediction.iteration) << " / " << TimeToMilliseconds(v.simulated.iteration)
                    << " ms");
  // Measured: t -0.5%, the iteration -0.2% (544.452 against 545.800 ms; -0.6% with the experts' rings at the
  // NIC share), the memory exact (11.28 GiB, the RTX 4090 group's, which holds twice the A100's experts).
  CHECK(std::abs(RelativeError(v.prediction.stages[0].t, v.simulated.t[0])) < 0.01);
  CHECK(std::abs(RelativeError(v.prediction.iteration, v.simulated.iteration)) < 0.01);
  CHECK(v.prediction.stages[0].peak_bytes == v.simulated.peak[0]);
}

TEST_CASE("validate: an MoE stage's expert rings through each node's one NIC are judged as priced",
          "[evaluation][replicas][experts]") {
  // Session 40, on the mixed cloud's one 100 Gb/s NIC a node (TCP sockets): the 8 expert rings of each
  // plan all leave a node through its NIC. Priced at each GPU's NIC share they were +40.1% (an L40S GPU at
  // EP 4 in two rings took its eighth of the NIC twice over) and -16.4% (the NIC's line rate, where the
  // simulator's carries 0.80 of it); as NCCL flows sharing the NIC each is within 0.5%.
  const std::string cloud = HETSIM_SOURCE_DIR "/examples/cluster-mixed-cloud.pbtxt";
  for (const char* plan : {"plan-moe-mixed-cloud.pbtxt", "plan-moe-mixed-cloud-tp2.pbtxt"}) {
    const OwnValidation v = ValidateOnMixedCluster(plan, cloud);
    INFO(plan << ": iteration " << TimeToMilliseconds(v.prediction.iteration) << " / "
              << TimeToMilliseconds(v.simulated.iteration) << " ms");
    // Measured: -0.1% (1867.826 against 1869.874 ms) and -0.5% (1568.636 against 1576.305 ms; its t is
    // -2.9%, the experts' all-to-alls over two nodes).
    CHECK(std::abs(RelativeError(v.prediction.iteration, v.simulated.iteration)) < 0.01);
    CHECK(v.prediction.stages[0].peak_bytes == v.simulated.peak[0]);
  }
}

TEST_CASE("validate: an MoE stage whose all-to-alls cross the nodes' one NIC is judged as priced",
          "[evaluation][replicas][experts]") {
  // Session 41: the A100 group at TP 2 with EP 8 x ETP 2 over both A100 nodes of the mixed cloud, beside an L40S
  // group of TP 1 at its own EP 4. Each node holds 4 GPUs of both EP groups, which dispatch at once through its
  // one NIC (NCCL's grouped sends and receives): the simulator timed each group alone (half the NIC's bytes)
  // and the planner took the NIC's line rate (not the 0.80 its link carries over TCP sockets). Measured before:
  // t +34.9% (207.451 against 153.776 ms), the iteration +10.7% (2223.268 against 2008.507 ms); now t -1.1%
  // (245.032 against 247.728 ms), the iteration -0.4% (2373.592 against 2384.317 ms), the memory exact.
  const OwnValidation v = ValidateOnMixedCluster("plan-moe-mixed-cloud-ep8-etp2.pbtxt",
                                                 HETSIM_SOURCE_DIR "/examples/cluster-mixed-cloud.pbtxt");
  INFO("t " << TimeToMilliseconds(v.prediction.stages[0].t) << " / " << TimeToMilliseconds(v.simulated.t[0])
            << " ms, iteration " << TimeToMilliseconds(v.prediction.iteration) << " / "
            << TimeToMilliseconds(v.simulated.iteration) << " ms");
  CHECK(std::abs(RelativeError(v.prediction.stages[0].t, v.simulated.t[0])) < 0.02);
  CHECK(std::abs(RelativeError(v.prediction.iteration, v.simulated.iteration)) < 0.01);
  CHECK(v.prediction.stages[0].peak_bytes == v.simulated.peak[0]);
}

TEST_CASE("validate: a plan of pipelines with an MoE stage of replica groups is judged as priced",
          "[evaluation][pipelines][replicas][experts]") {
  // An A100 pipeline of DP 2 beside a pipeline whose one stage is an A100 pair and a V100 pair, EP 2 on
  // every stage: the range's experts reduce over expert rank e of the three copies.
  absl::StatusOr<proto::PlanInputs> inputs =
      proto::LoadPlanInputs(HETSIM_SOURCE_DIR "/tests/planner_data/plan-pipelines-rg-moe.pbtxt",
                            HETSIM_SOURCE_DIR "/examples/cluster-hapt-case.pbtxt");
  INFO(inputs.status().message());
  REQUIRE(inputs.ok());
  absl::StatusOr<OwnValidation> v = ValidateOwnPrediction(*inputs, 0, planner::PlannerKind::kHapt);
  INFO(v.status().message());
  REQUIRE(v.ok());
  INFO("iteration " << TimeToMilliseconds(v->prediction.iteration) << " / "
                    << TimeToMilliseconds(v->simulated.iteration) << " ms");
  // Measured +0.0% (4616.194 against 4615.685 ms), every stage's memory exact.
  CHECK(std::abs(RelativeError(v->prediction.iteration, v->simulated.iteration)) < 0.005);
  for (size_t k = 0; k < v->prediction.stages.size(); ++k)
    CHECK(v->prediction.stages[k].peak_bytes == v->simulated.peak[k]);
}

}  // namespace
}  // namespace hetsim::evaluation
