#include "proto/chakra_stream.h"

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/stubs/logging.h"
#include "google/protobuf/util/delimited_message_util.h"
#include "proto/io.h"

namespace hetsim::proto {

std::string SerializeChakraStream(const ChakraStream& stream) {
  std::string out;
  {
    google::protobuf::io::StringOutputStream raw(&out);
    google::protobuf::io::CodedOutputStream coded(&raw);
    coded.SetSerializationDeterministic(true);
    google::protobuf::util::SerializeDelimitedToCodedStream(stream.metadata, &coded);
    for (const ChakraProtoMsg::Node& node : stream.nodes) {
      google::protobuf::util::SerializeDelimitedToCodedStream(node, &coded);
    }
  }
  return out;
}

namespace {

// Reads one length-delimited message; false at a clean end of the input.
absl::StatusOr<bool> ReadOne(google::protobuf::io::CodedInputStream& in, google::protobuf::Message* message,
                             absl::string_view file, int index) {
  const int at = in.CurrentPosition();
  if (in.BytesUntilTotalBytesLimit() == 0) return false;
  uint32_t size = 0;
  if (!in.ReadVarint32(&size)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: message %d at byte %d: truncated size prefix", file, index, at));
  }
  if (size > static_cast<uint32_t>(kMaxChakraMessageBytes)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: message %d at byte %d: size %u exceeds the limit of %d bytes", file, index, at, size,
                        kMaxChakraMessageBytes));
  }
  if (static_cast<int64_t>(size) > in.BytesUntilTotalBytesLimit()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: message %d at byte %d: truncated (%u bytes announced, %d left)", file, index, at, size,
                        in.BytesUntilTotalBytesLimit()));
  }
  const auto limit = in.PushLimit(static_cast<int>(size));
  const bool parsed = message->MergeFromCodedStream(&in) && in.ConsumedEntireMessage();
  in.PopLimit(limit);
  if (!parsed) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: message %d at byte %d: does not parse as a %s", file, index,
                                                      at, message->GetDescriptor()->full_name()));
  }
  return true;
}

absl::StatusOr<ChakraStream> ParseDelimited(absl::string_view bytes, absl::string_view file, int64_t max_nodes) {
  if (bytes.empty()) return absl::InvalidArgumentError(absl::StrFormat("%s: empty file (no GlobalMetadata)", file));
  if (bytes.size() > static_cast<size_t>(INT32_MAX)) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: %d bytes: larger than 2 GiB", file, bytes.size()));
  }
  // Protobuf logs some parse failures (invalid UTF-8 in a string) to stderr; the status says it.
  const google::protobuf::LogSilencer silence_protobuf_logs;
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()),
                                            static_cast<int>(bytes.size()));
  in.SetTotalBytesLimit(static_cast<int>(bytes.size()));
  ChakraStream stream;
  HETSIM_ASSIGN_OR_RETURN(bool any, ReadOne(in, &stream.metadata, file, 0));
  if (!any) return absl::InvalidArgumentError(absl::StrFormat("%s: no GlobalMetadata", file));
  for (int index = 1;; ++index) {
    ChakraProtoMsg::Node node;
    HETSIM_ASSIGN_OR_RETURN(bool more, ReadOne(in, &node, file, index));
    if (!more) break;
    if (static_cast<int64_t>(stream.nodes.size()) >= max_nodes) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: more than %d nodes, the limit of one rank's trace", file, max_nodes));
    }
    stream.nodes.push_back(std::move(node));
  }
  return stream;
}

}  // namespace

std::optional<std::string> DescribeJsonTrace(absl::string_view bytes) {
  const size_t first = bytes.find_first_not_of(" \t\r\n");
  if (first == absl::string_view::npos || (bytes[first] != '{' && bytes[first] != '[')) return std::nullopt;
  const absl::string_view head = bytes.substr(0, 4096);
  if (absl::StrContains(head, "\"workload_graph\"")) {
    return "a Chakra workload graph in JSON (what Chakra's feeder reads in its JSON mode), while hetsim reads the "
           "protobuf traces <prefix>.<rank>.et that chakra_converter writes";
  }
  if (absl::StrContains(head, "\"schema\"") && absl::StrContains(head, "\"nodes\"")) {
    return "a PyTorch execution trace (JSON), not a Chakra trace: link it with its Kineto trace "
           "(chakra_trace_link) and convert the result with chakra_converter PyTorch into <prefix>.<rank>.et";
  }
  return "JSON, not a Chakra protobuf trace (chakra_jsonizer's printout?): run hetsim on the .et files it was "
         "printed from, or convert a PyTorch execution trace with chakra_trace_link and chakra_converter";
}

absl::StatusOr<ChakraStream> ParseChakraStream(absl::string_view bytes, absl::string_view file, int64_t max_nodes) {
  absl::StatusOr<ChakraStream> stream = ParseDelimited(bytes, file, max_nodes);
  if (stream.ok()) return stream;
  if (std::optional<std::string> json = DescribeJsonTrace(bytes)) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: %s (docs/chakra.md)", file, *json));
  }
  return stream;
}

absl::StatusOr<ChakraStream> ReadChakraStream(absl::string_view path) {
  HETSIM_ASSIGN_OR_RETURN(std::string bytes, ReadInputFile(path, InputKind::kChakraTrace));
  return ParseChakraStream(bytes, path);
}

absl::Status WriteChakraStream(absl::string_view path, const ChakraStream& stream) {
  return WriteFileAtomically(path, SerializeChakraStream(stream));
}

}  // namespace hetsim::proto
