// `hetsim convert IN OUT [--type T]`: lossless conversion between binary, text format and JSON.
#include <optional>
#include <string>

#include "absl/strings/str_format.h"
#include "app/cli/cli.h"
#include "proto/any_message.h"
#include "proto/io.h"
#include "proto/output_files.h"

namespace hetsim::cli {
namespace {

const CommandInfo kConvertInfo = {
    "convert", "hetsim convert IN OUT [--type cluster|model|plan|sweep|report|faults]",
    "Reads IN and writes the same message to OUT, each in the format its extension names: .pb (binary),\n"
    ".pbtxt/.textproto/.txtpb (text format) or .json. Nothing is validated beyond the schema (use\n"
    "`hetsim check`), so a file in progress converts too. Without --type the message type is detected: the\n"
    "file must parse, with no unknown field, as exactly one of cluster, model, plan, sweep, report, faults.\n"
    "OUT is written atomically; on any error it is not created."};

int Convert(const Args& args) {
  po::options_description options("options");
  std::string in, out, type_name;
  options.add_options()("type,t", po::value(&type_name)->value_name("T"), "message type of IN (else detected)")(
      "in", po::value(&in)->required(), "input file")("out", po::value(&out)->required(), "output file");
  po::positional_options_description positional;
  positional.add("in", 1).add("out", 1);
  po::variables_map vm;
  if (auto exit = ParseCommandLine(kConvertInfo, args, options, positional, &vm)) return *exit;

  std::optional<proto::MessageType> type;
  if (auto exit = ParseTypeOption(kConvertInfo, type_name, &type)) return *exit;
  if (absl::StatusOr<proto::FileFormat> f = proto::FileFormatFromPath(out); !f.ok()) {
    return ReportFailure(kConvertInfo, f.status());
  }
  absl::StatusOr<proto::AnyMessage> message = proto::LoadAnyMessage(in, type);
  if (!message.ok()) return ReportFailure(kConvertInfo, message.status());
  if (absl::Status s = proto::SaveOutputFile(out, *message->message, {in}); !s.ok()) {
    return ReportFailure(kConvertInfo, s);
  }
  return kExitOk;
}

}  // namespace

int RunConvert(const Args& args) {
  return RunGuarded(kConvertInfo, [&] { return Convert(args); });
}

}  // namespace hetsim::cli
