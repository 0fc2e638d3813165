// What-if faults resolved against a cluster's device graph: each fault's GPUs or links by id and its
// times in picoseconds, ready for the compute model (compute_model.h) and the runtime
// (fault_runtime.h). Semantics are in docs/faults.md; service/driver/resolve_faults.h makes them from a
// validated Faults message.
//
//   set.faults[0].gpus;  set.faults[0].links;  set.jitter
#ifndef HETSIM_SIM_FAULTS_FAULT_SET_H_
#define HETSIM_SIM_FAULTS_FAULT_SET_H_

#include <optional>
#include <string>
#include <vector>

#include "base/spec/faults.h"
#include "base/time.h"
#include "sim/network/network.h"

namespace hetsim::faults {

struct ResolvedFault {
  spec::FaultKind kind = spec::FaultKind::kNone;
  double factor = 0;          // SLOW
  double at_ms = 0;           // as written, for the report
  std::string text;           // the fault as text format, on one line
  std::string description;    // "GPU 12 (a100/node1/gpu4) compute x2 from 0 ms"
  std::vector<GpuId> gpus;    // gpu and node targets, sorted
  std::vector<LinkId> links;  // link targets; for GPU and node FAIL their links; sorted
  Time at = 0;
  Time end = kTimeMax;  // SLOW and FLAP: at + duration (kTimeMax when duration_ms is 0)
  Time period = 0;      // FLAP
  Time down = 0;        // FLAP
  bool compute() const { return !gpus.empty() && kind != spec::FaultKind::kFail; }  // a straggler
};

struct FaultSet {
  std::vector<ResolvedFault> faults;       // in the order given
  std::optional<spec::JitterSpec> jitter;  // when given with a spread > 0
  std::string jitter_text;                 // the jitter as text format, on one line, for the report
  bool empty() const { return faults.empty() && !jitter; }
};

}  // namespace hetsim::faults

#endif  // HETSIM_SIM_FAULTS_FAULT_SET_H_
