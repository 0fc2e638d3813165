// Validation of what-if faults (the Faults message, and single Fault texts from the command line)
// against the cluster they will be injected into.
//
// Checked here: every fault has a target and a kind; GPU ids, islands, nodes, link classes and
// inter-island link indices exist in the cluster; a link name has the form "src->dst" (whether the
// devices and the link exist needs the device graph: sim/faults resolves names and reports unknown
// ones with the same file and field path); the kind suits the target (FLAP on links only); SLOW has
// a factor > 0; FLAP has 0 < down_ms < period_ms; times are >= 0 and fit picoseconds; jitter has a
// seed, a distribution and a spread in [0, 1), and its GPUs exist.
//
//   Problems p("faults.pbtxt");
//   if (auto s = ValidateFaults(faults, cluster, "faults.pbtxt"); !s.ok()) ...  // exit 2
#ifndef HETSIM_PROTO_VALIDATE_FAULTS_H_
#define HETSIM_PROTO_VALIDATE_FAULTS_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "proto/hetsim.pb.h"
#include "proto/validate_problems.h"

namespace hetsim::proto {

// Largest factor a SLOW fault may have (a 10^6 times slower GPU is as good as failed; larger factors
// overflow picoseconds on long tasks).
inline constexpr double kMaxFaultFactor = 1e6;

// Every problem of `faults` as "<file>: faults[i].<field>: <problem>" lines; `cluster` must be valid.
absl::Status ValidateFaults(const v1::Faults& faults, const v1::Cluster& cluster, absl::string_view file);

// One fault; problems are added under `path` (e.g. "faults[2]." or "" for a --fault text).
void ValidateFault(const v1::Fault& fault, const v1::Cluster& cluster, absl::string_view path, Problems& p);

// Jitter; problems under `path` (e.g. "jitter.").
void ValidateJitter(const v1::Jitter& jitter, const v1::Cluster& cluster, absl::string_view path, Problems& p);

// GPUs of the cluster (islands x nodes x GPUs per node of their node type; 0 for unknown types).
int64_t ClusterGpuCount(const v1::Cluster& cluster);

}  // namespace hetsim::proto

#endif  // HETSIM_PROTO_VALIDATE_FAULTS_H_
