// DeepSpeed's JSON config as Megatron-DeepSpeed runs it (`--deepspeed --deepspeed_config ds.json`):
// the batch sizes, the ZeRO stage and the precision it sets, parsed with protobuf's JSON reader (a
// google.protobuf.Struct), and folded into the launch line's flags so that one set of rules reads
// them (docs/megatron.md, "Megatron-DeepSpeed").
#ifndef HETSIM_SERVICE_INTEROP_DEEPSPEED_CONFIG_H_
#define HETSIM_SERVICE_INTEROP_DEEPSPEED_CONFIG_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "service/interop/megatron_flags.h"

namespace hetsim::interop {

struct DeepSpeedConfig {
  std::optional<int64_t> train_batch_size;
  std::optional<int64_t> micro_batch_per_gpu;  // train_micro_batch_size_per_gpu
  std::optional<int64_t> gradient_accumulation_steps;
  std::optional<int64_t> zero_stage;  // zero_optimization.stage
  bool fp16 = false, bf16 = false;    // fp16.enabled, bf16.enabled (or bfloat16.enabled)
  // zero_optimization.reduce_scatter (DeepSpeed's default true): false makes ZeRO-1/2's average_tensor all-reduce
  // each bucket instead of its per-rank reduce calls (Plan.zero_reduce_per_rank).
  std::optional<bool> reduce_scatter;
  // Settings that would change the cost and are not modelled (activation partitioning), and "auto"
  // values left to the flags. Optimizer or parameter offload is refused (ParseDeepSpeedConfig).
  std::vector<std::string> notes;
};

// InvalidArgument naming `source` and the key for malformed JSON, values of the wrong type or range, and
// ZeRO-Offload (zero_optimization.offload_optimizer/offload_param.device other than "none").
absl::StatusOr<DeepSpeedConfig> ParseDeepSpeedConfig(absl::string_view json, absl::string_view source);

// The flags with what the line's DeepSpeed config sets folded in (--micro-batch-size,
// --global-batch-size or the accumulation steps, --zero-stage, --fp16/--bf16; reduce_scatter false into
// MegatronFlags.deepspeed_off); the config is the file
// the script wrote in a here document, else the file on disk, relative to `source`'s folder. A value
// the config and a flag both set differently is a contradiction naming both. Without --deepspeed the
// flags come back as they are.
absl::StatusOr<MegatronFlags> WithDeepSpeedConfig(const MegatronFlags& flags, absl::string_view source);

}  // namespace hetsim::interop

#endif  // HETSIM_SERVICE_INTEROP_DEEPSPEED_CONFIG_H_
