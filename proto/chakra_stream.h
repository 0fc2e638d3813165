// Chakra execution-trace files (proto/chakra/et_def.proto): one rank's stream of length-delimited
// messages, a GlobalMetadata then Node messages, each preceded by its size as a varint32 (protobuf's
// delimited-message format, what Chakra's protolib and ASTRA-sim's feeder read and write).
//
// This layer only frames and parses; what the nodes mean, and whether a trace makes sense, is the
// chakra module's (service/chakra/trace.h).
#ifndef HETSIM_PROTO_CHAKRA_STREAM_H_
#define HETSIM_PROTO_CHAKRA_STREAM_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/chakra/et_def.pb.h"

namespace hetsim::proto {

struct ChakraStream {
  ChakraProtoMsg::GlobalMetadata metadata;
  std::vector<ChakraProtoMsg::Node> nodes;
};

// Largest message accepted in a stream (a Node of a real trace is a few hundred bytes).
inline constexpr int kMaxChakraMessageBytes = 64 << 20;
// Most nodes one rank file may hold; parsing stops there, so a hostile file cannot fill memory.
inline constexpr int64_t kMaxChakraNodesPerRank = 50'000'000;

// The bytes of a rank file: metadata, then the nodes in order. Deterministic.
std::string SerializeChakraStream(const ChakraStream& stream);

// Parses a rank file's bytes. Errors are InvalidArgument "<file>: message N at byte B: <problem>"
// (message 0 is the metadata): an empty file, a truncated size or message, a message that does not
// parse, more than `max_nodes` nodes. `file` only names the source.
absl::StatusOr<ChakraStream> ParseChakraStream(absl::string_view bytes, absl::string_view file,
                                               int64_t max_nodes = kMaxChakraNodesPerRank);

// When `bytes` is JSON (its first character past white space is '{' or '['): what kind of JSON trace it
// seems to be and how to get a protobuf trace from it, for the error message. nullopt otherwise.
// Only consulted when the bytes do not parse as a stream: a stream's first size byte can be '{'.
std::optional<std::string> DescribeJsonTrace(absl::string_view bytes);

// Reads and parses `path`.
absl::StatusOr<ChakraStream> ReadChakraStream(absl::string_view path);

// Writes `stream` to `path` atomically (proto::WriteFileAtomically).
absl::Status WriteChakraStream(absl::string_view path, const ChakraStream& stream);

}  // namespace hetsim::proto

#endif  // HETSIM_PROTO_CHAKRA_STREAM_H_
