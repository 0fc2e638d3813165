#include "base/spec/stage_rules.h"

#include "absl/strings/str_format.h"
#include "base/spec/defaults.h"

namespace hetsim::spec {

std::vector<StageRuleProblem> StageRuleProblems(const StageParallelism& stage, int context_parallel,
                                                uint64_t micro_batch_size, const StageRuleModel& in) {
  std::vector<StageRuleProblem> out;
  auto add = [&](const char* field, std::string problem) { out.push_back({field, std::move(problem)}); };
  const uint32_t tp = static_cast<uint32_t>(stage.tensor_parallel), dp = static_cast<uint32_t>(stage.data_parallel),
                 ep = static_cast<uint32_t>(stage.expert_parallel);
  // TP shards attention heads, KV heads and the FFN's columns evenly.
  if (in.num_attention_heads != 0 && in.num_attention_heads % tp != 0) {
    add("tensor_parallel", absl::StrFormat("%d does not divide num_attention_heads %d", tp, in.num_attention_heads));
  } else if (in.num_kv_heads != 0 && in.num_kv_heads % tp != 0) {
    add("tensor_parallel", absl::StrFormat("%d does not divide num_kv_heads %d", tp, in.num_kv_heads));
  } else if (in.ffn_hidden_size != 0 && in.ffn_hidden_size % tp != 0) {
    add("tensor_parallel", absl::StrFormat("%d does not divide ffn_hidden_size %d", tp, in.ffn_hidden_size));
  }
  if (micro_batch_size != 0 && micro_batch_size % dp != 0) {
    add("data_parallel", absl::StrFormat("%d does not divide micro_batch_size %d (each replica gets an equal share)",
                                         dp, micro_batch_size));
  }
  // MoE parallel folding: ETP x EP GPUs of the stage's TP x CP x DP hold one copy of the experts.
  const uint32_t etp = static_cast<uint32_t>(stage.ExpertTensorParallel());
  // A replica group of a mixed stage holds copies of its own: every group's GPUs (expert_data_parallel copies).
  const uint64_t stage_gpus = stage.expert_data_parallel > 0
                                  ? uint64_t{static_cast<uint32_t>(stage.expert_data_parallel)} * etp * ep
                                  : uint64_t{tp} * DegreeOrOne(static_cast<uint32_t>(context_parallel)) * dp;
  if (ep > 1) {
    if (in.num_experts <= 1) {
      add("expert_parallel", absl::StrFormat("%d needs a mixture-of-experts model (num_experts > 1)", ep));
    } else if (in.num_experts % ep != 0) {
      add("expert_parallel", absl::StrFormat("%d does not divide num_experts %d", ep, in.num_experts));
    } else if (stage_gpus % (uint64_t{ep} * etp) != 0) {
      add("expert_parallel",
          absl::StrFormat("%d x expert_tensor_parallel %d does not divide the stage's tensor_parallel x "
                          "context_parallel x data_parallel %d GPUs",
                          ep, etp, stage_gpus));
    }
  }
  if (etp != tp) {
    if (in.num_experts <= 1) {
      add("expert_tensor_parallel", absl::StrFormat("%d needs a mixture-of-experts model (num_experts > 1)", etp));
    } else if (ep == 1 && stage_gpus % etp != 0) {
      add("expert_tensor_parallel",
          absl::StrFormat("%d does not divide the stage's tensor_parallel x context_parallel x data_parallel %d GPUs",
                          etp, stage_gpus));
    }
  }
  if (in.num_experts > 1 && in.expert_ffn_hidden_size != 0 && in.expert_ffn_hidden_size % etp != 0) {
    add("expert_tensor_parallel",
        absl::StrFormat("%d does not divide expert_ffn_hidden_size %d", etp, in.expert_ffn_hidden_size));
  }
  if (stage.zero_stage < 0 || stage.zero_stage > 3) {
    add("zero_stage", absl::StrFormat("%d is outside [0, 3]", stage.zero_stage));
  }
  if (stage.sequence_parallel && tp == 1) add("sequence_parallel", "needs tensor_parallel > 1");
  if (!stage.sequence_parallel && tp > 1 && in.num_experts > 1) {
    add("sequence_parallel",
        absl::StrFormat("an MoE model with tensor_parallel %d needs it (Megatron-LM's MoE layer refuses tensor "
                        "parallelism without sequence parallelism)",
                        tp));
  }
  return out;
}

}  // namespace hetsim::spec
