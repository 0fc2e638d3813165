#include "app/cli/ideal_option.h"

namespace hetsim::cli {

void AddIdealOption(boost::program_options::options_description& options, bool* ideal) {
  options.add_options()("ideal", boost::program_options::bool_switch(ideal),
                        "ideal hardware (Cluster.ideal): links at line rate, no NCCL protocol latency, ideal compute");
}

}  // namespace hetsim::cli
