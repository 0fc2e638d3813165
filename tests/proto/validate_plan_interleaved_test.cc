// proto/validate_plan's interleaving rule is Megatron-LM's: a stage's BLOCKS divide by the virtual
// stages; the embedding and the head ride along with the first and last chunk.
#include <catch2/catch.hpp>

#include "proto/validate_plan.h"
#include "tests/proto/model_shapes.h"
#include "tests/proto/validate_test_util.h"

namespace {

using hetsim::v1::Plan;

// GPT-3 175B (96 blocks) on the bundled 64-node DGX A100 cluster: `stages` stages of 96 / stages
// blocks, TP 8 on one node each, the embedding on the first stage and the head on the last; or, with
// `blocks` 126, Llama 3.1 405B's depth split as Megatron does with the embedding and the loss counted
// as layers (128 / stages layers a stage, the first and last with one block less).
Plan Gpt175b(int stages, int chunks, int blocks = 96) {
  Plan p;
  p.set_name("gpt-175b");
  auto* t = p.mutable_model()->mutable_transformer();
  p.mutable_model()->set_dtype(hetsim::v1::FP16);
  hetsim::testing::SetGpt3Shape(t, blocks);
  p.set_global_batch_size(static_cast<uint64_t>(stages) * 4);
  p.set_micro_batch_size(1);
  p.set_schedule(hetsim::v1::INTERLEAVED_1F1B);
  p.set_virtual_stages(chunks);
  uint32_t first = 0;
  for (int s = 0; s < stages; ++s) {
    auto* st = p.add_stages();
    const uint32_t layers =
        blocks == 96 ? 96 / stages + (s == 0 ? 1 : 0) + (s == stages - 1 ? 1 : 0) : (blocks + 2) / stages;
    st->set_first_layer(first);
    st->set_num_layers(layers);
    first += layers;
    st->mutable_mesh()->set_island("a100");
    st->mutable_mesh()->set_first_node(s);
    st->mutable_mesh()->set_node_count(1);
    st->mutable_mesh()->set_gpus_per_node(8);
    st->set_tensor_parallel(8);
  }
  return p;
}

absl::Status Check(const Plan& p) {
  return hetsim::proto::ValidatePlan(p, hetsim::testing::ResolvedCluster("cluster-a100-512"), p.model(), "plan.pbtxt");
}

}  // namespace

TEST_CASE("plan: Megatron's GPT-3 175B interleaved layouts are accepted", "[validate][interleaved]") {
  const absl::Status pp8 = Check(Gpt175b(8, 3));  // 13 + 6 x 12 + 13 layers, 12 blocks each: 3 chunks of 4
  INFO(pp8.message());
  CHECK(pp8.ok());
  const absl::Status pp12 = Check(Gpt175b(12, 4));  // 8 blocks per stage: 4 chunks of 2 (Table 2)
  INFO(pp12.message());
  CHECK(pp12.ok());
}

TEST_CASE("plan: Megatron's split counting the embedding and the loss as layers is accepted",
          "[validate][interleaved]") {
  // 126 blocks, 8 stages of 16 layers (15 blocks and the embedding, 16 blocks, 15 blocks and the head),
  // 8 chunks of 2 layers: the first and last stages' blocks do not divide by 8, their layers do.
  const absl::Status llama = Check(Gpt175b(8, 8, 126));
  INFO(llama.message());
  CHECK(llama.ok());
  // 7 chunks divide neither 15 blocks nor 16 layers.
  CHECK_PROBLEM(Check(Gpt175b(8, 7, 126)),
                "plan.pbtxt: stages[0].num_layers: 16 layers hold 15 blocks (besides the embedding and head): "
                "neither they nor the layers are a positive multiple of virtual_stages 7");
}

TEST_CASE("plan: interleaving refuses blocks that do not divide by the chunks", "[validate][interleaved]") {
  // 12 blocks per stage in 5 chunks: the first stage's message counts blocks besides the embedding,
  // a middle stage's its layers (all blocks), as before.
  const absl::Status s = Check(Gpt175b(8, 5));
  CHECK_PROBLEM(s,
                "plan.pbtxt: stages[0].num_layers: 13 layers hold 12 blocks (besides the embedding and head): "
                "neither they nor the layers are a positive multiple of virtual_stages 5");
  CHECK_PROBLEM(s, "plan.pbtxt: stages[3].num_layers: 12 is not divisible by virtual_stages 5");
  CHECK_PROBLEM(s, "plan.pbtxt: stages[7].num_layers: 13 layers hold 12 blocks");
}

TEST_CASE("plan: an interleaved stage of only the embedding has no block to split", "[validate][interleaved]") {
  Plan p = Gpt175b(8, 2);
  // Stage 0 keeps the embedding alone, stage 1 takes its 12 blocks (24 blocks: 2 chunks of 12).
  p.mutable_stages(0)->set_num_layers(1);
  p.mutable_stages(1)->set_first_layer(1);
  p.mutable_stages(1)->set_num_layers(24);
  CHECK_PROBLEM(Check(p), "plan.pbtxt: stages[0].num_layers: 1 layers hold 0 blocks");
}

TEST_CASE("plan: virtual_stage_layers lays out chunks of any size, each stage's adding up to its layers",
          "[validate][interleaved]") {
  // 8 stages x 5 chunks: 12 blocks a stage do not divide by 5, but an explicit layout may cut them
  // (3, 3, 2, 2, 2), the embedding and the head counted with the first and last chunks.
  Plan p = Gpt175b(8, 5);
  for (int c = 0; c < 5; ++c) {
    for (int s = 0; s < 8; ++s) {
      const uint32_t blocks = c < 2 ? 3 : 2;
      p.add_virtual_stage_layers(blocks + (c == 0 && s == 0) + (c == 4 && s == 7));
    }
  }
  const absl::Status ok = Check(p);
  INFO(ok.message());
  CHECK(ok.ok());
  p.set_virtual_stage_layers(3, 4);  // stage 3's chunks now hold 13 layers
  CHECK_PROBLEM(Check(p),
                "plan.pbtxt: stages[3].num_layers: 12, but its virtual stages' virtual_stage_layers add up "
                "to 13");
  p.set_virtual_stage_layers(3, 0);
  CHECK_PROBLEM(Check(p), "plan.pbtxt: virtual_stage_layers[3]: 0 is outside [1, ");
  p.mutable_virtual_stage_layers()->RemoveLast();
  CHECK_PROBLEM(Check(p), "plan.pbtxt: virtual_stage_layers: 39 entries, but 8 stages x 5 virtual_stages = 40");
  p.set_schedule(hetsim::v1::ONE_F_ONE_B);
  p.set_virtual_stages(0);
  CHECK_PROBLEM(Check(p), "plan.pbtxt: virtual_stage_layers: set, but the schedule is not INTERLEAVED_1F1B");
}
