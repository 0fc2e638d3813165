// `hetsim export nemo PLAN --cluster C [--model M] [--out FILE.yaml]`: the NeMo training config (YAML) of a
// plan (service/interop/nemo_export.h, docs/megatron.md); `export` hands its `nemo` form here.
#include <utility>

#include "app/cli/cli.h"
#include "app/cli/cmd_megatron.h"
#include "app/cli/config_export.h"
#include "base/status_macros.h"
#include "service/interop/nemo_export.h"

namespace hetsim::cli {
namespace {

const CommandInfo kNemoExportInfo = {
    "export", "hetsim export nemo PLAN --cluster C [--model M] [--out FILE.yaml]",
    "Prints the NeMo training config (the YAML of NeMo's megatron_gpt_config.yaml: trainer devices, num_nodes\n"
    "and precision; model parallel sizes, virtual pipeline, sequence parallel, batch, the model's shape,\n"
    "activation recomputation, the distributed optimizer, overlaps, FP8) that runs PLAN as `hetsim import\n"
    "nemo` reads it back; --model gives the model of a plan that names none. A plan NeMo's config cannot\n"
    "express (pipelines of different shapes, mixed replica groups, stages that differ, an uneven split,\n"
    "ZeRO-2/3, ...) lists every difference (exit 2, no file); settings NeMo's runtime fixes are notes on\n"
    "stderr. docs/megatron.md."};

}  // namespace

int RunExportNemo(const Args& args) {
  return RunConfigExport(kNemoExportInfo, args, [](const proto::PlanInputs& in) -> absl::StatusOr<ExportedConfig> {
    HETSIM_ASSIGN_OR_RETURN(interop::NemoExport exported, interop::ExportNemo(in));
    return ExportedConfig{std::move(exported.yaml), std::move(exported.notes)};
  });
}

}  // namespace hetsim::cli
