// Plan.synchronized_tp_collectives: the AMP artifact's Megatron-LM v1.1.5 times every TP collective of
// mpu/mappings.py between two torch.cuda.synchronize() calls, so each one leaves the GPU idle for
// 2 x (host_op + kernel_launch) of its GPU type, added to the layer that issues it (docs/cost-model.md,
// "Synchronized TP collectives"). Closed forms: a block at TP 2 with two forward passes pays 4 forward
// and 2 backward calls; the embedding 1 forward call; the head 1 backward call and not the
// cross-entropy's 3 direct reductions; nothing at TP 1; the collectives themselves are unchanged.
#include <catch2/catch.hpp>

#include <utility>

#include "proto/gpu_presets.h"
#include "sim/workload/gpu_compute.h"
#include "sim/workload/model_cost.h"
#include "sim/workload/stage_cost.h"
#include "tests/base/spec/spec_test_util.h"
#include "tests/proto/model_shapes.h"

namespace {

using namespace hetsim::workload;

// A T4 (its preset) whose host takes `host_op_us` per operator, launches in `launch_us` and, when
// `round_trip_us` is not 0, comes back from a device synchronization in it.
GpuCompute T4WithHost(double host_op_us, double launch_us, double round_trip_us = 0) {
  hetsim::v1::GpuType g;
  g.set_preset("T4");
  g.mutable_efficiency()->set_host_op_us(host_op_us);
  g.mutable_efficiency()->set_kernel_launch_us(launch_us);
  g.mutable_efficiency()->set_sync_round_trip_us(round_trip_us);
  REQUIRE(hetsim::proto::ApplyGpuPreset(&g, "c", "gpu").ok());
  auto c = hetsim::testing::GpuComputeOf(g, hetsim::v1::FP16, "c", false);
  REQUIRE(c.ok());
  return *std::move(c);
}

StageCost SyncCostOf(const ModelCost& model, const GpuCompute& gpu, int first, int count, int tp, bool synced) {
  StageConfig c = hetsim::testing::AmpStageConfig(first, count, 2);
  c.tensor_parallel = tp;
  c.synchronized_tp_collectives = synced;
  return hetsim::testing::StageCostOk(model, c, gpu);
}

}  // namespace

TEST_CASE("synchronized_tp_collectives: each mappings.py collective costs two host round trips of idle GPU",
          "[workload][amp]") {
  const auto model = hetsim::testing::ModelCostOf(hetsim::testing::AmpGpt2(2), "model.pbtxt");
  REQUIRE(model.ok());
  const GpuCompute gpu = T4WithHost(10, 2);
  const double round_trips_s = 2 * (10 + 2) * 1e-6;
  // Layer 0 the embedding, 1-2 the blocks, 3 the tied head.
  struct Expect {
    int layer, forward_calls, backward_calls;
  };
  // A block: the attention projection's and FC2's all-reduces in each of its two forward passes, the
  // QKV's and FC1's input-gradient all-reduces in its backward. The embedding's lookup all-reduce;
  // the head's input-gradient all-reduce (not the cross-entropy's three torch.distributed calls).
  for (const Expect e : {Expect{0, 1, 0}, Expect{1, 4, 2}, Expect{3, 0, 1}}) {
    const StageCost plain = SyncCostOf(*model, gpu, e.layer, 1, 2, false);
    const StageCost synced = SyncCostOf(*model, gpu, e.layer, 1, 2, true);
    INFO("layer " << e.layer);
    CHECK(synced.layer_forward_s[0] - plain.layer_forward_s[0] == Approx(e.forward_calls * round_trips_s));
    CHECK(synced.layer_backward_s[0] - plain.layer_backward_s[0] == Approx(e.backward_calls * round_trips_s));
    CHECK(TimeToSeconds(synced.forward_time - plain.forward_time) ==
          Approx(e.forward_calls * round_trips_s).margin(1e-12));
    CHECK(TimeToSeconds(synced.backward_time - plain.backward_time) ==
          Approx(e.backward_calls * round_trips_s).margin(1e-12));
    // The transfers are the network's: the same collectives, bytes and counts.
    REQUIRE(synced.forward_collectives.size() == plain.forward_collectives.size());
    for (size_t i = 0; i < plain.forward_collectives.size(); ++i) {
      CHECK(synced.forward_collectives[i].bytes == plain.forward_collectives[i].bytes);
      CHECK(synced.forward_collectives[i].count == plain.forward_collectives[i].count);
    }
  }
  // The idle time follows the host: twice the host's time per op, twice the idle.
  const GpuCompute slower = T4WithHost(20, 2);
  const double slower_s = 2 * (20 + 2) * 1e-6;
  const StageCost plain = SyncCostOf(*model, slower, 1, 1, 2, false);
  const StageCost synced = SyncCostOf(*model, slower, 1, 1, 2, true);
  CHECK(synced.layer_forward_s[0] - plain.layer_forward_s[0] == Approx(4 * slower_s));
  // A measured round trip (ComputeEfficiency.sync_round_trip_us) stands for host_op + launch.
  const GpuCompute measured = T4WithHost(10, 2, 80);
  const StageCost plain_measured = SyncCostOf(*model, measured, 1, 1, 2, false);
  const StageCost synced_measured = SyncCostOf(*model, measured, 1, 1, 2, true);
  CHECK(synced_measured.layer_forward_s[0] - plain_measured.layer_forward_s[0] == Approx(4 * 2 * 80e-6));
  CHECK(synced_measured.layer_backward_s[0] - plain_measured.layer_backward_s[0] == Approx(2 * 2 * 80e-6));
  // Without the behaviour the round trip changes nothing.
  CHECK(plain_measured.forward_time == SyncCostOf(*model, gpu, 1, 1, 2, false).forward_time);
}

TEST_CASE("synchronized_tp_collectives: without tensor parallelism there is nothing to synchronize",
          "[workload][amp]") {
  const auto model = hetsim::testing::ModelCostOf(hetsim::testing::AmpGpt2(2), "model.pbtxt");
  REQUIRE(model.ok());
  const GpuCompute gpu = T4WithHost(10, 2);
  const StageCost plain = SyncCostOf(*model, gpu, 0, 4, 1, false);
  const StageCost synced = SyncCostOf(*model, gpu, 0, 4, 1, true);
  CHECK(synced.forward_time == plain.forward_time);
  CHECK(synced.backward_time == plain.backward_time);
}
