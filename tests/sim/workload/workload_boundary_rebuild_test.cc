// Plan.boundary_host_rebuild: the Sailor fork's reconstruct_tensor builds each tensor a stage receives on the
// host while the GPU idles (docs/cost-model.md, "The Sailor fork's boundary rebuild"): per rebuilt tensor of
// B bytes (the replica's whole tensor in FP32), 2 B at the host's fill rate, B at its pageable copy rate and
// 3 sync round trips; per sent tensor 1 round trip. A stage after the first rebuilds in its forward, one
// before the last in its backward.
#include <catch2/catch.hpp>

#include <utility>

#include "base/time.h"
#include "proto/gpu_presets.h"
#include "sim/workload/gpu_compute.h"
#include "sim/workload/model_cost.h"
#include "sim/workload/stage_cost.h"
#include "tests/base/spec/spec_test_util.h"
#include "tests/proto/model_shapes.h"

namespace {

using namespace hetsim::workload;

// A V100 whose host fills at 50 GB/s, copies pageable memory to the GPU at 10 GB/s and takes 20 us a round
// trip (or, with `rates` false, prices neither rate).
GpuCompute RebuildV100(bool rates) {
  return hetsim::testing::PresetComputeWith("V100-16GB", hetsim::v1::FP16, [&](hetsim::v1::ComputeEfficiency& e) {
    e.set_sync_round_trip_us(20);
    if (rates) {
      e.set_host_fill_gbytes_per_s(50);
      e.set_pageable_h2d_gbytes_per_s(10);
    }
  });
}

StageCost RebuildCostOf(const ModelCost& model, int first, int count, bool rebuild, bool rates = true) {
  StageConfig c = hetsim::testing::AmpStageConfig(first, count, 1);  // TP 2, micro-batch 1
  c.boundary_host_rebuild = rebuild;
  auto cost = ComputeStageCost(model, c, RebuildV100(rates), "plan");
  REQUIRE(cost.ok());
  return *std::move(cost);
}

// The GPT-2 shape's boundary tensor: one sample of 1024 tokens x 1024 hidden, rebuilt as FP32.
constexpr double kRebuiltBytes = 4.0 * 1024 * 1024;
constexpr double kRebuildRoundTripS = 20e-6;
// 3 round trips, 2 fills at 50 GB/s, 1 copy at 10 GB/s: 60 + 167.77 + 419.43 us.
constexpr double kRebuildS = 3 * kRebuildRoundTripS + 2 * kRebuiltBytes / 50e9 + kRebuiltBytes / 10e9;

}  // namespace

TEST_CASE("boundary_host_rebuild: a middle stage rebuilds in both passes and sends in both",
          "[workload][boundary_rebuild]") {
  // Layers: 0 embedding, 1 and 2 blocks, 3 head. Stage [1, 2) receives and sends.
  const auto model = hetsim::testing::ModelCostOf(hetsim::testing::AmpGpt2(2), "model.pbtxt");
  REQUIRE(model.ok());
  REQUIRE(model->layer(0).output_bytes_per_sample == 2.0 * 1024 * 1024);  // FP16: 2 bytes an element
  const StageCost with = RebuildCostOf(*model, 1, 1, true);
  const StageCost without = RebuildCostOf(*model, 1, 1, false);
  CHECK(with.layer_forward_s[0] == Approx(without.layer_forward_s[0] + kRebuildS + kRebuildRoundTripS).epsilon(1e-12));
  CHECK(with.layer_backward_s[0] ==
        Approx(without.layer_backward_s[0] + kRebuildS + kRebuildRoundTripS).epsilon(1e-12));
  CHECK(hetsim::TimeToSeconds(with.forward_time - without.forward_time) ==
        Approx(kRebuildS + kRebuildRoundTripS).epsilon(1e-9));
  CHECK(hetsim::TimeToSeconds(with.backward_time - without.backward_time) ==
        Approx(kRebuildS + kRebuildRoundTripS).epsilon(1e-9));
  CHECK(with.forward_flop_per_gpu == without.forward_flop_per_gpu);
}

TEST_CASE("boundary_host_rebuild: the first stage rebuilds only its gradient, the last only its input",
          "[workload][boundary_rebuild]") {
  const auto model = hetsim::testing::ModelCostOf(hetsim::testing::AmpGpt2(2), "model.pbtxt");
  REQUIRE(model.ok());
  // First stage [0, 2): sends its output in the forward (a round trip after the block), rebuilds the
  // gradient of it before its backward (at the block, the backward's first layer).
  const StageCost first = RebuildCostOf(*model, 0, 2, true);
  const StageCost first_off = RebuildCostOf(*model, 0, 2, false);
  CHECK(first.layer_forward_s[0] == first_off.layer_forward_s[0]);
  CHECK(first.layer_forward_s[1] == Approx(first_off.layer_forward_s[1] + kRebuildRoundTripS).epsilon(1e-12));
  CHECK(first.layer_backward_s[0] == first_off.layer_backward_s[0]);
  CHECK(first.layer_backward_s[1] == Approx(first_off.layer_backward_s[1] + kRebuildS).epsilon(1e-12));
  // Last stage [2, 4): rebuilds its input before the block, sends the gradient of it after its backward.
  const StageCost last = RebuildCostOf(*model, 2, 2, true);
  const StageCost last_off = RebuildCostOf(*model, 2, 2, false);
  CHECK(last.layer_forward_s[0] == Approx(last_off.layer_forward_s[0] + kRebuildS).epsilon(1e-12));
  CHECK(last.layer_forward_s[1] == last_off.layer_forward_s[1]);
  CHECK(last.layer_backward_s[0] == Approx(last_off.layer_backward_s[0] + kRebuildRoundTripS).epsilon(1e-12));
  CHECK(last.layer_backward_s[1] == last_off.layer_backward_s[1]);
  // One stage holds the whole model: nothing crosses a boundary.
  const StageCost whole = RebuildCostOf(*model, 0, 4, true);
  const StageCost whole_off = RebuildCostOf(*model, 0, 4, false);
  CHECK(whole.forward_time == whole_off.forward_time);
  CHECK(whole.backward_time == whole_off.backward_time);
}

TEST_CASE("boundary_host_rebuild: a host rate left at 0 prices only the round trips", "[workload][boundary_rebuild]") {
  const auto model = hetsim::testing::ModelCostOf(hetsim::testing::AmpGpt2(2), "model.pbtxt");
  REQUIRE(model.ok());
  const StageCost with = RebuildCostOf(*model, 1, 1, true, false);
  const StageCost without = RebuildCostOf(*model, 1, 1, false, false);
  CHECK(with.layer_forward_s[0] == Approx(without.layer_forward_s[0] + 4 * kRebuildRoundTripS).epsilon(1e-12));
}
