// `hetsim run --faults FILE --fault TEXT... --jitter TEXT`: the what-if faults of a run, loaded and
// validated against the cluster (docs/faults.md).
#ifndef HETSIM_APP_CLI_FAULT_OPTIONS_H_
#define HETSIM_APP_CLI_FAULT_OPTIONS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/hetsim.pb.h"
#include "service/driver/resolve_faults.h"
#include "sim/faults/fault_set.h"

namespace hetsim::app {

struct FaultOptions {
  std::string faults_path;               // --faults FILE (a Faults message)
  std::vector<std::string> fault_texts;  // --fault 'gpu: 3 kind: SLOW factor: 2' (a Fault in text format)
  std::string jitter_text;               // --jitter 'seed: 7 distribution: LOGNORMAL spread: 0.05'
  bool empty() const { return faults_path.empty() && fault_texts.empty() && jitter_text.empty(); }
};

struct LoadedFaults {
  v1::Faults faults;  // the file's faults, then each --fault; --jitter replaces the file's jitter
  std::vector<driver::FaultSource> sources;  // per fault, for error messages
};

// InvalidArgument naming the file (or the option and its text) and the field for anything wrong.
absl::StatusOr<LoadedFaults> LoadFaultOptions(const FaultOptions& options, const v1::Cluster& cluster);

}  // namespace hetsim::app

#endif  // HETSIM_APP_CLI_FAULT_OPTIONS_H_
