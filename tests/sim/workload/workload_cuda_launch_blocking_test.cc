// Plan.cuda_launch_blocking: with CUDA_LAUNCH_BLOCKING=1 no launch returns before its kernel ends, so the host
// issues a block's operators in series with the GPU's work and a block's pass lasts its GPU time plus its ops x
// the GPU type's host_op_us (docs/cost-model.md, "Launch-blocking runs"); host_bound_blocks' max becomes a sum.
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

// A V100 (its preset) whose host takes `host_op_us` per operator.
GpuCompute V100WithHostOp(double host_op_us) {
  hetsim::v1::GpuType g;
  g.set_preset("V100-16GB");
  g.mutable_efficiency()->set_host_op_us(host_op_us);
  REQUIRE(hetsim::proto::ApplyGpuPreset(&g, "c", "gpu").ok());
  auto c = hetsim::testing::GpuComputeOf(g, hetsim::v1::FP16, "c", false);
  REQUIRE(c.ok());
  return *std::move(c);
}

// The MEGATRON_DEEPSPEED profile's count of a block's operators (Megatron-LM v1.1.5's block, fused kernels).
constexpr double kForwardOps = 38, kBackwardOps = 46;

enum class Host { kAsync, kHostBound, kLaunchBlocking };

StageCost CostOf(const ModelCost& model, const GpuCompute& gpu, int first, int count, Host host,
                 hetsim::spec::Recompute recompute = hetsim::spec::Recompute::kNone) {
  StageConfig c = hetsim::testing::AmpStageConfig(first, count, 1);
  c.recompute = recompute;
  if (host != Host::kAsync) {
    c.host_bound_blocks = host == Host::kHostBound;
    c.cuda_launch_blocking = host == Host::kLaunchBlocking;
    c.block_host_ops_forward = kForwardOps;
    c.block_host_ops_backward = kBackwardOps;
  }
  auto cost = ComputeStageCost(model, c, gpu, "plan");
  REQUIRE(cost.ok());
  return *std::move(cost);
}

}  // namespace

TEST_CASE("cuda_launch_blocking: a block takes its GPU time plus its ops x the host's time per op",
          "[workload][launch_blocking]") {
  const auto model = hetsim::testing::ModelCostOf(hetsim::testing::AmpGpt2(2), "model.pbtxt");
  REQUIRE(model.ok());
  // 10 us an operator (the presets' figure): far below a GPT-2 345M block's GPU time, so host_bound_blocks'
  // floor changes nothing and launch blocking adds 38 x 10 us to each block's forward, 46 x 10 us to its backward.
  const GpuCompute gpu = V100WithHostOp(10);
  const StageCost async = CostOf(*model, gpu, 1, 2, Host::kAsync);
  const StageCost floor = CostOf(*model, gpu, 1, 2, Host::kHostBound);
  const StageCost blocking = CostOf(*model, gpu, 1, 2, Host::kLaunchBlocking);
  REQUIRE(async.layer_forward_s.size() == 2);
  CHECK(floor.forward_time == async.forward_time);
  for (size_t i = 0; i < 2; ++i) {
    CHECK(async.layer_forward_s[i] > kForwardOps * 10e-6);
    CHECK(blocking.layer_forward_s[i] == Approx(async.layer_forward_s[i] + kForwardOps * 10e-6).epsilon(1e-12));
    CHECK(blocking.layer_backward_s[i] == Approx(async.layer_backward_s[i] + kBackwardOps * 10e-6).epsilon(1e-12));
  }
  CHECK(blocking.forward_time - async.forward_time == hetsim::SecondsToTime(2 * kForwardOps * 10e-6));
  // The GPU's work itself is unchanged.
  CHECK(blocking.forward_flop_per_gpu == async.forward_flop_per_gpu);
  CHECK(blocking.forward_collectives.size() == async.forward_collectives.size());
}

TEST_CASE("cuda_launch_blocking: the embedding and the head are not counted, a recomputed block issues again",
          "[workload][launch_blocking]") {
  const auto model = hetsim::testing::ModelCostOf(hetsim::testing::AmpGpt2(2), "model.pbtxt");
  REQUIRE(model.ok());
  const GpuCompute gpu = V100WithHostOp(10);
  for (const int first : {0, 3}) {
    CHECK(CostOf(*model, gpu, first, 1, Host::kLaunchBlocking).forward_time ==
          CostOf(*model, gpu, first, 1, Host::kAsync).forward_time);
  }
  // Full recomputation: the backward issues the forward's 38 ops again beside its own 46.
  const auto full = hetsim::spec::Recompute::kFull;
  const StageCost blocking = CostOf(*model, gpu, 1, 1, Host::kLaunchBlocking, full);
  const StageCost async = CostOf(*model, gpu, 1, 1, Host::kAsync, full);
  CHECK(blocking.layer_backward_s[0] ==
        Approx(async.layer_backward_s[0] + (kForwardOps + kBackwardOps) * 10e-6).epsilon(1e-12));
}
