#include "service/interop/plan_compare_internal.h"

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/util/message_differencer.h"

namespace hetsim::interop {
namespace {

namespace v1 = hetsim::v1;
namespace pb = google::protobuf;

// A field's value as text format writes it ("[1, 2]" for a repeated field).
std::string ValueOf(const pb::Message& m, const pb::FieldDescriptor* f) {
  std::string out;
  if (!f->is_repeated()) {
    pb::TextFormat::PrintFieldValueToString(m, f, -1, &out);
    return out;
  }
  std::vector<std::string> values;
  for (int i = 0; i < m.GetReflection()->FieldSize(m, f); ++i) {
    std::string v;
    pb::TextFormat::PrintFieldValueToString(m, f, i, &v);
    values.push_back(v);
  }
  return absl::StrCat("[", absl::StrJoin(values, ", "), "]");
}

bool SameField(const pb::Message& a, const pb::Message& b, const pb::FieldDescriptor* f) {
  return pb::util::MessageDifferencer().CompareWithFields(a, b, {f}, {f});
}

}  // namespace

void ComparePlans(proto::Problems& p, std::vector<std::string>& notes, const v1::Plan& plan, const v1::Plan& again,
                  absl::string_view tool, StageReason why) {
  const pb::Descriptor* d = v1::Plan::descriptor();
  for (int i = 0; i < plan.stages_size() && i < again.stages_size(); ++i) {
    for (int k = 0; k < v1::Stage::descriptor()->field_count(); ++k) {
      const pb::FieldDescriptor* f = v1::Stage::descriptor()->field(k);
      if (SameField(plan.stages(i), again.stages(i), f)) continue;
      p.Add(absl::StrFormat("stages[%d].%s", i, f->name()), "%s, the config %s runs gives %s: %s",
            ValueOf(plan.stages(i), f), tool, ValueOf(again.stages(i), f), why(f->name()));
    }
  }
  static const absl::flat_hash_set<std::string> kLayout = {
      "stages",   "pipelines",      "micro_batch_size",     "global_batch_size",
      "schedule", "virtual_stages", "virtual_stage_layers", "context_parallel"};
  for (int k = 0; k < d->field_count(); ++k) {
    const pb::FieldDescriptor* f = d->field(k);
    const std::string& name = f->name();
    if (name == "name" || name == "model" || name == "model_path" || name == "framework_off") continue;
    if (SameField(plan, again, f)) continue;
    if (name == "stages" && plan.stages_size() == again.stages_size()) continue;  // field by field above
    if (kLayout.contains(name)) {
      p.Add(name, "%s, the config %s runs gives %s", ValueOf(plan, f), tool, ValueOf(again, f));
      continue;
    }
    notes.push_back(absl::StrFormat("%s: not exported (%s in the plan; the config runs %s's %s)", name,
                                    ValueOf(plan, f), tool, ValueOf(again, f)));
  }
}

void CompareModels(proto::Problems& p, v1::Model model, const v1::Model& again, absl::string_view problem) {
  if (model.dtype() == v1::DTYPE_UNSPECIFIED) model.set_dtype(v1::BF16);  // the schema's default
  pb::util::MessageDifferencer d;
  d.IgnoreField(v1::Model::descriptor()->FindFieldByName("name"));
  std::string diff;
  d.ReportDifferencesToString(&diff);
  if (d.Compare(model, again)) return;
  p.Add("model", "%s: %s", problem, diff);
}

}  // namespace hetsim::interop
