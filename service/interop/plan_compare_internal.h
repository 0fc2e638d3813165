// An exporter's check by its own importer (export torchtitan, export nemo): the plan beside the plan the
// exported config imports back as. A difference in the layout (stages, pipelines, batch, schedule, virtual
// stages, context parallelism) is a problem, since the config would run another plan; a difference in a
// behaviour the other tool fixes (its runtime's overlaps, buckets, kernels) is a note "FIELD: not exported
// (...)"; a difference in the model is a problem.
#ifndef HETSIM_SERVICE_INTEROP_PLAN_COMPARE_INTERNAL_H_
#define HETSIM_SERVICE_INTEROP_PLAN_COMPARE_INTERNAL_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "proto/hetsim.pb.h"
#include "proto/validate_problems.h"

namespace hetsim::interop {

// Why the tool's config gives a stage field (by name) other than the plan's.
using StageReason = std::string (*)(const std::string& field);

// `plan` (as written, its framework profile applied) beside `again` (the import of its export, the same
// profile applied). `tool` names the other tool in the messages ("torchtitan", "NeMo").
void ComparePlans(proto::Problems& p, std::vector<std::string>& notes, const hetsim::v1::Plan& plan,
                  const hetsim::v1::Plan& again, absl::string_view tool, StageReason why);

// `model` beside `again`, their names aside and an unspecified dtype read as the schema's BF16: a
// difference is one problem at "model", `problem` followed by the differences.
void CompareModels(proto::Problems& p, hetsim::v1::Model model, const hetsim::v1::Model& again,
                   absl::string_view problem);

}  // namespace hetsim::interop

#endif  // HETSIM_SERVICE_INTEROP_PLAN_COMPARE_INTERNAL_H_
