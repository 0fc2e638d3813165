// The `hetsim` subcommands. Each takes its arguments (after the subcommand name) and returns the
// process exit code: 0 success, 1 internal failure, 2 bad input or usage.
#ifndef HETSIM_APP_CLI_COMMANDS_H_
#define HETSIM_APP_CLI_COMMANDS_H_

#include <string>
#include <vector>

namespace hetsim::cli {

using Args = std::vector<std::string>;

struct Command {
  const char* name;
  const char* summary;
  int (*run)(const Args& args);
};

// Every subcommand, in the order `hetsim --help` lists them.
const std::vector<Command>& AllCommands();

}  // namespace hetsim::cli

#endif  // HETSIM_APP_CLI_COMMANDS_H_
