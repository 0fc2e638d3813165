// The optional filter of a sweep: "path OP value" terms joined by "&&" (OP one of == != < <= > >=),
// each path naming an axis. Values are parsed like the axis's own values, so numbers compare as
// numbers ("8" == "8.0"), enums by name or number (in schema order for < and >), strings lexically.
#ifndef HETSIM_SERVICE_SWEEP_FILTER_INTERNAL_H_
#define HETSIM_SERVICE_SWEEP_FILTER_INTERNAL_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "service/sweep/field_internal.h"

namespace hetsim::sweep {

// What the filter needs to know about an axis: its path and how to parse a value for it (nullptr
// field = a string axis such as "planner").
struct FilterAxis {
  std::string path;
  const google::protobuf::FieldDescriptor* field = nullptr;
};

class SweepFilter {
 public:
  // An empty `text` accepts every point. Errors name the bad term (no file prefix).
  static absl::StatusOr<SweepFilter> Parse(absl::string_view text, const std::vector<FilterAxis>& axes);

  // `values[a]` is the value of axis a at the point.
  bool Accepts(const std::vector<const AxisValue*>& values) const;

 private:
  enum class Op { kEq, kNe, kLt, kLe, kGt, kGe };
  struct Term {
    int axis = 0;
    Op op = Op::kEq;
    AxisValue value;
  };
  std::vector<Term> terms_;
};

}  // namespace hetsim::sweep

#endif  // HETSIM_SERVICE_SWEEP_FILTER_INTERNAL_H_
