// `hetsim export deepspeed PLAN`: the DeepSpeed JSON config and the Megatron-DeepSpeed launch line
// (`deepspeed pretrain_gpt.py ... --deepspeed --deepspeed_config ds_config.json`) that run a homogeneous
// plan, the inverse of deepspeed_config.h with megatron_import.h: importing the line with the JSON beside
// it gives the plan's layout, batch, schedule, recomputation, ZeRO stage and precision back. The line's
// model and layout flags are export megatron's (megatron_export.h); what DeepSpeed's engine cannot run
// (interleaving, ZeRO-2/3 under pipelines, FP8, MoE, MLA, context parallelism) is an error, and the
// behaviours its engine decides instead of the plan (gradient buckets and overlaps) are notes.
#ifndef HETSIM_SERVICE_INTEROP_DEEPSPEED_EXPORT_H_
#define HETSIM_SERVICE_INTEROP_DEEPSPEED_EXPORT_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/inputs.h"

namespace hetsim::interop {

struct DeepSpeedExport {
  std::string config_json;         // the DeepSpeed config, pretty-printed JSON
  std::string launch_line;         // "deepspeed --num_nodes 2 --num_gpus 8 pretrain_gpt.py \\\n ..."
  std::vector<std::string> notes;  // plan settings the two files do not carry
};

// `inputs` validated; `config_name` is the JSON's file name as the line names it (--deepspeed_config),
// read beside the line. InvalidArgument: one "<plan file>: <field path>: <problem>" line per difference.
absl::StatusOr<DeepSpeedExport> ExportDeepSpeed(const proto::PlanInputs& inputs, absl::string_view config_name);

// `hetsim export deepspeed`'s output, for the command and the API alike: with `json_path` the config
// written there and the line at `line_path`, both or neither and never over one of `inputs`, and
// "wrote ..." with the line returned; without, the text the command prints (the config's name, the
// config, the line).
absl::StatusOr<std::string> WriteDeepSpeedExport(const DeepSpeedExport& exported, absl::string_view config_name,
                                                 const std::string& json_path, const std::string& line_path,
                                                 std::vector<std::string> inputs);

}  // namespace hetsim::interop

#endif  // HETSIM_SERVICE_INTEROP_DEEPSPEED_EXPORT_H_
