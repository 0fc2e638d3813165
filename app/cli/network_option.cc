#include "app/cli/network_option.h"

#include "absl/strings/str_cat.h"

namespace hetsim::app {

void AddNetworkOption(boost::program_options::options_description& options, std::string* name) {
  *name = sim::NetworkModeName(sim::NetworkMode::kMaxMinFair);
  options.add_options()("network", boost::program_options::value(name)->value_name("MODE"),
                        "max-min-fair (default; max-min for short) or contention-free");
}

absl::StatusOr<sim::NetworkMode> ParseNetworkOption(absl::string_view name) {
  absl::StatusOr<sim::NetworkMode> mode = sim::ParseNetworkMode(name);
  if (!mode.ok()) return absl::InvalidArgumentError(absl::StrCat("--network: ", mode.status().message()));
  return mode;
}

}  // namespace hetsim::app
