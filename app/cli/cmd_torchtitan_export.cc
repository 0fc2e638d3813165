// `hetsim export torchtitan PLAN --cluster C [--model M] [--out FILE]`: the torchtitan TOML job config of a
// plan (service/interop/torchtitan_export.h, docs/torchtitan.md); `export` hands its `torchtitan` form here.
#include <utility>

#include "app/cli/cli.h"
#include "app/cli/cmd_megatron.h"
#include "app/cli/config_export.h"
#include "base/status_macros.h"
#include "service/interop/torchtitan_export.h"

namespace hetsim::cli {
namespace {

const CommandInfo kTorchtitanExportInfo = {
    "export", "hetsim export torchtitan PLAN --cluster C [--model M] [--out FILE]",
    "Prints the torchtitan TOML job config ([model] flavor, [training] batch, seq_len and precision,\n"
    "[parallelism] degrees and schedule, [activation_checkpoint], [compile]) that runs PLAN as\n"
    "`hetsim import torchtitan` reads it back; --model gives the model of a plan that names none. A plan\n"
    "the config cannot express (a model that is not a torchtitan llama flavor, pipelines of different\n"
    "shapes, uneven stages, ZeRO-1/2, ...) lists every difference (exit 2); settings torchtitan fixes are\n"
    "notes on stderr. docs/torchtitan.md."};

}  // namespace

int RunExportTorchtitan(const Args& args) {
  return RunConfigExport(kTorchtitanExportInfo, args,
                         [](const proto::PlanInputs& in) -> absl::StatusOr<ExportedConfig> {
                           HETSIM_ASSIGN_OR_RETURN(interop::TorchtitanExport exported, interop::ExportTorchtitan(in));
                           return ExportedConfig{std::move(exported.toml), std::move(exported.notes)};
                         });
}

}  // namespace hetsim::cli
