// Validated what-if faults (proto/validate_faults.h) resolved against the cluster's topology: GPU
// ids, a node's GPUs, links by name (every parallel link of that name), by class or by inter-island
// link index, times in picoseconds; the set sim/faults runs (docs/faults.md).
//
//   auto set = ResolveFaults(faults, topology, SourcesOf(faults, "faults.pbtxt"));
//   set->faults[0].gpus;  set->faults[0].links;  set->jitter
#ifndef HETSIM_SERVICE_DRIVER_RESOLVE_FAULTS_H_
#define HETSIM_SERVICE_DRIVER_RESOLVE_FAULTS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "base/time.h"
#include "proto/hetsim.pb.h"
#include "proto/inputs.h"
#include "sim/faults/fault_set.h"
#include "topology/device_graph.h"

namespace hetsim::driver {

// Where a fault was written, for error messages: "<file>: <path><field>: <problem>".
struct FaultSource {
  std::string file;  // "faults.pbtxt", or "--fault 'gpu: 3 kind: SLOW factor: 2'"
  std::string path;  // "faults[2]." in a file, "" on the command line
};
// Sources of a file's faults: file, "faults[i]." each.
std::vector<FaultSource> SourcesOf(const v1::Faults& faults, const std::string& file);

// A Faults message (a file, or a message in memory) validated against the cluster it is meant for.
absl::StatusOr<v1::Faults> LoadFaults(const proto::Source& source, const v1::Cluster& cluster);

// InvalidArgument naming the source and field for a link name that is no link of the cluster or a
// class without links.
absl::StatusOr<faults::FaultSet> ResolveFaults(const v1::Faults& faults, const topology::Topology& topology,
                                               const std::vector<FaultSource>& sources);

// "a100/node0/gpu3->a100/node0/nvswitch": the name a `link` fault uses for link `id`.
std::string LinkName(const topology::Topology& topology, LinkId id);

}  // namespace hetsim::driver

#endif  // HETSIM_SERVICE_DRIVER_RESOLVE_FAULTS_H_
