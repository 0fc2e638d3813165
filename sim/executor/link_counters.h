// Per-link counters of an executed iteration including the collectives timed in closed form: the
// network's flow counters plus, for every forward and backward that ran, its virtual stage's
// tensor-/expert-parallel link load (VirtualStageCost::*_link_load). Busy times simply add: a link
// that carried a boundary flow during a collective counts both (the report caps utilisation at 1).
//
//   auto result = Execute(*setup, {});
//   std::vector<LinkCounters> counters = LinkCountersWithCollectives(*setup, *result);
#ifndef HETSIM_SIM_EXECUTOR_LINK_COUNTERS_H_
#define HETSIM_SIM_EXECUTOR_LINK_COUNTERS_H_

#include <cstdint>
#include <map>
#include <vector>

#include "sim/executor/executor.h"
#include "sim/executor/setup.h"
#include "sim/network/network.h"

namespace hetsim::executor {

std::vector<network::LinkCounters> LinkCountersWithCollectives(const ExecutionSetup& setup,
                                                               const ExecutionResult& result);

// The closed-form collectives' part alone, by link id (only the links they load): what a run without
// the network's counters (a later pipeline on a shared network) adds to the links, in the cost of its
// own links rather than the cluster's.
std::map<uint32_t, network::LinkCounters> CollectiveLinkCounters(const ExecutionSetup& setup,
                                                                 const ExecutionResult& result);

}  // namespace hetsim::executor

#endif  // HETSIM_SIM_EXECUTOR_LINK_COUNTERS_H_
