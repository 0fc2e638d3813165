// `hetsim import megatron` and `hetsim export megatron` (cmd_megatron.cc); `export` hands its
// `megatron` form here (cmd_export.cc).
#ifndef HETSIM_APP_CLI_CMD_MEGATRON_H_
#define HETSIM_APP_CLI_CMD_MEGATRON_H_

#include "app/cli/commands.h"

namespace hetsim::cli {

int RunExportMegatron(const Args& args);
int RunExportTorchtitan(const Args& args);  // cmd_torchtitan_export.cc
// `export deepspeed PLAN` (cmd_deepspeed_export.cc).
int RunExportDeepSpeed(const Args& args);
// `export nemo PLAN` (cmd_nemo_export.cc).
int RunExportNemo(const Args& args);

}  // namespace hetsim::cli

#endif  // HETSIM_APP_CLI_CMD_MEGATRON_H_
