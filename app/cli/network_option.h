// `--network MODE`, shared by the commands that simulate (run, collective): one flag, one help text,
// one parser (network::ParseNetworkMode, which also takes the short form "max-min").
#ifndef HETSIM_APP_CLI_NETWORK_OPTION_H_
#define HETSIM_APP_CLI_NETWORK_OPTION_H_

#include <string>

#include <boost/program_options.hpp>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "sim/network/network.h"

namespace hetsim::cli {

// Adds --network MODE, stored in `*name` (default "max-min-fair").
void AddNetworkOption(boost::program_options::options_description& options, std::string* name);

// The mode `name` names; InvalidArgument starting "--network: " otherwise.
absl::StatusOr<network::NetworkMode> ParseNetworkOption(absl::string_view name);

}  // namespace hetsim::cli

#endif  // HETSIM_APP_CLI_NETWORK_OPTION_H_
