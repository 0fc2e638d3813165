// Interleaved 1F1B's layer assignment as Megatron-LM makes it (pipeline::VirtualStageLayers with the
// model's embedding and head): a stage's blocks split evenly over its chunks, the embedding in front
// of virtual stage 0 and the head behind virtual stage K-1.
#include <catch2/catch.hpp>

#include <vector>

#include "sim/pipeline/schedule.h"

namespace {

using hetsim::pipeline::LayerRange;
using hetsim::pipeline::VirtualStageLayers;

// Layer sequence of a BLOCK-granularity GPT: 0 = embedding, 1..blocks = blocks, blocks + 1 = head.
// Stages of `per_stage` blocks each, the embedding on the first, the head on the last.
std::vector<int> MegatronStages(int stages, int per_stage) {
  std::vector<int> layers(stages, per_stage);
  layers.front() += 1;
  layers.back() += 1;
  return layers;
}

// Every virtual stage k holds `chunk_blocks` blocks, k = 0 also the embedding and k = K-1 the head,
// and they follow each other in the model's order.
void CheckMegatronLayout(const std::vector<LayerRange>& r, int virtual_stages, int chunk_blocks) {
  REQUIRE(static_cast<int>(r.size()) == virtual_stages);
  for (int k = 0; k < virtual_stages; ++k) {
    INFO("virtual stage " << k);
    // Chunk k holds blocks k*chunk_blocks .. (k+1)*chunk_blocks - 1, i.e. layers 1 + k*chunk_blocks...
    const int first_block_layer = 1 + k * chunk_blocks;
    CHECK(r[k].first_layer == (k == 0 ? 0 : first_block_layer));
    CHECK(r[k].num_layers == chunk_blocks + (k == 0 ? 1 : 0) + (k == virtual_stages - 1 ? 1 : 0));
  }
}

}  // namespace

TEST_CASE("interleaved: GPT-3 175B on 8 stages of 3 chunks gets Megatron's 24 chunks of 4 blocks",
          "[pipeline][interleaved]") {
  // 96 blocks, PP 8: stages of 12 blocks, 13 layers on the first and last (embedding, head), which
  // 3 does not divide. Megatron: 24 chunks of 96 / 24 = 4 blocks.
  const std::vector<LayerRange> r = VirtualStageLayers(MegatronStages(8, 12), 3, {1, 1});
  CheckMegatronLayout(r, 24, 4);
  CHECK(r[0].first_layer == 0);  // embedding + blocks 0-3 = layers 0..4
  CHECK(r[0].num_layers == 5);
  CHECK(r[8].first_layer == 33);  // stage 0's second chunk: blocks 32-35 = layers 33..36
  CHECK(r[8].num_layers == 4);
  CHECK(r[23].first_layer == 93);  // blocks 92-95 + head = layers 93..97
  CHECK(r[23].num_layers == 5);
}

TEST_CASE("interleaved: GPT-3 175B on 12 stages of 4 chunks (Table 2) gets 48 chunks of 2 blocks",
          "[pipeline][interleaved]") {
  CheckMegatronLayout(VirtualStageLayers(MegatronStages(12, 8), 4, {1, 1}), 48, 2);
}

TEST_CASE("interleaved: Megatron's 529.6B, 35 stages of 3 chunks of one block", "[pipeline][interleaved]") {
  CheckMegatronLayout(VirtualStageLayers(MegatronStages(35, 3), 3, {1, 1}), 105, 1);
}

TEST_CASE("interleaved: one stage holds both the embedding and the head", "[pipeline][interleaved]") {
  // 4 blocks on one stage of 6 layers, 2 chunks: embedding + blocks 0-1, then blocks 2-3 + head.
  const std::vector<LayerRange> r = VirtualStageLayers({6}, 2, {1, 1});
  REQUIRE(r.size() == 2);
  CHECK(r[0].first_layer == 0);
  CHECK(r[0].num_layers == 3);
  CHECK(r[1].first_layer == 3);
  CHECK(r[1].num_layers == 3);
}

TEST_CASE("interleaved: without interleaving the embedding and head change nothing", "[pipeline][interleaved]") {
  const std::vector<LayerRange> r = VirtualStageLayers({13, 12, 13}, 1, {1, 1});
  REQUIRE(r.size() == 3);
  CHECK(r[1].first_layer == 13);
  CHECK(r[1].num_layers == 12);
  CHECK(r[2].first_layer == 25);
  CHECK(r[2].num_layers == 13);
}
