// The simulations behind an overhead fit (overhead_fit.h): a run simulated as its cluster stands and
// twice more with one value moved, and the cluster-wide values written into a cluster.
#ifndef HETSIM_SERVICE_CALIBRATE_OVERHEAD_PROBE_H_
#define HETSIM_SERVICE_CALIBRATE_OVERHEAD_PROBE_H_

#include <array>

#include "absl/status/statusor.h"
#include "proto/hetsim.pb.h"
#include "proto/inputs.h"
#include "service/calibrate/overhead_fit.h"

namespace hetsim::calibrate {

// Moves every GPU type of `cluster` by `x` (c, db, da, n: overhead_fit.h): max_efficiency / (1 + c),
// iteration_overhead_ms + db, pass_overhead_us + da, and the inter-node fabric: every island's
// nic_bandwidth_gbps and tcp_stream_gbps and every inter-island link's bandwidth_gbps / (1 + n) (the
// links inside a node stay), hbm_efficiency / (1 + h), and every NCCL fabric's launch_latency_ns + l
// (node types, islands, inter-island links; their presets filled in first). The GPU presets must already be applied
// (proto::LoadCluster does); a value that ends at 0 is written as a tiny positive one, since 0 means
// "the preset's".
void ApplyOverheadValues(hetsim::v1::Cluster& cluster, const OverheadValues& x);

// How far the values may move on `cluster` (presets applied): max_efficiency / (1 + c) and
// hbm_efficiency / (1 + h) <= 1 on every GPU type, neither overhead below 0 on any, no NCCL launch
// latency below 0.
OverheadBounds BoundsOf(const hetsim::v1::Cluster& cluster);

// One simulated iteration of validated `inputs` with the cluster moved by `x`, in seconds, at the
// fidelity `hetsim run` chooses (exact while affordable: service/driver/fidelity_choice.h), or exact.
absl::StatusOr<double> SimulatedSeconds(const proto::PlanInputs& inputs, const OverheadValues& x, bool exact);

// The probe of a run measured at `measured_s` whose simulation as the cluster stands took
// `simulated_s`: five more simulations (GEMMs kGemmProbe slower, passes kPassProbe dearer, inter-node
// links kNetworkProbe slower, memory-bound kernels kKernelProbe slower, collectives kCollectiveProbe
// dearer).
absl::StatusOr<OverheadProbe> ProbeRun(const proto::PlanInputs& inputs, double simulated_s, double measured_s,
                                       bool exact);

}  // namespace hetsim::calibrate

#endif  // HETSIM_SERVICE_CALIBRATE_OVERHEAD_PROBE_H_
