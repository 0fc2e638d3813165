#include "service/chakra/attributes_internal.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "absl/strings/str_format.h"

namespace hetsim::chakra {

using ChakraProtoMsg::AttributeProto;

// An attribute named `name` whose value `set` writes.
template <typename Set>
AttributeProto NamedAttr(absl::string_view name, Set set) {
  AttributeProto a;
  a.set_name(std::string(name));
  set(a);
  return a;
}

AttributeProto Int64Attr(absl::string_view name, int64_t value) {
  return NamedAttr(name, [&](AttributeProto& a) { a.set_int64_val(value); });
}

AttributeProto Int32Attr(absl::string_view name, int32_t value) {
  return NamedAttr(name, [&](AttributeProto& a) { a.set_int32_val(value); });
}

AttributeProto Uint64Attr(absl::string_view name, uint64_t value) {
  return NamedAttr(name, [&](AttributeProto& a) { a.set_uint64_val(value); });
}

AttributeProto BoolAttr(absl::string_view name, bool value) {
  return NamedAttr(name, [&](AttributeProto& a) { a.set_bool_val(value); });
}

AttributeProto StringAttr(absl::string_view name, absl::string_view value) {
  return NamedAttr(name, [&](AttributeProto& a) { a.set_string_val(std::string(value)); });
}

std::optional<int64_t> IntegerValue(const AttributeProto& a) {
  switch (a.value_case()) {
    case AttributeProto::kInt32Val: return a.int32_val();
    case AttributeProto::kInt64Val: return a.int64_val();
    case AttributeProto::kUint32Val: return a.uint32_val();
    case AttributeProto::kUint64Val:
      if (a.uint64_val() > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
      return static_cast<int64_t>(a.uint64_val());
    case AttributeProto::kSint32Val: return a.sint32_val();
    case AttributeProto::kSint64Val: return a.sint64_val();
    case AttributeProto::kFixed32Val: return a.fixed32_val();
    case AttributeProto::kFixed64Val:
      if (a.fixed64_val() > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
      return static_cast<int64_t>(a.fixed64_val());
    case AttributeProto::kSfixed32Val: return a.sfixed32_val();
    case AttributeProto::kSfixed64Val: return a.sfixed64_val();
    case AttributeProto::kBoolVal: return a.bool_val() ? 1 : 0;
    case AttributeProto::kDoubleVal:
    case AttributeProto::kFloatVal: {
      const double d = a.value_case() == AttributeProto::kDoubleVal ? a.double_val() : a.float_val();
      if (!std::isfinite(d) || std::floor(d) != d || std::fabs(d) > 9e18) return std::nullopt;
      return static_cast<int64_t>(d);
    }
    case AttributeProto::kStringVal:
    case AttributeProto::kBytesVal:
    case AttributeProto::kDoubleList:
    case AttributeProto::kFloatList:
    case AttributeProto::kInt32List:
    case AttributeProto::kInt64List:
    case AttributeProto::kUint32List:
    case AttributeProto::kUint64List:
    case AttributeProto::kSint32List:
    case AttributeProto::kSint64List:
    case AttributeProto::kFixed32List:
    case AttributeProto::kFixed64List:
    case AttributeProto::kSfixed32List:
    case AttributeProto::kSfixed64List:
    case AttributeProto::kBoolList:
    case AttributeProto::kStringList:
    case AttributeProto::kBytesList:
    case AttributeProto::VALUE_NOT_SET: return std::nullopt;  // not one integer
  }
  return std::nullopt;  // a value case newer than et_def.proto (oneof cases have no sentinels)
}

std::optional<double> NumberValue(const AttributeProto& a) {
  if (a.value_case() == AttributeProto::kDoubleVal)
    return std::isfinite(a.double_val()) ? std::optional(a.double_val()) : std::nullopt;
  if (a.value_case() == AttributeProto::kFloatVal)
    return std::isfinite(a.float_val()) ? std::optional<double>(a.float_val()) : std::nullopt;
  if (std::optional<int64_t> i = IntegerValue(a)) return static_cast<double>(*i);
  return std::nullopt;
}

ChakraProtoMsg::CollectiveCommType CommTypeOf(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::kAllReduce: return ChakraProtoMsg::ALL_REDUCE;
    case CollectiveOp::kAllGather: return ChakraProtoMsg::ALL_GATHER;
    case CollectiveOp::kReduceScatter: return ChakraProtoMsg::REDUCE_SCATTER;
    case CollectiveOp::kAllToAll: return ChakraProtoMsg::ALL_TO_ALL;
    case CollectiveOp::kBroadcast: return ChakraProtoMsg::BROADCAST;
    case CollectiveOp::kSendRecv: break;  // a send/recv pair is two nodes, never a COMM_COLL
  }
  return ChakraProtoMsg::ALL_REDUCE;
}

int64_t CommSizeOf(CollectiveOp op, int64_t bytes, int group_size) {
  if (op != CollectiveOp::kAllGather || group_size <= 1) return bytes;
  return (bytes + group_size / 2) / group_size;
}

std::optional<int64_t> CollectiveBytesOf(CollectiveOp op, int64_t comm_size, int group_size, int64_t max_bytes) {
  const int64_t n = op == CollectiveOp::kAllGather ? std::max(group_size, 1) : 1;
  if (comm_size > max_bytes / n) return std::nullopt;
  return comm_size * n;
}

absl::StatusOr<CollectiveOp> CollectiveOpOf(int64_t comm_type) {
  switch (comm_type) {
    case ChakraProtoMsg::ALL_REDUCE: return CollectiveOp::kAllReduce;
    case ChakraProtoMsg::ALL_GATHER: return CollectiveOp::kAllGather;
    case ChakraProtoMsg::REDUCE_SCATTER: return CollectiveOp::kReduceScatter;
    case ChakraProtoMsg::ALL_TO_ALL: return CollectiveOp::kAllToAll;
    case ChakraProtoMsg::BROADCAST: return CollectiveOp::kBroadcast;
    default: break;
  }
  const std::string name =
      comm_type >= 0 && comm_type <= ChakraProtoMsg::CollectiveCommType_MAX
          ? ChakraProtoMsg::CollectiveCommType_Name(static_cast<ChakraProtoMsg::CollectiveCommType>(comm_type))
          : std::string("unknown");
  return absl::InvalidArgumentError(absl::StrFormat(
      "comm_type %d (%s) has no collective algorithm in hetsim (it runs ALL_REDUCE, ALL_GATHER, REDUCE_SCATTER, "
      "ALL_TO_ALL, BROADCAST)",
      comm_type, name));
}

}  // namespace hetsim::chakra
