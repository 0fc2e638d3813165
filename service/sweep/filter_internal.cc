#include "service/sweep/filter_internal.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"

namespace hetsim::sweep {

absl::StatusOr<SweepFilter> SweepFilter::Parse(absl::string_view text, const std::vector<FilterAxis>& axes) {
  SweepFilter filter;
  if (absl::StripAsciiWhitespace(text).empty()) return filter;
  // Two-character operators first so that "<=" is not read as "<" followed by "=...".
  static const std::pair<const char*, Op> kOps[] = {{"==", Op::kEq}, {"!=", Op::kNe}, {"<=", Op::kLe},
                                                    {">=", Op::kGe}, {"<", Op::kLt},  {">", Op::kGt}};
  for (absl::string_view term : absl::StrSplit(text, "&&")) {
    term = absl::StripAsciiWhitespace(term);
    size_t at = absl::string_view::npos;
    absl::string_view op_text;
    Op op = Op::kEq;
    for (const auto& [candidate, candidate_op] : kOps) {
      const size_t pos = term.find(candidate);
      if (pos != absl::string_view::npos && (at == absl::string_view::npos || pos < at)) {
        at = pos;
        op_text = candidate;
        op = candidate_op;
      }
    }
    if (at == absl::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrFormat("term \"%s\" has no comparison (==, !=, <, <=, >, >=)", term));
    }
    const absl::string_view path = absl::StripAsciiWhitespace(term.substr(0, at));
    const absl::string_view value = absl::StripAsciiWhitespace(term.substr(at + op_text.size()));
    Term t;
    t.op = op;
    t.axis = -1;
    for (size_t a = 0; a < axes.size(); ++a) {
      if (axes[a].path == path) t.axis = static_cast<int>(a);
    }
    if (t.axis < 0)
      return absl::InvalidArgumentError(absl::StrFormat("term \"%s\": \"%s\" is not the path of an axis", term, path));
    const google::protobuf::FieldDescriptor* field = axes[t.axis].field;
    if (field == nullptr) {
      t.value.text = std::string(value);
    } else {
      absl::StatusOr<AxisValue> v = ParseAxisValue(field, value);
      if (!v.ok()) return absl::InvalidArgumentError(absl::StrFormat("term \"%s\": %s", term, v.status().message()));
      t.value = *std::move(v);
    }
    filter.terms_.push_back(std::move(t));
  }
  return filter;
}

bool SweepFilter::Accepts(const std::vector<const AxisValue*>& values) const {
  for (const Term& t : terms_) {
    const AxisValue& v = *values[t.axis];
    // -1, 0 or 1 as the point's value is below, equal to or above the term's value.
    int order = 0;
    if (v.ordered && t.value.ordered) {
      order = v.number < t.value.number ? -1 : v.number > t.value.number ? 1 : 0;
    } else {
      order = v.text < t.value.text ? -1 : v.text > t.value.text ? 1 : 0;
    }
    bool ok = false;
    switch (t.op) {
      case Op::kEq: ok = order == 0; break;
      case Op::kNe: ok = order != 0; break;
      case Op::kLt: ok = order < 0; break;
      case Op::kLe: ok = order <= 0; break;
      case Op::kGt: ok = order > 0; break;
      case Op::kGe: ok = order >= 0; break;
    }
    if (!ok) return false;
  }
  return true;
}

}  // namespace hetsim::sweep
