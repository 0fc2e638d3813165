// `--ideal`, shared by the commands that simulate (collective, run): ideal hardware, as Cluster.ideal
// (links at line rate, no NCCL protocol latency, and the compute model's ideal mode).
#ifndef HETSIM_APP_CLI_IDEAL_OPTION_H_
#define HETSIM_APP_CLI_IDEAL_OPTION_H_

#include <boost/program_options.hpp>

#include "proto/hetsim.pb.h"

namespace hetsim::cli {

// Adds the --ideal switch, stored in `*ideal`.
void AddIdealOption(boost::program_options::options_description& options, bool* ideal);

}  // namespace hetsim::cli

#endif  // HETSIM_APP_CLI_IDEAL_OPTION_H_
