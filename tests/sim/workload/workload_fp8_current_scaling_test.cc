// Plan.fp8_current_scaling in the cost model (docs/cost-model.md, "FP8 current scaling"): Transformer
// Engine's current scaling all-reduces, over the TP group, the amax of every FP8 tensor its TP ranks
// gather (a column-parallel linear's input in the forward, a row-parallel linear's output gradient in
// the backward), one 4-byte all-reduce each, under sequence parallelism only.
#include <catch2/catch.hpp>

#include <vector>

#include "sim/workload/gpu_compute.h"
#include "sim/workload/model_cost.h"
#include "sim/workload/stage_cost.h"
#include "tests/base/spec/spec_test_util.h"

namespace hetsim::workload {
namespace {

ModelCost AmaxModel(hetsim::v1::DType dtype, int experts = 0, uint64_t shared = 0) {
  auto model = hetsim::testing::ModelCostOf(hetsim::testing::Llama70bBlocks(dtype, experts, shared), "model.pbtxt");
  REQUIRE(model.ok());
  return *std::move(model);
}

// Block 1 alone, one sample, at TP `tp` with Transformer Engine's TP overlap.
StageCost AmaxBlockCost(const ModelCost& model, hetsim::v1::DType dtype, int tp, bool sp, bool current_scaling,
                        spec::Recompute recompute = spec::Recompute::kNone) {
  StageConfig c;
  c.recompute = recompute;
  c.tensor_parallel = tp;
  c.sequence_parallel = sp;
  c.tp_comm_overlap = sp;
  c.fp8_current_scaling = current_scaling;
  c.first_layer = 1;
  c.num_layers = 1;
  c.micro_batch_size = 1;
  if (model.num_experts() > 1) {  // the experts over the TP ranks, one each (MoE Parallel Folding's ETP 1)
    c.expert_parallel = tp;
    c.expert_tensor_parallel = 1;
  }
  auto cost = ComputeStageCost(model, c, hetsim::testing::PresetComputeOk("H100-SXM", dtype), "plan");
  INFO(cost.status().message());
  REQUIRE(cost.ok());
  return *std::move(cost);
}

struct AmaxCalls {
  int forward = 0, backward = 0;
};

// The 4-byte TP all-reduces of the pass lists: the amax reductions (no other collective is that small).
AmaxCalls AmaxReductions(const StageCost& cost) {
  auto count = [](const std::vector<StageCollective>& list) {
    int n = 0;
    for (const StageCollective& c : list) {
      if (c.op == CollectiveOp::kAllReduce && c.group == CollectiveGroup::kTensor && c.bytes == 4) {
        CHECK_FALSE(c.userbuffers);  // nothing hides them: the cast waits for each
        CHECK_FALSE(c.async_backward);
        n += c.count;
      }
    }
    return n;
  };
  return {count(cost.forward_collectives), count(cost.backward_collectives)};
}

TEST_CASE("fp8 current scaling: a dense block all-reduces two amaxes forward and two backward over TP") {
  const ModelCost model = AmaxModel(hetsim::v1::FP8);
  const StageCost with = AmaxBlockCost(model, hetsim::v1::FP8, 8, true, true);
  const AmaxCalls calls = AmaxReductions(with);
  CHECK(calls.forward == 2);   // the gathered inputs of QKV and FC1
  CHECK(calls.backward == 2);  // the gathered output gradients of the projection and FC2
  // The rest of the pass is untouched: the same collectives plus the amax reductions, the same compute.
  const StageCost without = AmaxBlockCost(model, hetsim::v1::FP8, 8, true, false);
  CHECK(AmaxReductions(without).forward == 0);
  CHECK(AmaxReductions(without).backward == 0);
  // Without current scaling the recipe is delayed scaling, whose one stage-wide amax all-reduce a pass
  // (workload_fp8_te_test.cc) stands where current scaling's TP all-reduces are.
  CHECK(with.forward_collectives.size() == without.forward_collectives.size());
  CHECK(with.backward_collectives.size() == without.backward_collectives.size());
  CHECK(with.forward_time == without.forward_time);
  CHECK(with.backward_time == without.backward_time);
}

TEST_CASE("fp8 current scaling: a full recomputation reduces the forward's amaxes again in the backward") {
  const ModelCost model = AmaxModel(hetsim::v1::FP8);
  const AmaxCalls full = AmaxReductions(AmaxBlockCost(model, hetsim::v1::FP8, 8, true, true, spec::Recompute::kFull));
  CHECK(full.forward == 2);
  CHECK(full.backward == 2 + 2);  // the output gradients' and the recomputed inputs'
  // Selective recomputation reruns the attention core only, no linear: no amax again.
  const AmaxCalls selective =
      AmaxReductions(AmaxBlockCost(model, hetsim::v1::FP8, 8, true, true, spec::Recompute::kSelective));
  CHECK(selective.backward == 2);
}

TEST_CASE("fp8 current scaling: nothing without sequence parallelism, without TP, or for 16-bit models") {
  const ModelCost fp8 = AmaxModel(hetsim::v1::FP8);
  const AmaxCalls no_sp = AmaxReductions(AmaxBlockCost(fp8, hetsim::v1::FP8, 8, false, true));
  CHECK(no_sp.forward + no_sp.backward == 0);  // each rank casts its own whole tensor
  const AmaxCalls tp1 = AmaxReductions(AmaxBlockCost(fp8, hetsim::v1::FP8, 1, false, true));
  CHECK(tp1.forward + tp1.backward == 0);
  const ModelCost bf16 = AmaxModel(hetsim::v1::BF16);
  const AmaxCalls sixteen = AmaxReductions(AmaxBlockCost(bf16, hetsim::v1::BF16, 8, true, true));
  CHECK(sixteen.forward + sixteen.backward == 0);
}

TEST_CASE("fp8 current scaling: routed experts reduce no amax over TP, shared experts do") {
  // Routed experts are not TE's sequence-parallel linears (Megatron's grouped linears communicate around
  // the dispatcher): only the attention's QKV and projection reduce.
  const AmaxCalls routed = AmaxReductions(AmaxBlockCost(AmaxModel(hetsim::v1::FP8, 8), hetsim::v1::FP8, 8, true, true));
  CHECK(routed.forward == 1);
  CHECK(routed.backward == 1);
  // Shared experts are TE's column- and row-parallel linears.
  const AmaxCalls shared =
      AmaxReductions(AmaxBlockCost(AmaxModel(hetsim::v1::FP8, 8, 4096), hetsim::v1::FP8, 8, true, true));
  CHECK(shared.forward == 2);
  CHECK(shared.backward == 2);
}

}  // namespace
}  // namespace hetsim::workload
