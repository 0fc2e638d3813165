// Does an nccl-tests log describe the island it is to calibrate? Its GPU model against the island's
// GPU type, its hosts and GPUs per host against the island's nodes.
//
// A refusal where the fit would write a cluster that is wrong for certain: another GPU family than the
// island's (an H100 log fitted into an A100 island moves NVLink4's efficiency into NVLink3: almost
// always the wrong --cluster or --island), more hosts than the island has nodes or more GPUs per host
// than its nodes have (nothing to simulate the log on). A warning where the fit stays meaningful but
// the reader should know: the same family in another memory size or form factor (the fabric is the
// node type's, not the GPU's), a GPU the check cannot name, fewer GPUs per host than a node has (the
// node type is fitted from a partial node).
#ifndef HETSIM_SERVICE_CALIBRATE_NCCL_CLUSTER_MATCH_H_
#define HETSIM_SERVICE_CALIBRATE_NCCL_CLUSTER_MATCH_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "proto/hetsim.pb.h"
#include "service/calibrate/nccl_log.h"

namespace hetsim::calibrate {

// The GPU family a name says: "A100" for "NVIDIA A100-SXM4-80GB" and the preset "A100-80GB", "H100"
// for "NVIDIA H100 80GB HBM3", "MI300X" for "AMD Instinct MI300X VF", "GTX1080" for "NVIDIA GeForce GTX
// 1080" (a series word, then its number); "" when no token says one ("NVIDIA Graphics Device").
std::string GpuFamily(absl::string_view name);

// Checks `log` against island `island` of `cluster` (node counts as written, GPU type by preset, or by
// name without one). InvalidArgument "<file>:<line>: ..." for a refusal; warnings are appended.
absl::Status CheckLogAgainstIsland(const NcclLog& log, const hetsim::v1::Cluster& cluster, int island,
                                   std::vector<std::string>& warnings);

}  // namespace hetsim::calibrate

#endif  // HETSIM_SERVICE_CALIBRATE_NCCL_CLUSTER_MATCH_H_
