// The rules a pipeline stage's parallelism must satisfy against its model, written once over plain
// values: proto::ValidatePlan applies them to a plan file's stages (collecting every problem) and
// workload::ComputeStageCost to any configuration it prices, among them the planner's candidates
// that no file holds (reporting the first). So each rule has one message and one field name.
#ifndef HETSIM_BASE_SPEC_STAGE_RULES_H_
#define HETSIM_BASE_SPEC_STAGE_RULES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "base/spec/plan.h"

namespace hetsim::spec {

// The model's dimensions the rules read (a transformer's shape; all 0 for a layer list).
struct StageRuleModel {
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

// Every rule the stage breaks, in a fixed order. The stage is its parallelism (a plan's stage, the
// cost model's configuration or a replica group's degrees); `context_parallel` is the plan's (0: 1; the
// experts fold over TP x CP x DP); `micro_batch_size` the plan's, 0 when not known yet (its own rule
// reports it).
std::vector<StageRuleProblem> StageRuleProblems(const StageParallelism& stage, int context_parallel,
                                                uint64_t micro_batch_size, const StageRuleModel& model);

}  // namespace hetsim::spec

#endif  // HETSIM_BASE_SPEC_STAGE_RULES_H_
