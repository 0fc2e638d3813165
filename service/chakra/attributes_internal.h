// The node attributes of Chakra execution traces that ASTRA-sim reads and hetsim writes and reads,
// with their value types, and the mapping between Chakra's CollectiveCommType and hetsim's
// CollectiveOp.
#ifndef HETSIM_SERVICE_CHAKRA_ATTRIBUTES_INTERNAL_H_
#define HETSIM_SERVICE_CHAKRA_ATTRIBUTES_INTERNAL_H_

#include <cstdint>
#include <optional>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/collective_op.h"
#include "proto/chakra/et_def.pb.h"

namespace hetsim::chakra {

// Attribute names (Chakra's spelling). comm_size is in bytes, each rank's input as ASTRA-sim reads it
// (CommSizeOf below); num_ops in floating-point operations; tensor_size in bytes.
inline constexpr absl::string_view kCommType = "comm_type";
inline constexpr absl::string_view kCommSize = "comm_size";
inline constexpr absl::string_view kCommSrc = "comm_src";
inline constexpr absl::string_view kCommDst = "comm_dst";
inline constexpr absl::string_view kCommTag = "comm_tag";
inline constexpr absl::string_view kPgName = "pg_name";
inline constexpr absl::string_view kNumOps = "num_ops";
inline constexpr absl::string_view kTensorSize = "tensor_size";
inline constexpr absl::string_view kIsCpuOp = "is_cpu_op";

// The schema version hetsim writes (Chakra's converters write "0.0.4" for the v1.0.0 layout).
inline constexpr absl::string_view kSchemaVersion = "0.0.4";

// Builders of the attributes hetsim writes (the value types ASTRA-sim's feeder reads).
ChakraProtoMsg::AttributeProto Int64Attr(absl::string_view name, int64_t value);
ChakraProtoMsg::AttributeProto Int32Attr(absl::string_view name, int32_t value);
ChakraProtoMsg::AttributeProto Uint64Attr(absl::string_view name, uint64_t value);
ChakraProtoMsg::AttributeProto BoolAttr(absl::string_view name, bool value);
ChakraProtoMsg::AttributeProto StringAttr(absl::string_view name, absl::string_view value);

// An integer attribute's value whatever integer (or bool) type it was written with; nullopt for
// lists, strings, bytes and floating-point values that are not whole numbers.
std::optional<int64_t> IntegerValue(const ChakraProtoMsg::AttributeProto& attr);
// A number attribute (integer or floating point) as a double; nullopt otherwise.
std::optional<double> NumberValue(const ChakraProtoMsg::AttributeProto& attr);

ChakraProtoMsg::CollectiveCommType CommTypeOf(CollectiveOp op);

// A collective's comm_size is each rank's input buffer, as ASTRA-sim's collectives read it (its Ring
// all-gather sends comm_size per step and ends with n x comm_size) and as Chakra's generators and
// PyTorch converter write it (docs/chakra.md). hetsim's `bytes` follow nccl-tests
// (sim/collectives/collective.h), which differ for one operation only: an all-gather's `bytes` is the
// gathered output, n x comm_size. CommSizeOf rounds to the nearest byte.
int64_t CommSizeOf(CollectiveOp op, int64_t bytes, int group_size);
// The reverse; nullopt when the result would exceed `max_bytes`.
std::optional<int64_t> CollectiveBytesOf(CollectiveOp op, int64_t comm_size, int group_size, int64_t max_bytes);
// InvalidArgument for the types hetsim has no algorithm for (REDUCE, GATHER, SCATTER, BARRIER, ...).
absl::StatusOr<CollectiveOp> CollectiveOpOf(int64_t comm_type);

}  // namespace hetsim::chakra

#endif  // HETSIM_SERVICE_CHAKRA_ATTRIBUTES_INTERNAL_H_
