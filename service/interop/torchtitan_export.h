// `hetsim export torchtitan PLAN`: the torchtitan TOML job config (torchtitan's JobConfig sections [model],
// [training], [parallelism], [activation_checkpoint], [compile]; written with toml++) that runs a plan, the
// inverse of torchtitan_import.h: importing the file on the plan's island gives the plan back. The config
// is checked by importing it: a plan it would not give back in its layout (pipelines of different shapes,
// replica groups, stages that differ, ZeRO-1/2, an uneven split, a schedule torchtitan does not run, a
// model that is not one of torchtitan's llama flavors) is an error naming every such field; settings
// torchtitan fixes (its runtime: FSDP2's prefetch, non-blocking sends, ...) that the plan sets otherwise
// are notes "FIELD: not exported (...)". docs/torchtitan.md, "Exporting".
#ifndef HETSIM_SERVICE_INTEROP_TORCHTITAN_EXPORT_H_
#define HETSIM_SERVICE_INTEROP_TORCHTITAN_EXPORT_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/inputs.h"

namespace hetsim::interop {

struct TorchtitanExport {
  std::string toml;                // the job config
  std::vector<std::string> notes;  // plan settings the config cannot carry, each "FIELD: not exported (...)"
};

// `inputs` validated. InvalidArgument: one "<plan file>: <field path>: <problem>" line per difference.
absl::StatusOr<TorchtitanExport> ExportTorchtitan(const proto::PlanInputs& inputs);

}  // namespace hetsim::interop

#endif  // HETSIM_SERVICE_INTEROP_TORCHTITAN_EXPORT_H_
