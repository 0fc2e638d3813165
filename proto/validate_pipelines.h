// The checks of a plan of data-parallel pipelines of different shapes (Plan.pipelines): the plan's own
// stages left empty; each pipeline named once, its batch share and micro-batch size, its stages as a
// plan's (covering every layer, meshes, degrees: ValidatePlan on PipelinePlan, its paths the plan's by
// PipelineFieldPath); the shares adding up to global_batch_size; the pipelines' tasks together within
// kMaxPipelineTasks; no GPU in two pipelines; every TP degree holding a layer dividing the finest one
// (the gradient shards, layer_range_sync.h); and what the per-layer-range reduction does not model
// refused (ZeRO-3, ZeRO with the tied sync, bucketed reduction, replica groups, context and expert
// parallelism, MoE models).
#ifndef HETSIM_PROTO_VALIDATE_PIPELINES_H_
#define HETSIM_PROTO_VALIDATE_PIPELINES_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "proto/hetsim.pb.h"

namespace hetsim::proto {

// `plan` has pipelines; `cluster` and `model` as for ValidatePlan.
absl::Status ValidatePipelines(const hetsim::v1::Plan& plan, const hetsim::v1::Cluster& cluster,
                               const hetsim::v1::Model& model, absl::string_view plan_file);

}  // namespace hetsim::proto

#endif  // HETSIM_PROTO_VALIDATE_PIPELINES_H_
