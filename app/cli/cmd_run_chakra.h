// `hetsim run --chakra DIR`: the replay of Chakra traces, reached from `run` when --chakra is given.
#ifndef HETSIM_APP_CLI_CMD_RUN_CHAKRA_H_
#define HETSIM_APP_CLI_CMD_RUN_CHAKRA_H_

#include "app/cli/commands.h"

namespace hetsim::app {

bool IsChakraRun(const Args& args);  // --chakra is among the arguments
int RunChakraReplay(const Args& args);

}  // namespace hetsim::app

#endif  // HETSIM_APP_CLI_CMD_RUN_CHAKRA_H_
