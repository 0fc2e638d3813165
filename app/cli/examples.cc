#include "app/cli/examples.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "app/cli/example_files.h"
#include "base/check.h"
#include "proto/any_message.h"
#include "proto/io.h"

namespace hetsim::cli {
namespace {

// The message type an example's name starts with: "cluster-512gpu" is a Cluster.
proto::MessageType TypeOfExample(absl::string_view name) {
  absl::StatusOr<proto::MessageType> type = proto::MessageTypeFromName(name.substr(0, name.find('-')));
  HETSIM_CHECK(type.ok(), "an example's name does not start with its message type");
  return *type;
}

// The files of examples/ name each other as ".pbtxt" (a plan's model_path, a sweep's cluster_path,
// plan_path, model_path); in another format they name that format's files.
void SetPathExtensions(const char* ext, google::protobuf::Message* message) {
  const google::protobuf::Descriptor* descriptor = message->GetDescriptor();
  const google::protobuf::Reflection* reflection = message->GetReflection();
  for (int i = 0; i < descriptor->field_count(); ++i) {
    const google::protobuf::FieldDescriptor* field = descriptor->field(i);
    if (field->type() != google::protobuf::FieldDescriptor::TYPE_STRING || field->is_repeated() ||
        !absl::EndsWith(field->name(), "_path")) {
      continue;
    }
    const std::string value = reflection->GetString(*message, field);
    absl::string_view path = value;
    if (absl::ConsumeSuffix(&path, ".pbtxt")) reflection->SetString(message, field, absl::StrCat(path, ext));
  }
}

}  // namespace

const char* ExampleExtension(proto::FileFormat format) {
  switch (format) {
    case proto::FileFormat::kBinary: return ".pb";
    case proto::FileFormat::kJson: return ".json";
    case proto::FileFormat::kText: return ".pbtxt";
  }
  return ".pbtxt";
}

std::vector<Example> BundledExamples(proto::FileFormat format) {
  std::vector<Example> examples;
  for (const ExampleFile& file : ExampleFiles()) {
    std::unique_ptr<google::protobuf::Message> message = proto::NewMessage(TypeOfExample(file.name));
    const std::string where = absl::StrCat("examples/", file.name, ".pbtxt");
    const absl::Status parsed = proto::ParseMessage(file.text, proto::FileFormat::kText, where, message.get());
    HETSIM_CHECK(parsed.ok(), "%s", std::string(parsed.message()).c_str());  // an embedded file does not parse
    SetPathExtensions(ExampleExtension(format), message.get());
    examples.push_back({std::string(file.name), std::move(message)});
  }
  return examples;
}

}  // namespace hetsim::cli
