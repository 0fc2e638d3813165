#include "app/cli/network_option.h"

#include "absl/strings/str_cat.h"

namespace hetsim::cli {

void AddNetworkOption(boost::program_options::options_description& options, std::string* name) {
  *name = network::NetworkModeName(network::NetworkMode::kMaxMinFair);
  options.add_options()("network", boost::program_options::value(name)->value_name("MODE"),
                        "max-min-fair (default; max-min for short) or contention-free");
}

absl::StatusOr<network::NetworkMode> ParseNetworkOption(absl::string_view name) {
  absl::StatusOr<network::NetworkMode> mode = network::ParseNetworkMode(name);
  if (!mode.ok()) return absl::InvalidArgumentError(absl::StrCat("--network: ", mode.status().message()));
  return mode;
}

}  // namespace hetsim::cli
