#include "proto/any_message.h"

#include <tuple>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"
#include "proto/hetsim.pb.h"
#include "proto/io.h"

namespace hetsim::proto {
namespace {

// (line, column) of the first "file:line:col: ..." error, or (0, 0).
std::pair<int, int> ErrorPosition(absl::string_view file, absl::string_view message) {
  if (!absl::ConsumePrefix(&message, file) || !absl::ConsumePrefix(&message, ":")) return {0, 0};
  std::vector<absl::string_view> parts = absl::StrSplit(message, absl::MaxSplits(':', 2));
  int line = 0, column = 0;
  if (parts.size() < 3 || !absl::SimpleAtoi(parts[0], &line) || !absl::SimpleAtoi(parts[1], &column)) return {0, 0};
  return {line, column};
}

}  // namespace

const std::vector<MessageType>& AllMessageTypes() {
  static const std::vector<MessageType> kTypes = {MessageType::kCluster, MessageType::kModel,  MessageType::kPlan,
                                                  MessageType::kSweep,   MessageType::kReport, MessageType::kFaults};
  return kTypes;
}

const char* MessageTypeName(MessageType type) {
  switch (type) {
    case MessageType::kCluster: return "cluster";
    case MessageType::kModel: return "model";
    case MessageType::kPlan: return "plan";
    case MessageType::kSweep: return "sweep";
    case MessageType::kReport: return "report";
    case MessageType::kFaults: return "faults";
  }
  return "unknown";
}

absl::StatusOr<MessageType> MessageTypeFromName(absl::string_view name) {
  for (MessageType t : AllMessageTypes()) {
    if (name == MessageTypeName(t)) return t;
  }
  return absl::InvalidArgumentError(
      absl::StrFormat("unknown message type \"%s\" (cluster, model, plan, sweep, report or faults)", name));
}

std::unique_ptr<google::protobuf::Message> NewMessage(MessageType type) {
  switch (type) {
    case MessageType::kCluster: return std::make_unique<hetsim::v1::Cluster>();
    case MessageType::kModel: return std::make_unique<hetsim::v1::Model>();
    case MessageType::kPlan: return std::make_unique<hetsim::v1::Plan>();
    case MessageType::kSweep: return std::make_unique<hetsim::v1::Sweep>();
    case MessageType::kReport: return std::make_unique<hetsim::v1::Report>();
    case MessageType::kFaults: return std::make_unique<hetsim::v1::Faults>();
  }
  return nullptr;
}

absl::StatusOr<AnyMessage> LoadAnyMessage(absl::string_view path, std::optional<MessageType> type) {
  HETSIM_ASSIGN_OR_RETURN(FileFormat format, FileFormatFromPath(path));
  HETSIM_ASSIGN_OR_RETURN(std::string contents, ReadInputFile(path, InputKind::kReport));
  if (type.has_value()) {
    AnyMessage out{*type, NewMessage(*type)};
    HETSIM_RETURN_IF_ERROR(ParseMessage(contents, format, path, out.message.get()));
    return out;
  }
  std::vector<AnyMessage> accepted;
  std::vector<std::pair<MessageType, absl::Status>> rejected;
  for (MessageType t : AllMessageTypes()) {
    AnyMessage candidate{t, NewMessage(t)};
    absl::Status s = ParseMessage(contents, format, path, candidate.message.get());
    if (s.ok()) {
      accepted.push_back(std::move(candidate));
    } else {
      rejected.emplace_back(t, s);
    }
  }
  if (accepted.size() == 1) return std::move(accepted[0]);
  if (accepted.size() > 1) {
    std::vector<std::string> names;
    for (const AnyMessage& a : accepted) names.push_back(MessageTypeName(a.type));
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: cannot tell the message type: the file reads as %s; pass --type", path, absl::StrJoin(names, ", ")));
  }
  if (format == FileFormat::kText) {
    const auto* best = &rejected[0];
    for (const auto& r : rejected) {
      if (ErrorPosition(path, r.second.message()) > ErrorPosition(path, best->second.message())) best = &r;
    }
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: not a valid message of any type; read as a %s (the "
                        "type it matches longest; pass --type to choose):\n%s",
                        path, MessageTypeName(best->first), best->second.message()));
  }
  std::string all;
  for (const auto& [t, s] : rejected) absl::StrAppend(&all, "\nas a ", MessageTypeName(t), ": ", s.message());
  return absl::InvalidArgumentError(
      absl::StrFormat("%s: not a valid message of any type (pass --type to choose one):%s", path, all));
}

}  // namespace hetsim::proto
