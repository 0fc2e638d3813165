// One-screen, human-readable summaries of validated inputs (`hetsim check`).
#ifndef HETSIM_PROTO_SUMMARY_H_
#define HETSIM_PROTO_SUMMARY_H_

#include <string>

#include "absl/strings/string_view.h"
#include "proto/hetsim.pb.h"
#include "proto/inputs.h"

namespace hetsim::proto {

// `cluster` with GPU presets applied. Per island: nodes x GPUs, GPU type, peak PFLOP/s (BF16, or FP16
// where a GPU has no BF16), HBM, fabric; then the inter-island links.
std::string SummarizeCluster(const hetsim::v1::Cluster& cluster, absl::string_view file);
std::string SummarizeModel(const hetsim::v1::Model& model, absl::string_view file);
// Plan header (schedule, batch, microbatches) and one line per stage.
std::string SummarizePlan(const proto::PlanInputs& inputs);
std::string SummarizeSweep(const hetsim::v1::Sweep& sweep, absl::string_view file);

}  // namespace hetsim::proto

#endif  // HETSIM_PROTO_SUMMARY_H_
