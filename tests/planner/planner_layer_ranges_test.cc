// The planner's price of the layer ranges of pipelines cut differently (PriceLayerRanges, issue 39)
// against closed forms: each range's ring carries the parameters the range holds (2 bytes each in
// FP16) and runs by alpha-beta, 2 (n - 1) steps of B / n over the slowest hop plus a latency each; the
// ranges that run at once share the links of the GPUs they have in common. Holders on one node ring
// over its links (NVSwitch), holders on different nodes through their NICs, as the simulator routes
// them (tests/sim/executor/executor_pipelines_test.cc checks the simulator's side).
#include <catch2/catch.hpp>

#include <memory>
#include <vector>

#include "base/units.h"
#include "planner/pipelines.h"
#include "proto/gpu_presets.h"
#include "proto/resolve.h"
#include "sim/workload/model_cost.h"
#include "tests/base/time_io.h"
#include "tests/planner/planner_test_util.h"
#include "tests/sim/executor/executor_test_util.h"

namespace hetsim::planner {
namespace {

constexpr double kV = 32000, kH = 1024;
constexpr double kBlockParams = 12 * kH * kH + 13 * kH;  // a GPT block: QKV, projection, MLP, biases, norms

// testing::TiedModel: a tied 2-block FP16 transformer (embedding, 2 blocks, head), V = 32000, h = 1024.
workload::ModelCost TiedModelCost() {
  return workload::ModelCost::Create(proto::ResolveModel(testing::TiedModel(), "model"));
}

// The fast island of TwoIslandCluster (`nodes` nodes of `gpus` A100s, one 200 Gb/s NIC a node) as the
// planner models it, its GPU preset applied.
std::unique_ptr<ClusterModel> FastIsland(int nodes, int gpus, int64_t latency_ns) {
  v1::Cluster c = testing::TwoIslandCluster(nodes, gpus, 10, latency_ns);
  REQUIRE(proto::ApplyGpuPresets(&c, "cluster.pbtxt").ok());
  auto cluster = testing::ClusterModelOf(c, spec::DType::kFp16);
  INFO(cluster.status().message());
  REQUIRE(cluster.ok());
  return *std::move(cluster);
}

// One GPU's stage of model layers [first, first + count) on the fast island (index 0).
SearchedStage OneGpuStage(int first, int count) {
  SearchedStage s;
  s.first_layer = first;
  s.num_layers = count;
  s.shape = {1, 1};
  s.option.config.tensor_parallel = 1;
  s.option.config.data_parallel = 1;
  return s;
}

// Three pipelines, every stage on one GPU and ready at `ready`: "p0" and "p2" of one stage (all four
// layers), "p1" cut in two (layers 0-1, 2-3). Range 0-1 is held by p0, p1's stage 0 and p2; range 2-3
// by p0, p1's stage 1 and p2. `nodes[p][i]`: each stage's node.
struct ThreePipelines {
  std::vector<std::vector<SearchedStage>> stages{
      {OneGpuStage(0, 4)}, {OneGpuStage(0, 2), OneGpuStage(2, 2)}, {OneGpuStage(0, 4)}};
  std::vector<Prediction> predictions = std::vector<Prediction>(3);

  std::vector<PricedPipeline> Priced(const ClusterModel& cluster, Time ready,
                                     const std::vector<std::vector<int>>& nodes) {
    std::vector<PricedPipeline> out;
    for (size_t p = 0; p < 3; ++p) {
      predictions[p].stages.assign(stages[p].size(), StagePrediction{});
      for (StagePrediction& sp : predictions[p].stages) sp.last_backward_end = ready;
      predictions[p].pipeline = ready;
      out.push_back({&cluster, &stages[p], &predictions[p], nodes[p]});
    }
    return out;
  }
};

// When each stage of `three` waits for its ranges, as closed forms: ranges a (layers 0-1, on p0, p1's
// stage 0, p2) and b (2-3, on p0, p1's stage 1, p2) start together and share the links of p0's and p2's
// GPUs at half rate each until a ends (a < b), then b goes on alone: a ends after 2 x (4/3) a / bw, b
// after (4/3) (a + b) / bw, each then paying its ring's latencies (`latency`). A stage waits for the
// ranges it holds (ideal cluster: no optimizer step or host overhead).
void CheckWaits(const LayerRangesPrice& price, double a, double b, double bw, double latency) {
  const double a_end = 2 * 4.0 / 3 * a / bw + latency;
  const double b_end = 4.0 / 3 * (a + b) / bw + latency;
  const std::vector<std::vector<double>> expected = {{b_end}, {a_end, b_end}, {b_end}};
  for (size_t p = 0; p < 3; ++p) {
    REQUIRE(price.grad_sync[p].size() == expected[p].size());
    for (size_t i = 0; i < expected[p].size(); ++i) {
      INFO("pipeline " << p << " stage " << i);
      CHECK(TimeToSeconds(price.grad_sync[p][i]) == Approx(expected[p][i]).epsilon(1e-6));
    }
  }
}

TEST_CASE("layer ranges: pipelines cut differently, each range's ring over the parameters it holds",
          "[planner][pipelines][ranges]") {
  const workload::ModelCost model = TiedModelCost();
  // Range 0-1: the embedding (V h) and a block; range 2-3: a block and the head (its own V h copy
  // without the tied sync, and the final layer norm's 2 h). FP16 gradients: 2 bytes a parameter.
  const double a = 2 * (kV * kH + kBlockParams);
  const double b = 2 * (kV * kH + kBlockParams + 2 * kH);
  const Time ready = SecondsToTime(1e-3);
  ThreePipelines three;
  SECTION("on one node: the rings stay on its NVSwitch, sharing the links of GPUs 0 and 3") {
    const std::unique_ptr<ClusterModel> cluster = FastIsland(1, 4, 0);
    const double nvswitch = 2400e9 / 8;
    const LayerRangesPrice price =
        PriceLayerRanges(model, *cluster, {}, three.Priced(*cluster, ready, {{0}, {0, 0}, {0}}));
    REQUIRE(price.ranges == 2);
    // Alone, a ring of 3: 2 (3 - 1) / 3 x B / bandwidth; ideal cluster, no latency.
    CHECK(TimeToSeconds(price.slowest_ring) == Approx(4.0 / 3 * b / nvswitch).epsilon(1e-6));
    CheckWaits(price, a, b, nvswitch, 0);
    CHECK(TimeToSeconds(price.iteration) == Approx(TimeToSeconds(ready) + 4.0 / 3 * (a + b) / nvswitch).epsilon(1e-6));
  }
  SECTION("a GPU a node: each hop through its node's NIC, 2 (n - 1) latencies") {
    // Four fast nodes of one GPU each, one 200 Gb/s NIC a node; 1 us on every NIC wire and switch.
    const std::unique_ptr<ClusterModel> cluster = FastIsland(4, 1, 1000);
    const double nic = 200e9 / 8;
    const double alpha = TimeToSeconds(cluster->island(0).inter_node.latency);  // GPU to GPU on two nodes
    REQUIRE(alpha > 0);
    const LayerRangesPrice price =
        PriceLayerRanges(model, *cluster, {}, three.Priced(*cluster, ready, {{0}, {1, 2}, {3}}));
    CHECK(TimeToSeconds(price.slowest_ring) == Approx(4.0 / 3 * b / nic + 4 * alpha).epsilon(1e-6));
    CheckWaits(price, a, b, nic, 4 * alpha);
  }
  SECTION("stages not placed are priced as if on nodes of their own") {
    const std::unique_ptr<ClusterModel> cluster = FastIsland(1, 4, 0);
    const LayerRangesPrice price = PriceLayerRanges(model, *cluster, {}, three.Priced(*cluster, ready, {{}, {}, {}}));
    CHECK(TimeToSeconds(price.slowest_ring) == Approx(4.0 / 3 * b / (200e9 / 8)).epsilon(1e-6));
  }
}

}  // namespace
}  // namespace hetsim::planner
