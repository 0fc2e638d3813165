#include "app/cli/commands.h"

namespace hetsim::cli {

// Each command's entry point, defined in its cmd_<name>.cc. A new command is that file, one line here
// and one row in the table below: `hetsim --help`, the dispatch in app/main.cc and the test that every
// command answers --help read the table.
int RunExample(const Args& args);
int RunConvert(const Args& args);
int RunCheck(const Args& args);
int RunIslands(const Args& args);
int RunCollective(const Args& args);
int RunPlan(const Args& args);
int RunValidate(const Args& args);
int RunRun(const Args& args);
int RunReport(const Args& args);
int RunExport(const Args& args);
int RunSweep(const Args& args);
int RunSweepMerge(const Args& args);
int RunFidelity(const Args& args);
int RunCalibrate(const Args& args);
int RunImport(const Args& args);  // cmd_megatron.cc

const std::vector<Command>& AllCommands() {
  static const std::vector<Command> kCommands = {
      {"example", "write the bundled example inputs", RunExample},
      {"convert", "convert a file between binary, text format and JSON", RunConvert},
      {"check", "validate inputs and summarize them", RunCheck},
      {"islands", "group the cluster's GPUs into islands (Tangram Algorithm 1)", RunIslands},
      {"collective", "simulate one collective and print nccl-tests figures", RunCollective},
      {"plan", "find a parallel plan (hapt, tangram, megatron, alpa) and predict its iteration", RunPlan},
      {"validate", "compare a plan's predicted stage and iteration times with a simulation", RunValidate},
      {"run", "simulate one training iteration of a plan: report and trace", RunRun},
      {"report", "draw a saved report as an HTML page", RunReport},
      {"export",
       "write a plan as Chakra execution traces (export chakra) or another tool's launch line or config "
       "(export megatron, deepspeed, torchtitan, nemo)",
       RunExport},
      {"sweep", "run a capacity-planning sweep: one row per point (CSV or JSON Lines)", RunSweep},
      {"sweep-merge", "merge the outputs of a sharded sweep into one file", RunSweepMerge},
      {"fidelity", "predict published measurements (validation/) and report the errors", RunFidelity},
      {"calibrate", "fit the cluster's NCCL parameters to nccl-tests logs", RunCalibrate},
      {"import", "read a Megatron-LM launch line into a plan (import megatron)", RunImport},
  };
  return kCommands;
}

}  // namespace hetsim::cli
