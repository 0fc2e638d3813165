// Declarations of the subcommand entry points listed in commands.cc, one per cmd_<name>.cc.
#ifndef HETSIM_APP_CLI_COMMAND_LIST_H_
#define HETSIM_APP_CLI_COMMAND_LIST_H_

#include "app/cli/commands.h"

namespace hetsim::app {

int RunExample(const Args& args);         // cmd_example.cc
int RunConvert(const Args& args);         // cmd_convert.cc
int RunCheck(const Args& args);           // cmd_check.cc
int RunIslands(const Args& args);         // cmd_islands.cc
int RunCollective(const Args& args);      // cmd_collective.cc
int RunPlan(const Args& args);            // cmd_plan.cc
int RunValidate(const Args& args);        // cmd_validate.cc
int RunRun(const Args& args);             // cmd_run.cc
int RunReport(const Args& args);          // cmd_report.cc
int RunSweep(const Args& args);           // cmd_sweep.cc
int RunSweepMerge(const Args& args);      // cmd_sweep_merge.cc
int RunFidelity(const Args& args);        // cmd_fidelity.cc
int RunCalibrate(const Args& args);       // cmd_calibrate.cc
int RunExport(const Args& args);          // cmd_export.cc (export megatron: RunExportMegatron)
int RunImport(const Args& args);          // cmd_megatron.cc
int RunExportMegatron(const Args& args);  // cmd_megatron.cc

}  // namespace hetsim::app

#endif  // HETSIM_APP_CLI_COMMAND_LIST_H_
