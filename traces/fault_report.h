// What-if faults in the report (docs/faults.md): one FaultReport per fault (and one for jitter),
// whether a failure stopped the iteration, when, and what it lost; the lines of the text table.
//
//   v1::Report report = BuildReport(setup, result);
//   AddFaultsToReport(setup, result, fault_set, &report);
//   std::fputs(FormatFaultTable(report).c_str(), stdout);
#ifndef HETSIM_TRACES_FAULT_REPORT_H_
#define HETSIM_TRACES_FAULT_REPORT_H_

#include <string>

#include "proto/hetsim.pb.h"
#include "sim/executor/executor.h"
#include "sim/executor/setup.h"
#include "sim/faults/fault_set.h"

namespace hetsim::traces {

// Fills report fields 26-29. For a failed iteration it also makes the report describe the part that
// ran: throughput, MFU and bubble are 0 (no iteration completed), iteration_time_ms is the failure
// time, and stages that had not finished get their synchronisation, optimizer and idle time up to
// the failure.
void AddFaultsToReport(const executor::ExecutionSetup& setup, const executor::ExecutionResult& result,
                       const faults::FaultSet& faults, v1::Report* report);
// The same for a run beside others on one network (a pipeline of Plan.pipelines): `result` says whether
// and when a failure stopped it, `shared` is the one fault runtime's outcome (its effects).
void AddFaultsToReport(const executor::ExecutionSetup& setup, const executor::ExecutionResult& result,
                       const faults::FaultOutcome& shared, const faults::FaultSet& faults, v1::Report* report);

// What a failure lost: "3 of 8 microbatches finished (5 lost, 20 samples); stage 0: 6 of 8 forwards,
// 3 of 8 backwards (1 cut at the failure); ...; not run: ...". Empty when the run did not fail.
std::string LostWork(const executor::ExecutionSetup& setup, const executor::ExecutionResult& result);

// The effect of a straggler fault on GPUs the plan does not use starts with this.
inline constexpr const char* kNothingOnItsGpus = "none: the plan runs nothing on its GPUs";

// The faults section of the text report (empty without faults).
std::string FormatFaultTable(const v1::Report& report);

}  // namespace hetsim::traces

#endif  // HETSIM_TRACES_FAULT_REPORT_H_
