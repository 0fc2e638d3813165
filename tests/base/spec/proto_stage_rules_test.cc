// The stage rules both a plan file's stages and the cost model's configurations are checked with
// (base/spec/stage_rules.h): each rule's field and message, and that only broken rules are reported.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "base/spec/stage_rules.h"

namespace {

using hetsim::spec::StageRuleProblems;

// What the rules read: a stage's parallelism, the plan's CP degree and micro-batch size, the model.
struct RuleCase {
  hetsim::spec::StageParallelism stage;
  int context_parallel = 1;
  uint64_t micro_batch_size = 0;
  hetsim::spec::StageRuleModel model;
};

// A dense transformer stage that breaks no rule: 16 heads, 4 KV heads, FFN 8192, TP 4 x DP 2, mbs 4.
RuleCase Good() {
  RuleCase c;
  c.stage.tensor_parallel = 4;
  c.stage.data_parallel = 2;
  c.micro_batch_size = 4;
  c.model = {.num_attention_heads = 16, .num_kv_heads = 4, .ffn_hidden_size = 8192, .num_experts = 1};
  return c;
}

// "field: problem" of every problem.
std::vector<std::string> Problems(const RuleCase& in) {
  std::vector<std::string> out;
  for (const auto& p : StageRuleProblems(in.stage, in.context_parallel, in.micro_batch_size, in.model)) {
    out.push_back(p.field + ": " + p.problem);
  }
  return out;
}

using V = std::vector<std::string>;

TEST_CASE("stage rules: a good stage has none", "[proto][stage_rules]") {
  CHECK(Problems(Good()).empty());
  RuleCase layer_list;
  layer_list.stage.tensor_parallel = 3;
  layer_list.micro_batch_size = 5;
  CHECK(Problems(layer_list).empty());  // no heads, no FFN: nothing for TP to divide
}

TEST_CASE("stage rules: tensor parallelism divides heads, then KV heads, then the FFN", "[proto][stage_rules]") {
  RuleCase in = Good();
  in.model.num_attention_heads = 15;
  CHECK(Problems(in) == V{"tensor_parallel: 4 does not divide num_attention_heads 15"});
  in = Good();
  in.model.num_kv_heads = 2;
  CHECK(Problems(in) == V{"tensor_parallel: 4 does not divide num_kv_heads 2"});
  in = Good();
  in.model.ffn_hidden_size = 8190;
  CHECK(Problems(in) == V{"tensor_parallel: 4 does not divide ffn_hidden_size 8190"});
}

TEST_CASE("stage rules: data, expert parallelism, ZeRO and sequence parallelism", "[proto][stage_rules]") {
  RuleCase in = Good();
  in.micro_batch_size = 3;
  CHECK(Problems(in) == V{"data_parallel: 2 does not divide micro_batch_size 3 (each replica gets an equal share)"});
  in = Good();
  in.micro_batch_size = 0;  // not known: its own rule reports it
  CHECK(Problems(in).empty());
  in = Good();
  in.stage.expert_parallel = 2;
  CHECK(Problems(in) == V{"expert_parallel: 2 needs a mixture-of-experts model (num_experts > 1)"});
  in.stage.sequence_parallel = true;  // an MoE model with TP 4 needs it
  in.model.num_experts = 6;
  in.stage.expert_parallel = 4;
  CHECK(Problems(in) == V{"expert_parallel: 4 does not divide num_experts 6"});
  in.model.num_experts = 8;
  // EP x ETP (here TP's 4) GPUs must divide the stage's TP x CP x DP = 8.
  CHECK(Problems(in) == V{"expert_parallel: 4 x expert_tensor_parallel 4 does not divide the stage's "
                          "tensor_parallel x context_parallel x data_parallel 8 GPUs"});
  in.context_parallel = 2;  // 16 GPUs: EP folds over TP, CP and DP
  CHECK(Problems(in).empty());
  in = Good();
  in.stage.zero_stage = 4;
  CHECK(Problems(in) == V{"zero_stage: 4 is outside [0, 3]"});
  in.stage.zero_stage = -1;
  CHECK(Problems(in) == V{"zero_stage: -1 is outside [0, 3]"});
  in = Good();
  in.stage.tensor_parallel = 1;
  in.stage.sequence_parallel = true;
  CHECK(Problems(in) == V{"sequence_parallel: needs tensor_parallel > 1"});
}

TEST_CASE("stage rules: every broken rule is reported, in order", "[proto][stage_rules]") {
  RuleCase in = Good();
  in.model.num_attention_heads = 15;
  in.micro_batch_size = 3;
  in.stage.zero_stage = 5;
  CHECK(Problems(in) == V{"tensor_parallel: 4 does not divide num_attention_heads 15",
                          "data_parallel: 2 does not divide micro_batch_size 3 (each replica gets an equal share)",
                          "zero_stage: 5 is outside [0, 3]"});
}

}  // namespace

TEST_CASE("stage rules: expert tensor parallelism (MoE parallel folding)", "[proto][stage_rules]") {
  RuleCase in = Good();
  in.stage.expert_tensor_parallel = 1;
  CHECK(Problems(in) == V{"expert_tensor_parallel: 1 needs a mixture-of-experts model (num_experts > 1)"});
  in.model.num_experts = 8;
  in.model.expert_ffn_hidden_size = 1536;
  CHECK(Problems(in) == V{"sequence_parallel: an MoE model with tensor_parallel 4 needs it (Megatron-LM's MoE layer "
                          "refuses tensor parallelism without sequence parallelism)"});
  in.stage.sequence_parallel = true;
  CHECK(Problems(in).empty());
  in.stage.expert_parallel = 8;  // 8 x 1 GPUs hold the experts once: all of TP 4 x DP 2
  CHECK(Problems(in).empty());
  in.stage.expert_tensor_parallel = 2;  // 8 x 2 > 8 GPUs
  CHECK(Problems(in) == V{"expert_parallel: 8 x expert_tensor_parallel 2 does not divide the stage's "
                          "tensor_parallel x context_parallel x data_parallel 8 GPUs"});
  in.stage.expert_parallel = 1;
  in.model.expert_ffn_hidden_size = 1535;
  CHECK(Problems(in) == V{"expert_tensor_parallel: 2 does not divide expert_ffn_hidden_size 1535"});
  in.model.expert_ffn_hidden_size = 1536;
  in.stage.expert_tensor_parallel = 3;
  CHECK(Problems(in) == V{"expert_tensor_parallel: 3 does not divide the stage's tensor_parallel x "
                          "context_parallel x data_parallel 8 GPUs"});
}
