#include "proto/framework_profile.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/check.h"
#include "proto/gpu_presets.h"
#include "proto/resolve.h"

namespace hetsim::proto {
namespace {

const google::protobuf::FieldDescriptor& BehaviourField(const char* name) {
  const google::protobuf::FieldDescriptor* f = hetsim::v1::Plan::descriptor()->FindFieldByName(name);
  HETSIM_CHECK(f != nullptr && f->type() == google::protobuf::FieldDescriptor::TYPE_BOOL,
               "framework behaviour %s is not a bool field of Plan", name);
  return *f;
}

bool NamedInFrameworkOff(const hetsim::v1::Plan& plan, const char* name) {
  for (const std::string& off : plan.framework_off()) {
    if (off == name) return true;
  }
  return false;
}

std::string BehaviourNames() {
  return absl::StrJoin(spec::ProfileOf(spec::Framework::kMegatronCore).Behaviours(), ", ",
                       [](std::string* out, const auto& b) { out->append(b.first); });
}

}  // namespace

spec::Framework FrameworkOf(hetsim::v1::Framework framework) {
  switch (framework) {
    case hetsim::v1::FRAMEWORK_UNSPECIFIED: return spec::Framework::kUnspecified;
    case hetsim::v1::MEGATRON_CORE: return spec::Framework::kMegatronCore;
    case hetsim::v1::MEGATRON_LM_2022: return spec::Framework::kMegatronLm2022;
    case hetsim::v1::MEGATRON_LM_2021: return spec::Framework::kMegatronLm2021;
    case hetsim::v1::MEGATRON_DEEPSPEED: return spec::Framework::kMegatronDeepSpeed;
    case hetsim::v1::FSDP2_TORCHTITAN: return spec::Framework::kFsdp2Torchtitan;
    case hetsim::v1::Framework_INT_MIN_SENTINEL_DO_NOT_USE_:  // protoc's range markers, never a value
    case hetsim::v1::Framework_INT_MAX_SENTINEL_DO_NOT_USE_: break;
  }
  HETSIM_CHECK(false, "a Framework number outside the schema (proto::Load refuses them)");
  return spec::Framework::kUnspecified;
}

bool FollowsTrainSchedule(const hetsim::v1::Plan& plan) {
  if (plan.schedule() != hetsim::v1::ONE_F_ONE_B || plan.virtual_stages() > 1) return false;
  const auto implicit = [](const hetsim::v1::Stage& s) { return s.warmup_forwards() == 0; };
  for (const hetsim::v1::Pipeline& q : plan.pipelines()) {
    if (!std::all_of(q.stages().begin(), q.stages().end(), implicit)) return false;
  }
  return std::all_of(plan.stages().begin(), plan.stages().end(), implicit);
}

spec::ProfileContext ProfileContextOf(const hetsim::v1::Plan& plan, const hetsim::v1::Model& model) {
  spec::ProfileContext c =
      spec::ProfileContextFor(DTypeOf(EffectiveDType(model)), plan.schedule() == hetsim::v1::INTERLEAVED_1F1B);
  for (const hetsim::v1::Stage& s : plan.stages()) spec::AddStage(c, static_cast<int>(s.zero_stage()));
  bool cut = plan.stages_size() > 1;
  for (const hetsim::v1::Pipeline& pl : plan.pipelines()) {
    for (const hetsim::v1::Stage& s : pl.stages()) spec::AddStage(c, static_cast<int>(s.zero_stage()));
    cut = cut || pl.stages_size() > 1;
  }
  spec::SetTies(c, model.has_transformer() && model.transformer().tied_embeddings(), cut, plan.pipelines_size() > 0);
  c.train_schedule = FollowsTrainSchedule(plan);
  c.pipelines = plan.pipelines_size() > 0;
  return c;
}

void ApplyFrameworkProfile(hetsim::v1::Plan* plan, const hetsim::v1::Model& model) {
  const spec::FrameworkProfile& profile = spec::ProfileOf(FrameworkOf(plan->framework()));
  const spec::ProfileContext context = ProfileContextOf(*plan, model);
  const google::protobuf::Reflection& reflection = *plan->GetReflection();
  for (const auto& [name, value] : profile.Behaviours()) {
    if (!spec::ProfileTurnsOn(name, value, context) || NamedInFrameworkOff(*plan, name)) continue;
    reflection.SetBool(plan, &BehaviourField(name), true);
  }
}

std::string DescribeFramework(const hetsim::v1::Plan& plan) {
  const google::protobuf::Reflection& reflection = *plan.GetReflection();
  if (plan.framework() == hetsim::v1::FRAMEWORK_UNSPECIFIED) {
    // No profile: the behaviours the plan sets itself (zero3_lock_step, overlap_grad_reduce ...) still change
    // the run, so check's summary names them.
    std::vector<std::string> on;
    for (const auto& b : spec::ProfileOf(spec::Framework::kMegatronCore).Behaviours()) {
      if (reflection.GetBool(plan, &BehaviourField(b.first))) on.emplace_back(b.first);
    }
    if (on.empty()) return "";
    return absl::StrFormat("  no framework; behaviours on by the plan's own fields: %s\n", absl::StrJoin(on, ", "));
  }
  const spec::FrameworkProfile& profile = spec::ProfileOf(FrameworkOf(plan.framework()));
  const std::string behaviours = absl::StrJoin(profile.Behaviours(), ", ", [&](std::string* out, const auto& b) {
    absl::StrAppend(out, b.first, reflection.GetBool(plan, &BehaviourField(b.first)) ? " on" : " off");
  });
  std::string line = absl::StrFormat("  framework %s (%s): %s", profile.name, profile.enum_name, behaviours);
  if (plan.framework_off_size() > 0) {
    absl::StrAppend(&line, "; switched off by the plan: ", absl::StrJoin(plan.framework_off(), ", "));
  }
  return line + "\n";
}

void CheckFrameworkOff(Problems& p, const hetsim::v1::Plan& plan) {
  if (plan.framework_off_size() > 0 && plan.framework() == hetsim::v1::FRAMEWORK_UNSPECIFIED) {
    p.Add("framework_off", "needs a framework (it switches off behaviours of the framework's profile)");
  }
  // Plan.host_bound_blocks and Plan.cuda_launch_blocking price the ops the framework's profile counts in its
  // block code.
  if (!(spec::ProfileOf(FrameworkOf(plan.framework())).block_host_ops.forward > 0)) {
    std::vector<std::string> counted;
    for (const spec::FrameworkProfile& f : spec::FrameworkProfiles()) {
      if (f.block_host_ops.forward > 0) counted.emplace_back(f.enum_name);
    }
    for (const auto& [field, set] : {std::pair{"host_bound_blocks", plan.host_bound_blocks()},
                                     std::pair{"cuda_launch_blocking", plan.cuda_launch_blocking()}}) {
      if (set)
        p.Add(field, "needs a framework whose profile counts a block's operators (%s)", absl::StrJoin(counted, ", "));
    }
  }
  absl::flat_hash_set<std::string> seen;
  const google::protobuf::Reflection& reflection = *plan.GetReflection();
  for (int i = 0; i < plan.framework_off_size(); ++i) {
    const std::string& name = plan.framework_off(i);
    const std::string at = absl::StrFormat("framework_off[%d]", i);
    bool known = false;
    for (const auto& b : spec::ProfileOf(spec::Framework::kMegatronCore).Behaviours()) known = known || name == b.first;
    if (!known) {
      p.Add(at, "\"%s\" is not a framework behaviour (%s)", name, BehaviourNames());
    } else if (!seen.insert(name).second) {
      p.Add(at, "\"%s\" named twice", name);
    } else if (reflection.GetBool(plan, &BehaviourField(name.c_str()))) {
      p.Add(at, "\"%s\" is switched off here but set on by the plan's own field %s", name, name);
    }
  }
}

}  // namespace hetsim::proto
