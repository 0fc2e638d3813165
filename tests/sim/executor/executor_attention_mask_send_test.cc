// Plan.pipeline_sends_attention_mask (DeepSpeed 0.3.13's pipeline engine, the AMP artifact's): every
// forward pipeline send carries GPT-2's [1, 1, s, s] causal mask cast to FP16 beside the activations,
// from every TP rank to its peer, whatever the micro-batch; the backward sends no mask.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "base/time.h"
#include "sim/executor/setup.h"
#include "tests/proto/model_shapes.h"
#include "tests/sim/executor/executor_test_util.h"

namespace hetsim::executor {
namespace {

namespace v1 = hetsim::v1;

constexpr uint64_t kSeq = 1024;
constexpr uint64_t kHidden = 1024;
constexpr auto kMaskBytes = static_cast<int64_t>(kSeq * kSeq * 2);

// A 2-block FP16 transformer as two stages of one GPU each, one on each island of a two-island cluster
// joined by one Ethernet link of `gbps` (ideal: no latency, no efficiency).
proto::PlanInputs MaskTwoStages(double gbps, uint64_t micro_batch, bool mask) {
  v1::Plan p;
  p.set_name("mask");
  v1::Model* m = p.mutable_model();
  m->set_name("mask");
  m->set_dtype(v1::FP16);
  testing::SetTransformer(*m, {.layers = 2, .hidden = kHidden, .heads = 16, .seq = kSeq, .vocab = 32000});
  p.set_global_batch_size(4 * micro_batch);
  p.set_micro_batch_size(micro_batch);
  p.set_schedule(v1::ONE_F_ONE_B);
  p.set_pipeline_sends_attention_mask(mask);
  testing::AddSlowFastStages(p, 2);
  return testing::MakeInputs(testing::TwoIslandCluster(1, 1, gbps, 0), p);
}

StageLayout MaskTp2Stage(int first) {
  StageLayout l;
  l.gpus = GpuIds({first, first + 1});
  l.tensor_parallel = 2;
  return l;
}

TEST_CASE("attention mask send: s^2 FP16 bytes on every forward flow, one per TP-rank pair", "[executor][amp]") {
  // TP 2 to TP 2, 2 samples of 1000 bytes: 1000 bytes a rank, each rank's flow gains one whole mask.
  std::vector<BoundaryFlow> flows = ReshardFlows(MaskTp2Stage(0), MaskTp2Stage(4), 2, 1000);
  REQUIRE(flows.size() == 2);
  AddAttentionMaskBytes(kSeq, flows);
  for (const BoundaryFlow& f : flows) CHECK(f.bytes == 1000 + kMaskBytes);
}

TEST_CASE("attention mask send: the forward transfer grows by the mask's time, whatever the micro-batch",
          "[executor][amp]") {
  const double gbps = 10;
  const double mask_s = static_cast<double>(kMaskBytes) / (gbps * 1e9 / 8);
  for (uint64_t micro_batch : {1, 4}) {
    INFO("micro-batch " << micro_batch);
    const auto with = testing::MakeSetup(MaskTwoStages(gbps, micro_batch, true), network::NetworkMode::kMaxMinFair);
    const auto without = testing::MakeSetup(MaskTwoStages(gbps, micro_batch, false), network::NetworkMode::kMaxMinFair);
    REQUIRE(with->boundaries.size() == 1);
    REQUIRE(without->boundaries.size() == 1);
    const BoundaryTransfer& a = with->boundaries[0];
    const BoundaryTransfer& b = without->boundaries[0];
    // The activations alone: micro-batch x s h FP16 bytes over the link.
    const double activations_s = static_cast<double>(micro_batch * kSeq * kHidden * 2) / (gbps * 1e9 / 8);
    CHECK(TimeToSeconds(b.forward_time) == Approx(activations_s).epsilon(1e-6));
    CHECK(TimeToSeconds(a.forward_time) == Approx(activations_s + mask_s).epsilon(1e-6));
    CHECK(a.backward_time == b.backward_time);
  }
}

}  // namespace
}  // namespace hetsim::executor
