// Plan.host_bound_blocks: an eager framework's host issues a block's operators one by one, so a block's
// pass lasts at least its ops x the GPU type's host_op_us (docs/cost-model.md, "Host-bound blocks"):
// with a slow host the block takes exactly the host's time, with a fast one its GPU time; the
// embedding and the head are not blocks; extra forward passes and a full recomputation issue again.
// Plan.cuda_launch_blocking (docs/cost-model.md, "Launch-blocking runs"): no launch returns before its kernel
// ends, so the same ops' host time adds to the GPU's: a block takes its GPU time plus its ops x host_op_us.
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

// GPT-2 345M's shapes (the AMP runs'), 2 blocks with the embedding and the tied head.
hetsim::v1::Model HostBoundGpt2() { return hetsim::testing::AmpGpt2(2); }

// A V100 (its preset) whose host takes `host_op_us` per operator.
GpuCompute V100WithHost(double host_op_us) {
  hetsim::v1::GpuType g;
  g.set_preset("V100-16GB");
  g.mutable_efficiency()->set_host_op_us(host_op_us);
  REQUIRE(hetsim::proto::ApplyGpuPreset(&g, "c", "gpu").ok());
  auto c = hetsim::testing::GpuComputeOf(g, hetsim::v1::FP16, "c", false);
  REQUIRE(c.ok());
  return *std::move(c);
}

// Megatron-LM v1.1.5's block as the MEGATRON_DEEPSPEED profile counts it (fused kernels).
constexpr double kHostForwardOps = 38, kHostBackwardOps = 46;

enum class Host { kAsync, kHostBound, kLaunchBlocking };

StageCost HostCostOf(const ModelCost& model, const GpuCompute& gpu, int first, int count, Host host, int passes = 1,
                     hetsim::spec::Recompute recompute = hetsim::spec::Recompute::kNone) {
  StageConfig c = hetsim::testing::AmpStageConfig(first, count, passes);
  c.recompute = recompute;
  if (host != Host::kAsync) {
    c.host_bound_blocks = host == Host::kHostBound;
    c.cuda_launch_blocking = host == Host::kLaunchBlocking;
    c.block_host_ops_forward = kHostForwardOps;
    c.block_host_ops_backward = kHostBackwardOps;
  }
  auto cost = ComputeStageCost(model, c, gpu, "plan");
  REQUIRE(cost.ok());
  return *std::move(cost);
}

StageCost HostBoundCostOf(const ModelCost& model, const GpuCompute& gpu, int first, int count, bool host_bound,
                          int passes = 1, hetsim::spec::Recompute recompute = hetsim::spec::Recompute::kNone) {
  return HostCostOf(model, gpu, first, count, host_bound ? Host::kHostBound : Host::kAsync, passes, recompute);
}

}  // namespace

TEST_CASE("host_bound_blocks: a block takes its ops x the host's time per op when the host is slower",
          "[workload][amp]") {
  const auto model = hetsim::testing::ModelCostOf(HostBoundGpt2(), "model.pbtxt");
  REQUIRE(model.ok());
  const GpuCompute slow_host = V100WithHost(1000);  // 1 ms an operator: far slower than any kernel here
  const StageCost eager = HostBoundCostOf(*model, slow_host, 1, 2, true);
  const StageCost gpu_only = HostBoundCostOf(*model, slow_host, 1, 2, false);
  REQUIRE(eager.layer_forward_s.size() == 2);
  for (size_t i = 0; i < 2; ++i) {
    // The per-kernel floor alone already makes each kernel 1 ms; the block issues more ops than kernels.
    CHECK(gpu_only.layer_forward_s[i] < kHostForwardOps * 1e-3);
    CHECK(eager.layer_forward_s[i] == Approx(kHostForwardOps * 1e-3).epsilon(1e-12));
    CHECK(eager.layer_backward_s[i] == Approx(kHostBackwardOps * 1e-3).epsilon(1e-12));
  }
  CHECK(eager.forward_time - gpu_only.forward_time ==
        hetsim::SecondsToTime(2 * kHostForwardOps * 1e-3 - gpu_only.layer_forward_s[0] - gpu_only.layer_forward_s[1]));
  // The FLOPs, memory and collectives are the GPU's work: unchanged.
  CHECK(eager.forward_flop_per_gpu == gpu_only.forward_flop_per_gpu);
  CHECK(eager.memory.activation_bytes_per_microbatch == gpu_only.memory.activation_bytes_per_microbatch);
  CHECK(eager.forward_collectives.size() == gpu_only.forward_collectives.size());
}

TEST_CASE("host_bound_blocks: a host faster than the GPU changes nothing", "[workload][amp]") {
  const auto model = hetsim::testing::ModelCostOf(HostBoundGpt2(), "model.pbtxt");
  REQUIRE(model.ok());
  const GpuCompute fast_host = V100WithHost(1);  // 38 us of issue against a block's milliseconds on the GPU
  const StageCost eager = HostBoundCostOf(*model, fast_host, 1, 2, true);
  const StageCost gpu_only = HostBoundCostOf(*model, fast_host, 1, 2, false);
  CHECK(eager.forward_time == gpu_only.forward_time);
  CHECK(eager.backward_time == gpu_only.backward_time);
}

TEST_CASE("host_bound_blocks: the embedding and the head are not blocks, repeats and recomputation issue again",
          "[workload][amp]") {
  const auto model = hetsim::testing::ModelCostOf(HostBoundGpt2(), "model.pbtxt");
  REQUIRE(model.ok());
  const GpuCompute slow_host = V100WithHost(1000);
  for (const int first : {0, 3}) {
    CHECK(HostBoundCostOf(*model, slow_host, first, 1, true).forward_time ==
          HostBoundCostOf(*model, slow_host, first, 1, false).forward_time);
  }
  // Two forward passes of each block (Plan.block_forward_passes) issue the forward's ops twice.
  const StageCost twice = HostBoundCostOf(*model, slow_host, 1, 1, true, 2);
  CHECK(twice.layer_forward_s[0] == Approx(2 * kHostForwardOps * 1e-3).epsilon(1e-12));
  // A fully recomputed block issues its forward's ops again in the backward.
  const StageCost full = HostBoundCostOf(*model, slow_host, 1, 1, true, 1, hetsim::spec::Recompute::kFull);
  CHECK(full.layer_backward_s[0] == Approx((kHostBackwardOps + kHostForwardOps) * 1e-3).epsilon(1e-12));
}

TEST_CASE("cuda_launch_blocking: a block takes its GPU time plus its ops x the host's time per op",
          "[workload][launch_blocking]") {
  const auto model = hetsim::testing::ModelCostOf(HostBoundGpt2(), "model.pbtxt");
  REQUIRE(model.ok());
  // 10 us an operator (the presets' figure): below a GPT-2 345M block's GPU time, so host_bound_blocks' floor
  // changes nothing while launch blocking adds 38 x 10 us to each block's forward and 46 x 10 us to its backward.
  const GpuCompute gpu = V100WithHost(10);
  const StageCost async = HostCostOf(*model, gpu, 1, 2, Host::kAsync);
  const StageCost floor = HostCostOf(*model, gpu, 1, 2, Host::kHostBound);
  const StageCost blocking = HostCostOf(*model, gpu, 1, 2, Host::kLaunchBlocking);
  REQUIRE(async.layer_forward_s.size() == 2);
  CHECK(floor.forward_time == async.forward_time);
  for (size_t i = 0; i < 2; ++i) {
    CHECK(async.layer_forward_s[i] > kHostForwardOps * 10e-6);
    CHECK(blocking.layer_forward_s[i] == Approx(async.layer_forward_s[i] + kHostForwardOps * 10e-6).epsilon(1e-12));
    CHECK(blocking.layer_backward_s[i] == Approx(async.layer_backward_s[i] + kHostBackwardOps * 10e-6).epsilon(1e-12));
  }
  CHECK(blocking.forward_time - async.forward_time == hetsim::SecondsToTime(2 * kHostForwardOps * 10e-6));
  CHECK(blocking.forward_flop_per_gpu == async.forward_flop_per_gpu);
  CHECK(blocking.forward_collectives.size() == async.forward_collectives.size());
}

TEST_CASE("cuda_launch_blocking: the embedding and the head are not counted, a recomputed block issues again",
          "[workload][launch_blocking]") {
  const auto model = hetsim::testing::ModelCostOf(HostBoundGpt2(), "model.pbtxt");
  REQUIRE(model.ok());
  const GpuCompute gpu = V100WithHost(10);
  for (const int first : {0, 3}) {
    CHECK(HostCostOf(*model, gpu, first, 1, Host::kLaunchBlocking).forward_time ==
          HostCostOf(*model, gpu, first, 1, Host::kAsync).forward_time);
  }
  // Full recomputation: the backward issues the forward's 38 ops again beside its own 46.
  const auto full = hetsim::spec::Recompute::kFull;
  const StageCost blocking = HostCostOf(*model, gpu, 1, 1, Host::kLaunchBlocking, 1, full);
  const StageCost async = HostCostOf(*model, gpu, 1, 1, Host::kAsync, 1, full);
  CHECK(blocking.layer_backward_s[0] ==
        Approx(async.layer_backward_s[0] + (kHostForwardOps + kHostBackwardOps) * 10e-6).epsilon(1e-12));
}
