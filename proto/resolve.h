// The one conversion from validated messages to the typed, resolved spec the simulator reads
// (base/spec/): defaults applied, units converted, enums mapped to hetsim's own. Below this line nothing
// (sim/workload, sim/pipeline) sees a message or a file path; the labels in the spec ("plan.pbtxt:
// stages[3]") are what its messages name.
//
//   auto model = proto::ResolveModel(inputs.model, "model.pbtxt");
//   auto plan = proto::ResolvePlan(inputs.plan, inputs.plan_path);
//   auto gpu = proto::ResolveGpu(cluster.gpu_types(0), "cluster.pbtxt: gpu_types[\"A100\"]");
#ifndef HETSIM_PROTO_RESOLVE_H_
#define HETSIM_PROTO_RESOLVE_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/spec/dtype.h"
#include "base/spec/gpu.h"
#include "base/spec/model.h"
#include "base/spec/plan.h"
#include "proto/hetsim.pb.h"

namespace hetsim::proto {

spec::DType DTypeOf(hetsim::v1::DType dtype);  // DTYPE_UNSPECIFIED (and unknown values) -> BF16
spec::Recompute RecomputeOf(hetsim::v1::Recompute recompute);
spec::ScheduleKind ScheduleKindOf(hetsim::v1::Schedule schedule);  // SCHEDULE_UNSPECIFIED -> 1F1B

// Applies proto::ValidateModel (the model's rules have one home) and refuses enum values this build
// does not know; `source` names the model in messages ("model.pbtxt" or "plan.pbtxt: model").
absl::StatusOr<spec::ModelSpec> ResolveModel(const hetsim::v1::Model& model, absl::string_view source);

// Checks the efficiency fields it reads (a GPU type need not come from a validated file: calibration
// fits build them); `where` prefixes messages ("cluster.pbtxt: gpu_types[\"A100\"]").
absl::StatusOr<spec::GpuSpec> ResolveGpu(const hetsim::v1::GpuType& gpu, absl::string_view where);

// One stage of a plan (`where` its label). Zeros become the documented defaults.
spec::StageSpec ResolveStage(const hetsim::v1::Stage& stage, std::string where);

// Plan.tp_comm_overlap_config with Transformer Engine's defaults where a field is absent.
spec::TpCommOverlapSpec ResolveTpCommOverlapConfig(const hetsim::v1::Plan& plan);
spec::TpCommOverlapSpec ResolveTpCommOverlapConfig(const hetsim::v1::TpCommOverlapConfig& config);

// A plan whose stages are labelled "<plan_file>: stages[i]"; refuses a schedule value this build
// does not know.
absl::StatusOr<spec::PlanSpec> ResolvePlan(const hetsim::v1::Plan& plan, absl::string_view plan_file);

}  // namespace hetsim::proto

#endif  // HETSIM_PROTO_RESOLVE_H_
