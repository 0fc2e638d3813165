#include "proto/validate_sweep.h"

#include <cmath>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "proto/limits.h"
#include "proto/validate_problems.h"

namespace hetsim::proto {
namespace {

namespace pb = google::protobuf;
using namespace hetsim::v1;  // NOLINT: the schema's message names read best unqualified here

bool IsNumeric(const pb::FieldDescriptor* f) {
  switch (f->cpp_type()) {
    case pb::FieldDescriptor::CPPTYPE_INT32:
    case pb::FieldDescriptor::CPPTYPE_INT64:
    case pb::FieldDescriptor::CPPTYPE_UINT32:
    case pb::FieldDescriptor::CPPTYPE_UINT64:
    case pb::FieldDescriptor::CPPTYPE_DOUBLE:
    case pb::FieldDescriptor::CPPTYPE_FLOAT: return true;
    case pb::FieldDescriptor::CPPTYPE_BOOL:
    case pb::FieldDescriptor::CPPTYPE_ENUM:
    case pb::FieldDescriptor::CPPTYPE_STRING:
    case pb::FieldDescriptor::CPPTYPE_MESSAGE: return false;
  }
  return false;  // no field has another C++ type
}

bool IsInteger(const pb::FieldDescriptor* f) {
  return IsNumeric(f) && f->cpp_type() != pb::FieldDescriptor::CPPTYPE_DOUBLE &&
         f->cpp_type() != pb::FieldDescriptor::CPPTYPE_FLOAT;
}

bool IsUnsigned(const pb::FieldDescriptor* f) {
  return f->cpp_type() == pb::FieldDescriptor::CPPTYPE_UINT32 || f->cpp_type() == pb::FieldDescriptor::CPPTYPE_UINT64;
}

// "" when `value` suits `field`, otherwise why not.
std::string CheckValue(const pb::FieldDescriptor* field, absl::string_view value) {
  if (field == nullptr) {  // the planner axis
    return IsKnownPlanner(value) ? ""
                                 : absl::StrFormat("\"%s\" is not a planner (hapt, tangram, megatron, alpa)", value);
  }
  if (field->cpp_type() == pb::FieldDescriptor::CPPTYPE_ENUM) {
    int number = 0;
    if (field->enum_type()->FindValueByName(std::string(value)) != nullptr) return "";
    if (absl::SimpleAtoi(value, &number) && field->enum_type()->FindValueByNumber(number) != nullptr) return "";
    return absl::StrFormat("\"%s\" is not a value of %s", value, field->enum_type()->name());
  }
  if (field->cpp_type() == pb::FieldDescriptor::CPPTYPE_BOOL) {
    return value == "true" || value == "false" ? "" : absl::StrFormat("\"%s\" is not true or false", value);
  }
  if (IsInteger(field)) {
    int64_t v = 0;
    uint64_t u = 0;
    const bool ok = IsUnsigned(field) ? absl::SimpleAtoi(value, &u) : absl::SimpleAtoi(value, &v);
    return ok ? "" : absl::StrFormat("\"%s\" is not %s integer", value, IsUnsigned(field) ? "a non-negative" : "an");
  }
  if (IsNumeric(field)) {
    double d = 0;
    return absl::SimpleAtod(value, &d) && std::isfinite(d) ? "" : absl::StrFormat("\"%s\" is not a number", value);
  }
  return "";  // strings take any value
}

void CheckFilter(Problems& p, const Sweep& sweep) {
  if (sweep.filter().empty()) return;
  static const char* kOps[] = {"==", "!=", "<=", ">=", "<", ">"};
  for (absl::string_view term : absl::StrSplit(sweep.filter(), "&&")) {
    term = absl::StripAsciiWhitespace(term);
    size_t at = absl::string_view::npos;
    absl::string_view op;
    for (const char* candidate : kOps) {
      size_t pos = term.find(candidate);
      if (pos != absl::string_view::npos && (at == absl::string_view::npos || pos < at)) {
        at = pos;
        op = candidate;
      }
    }
    if (at == absl::string_view::npos) {
      p.Add("filter", "term \"%s\" has no comparison (==, !=, <, <=, >, >=)", std::string(term));
      continue;
    }
    const absl::string_view path = absl::StripAsciiWhitespace(term.substr(0, at));
    const absl::string_view value = absl::StripAsciiWhitespace(term.substr(at + op.size()));
    bool is_axis = false;
    for (const SweepAxis& axis : sweep.axes()) is_axis = is_axis || axis.path() == path;
    if (!is_axis)
      p.Add("filter", "term \"%s\": \"%s\" is not the path of an axis", std::string(term), std::string(path));
    if (value.empty()) p.Add("filter", "term \"%s\" has no value", std::string(term));
  }
}

void CheckAxis(Problems& p, const SweepAxis& axis, const std::string& at) {
  if (axis.path().empty()) {
    p.Add(at + "path", "required (e.g. \"cluster.islands[1].node_count\")");
    return;
  }
  absl::StatusOr<const pb::FieldDescriptor*> field = ResolveSweepPath(axis.path());
  if (!field.ok()) {
    p.Add(at + "path", "%s", field.status().message());
    return;
  }
  const bool has_range = axis.from() != 0 || axis.to() != 0 || axis.step() != 0;
  if (axis.values().empty() == !has_range) {
    p.Add(at + "values", has_range ? "set together with a range (from/to/step): use one of them"
                                   : "required: a list of values or a range (from, to, step)");
    return;
  }
  for (int k = 0; k < axis.values_size(); ++k) {
    const std::string why = CheckValue(*field, axis.values(k));
    if (!why.empty()) p.Add(absl::StrFormat("%svalues[%d]", at, k), "%s", why);
  }
  if (has_range) {
    if (*field == nullptr || !IsNumeric(*field)) {
      p.Add(at + "from", "a range needs a numeric field, \"%s\" is not one", axis.path());
      return;
    }
    if (!std::isfinite(axis.from()) || !std::isfinite(axis.to()) || !std::isfinite(axis.step())) {
      p.Add(at + "step", "from, to and step must be finite numbers");
    } else if (axis.step() <= 0) {
      p.Add(at + "step", "%g, but a range needs step > 0", axis.step());
    } else if (axis.to() < axis.from()) {
      p.Add(at + "to", "%g is less than from %g", axis.to(), axis.from());
    } else if ((axis.to() - axis.from()) / axis.step() + 1 > limits::kMaxSweepPoints) {
      p.Add(at + "step", "the range has more than %g points", limits::kMaxSweepPoints);
    } else if (IsInteger(*field) &&
               (axis.from() != std::floor(axis.from()) || axis.step() != std::floor(axis.step()))) {
      p.Add(at + "step", "\"%s\" is an integer field; from and step must be whole numbers", axis.path());
    } else if (IsUnsigned(*field) && axis.from() < 0) {
      p.Add(at + "from", "%g is negative, but \"%s\" is unsigned", axis.from(), axis.path());
    }
  }
}

}  // namespace

bool IsKnownPlanner(absl::string_view name) {
  return name == "hapt" || name == "tangram" || name == "megatron" || name == "alpa";
}

absl::StatusOr<const pb::FieldDescriptor*> ResolveSweepPath(absl::string_view path) {
  if (path == "planner") return nullptr;
  std::vector<absl::string_view> steps = absl::StrSplit(path, '.');
  const pb::Descriptor* message = nullptr;
  if (steps[0] == "cluster") message = Cluster::descriptor();
  if (steps[0] == "model") message = Model::descriptor();
  if (steps[0] == "plan") message = Plan::descriptor();
  if (message == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrFormat("\"%s\" must start with cluster., model. or plan. (or be \"planner\")", path));
  }
  if (steps.size() < 2) return absl::InvalidArgumentError(absl::StrFormat("\"%s\" names no field", path));
  const pb::FieldDescriptor* field = nullptr;
  for (size_t i = 1; i < steps.size(); ++i) {
    if (message == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrFormat("\"%s\": %s is not a message, it has no field \"%s\"", path, field->name(), steps[i]));
    }
    absl::string_view name = steps[i];
    bool indexed = false;
    if (absl::ConsumeSuffix(&name, "]")) {
      const size_t open = name.find('[');
      size_t index = 0;
      if (open == absl::string_view::npos || !absl::SimpleAtoi(name.substr(open + 1), &index)) {
        return absl::InvalidArgumentError(absl::StrFormat("\"%s\": bad index in \"%s\"", path, steps[i]));
      }
      name = name.substr(0, open);
      indexed = true;
    }
    field = message->FindFieldByName(std::string(name));
    if (field == nullptr) {
      return absl::InvalidArgumentError(absl::StrFormat("\"%s\": %s has no field \"%s\"", path, message->name(), name));
    }
    if (indexed != field->is_repeated()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("\"%s\": %s %s", path, field->name(),
                          indexed ? "is not a list, remove the [index]" : "is a list, give an [index]"));
    }
    message = field->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE ? field->message_type() : nullptr;
  }
  if (message != nullptr) {
    return absl::InvalidArgumentError(
        absl::StrFormat("\"%s\": %s is a message; name one of its fields", path, field->name()));
  }
  return field;
}

absl::Status ValidateSweep(const Sweep& sweep, absl::string_view file) {
  Problems p(file);
  if (sweep.cluster_path().empty()) p.Add("cluster_path", "required");
  bool planner_axis = false;
  for (const SweepAxis& axis : sweep.axes()) planner_axis = planner_axis || axis.path() == "planner";
  if (sweep.plan_path().empty()) {
    if (sweep.planner().empty() && !planner_axis) p.Add("planner", "required when plan_path is empty");
    if (sweep.model_path().empty()) p.Add("model_path", "required when plan_path is empty (the planner needs a model)");
  } else {
    if (!sweep.planner().empty())
      p.Add("planner", "set together with plan_path: a sweep simulates a plan or plans, not both");
    if (planner_axis) p.Add("axes", "a \"planner\" axis needs plan_path to be empty");
  }
  if (!sweep.planner().empty() && !IsKnownPlanner(sweep.planner())) {
    p.Add("planner", "\"%s\" is not a planner (hapt, tangram, megatron, alpa)", sweep.planner());
  }
  if (sweep.axes().empty()) p.Add("axes", "required: at least one axis");
  absl::flat_hash_map<std::string, int> seen;
  for (int i = 0; i < sweep.axes_size(); ++i) {
    const std::string at = absl::StrFormat("axes[%d].", i);
    CheckAxis(p, sweep.axes(i), at);
    auto [it, inserted] = seen.emplace(sweep.axes(i).path(), i);
    if (!inserted && !sweep.axes(i).path().empty()) {
      p.Add(at + "path", "\"%s\" is already swept by axes[%d]", sweep.axes(i).path(), it->second);
    }
  }
  CheckFilter(p, sweep);
  return p.ToStatus();
}

}  // namespace hetsim::proto
