// Declarations of the subcommand entry points listed in commands.cc, one per cmd_<name>.cc.
#ifndef HETSIM_APP_LIB_COMMAND_LIST_H_
#define HETSIM_APP_LIB_COMMAND_LIST_H_

#include "app/lib/commands.h"

namespace hetsim::app {

}  // namespace hetsim::app

#endif  // HETSIM_APP_LIB_COMMAND_LIST_H_
