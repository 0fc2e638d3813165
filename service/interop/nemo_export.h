// `hetsim export nemo PLAN`: the NeMo (1.x, Megatron-Core) training config that runs a plan, the YAML of
// NeMo's examples/nlp/language_modeling/conf/megatron_gpt_config.yaml with the keys nemo_import.h reads
// (trainer devices, num_nodes and precision; model parallel sizes, virtual pipeline, sequence parallel,
// batch, the model's shape and vocabulary, activation recomputation, the distributed optimizer, the
// overlaps, FP8, the layer spec's attention, fusions), written with yaml-cpp: the inverse of
// `hetsim import nemo`, which gives the plan back on the plan's island. The config is checked by importing
// it: what NeMo's config cannot say (pipelines of different shapes, mixed replica groups, stages that
// differ, an uneven split, ZeRO-2/3, a schedule NeMo does not run, a model it gives back otherwise) is an
// error naming every such field; settings NeMo's runtime fixes that the plan sets otherwise are notes
// "FIELD: not exported (...)". docs/megatron.md, "Exporting a NeMo config".
#ifndef HETSIM_SERVICE_INTEROP_NEMO_EXPORT_H_
#define HETSIM_SERVICE_INTEROP_NEMO_EXPORT_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/inputs.h"

namespace hetsim::interop {

struct NemoExport {
  std::string yaml;                // the training config
  std::vector<std::string> notes;  // plan settings the config cannot carry, each "FIELD: not exported (...)"
};

// `inputs` validated. InvalidArgument: one "<plan file>: <field path>: <problem>" line per difference.
absl::StatusOr<NemoExport> ExportNemo(const proto::PlanInputs& inputs);

}  // namespace hetsim::interop

#endif  // HETSIM_SERVICE_INTEROP_NEMO_EXPORT_H_
