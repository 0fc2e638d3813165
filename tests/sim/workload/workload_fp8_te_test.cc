// FP8 as Megatron-Core runs it with Transformer Engine (docs/cost-model.md, "What FP8 covers"): the
// routed experts' grouped linears cast their inputs and output gradients explicitly and Megatron pads
// each expert's tokens for the FP8 GEMMs (TeGroupedFp8Casts); delayed scaling all-reduces the amaxes
// of a chunk once a pass over the stage's TP x CP x DP GPUs (CollectiveGroup::kStage).
#include <catch2/catch.hpp>

#include <vector>

#include "base/time.h"
#include "sim/workload/gpu_compute.h"
#include "sim/workload/model_cost.h"
#include "sim/workload/stage_cost.h"
#include "tests/base/spec/spec_test_util.h"

namespace hetsim::workload {
namespace {

ModelCost Fp8Model(hetsim::v1::DType dtype, int experts, bool sublayers) {
  hetsim::v1::Model m = hetsim::testing::Llama70bBlocks(dtype, experts);
  if (experts > 0) m.mutable_transformer()->set_moe_grouped_gemm(true);
  if (sublayers) m.mutable_transformer()->set_granularity(hetsim::v1::SUBLAYER);
  auto model = hetsim::testing::ModelCostOf(m, "model.pbtxt");
  INFO(model.status().message());
  REQUIRE(model.ok());
  return *std::move(model);
}

StageCost CostOf(const ModelCost& model, const StageConfig& c, hetsim::v1::DType dtype) {
  auto cost = ComputeStageCost(model, c, hetsim::testing::PresetComputeOk("H100-SXM", dtype), "plan");
  INFO(cost.status().message());
  REQUIRE(cost.ok());
  return *std::move(cost);
}

// The stage-wide all-reduces of a pass list.
std::vector<StageCollective> StageReductions(const std::vector<StageCollective>& list) {
  std::vector<StageCollective> out;
  for (const StageCollective& c : list) {
    if (c.group == CollectiveGroup::kStage) out.push_back(c);
  }
  return out;
}

}  // namespace

TEST_CASE("fp8 te: a grouped linear's casts and padding in closed form", "[fp8]") {
  // FC1: 100 input and 60 output elements, padded on its input.
  const Fp8Casts fc1 = TeGroupedFp8Casts(100, 60, true, false);
  CHECK(fc1.forward_amax_bytes == 0);  // delayed scaling takes the amax in the cast kernel
  CHECK(fc1.forward_amax_kernels == 0);
  CHECK(fc1.forward_cast_bytes == 4 * 100 + 4 * 100);  // cast-transpose of the input, its padded copy
  CHECK(fc1.forward_kernels == 2);
  CHECK(fc1.backward_bytes == 4 * 60 + 4 * 100);  // the output gradient's cast-transpose, the unpadding
  CHECK(fc1.backward_kernels == 2);
  // FC2: unpadded on its output.
  const Fp8Casts fc2 = TeGroupedFp8Casts(100, 60, false, true);
  CHECK(fc2.forward_cast_bytes == 4 * 100 + 4 * 60);
  CHECK(fc2.backward_bytes == 4 * 60 + 4 * 60);
  // torchao's casts keep their amax passes apart (Fp8Casts::forward_amax_kernels).
  CHECK(DynamicFp8Casts(3, 100, 40, 60).forward_amax_kernels == 4);
}

TEST_CASE("fp8 te: the routed experts' casts cost what they move, in FP8 with Transformer Engine only", "[fp8]") {
  // The MoE sublayer of block 0 (8 experts, top 2, 8192 tokens, h 8192, FFN 28672 gated) on one GPU:
  // 16384 token visits. torchao's casts (fp8_dynamic_casts) leave routed experts alone, so the
  // difference to them is the grouped linears' traffic.
  const ModelCost model = Fp8Model(hetsim::v1::FP8, 8, true);
  StageConfig c = hetsim::testing::OneLayerStage(2);
  c.micro_batch_size = 1;
  const StageCost te = CostOf(model, c, hetsim::v1::FP8);
  c.fp8_dynamic_casts = true;
  const StageCost none = CostOf(model, c, hetsim::v1::FP8);
  const GpuCompute gpu = hetsim::testing::PresetComputeOk("H100-SXM", hetsim::v1::FP8);
  const double visits = 16384, h = 8192, f = 28672;
  const double forward = 4 * visits * h + 4 * visits * h       // FC1: cast-transpose, padding
                         + 4 * visits * f + 4 * visits * h;    // FC2: cast-transpose, unpadding
  const double backward = 4 * visits * 2 * f + 4 * visits * h  // FC1's output gradient, unpadding
                          + 4 * visits * h + 4 * visits * h;   // FC2's output gradient, padding
  CHECK(TimeToSeconds(te.forward_time - none.forward_time) == Approx(gpu.MemorySeconds(forward, 4)).epsilon(1e-6));
  CHECK(TimeToSeconds(te.backward_time - none.backward_time) == Approx(gpu.MemorySeconds(backward, 4)).epsilon(1e-6));
  // A BF16 model casts nothing.
  c.fp8_dynamic_casts = false;
  const ModelCost bf16 = Fp8Model(hetsim::v1::BF16, 8, true);
  const StageCost b = CostOf(bf16, c, hetsim::v1::BF16);
  c.fp8_dynamic_casts = true;
  CHECK(CostOf(bf16, c, hetsim::v1::BF16).forward_time == b.forward_time);
}

TEST_CASE("fp8 te: delayed scaling all-reduces a chunk's amaxes once a pass over the stage", "[fp8]") {
  // Both dense blocks at TP 2 x DP 4: QKV, projection, FC1 and FC2 in FP8, 4 GEMMs a block.
  const ModelCost dense = Fp8Model(hetsim::v1::FP8, 0, false);
  StageConfig c;
  c.first_layer = 1;
  c.num_layers = 2;
  c.micro_batch_size = 4;
  c.tensor_parallel = 2;
  c.data_parallel = 4;
  c.sequence_parallel = true;
  const StageCost cost = CostOf(dense, c, hetsim::v1::FP8);
  const std::vector<StageCollective> forward = StageReductions(cost.forward_collectives);
  const std::vector<StageCollective> backward = StageReductions(cost.backward_collectives);
  REQUIRE(forward.size() == 1);
  REQUIRE(backward.size() == 1);
  CHECK(forward[0].op == CollectiveOp::kAllReduce);
  CHECK(forward[0].bytes == 8 * 3 * 4);  // three forward slots of 8 GEMMs, an FP32 amax each
  CHECK(forward[0].count == 1);
  CHECK(forward[0].layer == 2);  // at the exit of the chunk's fp8_autocast, after its last block
  CHECK(cost.forward_collectives.back().group == CollectiveGroup::kStage);
  CHECK(backward[0].bytes == 8 * 2 * 4);
  CHECK(backward[0].layer == 1);  // when the backward of the chunk's first block ends
  CHECK(cost.backward_collectives.back().group == CollectiveGroup::kStage);
  CHECK_FALSE(forward[0].userbuffers);
  CHECK_FALSE(forward[0].async_backward);

  // Routed experts count each local expert: 8 experts over EP 2, 4 of each grouped linear here.
  const ModelCost moe = Fp8Model(hetsim::v1::FP8, 8, false);
  c.num_layers = 1;
  c.expert_parallel = 2;
  const StageCost moe_cost = CostOf(moe, c, hetsim::v1::FP8);
  REQUIRE(StageReductions(moe_cost.forward_collectives).size() == 1);
  CHECK(StageReductions(moe_cost.forward_collectives)[0].bytes == (2 + 2 * 4) * 3 * 4);

  // None with current scaling, torchao's casts, a 16-bit model or a stage of one GPU.
  StageConfig current = c;
  current.fp8_current_scaling = true;
  CHECK(StageReductions(CostOf(moe, current, hetsim::v1::FP8).forward_collectives).empty());
  StageConfig torchao = c;
  torchao.fp8_dynamic_casts = true;
  CHECK(StageReductions(CostOf(moe, torchao, hetsim::v1::FP8).backward_collectives).empty());
  const ModelCost bf16 = Fp8Model(hetsim::v1::BF16, 8, false);
  CHECK(StageReductions(CostOf(bf16, c, hetsim::v1::BF16).forward_collectives).empty());
  StageConfig one = c;
  one.tensor_parallel = 1;
  one.data_parallel = 1;
  one.expert_parallel = 1;
  one.sequence_parallel = false;
  one.micro_batch_size = 1;
  CHECK(StageReductions(CostOf(moe, one, hetsim::v1::FP8).forward_collectives).empty());
}

}  // namespace hetsim::workload
