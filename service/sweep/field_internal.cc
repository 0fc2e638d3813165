#include "service/sweep/field_internal.h"

#include <charconv>
#include <cmath>
#include <memory>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"
#include "google/protobuf/text_format.h"

namespace hetsim::sweep {
namespace {

namespace pb = google::protobuf;

// "islands[1]" -> ("islands", 1); "node_count" -> ("node_count", -1).
absl::Status SplitStep(absl::string_view step, absl::string_view* name, int* index) {
  *name = step;
  *index = -1;
  if (!absl::ConsumeSuffix(name, "]")) return absl::OkStatus();
  const size_t open = name->find('[');
  if (open == absl::string_view::npos || !absl::SimpleAtoi(name->substr(open + 1), index) || *index < 0) {
    return absl::InvalidArgumentError(absl::StrFormat("bad index in \"%s\"", step));
  }
  *name = name->substr(0, open);
  return absl::OkStatus();
}

bool IsFloating(const pb::FieldDescriptor* f) {
  return f->cpp_type() == pb::FieldDescriptor::CPPTYPE_DOUBLE || f->cpp_type() == pb::FieldDescriptor::CPPTYPE_FLOAT;
}

// Reads the value `field` holds in `m` into typed and canonical text form.
absl::StatusOr<AxisValue> ReadBack(const pb::Message& m, const pb::FieldDescriptor* field) {
  const pb::Reflection* r = m.GetReflection();
  AxisValue v;
  v.ordered = true;
  switch (field->cpp_type()) {
    case pb::FieldDescriptor::CPPTYPE_INT32: v.int_value = r->GetInt32(m, field); break;
    case pb::FieldDescriptor::CPPTYPE_INT64: v.int_value = r->GetInt64(m, field); break;
    case pb::FieldDescriptor::CPPTYPE_UINT32: v.uint_value = r->GetUInt32(m, field); break;
    case pb::FieldDescriptor::CPPTYPE_UINT64: v.uint_value = r->GetUInt64(m, field); break;
    case pb::FieldDescriptor::CPPTYPE_DOUBLE: v.double_value = r->GetDouble(m, field); break;
    case pb::FieldDescriptor::CPPTYPE_FLOAT: v.double_value = r->GetFloat(m, field); break;
    case pb::FieldDescriptor::CPPTYPE_BOOL: v.bool_value = r->GetBool(m, field); break;
    case pb::FieldDescriptor::CPPTYPE_ENUM: v.enum_value = r->GetEnumValue(m, field); break;
    case pb::FieldDescriptor::CPPTYPE_STRING:
    case pb::FieldDescriptor::CPPTYPE_MESSAGE:
      return absl::InternalError("ReadBack: not a numeric, bool or enum field");
  }
  switch (field->cpp_type()) {
    case pb::FieldDescriptor::CPPTYPE_INT32:
    case pb::FieldDescriptor::CPPTYPE_INT64:
      v.number = static_cast<double>(v.int_value);
      v.text = absl::StrFormat("%d", v.int_value);
      break;
    case pb::FieldDescriptor::CPPTYPE_UINT32:
    case pb::FieldDescriptor::CPPTYPE_UINT64:
      v.number = static_cast<double>(v.uint_value);
      v.text = absl::StrFormat("%d", v.uint_value);
      break;
    case pb::FieldDescriptor::CPPTYPE_BOOL:
      v.number = v.bool_value ? 1 : 0;
      v.text = v.bool_value ? "true" : "false";
      break;
    case pb::FieldDescriptor::CPPTYPE_ENUM: {
      v.number = v.enum_value;
      const pb::EnumValueDescriptor* e = field->enum_type()->FindValueByNumber(v.enum_value);
      if (e == nullptr)
        return absl::InvalidArgumentError(
            absl::StrFormat("%d is not a value of %s", v.enum_value, field->enum_type()->name()));
      v.text = e->name();
      break;
    }
    case pb::FieldDescriptor::CPPTYPE_DOUBLE:
    case pb::FieldDescriptor::CPPTYPE_FLOAT:
      if (!std::isfinite(v.double_value)) return absl::InvalidArgumentError("not a finite number");
      v.number = v.double_value;
      v.text = ShortestDouble(v.double_value);
      break;
    case pb::FieldDescriptor::CPPTYPE_STRING:
    case pb::FieldDescriptor::CPPTYPE_MESSAGE: break;  // returned by the first switch
  }
  return v;
}

std::unique_ptr<pb::Message> ScratchFor(const pb::FieldDescriptor* field) {
  return std::unique_ptr<pb::Message>(
      pb::MessageFactory::generated_factory()->GetPrototype(field->containing_type())->New());
}

}  // namespace

std::string ShortestDouble(double x) {
  char buffer[32];
  const std::to_chars_result r = std::to_chars(buffer, buffer + sizeof(buffer), x);
  return std::string(buffer, r.ptr);
}

absl::StatusOr<FieldTarget> BindFieldPath(const pb::Message& root, absl::string_view root_name,
                                          absl::string_view path_in_root, absl::string_view file) {
  FieldTarget target;
  const pb::Message* at = &root;
  std::string walked(root_name);
  const std::vector<absl::string_view> steps = absl::StrSplit(path_in_root, '.');
  for (size_t i = 0; i < steps.size(); ++i) {
    if (at == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s is not a message, it has no field \"%s\"", walked, steps[i]));
    }
    absl::string_view name;
    int index = -1;
    HETSIM_RETURN_IF_ERROR(SplitStep(steps[i], &name, &index));
    const pb::Descriptor* type = at->GetDescriptor();
    const pb::FieldDescriptor* field = type->FindFieldByName(std::string(name));
    if (field == nullptr) {
      return absl::InvalidArgumentError(absl::StrFormat("%s (%s) has no field \"%s\"", walked, type->name(), name));
    }
    const pb::Reflection* r = at->GetReflection();
    const std::string here = absl::StrCat(walked, ".", name);
    if (field->is_repeated() != (index >= 0)) {
      return absl::InvalidArgumentError(absl::StrCat(
          here, field->is_repeated() ? " is a list, give an [index]" : " is not a list, remove the [index]"));
    }
    if (field->is_repeated()) {
      const int size = r->FieldSize(*at, field);
      if (index >= size) {
        const std::string indices = size > 0 ? absl::StrFormat(" (indices 0..%d)", size - 1) : "";
        return absl::InvalidArgumentError(absl::StrFormat(
            "%s[%d]: %s has %s %s%s", here, index, file, size > 0 ? absl::StrCat(size) : "no", field->name(), indices));
      }
    }
    const pb::OneofDescriptor* oneof = field->real_containing_oneof();
    if (oneof != nullptr && !r->HasField(*at, field)) {
      const pb::FieldDescriptor* set = r->GetOneofFieldDescriptor(*at, oneof);
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: %s sets %s, not %s; a sweep changes values, not which one "
                          "of %s is used",
                          here, file, set == nullptr ? "none of " + oneof->name() : set->name(), name, oneof->name()));
    }
    target.steps.push_back({field, index});
    walked = index >= 0 ? absl::StrFormat("%s[%d]", here, index) : here;
    if (field->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE) {
      at = index >= 0 ? &r->GetRepeatedMessage(*at, field, index) : &r->GetMessage(*at, field);
    } else {
      at = nullptr;
    }
  }
  if (at != nullptr) {
    return absl::InvalidArgumentError(absl::StrFormat("%s is a message; name one of its fields", walked));
  }
  return target;
}

absl::StatusOr<AxisValue> ParseAxisValue(const pb::FieldDescriptor* field, absl::string_view text) {
  if (field->cpp_type() == pb::FieldDescriptor::CPPTYPE_STRING) {
    AxisValue v;
    v.text = std::string(text);
    return v;
  }
  std::unique_ptr<pb::Message> scratch = ScratchFor(field);
  // Protobuf logs its parse errors to stderr; the message below says it with the axis (session 33).
  const pb::LogSilencer silence_protobuf_logs;
  const bool parsed = pb::TextFormat::ParseFieldValueFromString(std::string(text), field, scratch.get());
  // Text format accepts an integer for a double field; it rejects a fraction for an integer field.
  if (!parsed) {
    const char* kind = field->cpp_type() == pb::FieldDescriptor::CPPTYPE_ENUM   ? "a value of "
                       : field->cpp_type() == pb::FieldDescriptor::CPPTYPE_BOOL ? "true or false"
                       : IsFloating(field)                                      ? "a number"
                                                                                : "an integer in range";
    return absl::InvalidArgumentError(absl::StrFormat(
        "\"%s\" is not %s%s for %s", text, kind,
        field->cpp_type() == pb::FieldDescriptor::CPPTYPE_ENUM ? field->enum_type()->name() : "", field->name()));
  }
  absl::StatusOr<AxisValue> v = ReadBack(*scratch, field);
  if (!v.ok()) return absl::InvalidArgumentError(absl::StrFormat("\"%s\": %s", text, v.status().message()));
  return v;
}

absl::StatusOr<AxisValue> NumericAxisValue(const pb::FieldDescriptor* field, double x) {
  // 12 significant digits drop the representation error of from + k * step (0.1 + 2 * 0.1 is
  // 0.30000000000000004), so a range reads as its author meant it.
  if (IsFloating(field)) return ParseAxisValue(field, absl::StrFormat("%.12g", x));
  // Past 2^64 no integer field holds it: %g, not its 300 digits (session 36).
  if (!(std::abs(x) < 0x1p64)) {
    return absl::InvalidArgumentError(absl::StrFormat("%g is not an integer in range for %s", x, field->name()));
  }
  return ParseAxisValue(field, absl::StrFormat("%.0f", std::round(x)));
}

void ApplyAxisValue(const FieldTarget& target, const AxisValue& value, pb::Message* root) {
  pb::Message* at = root;
  for (size_t i = 0; i + 1 < target.steps.size(); ++i) {
    const FieldTarget::Step& s = target.steps[i];
    const pb::Reflection* r = at->GetReflection();
    at = s.index >= 0 ? r->MutableRepeatedMessage(at, s.field, s.index) : r->MutableMessage(at, s.field);
  }
  const pb::FieldDescriptor* f = target.field();
  const pb::Reflection* r = at->GetReflection();
  switch (f->cpp_type()) {
    case pb::FieldDescriptor::CPPTYPE_INT32: r->SetInt32(at, f, static_cast<int32_t>(value.int_value)); break;
    case pb::FieldDescriptor::CPPTYPE_INT64: r->SetInt64(at, f, value.int_value); break;
    case pb::FieldDescriptor::CPPTYPE_UINT32: r->SetUInt32(at, f, static_cast<uint32_t>(value.uint_value)); break;
    case pb::FieldDescriptor::CPPTYPE_UINT64: r->SetUInt64(at, f, value.uint_value); break;
    case pb::FieldDescriptor::CPPTYPE_DOUBLE: r->SetDouble(at, f, value.double_value); break;
    case pb::FieldDescriptor::CPPTYPE_FLOAT: r->SetFloat(at, f, static_cast<float>(value.double_value)); break;
    case pb::FieldDescriptor::CPPTYPE_BOOL: r->SetBool(at, f, value.bool_value); break;
    case pb::FieldDescriptor::CPPTYPE_ENUM: r->SetEnumValue(at, f, value.enum_value); break;
    case pb::FieldDescriptor::CPPTYPE_STRING: r->SetString(at, f, value.text); break;
    case pb::FieldDescriptor::CPPTYPE_MESSAGE: break;  // BindFieldPath never ends on a message
  }
}

}  // namespace hetsim::sweep
