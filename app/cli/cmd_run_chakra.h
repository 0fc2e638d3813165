// `hetsim run --chakra DIR`: the replay of Chakra traces, reached from `run` when --chakra is given.
#ifndef HETSIM_APP_CLI_CMD_RUN_CHAKRA_H_
#define HETSIM_APP_CLI_CMD_RUN_CHAKRA_H_

#include "app/cli/commands.h"

namespace hetsim::cli {

bool IsChakraRun(const Args& args);  // --chakra is among the arguments
int RunChakraReplay(const Args& args);

}  // namespace hetsim::cli

#endif  // HETSIM_APP_CLI_CMD_RUN_CHAKRA_H_
