// What-if faults resolved against a cluster's device graph: each fault's GPUs or links by id and its
// times in picoseconds, ready for the compute model (compute_model.h) and the injector (injector.h).
// Semantics are in docs/faults.md.
//
//   auto set = ResolveFaults(faults, topology, SourcesOf(faults, "faults.pbtxt"));
//   set->faults[0].gpus;  set->faults[0].links;  set->jitter
#ifndef HETSIM_SIM_FAULTS_FAULT_SET_H_
#define HETSIM_SIM_FAULTS_FAULT_SET_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "base/time.h"
#include "proto/hetsim.pb.h"
#include "sim/network/network.h"
#include "topology/device_graph.h"

namespace hetsim::sim::faults {

// Where a fault was written, for error messages: "<file>: <path><field>: <problem>".
struct FaultSource {
  std::string file;  // "faults.pbtxt", or "--fault 'gpu: 3 kind: SLOW factor: 2'"
  std::string path;  // "faults[2]." in a file, "" on the command line
};
// Sources of a file's faults: file, "faults[i]." each.
std::vector<FaultSource> SourcesOf(const v1::Faults& faults, const std::string& file);

struct ResolvedFault {
  v1::Fault fault;
  std::string text;           // the fault as text format, on one line
  std::string description;    // "GPU 12 (a100/node1/gpu4) compute x2 from 0 ms"
  std::vector<GpuId> gpus;    // gpu and node targets, sorted
  std::vector<LinkId> links;  // link targets; for GPU and node FAIL their links; sorted
  Time at = 0;
  Time end = kTimeMax;  // SLOW and FLAP: at + duration (kTimeMax when duration_ms is 0)
  Time period = 0;      // FLAP
  Time down = 0;        // FLAP
  bool compute() const { return !gpus.empty() && fault.kind() != v1::FAIL; }  // a straggler
};

struct FaultSet {
  std::vector<ResolvedFault> faults;  // in the order given
  std::optional<v1::Jitter> jitter;   // when given with a spread > 0
  bool empty() const { return faults.empty() && !jitter; }
};

// Resolves validated faults (proto/validate_faults.h): GPU ids, a node's GPUs, links by name (every
// parallel link of that name), by class or by inter-island link index. InvalidArgument naming the
// source and field for a link name that is no link of the cluster or a class without links.
absl::StatusOr<FaultSet> ResolveFaults(const v1::Faults& faults, const topology::Topology& topology,
                                       const std::vector<FaultSource>& sources);

// "a100/node0/gpu3->a100/node0/nvswitch": the name a `link` fault uses for link `id`.
std::string LinkName(const topology::Topology& topology, LinkId id);

}  // namespace hetsim::sim::faults

#endif  // HETSIM_SIM_FAULTS_FAULT_SET_H_
