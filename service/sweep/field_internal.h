// One axis target of a sweep: a scalar field reached by a path such as "cluster.islands[1].node_count",
// bound to the concrete base inputs (every [index] exists, every oneof on the way is the one set), and
// the values the axis gives it, parsed once into typed form so that applying a point is a few
// reflection calls and comparing values (the sweep filter) needs no reparsing.
#ifndef HETSIM_SERVICE_SWEEP_FIELD_INTERNAL_H_
#define HETSIM_SERVICE_SWEEP_FIELD_INTERNAL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"

namespace hetsim::sweep {

// A value an axis gives its field. `text` is canonical: shortest round-trip numbers, enum names,
// true/false, strings as given. `number` orders numeric, enum (by number) and bool values.
struct AxisValue {
  std::string text;
  double number = 0;
  bool ordered = false;  // numbers, enums and bools compare with < and >; strings only lexically
  // Typed payload for reflection; which member is meaningful follows the field's cpp_type.
  int64_t int_value = 0;
  uint64_t uint_value = 0;
  double double_value = 0;
  bool bool_value = false;
  int enum_value = 0;
};

// Where a path leads inside one root message: the fields from the root to the scalar, with the list
// index used at each repeated step (-1 for singular steps).
struct FieldTarget {
  struct Step {
    const google::protobuf::FieldDescriptor* field = nullptr;
    int index = -1;
  };
  std::vector<Step> steps;  // the last step is the scalar field
  const google::protobuf::FieldDescriptor* field() const { return steps.back().field; }
};

// Binds `path_in_root` (the path without its "cluster."/"model."/"plan." root, e.g.
// "islands[1].node_count") to `root`: fields must exist, indices must be within the lists of `root`,
// a message inside a oneof must be the one set, and the last field a singular scalar or enum.
// `root_name` and `file` only word the error, e.g. "cluster.islands[5]: cluster.pbtxt has 2 islands".
absl::StatusOr<FieldTarget> BindFieldPath(const google::protobuf::Message& root, absl::string_view root_name,
                                          absl::string_view path_in_root, absl::string_view file);

// Parses `text` as a text-format scalar for `field` (enums by name or number, true/false, integers,
// floating point; strings verbatim).
absl::StatusOr<AxisValue> ParseAxisValue(const google::protobuf::FieldDescriptor* field, absl::string_view text);

// The value of a numeric field at `x` (a range point), rounded to integers for integer fields.
absl::StatusOr<AxisValue> NumericAxisValue(const google::protobuf::FieldDescriptor* field, double x);

// Writes `value` into the field `target` leads to inside `root` (which must have the structure the
// target was bound against: same list lengths).
void ApplyAxisValue(const FieldTarget& target, const AxisValue& value, google::protobuf::Message* root);

// Shortest text that reads back as exactly `x` ("3", "0.1", "1e+20").
std::string ShortestDouble(double x);

}  // namespace hetsim::sweep

#endif  // HETSIM_SERVICE_SWEEP_FIELD_INTERNAL_H_
