// A full recomputation reruns its blocks' forward in the backward, collectives included (Megatron-LM's
// CheckpointFunction, PyTorch's checkpoint; docs/cost-model.md, "Recomputation"): the backward's list holds
// every forward collective of a recomputed block once more, flagged, and nothing more for selective or no
// recomputation, or for the blocks Megatron's block method leaves whole.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "sim/workload/gpu_compute.h"
#include "sim/workload/model_cost.h"
#include "sim/workload/stage_cost.h"
#include "tests/base/spec/spec_test_util.h"

namespace hetsim::workload {
namespace {

hetsim::v1::Model RecomputeGpt() {
  hetsim::v1::Model m;
  m.set_dtype(hetsim::v1::BF16);
  auto* t = m.mutable_transformer();
  t->set_num_layers(2);
  t->set_hidden_size(1024);
  t->set_num_attention_heads(8);
  t->set_seq_length(2048);
  t->set_vocab_size(32000);
  t->set_granularity(hetsim::v1::BLOCK);
  return m;
}

using RecomputeFixture = hetsim::testing::ModelOnGpu;

RecomputeFixture MakeRecomputeFixture() {
  return hetsim::testing::ModelOnPresetOk(RecomputeGpt(), "A100-80GB", hetsim::v1::BF16);
}

// The two blocks (layers 1 and 2) at TP 4, two samples.
StageConfig RcTwoBlocks(spec::Recompute recompute, bool sequence_parallel) {
  StageConfig c;
  c.first_layer = 1;
  c.num_layers = 2;
  c.micro_batch_size = 2;
  c.tensor_parallel = 4;
  c.sequence_parallel = sequence_parallel;
  c.recompute = recompute;
  return c;
}

StageCost RcCostOf(const RecomputeFixture& f, const StageConfig& c) {
  auto cost = ComputeStageCost(f.model, c, f.gpu, "plan");
  REQUIRE(cost.ok());
  return *std::move(cost);
}

// Bytes moved by the list's collectives of `layer` (every layer when negative), recomputed or not.
int64_t RcBytesOf(const std::vector<StageCollective>& list, bool recomputed, int layer = -1) {
  int64_t bytes = 0;
  for (const StageCollective& c : list) {
    if (c.recomputed == recomputed && (layer < 0 || c.layer == layer)) bytes += c.bytes * c.count;
  }
  return bytes;
}

TEST_CASE("recompute collectives: a full recomputation reruns every forward collective in the backward",
          "[recompute_collectives]") {
  const RecomputeFixture f = MakeRecomputeFixture();
  for (const bool sp : {false, true}) {
    const StageCost none = RcCostOf(f, RcTwoBlocks(spec::Recompute::kNone, sp));
    const StageCost full = RcCostOf(f, RcTwoBlocks(spec::Recompute::kFull, sp));
    REQUIRE(RcBytesOf(full.forward_collectives, false) > 0);
    // The reruns are the forward's collectives, byte for byte; the backward's own are unchanged.
    CHECK(RcBytesOf(full.backward_collectives, true) == RcBytesOf(full.forward_collectives, false));
    CHECK(RcBytesOf(full.backward_collectives, false) == RcBytesOf(none.backward_collectives, false));
    CHECK(RcBytesOf(none.backward_collectives, true) == 0);
    CHECK(RcBytesOf(full.forward_collectives, false) == RcBytesOf(none.forward_collectives, false));
  }
}

TEST_CASE("recompute collectives: the rerun precedes the layer's own backward collectives", "[recompute_collectives]") {
  const RecomputeFixture f = MakeRecomputeFixture();
  const StageCost full = RcCostOf(f, RcTwoBlocks(spec::Recompute::kFull, true));
  // The backward visits layer 2 before layer 1, and each layer's recomputation before its gradients.
  std::vector<std::pair<int, bool>> order;
  for (const StageCollective& c : full.backward_collectives) {
    if (order.empty() || order.back() != std::make_pair(c.layer, c.recomputed))
      order.emplace_back(c.layer, c.recomputed);
  }
  CHECK(order == std::vector<std::pair<int, bool>>{{2, true}, {2, false}, {1, true}, {1, false}});
}

TEST_CASE("recompute collectives: selective recomputation and the blocks left whole rerun none",
          "[recompute_collectives]") {
  const RecomputeFixture f = MakeRecomputeFixture();
  const StageCost selective = RcCostOf(f, RcTwoBlocks(spec::Recompute::kSelective, true));
  CHECK(RcBytesOf(selective.backward_collectives, true) == 0);
  // Megatron's block method with one block a chunk: the first block recomputes, the second keeps all.
  StageConfig c = RcTwoBlocks(spec::Recompute::kFull, true);
  c.recompute_num_layers = 1;
  const StageCost block = RcCostOf(f, c);
  CHECK(RcBytesOf(block.backward_collectives, true, 1) == RcBytesOf(block.forward_collectives, false, 1));
  CHECK(RcBytesOf(block.backward_collectives, true, 2) == 0);
}

TEST_CASE("recompute collectives: each rerun runs beside the forward GEMM its forward call did",
          "[recompute_collectives]") {
  const RecomputeFixture f = MakeRecomputeFixture();
  StageConfig c = RcTwoBlocks(spec::Recompute::kFull, true);
  c.tp_comm_overlap = true;
  const StageCost full = RcCostOf(f, c);
  std::vector<std::vector<double>> forward, reruns;
  for (const StageCollective& sc : full.forward_collectives) {
    if (sc.userbuffers) forward.push_back(sc.beside_gemm_s);
  }
  for (const StageCollective& sc : full.backward_collectives) {
    if (sc.userbuffers && sc.recomputed) reruns.push_back(sc.beside_gemm_s);
  }
  REQUIRE(forward.size() == 4);  // a gather and a reduce-scatter (two calls each) a block
  for (const std::vector<double>& gemms : forward) CHECK(gemms.size() == 2);
  // The backward lists the blocks last to first; as sets, the reruns' lists are the forward's.
  std::sort(forward.begin(), forward.end());
  std::sort(reruns.begin(), reruns.end());
  CHECK(reruns == forward);
}

}  // namespace
}  // namespace hetsim::workload
