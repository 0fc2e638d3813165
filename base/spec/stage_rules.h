// The rules a pipeline stage's parallelism must satisfy against its model, written once over plain
// values: proto::ValidatePlan applies them to a plan file's stages (collecting every problem) and
// workload::ComputeStageCost to any configuration it prices, among them the planner's candidates
// that no file holds (reporting the first). So each rule has one message and one field name.
#ifndef HETSIM_BASE_SPEC_STAGE_RULES_H_
#define HETSIM_BASE_SPEC_STAGE_RULES_H_

#include <cstdint>
#include <string>
#include <vector>

namespace hetsim::spec {

struct StageRuleInputs {
  // The stage.
  uint32_t tensor_parallel = 1;
  uint32_t data_parallel = 1;
  uint32_t expert_parallel = 1;
  uint32_t expert_tensor_parallel = 0;  // 0: tensor_parallel
  uint32_t context_parallel = 1;        // the plan's (0: 1): the experts fold over TP x CP x DP
  int64_t zero_stage = 0;
  bool sequence_parallel = false;
  uint64_t micro_batch_size = 0;  // 0: not known yet (its own rule reports it)
  // The model (transformer shape; all 0 for a layer list).
  uint32_t num_attention_heads = 0;
  uint32_t num_kv_heads = 0;     // 0: as many as the attention heads
  uint64_t ffn_hidden_size = 0;  // resolved (4 x hidden_size when the file leaves it 0)
  uint32_t num_experts = 0;
  uint64_t expert_ffn_hidden_size = 0;  // resolved (ffn_hidden_size when the file leaves it 0)
};

struct StageRuleProblem {
  std::string field;    // the stage's field, e.g. "tensor_parallel"
  std::string problem;  // e.g. "2 does not divide num_attention_heads 15"
};

// Every rule the stage breaks, in a fixed order.
std::vector<StageRuleProblem> StageRuleProblems(const StageRuleInputs& in);

}  // namespace hetsim::spec

#endif  // HETSIM_BASE_SPEC_STAGE_RULES_H_
