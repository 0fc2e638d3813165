// Plan.autograd_grad_accumulation: autograd's AccumulateGrad adds each microbatch's weight gradients into the
// parameters' gradients, `variable_grad += new_grad`, a pass of its own (docs/cost-model.md, "Gradient
// accumulation by autograd"): 3 x the `.grad`'s bytes (its parameter's type) over the stage's parameters on the
// GPU, at the HBM rate, in the backward; the forward and the GPU's FLOPs are unchanged.
#include <catch2/catch.hpp>

#include "sim/workload/model_cost.h"
#include "sim/workload/stage_cost.h"
#include "tests/base/spec/spec_test_util.h"
#include "tests/proto/model_shapes.h"

namespace {

using namespace hetsim::workload;

// The V100 preset's achieved HBM rate: 900 GB/s x 0.85.
constexpr double kHbmBytesPerS = 900e9 * 0.85;

StageCost CostOf(const ModelCost& model, int first, int count, bool accumulate, bool fp32_gradients = false) {
  StageConfig c = hetsim::testing::AmpStageConfig(first, count, 1);  // TP 2
  c.autograd_grad_accumulation = accumulate;
  c.grad_reduce_in_fp32 = fp32_gradients;
  return hetsim::testing::StageCostOk(model, c, hetsim::testing::PresetComputeOk("V100-16GB", hetsim::v1::FP16));
}

}  // namespace

TEST_CASE("autograd_grad_accumulation: a block's backward adds 3 x its parameters' bytes at the HBM rate",
          "[workload][grad_accumulation]") {
  const auto model = hetsim::testing::ModelCostOf(hetsim::testing::AmpGpt2(2), "model.pbtxt");
  REQUIRE(model.ok());
  REQUIRE(model->layer(1).tp_replicated_param_count == 0);
  // A GPT block of h = 1024 holds 12 h^2 + 13 h parameters, half of them on each of TP 2's GPUs; FP16
  // gradients: 2 bytes read twice and written once per parameter.
  constexpr double h = 1024;
  constexpr double kBlockParamsPerGpu = (12 * h * h + 13 * h) / 2;
  const StageCost with = CostOf(*model, 1, 2, true);
  const StageCost without = CostOf(*model, 1, 2, false);
  for (size_t i = 0; i < 2; ++i) {
    CHECK(with.layer_forward_s[i] == without.layer_forward_s[i]);
    CHECK(with.layer_backward_s[i] ==
          Approx(without.layer_backward_s[i] + 3 * 2 * kBlockParamsPerGpu / kHbmBytesPerS).epsilon(1e-12));
  }
  CHECK(with.forward_time == without.forward_time);
  CHECK(with.backward_flop_per_gpu == without.backward_flop_per_gpu);
  // A `.grad` has its parameter's type: an FP16 run that reduces in FP32 (DeepSpeed's fp32_allreduce casts
  // the bucket at the reduction) still accumulates 2 bytes each way.
  const StageCost fp32_reduce = CostOf(*model, 1, 1, true, true);
  CHECK(fp32_reduce.layer_backward_s[0] ==
        Approx(CostOf(*model, 1, 1, false, true).layer_backward_s[0] + 3 * 2 * kBlockParamsPerGpu / kHbmBytesPerS)
            .epsilon(1e-12));
  // FP32 parameters (the Sailor runs'): 4 bytes each way.
  hetsim::v1::Model fp32_model = hetsim::testing::AmpGpt2(2);
  fp32_model.set_dtype(hetsim::v1::FP32);
  const auto fp32 = hetsim::testing::ModelCostOf(fp32_model, "model.pbtxt");
  REQUIRE(fp32.ok());
  CHECK(CostOf(*fp32, 1, 1, true).layer_backward_s[0] ==
        Approx(CostOf(*fp32, 1, 1, false).layer_backward_s[0] + 3 * 4 * kBlockParamsPerGpu / kHbmBytesPerS)
            .epsilon(1e-12));
}

TEST_CASE("autograd_grad_accumulation: a tied head without the embedding accumulates its copy of the matrix too",
          "[workload][grad_accumulation]") {
  const auto model = hetsim::testing::ModelCostOf(hetsim::testing::AmpGpt2(2), "model.pbtxt");
  REQUIRE(model.ok());
  const LayerCost& head = model->layer(3);
  REQUIRE(head.tied_with_embedding);
  // The vocabulary-parallel copy, 52,256 x 1024 over TP 2, beside the head's own parameters (its LayerNorm).
  REQUIRE(head.tied_param_count == 52256 * 1024);
  const double params_per_gpu =
      (static_cast<double>(head.param_count) - static_cast<double>(head.tp_replicated_param_count)) / 2 +
      static_cast<double>(head.tp_replicated_param_count) + 52256.0 * 1024 / 2;
  const StageCost with = CostOf(*model, 3, 1, true);
  const StageCost without = CostOf(*model, 3, 1, false);
  CHECK(with.layer_backward_s[0] ==
        Approx(without.layer_backward_s[0] + 3 * 2 * params_per_gpu / kHbmBytesPerS).epsilon(1e-12));
}
