// A launch script as its author wrote it, rendered into the launch command it runs: the shell
// variables it sets (`TP=4`, `export`, `${VAR:-x}`, `$(( ))` arithmetic, arrays spliced with
// "${ARGS[@]}"), the `if` branches whose conditions it can decide, and the files it writes with here
// documents (`cat <<EOT > ds_config.json`). Nothing is ever executed: `$(...)`, loops, functions and
// file tests are not run, and the notes say so, so that a value the script computes at run time
// is named instead of silently priced as something else (docs/megatron.md, "Scripts as written").
#ifndef HETSIM_SERVICE_INTEROP_LAUNCH_SCRIPT_H_
#define HETSIM_SERVICE_INTEROP_LAUNCH_SCRIPT_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace hetsim::interop {

struct RenderedLaunch {
  // The words of the command that runs the training script (the first command, in a branch the script
  // takes, with a word ending in ".py"), launcher included; empty when the script runs none.
  std::vector<std::string> words;
  int line = 0;  // the script line that command starts on (1-based)
  // What the rendering could not decide, one line each ("line 12: $(nproc) is not run; NGPUS is left
  // as written").
  std::vector<std::string> notes;
  // Here documents the script writes before the launch, by the path it writes them to, expanded.
  std::map<std::string, std::string> written_files;
  // A Slurm batch script's "#SBATCH --nodes=N" (or "-N N") header: N and its line; 0 without one (or
  // with a range). The script reads it as Slurm sets it, $SLURM_JOB_NUM_NODES and $SLURM_NNODES.
  int64_t sbatch_nodes = 0;
  int sbatch_line = 0;
  // When no command runs a training script: the variables the script leaves holding flags, by name,
  // their words split as an unquoted expansion splits them (a file of arguments another script sources
  // and splices into its launch line: Megatron-LM's ModelOpt conf/*.sh set MODEL_ARGS only).
  std::map<std::string, std::vector<std::string>> flag_variables;
  // Transformer Engine's NVTE_* variables in the launch's environment, by name: exported by the script, set
  // before the launch's program (`NVTE_X=0 torchrun ...`) or by an `env` among its words.
  std::map<std::string, std::string> environment;
};

// InvalidArgument naming `source` and the line for what a shell would refuse too (an unterminated
// quote, `$(`, `${` or here document) and for expansions that grow past 1 MiB.
absl::StatusOr<RenderedLaunch> RenderLaunchScript(absl::string_view script, absl::string_view source);

}  // namespace hetsim::interop

#endif  // HETSIM_SERVICE_INTEROP_LAUNCH_SCRIPT_H_
