#include "traces/framework_report.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace hetsim::traces {
namespace {

// The run's value of one behaviour field of the resolved plan.
bool BehaviourOn(const spec::PlanSpec& plan, std::string_view field) {
  for (const auto& [name, member] : spec::kBehaviourFields) {
    if (field == name) return plan.*member;
  }
  return false;
}

spec::ProfileContext ContextOf(const spec::SimulationSpec& spec) {
  spec::ProfileContext c =
      spec::ProfileContextFor(spec.model.dtype, spec.plan.schedule == spec::ScheduleKind::kInterleaved1F1B);
  for (const spec::StageSpec& s : spec.plan.stages) spec::AddStage(c, s.zero_stage);
  bool cut = spec.plan.stages.size() > 1;
  for (const spec::PipelineSpec& pl : spec.plan.pipelines) {
    for (const spec::StageSpec& s : pl.stages) spec::AddStage(c, s.zero_stage);
    cut = cut || pl.stages.size() > 1;
  }
  spec::SetTies(c, spec.model.transformer && spec.model.transformer->tied_embeddings, cut,
                !spec.plan.pipelines.empty());
  // DeepSpeed's TrainSchedule (proto::FollowsTrainSchedule on the resolved plan).
  const auto implicit = [](const spec::StageSpec& s) { return s.warmup_forwards == 0; };
  bool warmups_implicit = std::all_of(spec.plan.stages.begin(), spec.plan.stages.end(), implicit);
  for (const spec::PipelineSpec& pl : spec.plan.pipelines) {
    warmups_implicit = warmups_implicit && std::all_of(pl.stages.begin(), pl.stages.end(), implicit);
  }
  c.pipelines = !spec.plan.pipelines.empty();
  c.train_schedule =
      spec.plan.schedule == spec::ScheduleKind::kOneFOneB && spec.plan.virtual_stages <= 1 && warmups_implicit;
  return c;
}

}  // namespace

void AddFrameworkProfile(const spec::SimulationSpec& spec, v1::Report& report) {
  const spec::PlanSpec& plan = spec.plan;
  if (plan.framework == spec::Framework::kUnspecified) return;
  const spec::FrameworkProfile& profile = spec::ProfileOf(plan.framework);
  const spec::ProfileContext context = ContextOf(spec);
  report.set_framework(profile.name);
  for (const auto& [field, value] : profile.Behaviours()) {
    v1::FrameworkBehaviourReport& b = *report.add_framework_behaviours();
    b.set_field(field);
    b.set_on(BehaviourOn(plan, field));
    const bool switched_off =
        std::find(plan.framework_off.begin(), plan.framework_off.end(), field) != plan.framework_off.end();
    const bool by_profile = spec::ProfileTurnsOn(field, value, context);
    b.set_set_by(switched_off ? "framework_off" : (b.on() && !by_profile ? "plan" : "profile"));
    b.set_profile(std::string(spec::WhenName(value.when)));
    b.set_source(value.source);
  }
}

std::string FormatFramework(const v1::Report& report) {
  if (report.framework().empty()) return "";
  const std::string behaviours =
      absl::StrJoin(report.framework_behaviours(), ", ", [](std::string* out, const v1::FrameworkBehaviourReport& b) {
        absl::StrAppend(out, b.field(), b.on() ? " on" : " off",
                        b.set_by() == "profile" ? "" : " (" + b.set_by() + ")");
      });
  return absl::StrFormat("framework %s: %s\n", report.framework(), behaviours);
}

}  // namespace hetsim::traces
