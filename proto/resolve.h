// The one conversion from validated messages to the typed, resolved spec the simulator reads
// (base/spec/): defaults applied, units converted, enums mapped to hetsim's own. Below this line nothing
// (sim/workload, sim/pipeline) sees a message or a file path; the labels in the spec ("plan.pbtxt:
// stages[3]") are what its messages name.
//
//   spec::ModelSpec model = proto::ResolveModel(inputs.model, "model.pbtxt");
//   spec::PlanSpec plan = proto::ResolvePlan(inputs.plan, inputs.plan_path);
//   spec::GpuSpec gpu = proto::ResolveGpu(cluster.gpu_types(0));
//
// Precondition of every function here: the message passed its check (proto::ValidateModel,
// ValidatePlan, ValidateCluster: proto::LoadPlanInputs and ValidatePlanInputs run them), and came
// through proto::Load or ParseMessage, which refuse enum numbers outside the schema. The resolver
// trusts that and checks nothing again (issue 38: validate once); an enum number outside the schema
// is a programming error (HETSIM_CHECK).
#ifndef HETSIM_PROTO_RESOLVE_H_
#define HETSIM_PROTO_RESOLVE_H_

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

// `model` passed proto::ValidateModel; `source` names the model in the spec's messages
// ("model.pbtxt" or "plan.pbtxt: model").
spec::ModelSpec ResolveModel(const hetsim::v1::Model& model, absl::string_view source);

// `gpu` is one of a validated cluster's GPU types (presets applied), or a calibration fit's, whose
// fitted efficiencies are kept in the same ranges (service/calibrate/gemm_fit.cc clamps them).
spec::GpuSpec ResolveGpu(const hetsim::v1::GpuType& gpu);

// One stage of a plan (`where` its label). Zeros become the documented defaults.
spec::StageSpec ResolveStage(const hetsim::v1::Stage& stage, std::string where);

// Plan.tp_comm_overlap_config with Transformer Engine's defaults where a field is absent.
spec::TpCommOverlapSpec ResolveTpCommOverlapConfig(const hetsim::v1::Plan& plan);
spec::TpCommOverlapSpec ResolveTpCommOverlapConfig(const hetsim::v1::TpCommOverlapConfig& config);

// A validated plan, its stages labelled "<plan_file>: stages[i]"; a plan of pipelines with each
// pipeline's stages resolved as the plan of its own the simulator runs (PipelinePlan).
spec::PlanSpec ResolvePlan(const hetsim::v1::Plan& plan, absl::string_view plan_file);

}  // namespace hetsim::proto

#endif  // HETSIM_PROTO_RESOLVE_H_
