// Plan.pipelines split into plans of one pipeline each (docs/file-formats.md, "Pipelines of different
// shapes"): pipeline p's plan is the plan's settings with the pipeline's stages, its batch share as
// the global batch and its micro-batch size. The checks (validate_pipelines.h) and the simulation of
// each pipeline (service/driver/simulate_pipelines.h) read the pipelines through it.
#ifndef HETSIM_PROTO_PIPELINE_PLANS_H_
#define HETSIM_PROTO_PIPELINE_PLANS_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "proto/hetsim.pb.h"

namespace hetsim::proto {

// The pipeline's micro-batch size: its own, or the plan's when 0.
uint64_t PipelineMicroBatchSize(const hetsim::v1::Plan& plan, const hetsim::v1::Pipeline& pipeline);

// Pipeline `p` of `plan` as a plan of its own (no pipelines, no prediction; its context_parallel when it
// sets one).
hetsim::v1::Plan PipelinePlan(const hetsim::v1::Plan& plan, int p);

// Where a problem ValidatePlan finds in PipelinePlan(plan, p) at `path` lies in the plan of pipelines: the
// fields the pipeline's plan took from the pipeline under "pipelines[p]." (its global_batch_size is the
// batch_share), every other field the plan's own ("host_bound_blocks", "schedule", "model...": plan-wide
// settings, no fields of a Pipeline; they were reported as "pipelines[p].host_bound_blocks"), but
// context_parallel under "pipelines[p]." when the pipeline sets its own (`own_context_parallel`).
std::string PipelineFieldPath(int p, absl::string_view path, bool own_context_parallel = false);

// OK for a plan of one pipeline; for a plan of pipelines, InvalidArgument naming `plan_file` and saying
// that `what` takes one pipeline and `why` (what builds a single setup, the Megatron export).
absl::Status RequireOnePipeline(const hetsim::v1::Plan& plan, absl::string_view plan_file, absl::string_view what,
                                absl::string_view why);

}  // namespace hetsim::proto

#endif  // HETSIM_PROTO_PIPELINE_PLANS_H_
