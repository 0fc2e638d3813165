// Loading a file whose message type is not known in advance (`hetsim convert`, `hetsim check`).
//
// Detection rule: with an explicit type the file is parsed as that type only. Without one, the file is
// parsed as each of Cluster, Model, Plan, Sweep, Report and Faults; a parse counts only if it succeeds with no
// unknown field (and no undefined enum number). Exactly one such type: that is the file's type. More
// than one (an empty file, or a file with only fields several types share, such as `name`): an error
// asking for --type. None: an error that shows, for text files, the error of the type whose parse went
// furthest into the file (the likeliest intended type), otherwise the error of every type.
#ifndef HETSIM_PROTO_ANY_MESSAGE_H_
#define HETSIM_PROTO_ANY_MESSAGE_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/message.h"

namespace hetsim::proto {

enum class MessageType { kCluster, kModel, kPlan, kSweep, kReport, kFaults };

// All types, in detection order.
const std::vector<MessageType>& AllMessageTypes();
// "cluster", "model", "plan", "sweep", "report", "faults".
const char* MessageTypeName(MessageType type);
absl::StatusOr<MessageType> MessageTypeFromName(absl::string_view name);
std::unique_ptr<google::protobuf::Message> NewMessage(MessageType type);

struct AnyMessage {
  MessageType type;
  std::unique_ptr<google::protobuf::Message> message;
};

// Reads `path` (format by extension) as `type`, or detects the type as described above.
absl::StatusOr<AnyMessage> LoadAnyMessage(absl::string_view path, std::optional<MessageType> type);

}  // namespace hetsim::proto

#endif  // HETSIM_PROTO_ANY_MESSAGE_H_
