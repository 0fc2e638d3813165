// The exports of a plan as another tool's config file (`hetsim export torchtitan`, `hetsim export nemo`):
// one command line, `export FORMAT PLAN --cluster C [--model M] [--out FILE]`, the config printed (and
// written with --out, never over an input), its notes on stderr.
#ifndef HETSIM_APP_CLI_CONFIG_EXPORT_H_
#define HETSIM_APP_CLI_CONFIG_EXPORT_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "app/cli/cli.h"
#include "proto/inputs.h"

namespace hetsim::cli {

struct ExportedConfig {
  std::string text;                // the file
  std::vector<std::string> notes;  // printed as "note: ..." on stderr
};
using ConfigExporter = std::function<absl::StatusOr<ExportedConfig>(const proto::PlanInputs&)>;

// Parses `args` (its form in `info`), loads the plan (with --model, a plan that names none), runs
// `exporter` and prints or writes its config.
int RunConfigExport(const CommandInfo& info, const Args& args, const ConfigExporter& exporter);

}  // namespace hetsim::cli

#endif  // HETSIM_APP_CLI_CONFIG_EXPORT_H_
