// `hetsim example --out DIR [--format pbtxt|pb|json]`: writes the bundled examples.
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "app/cli/cli.h"
#include "app/cli/examples.h"
#include "proto/io.h"

namespace hetsim::cli {
namespace {

const CommandInfo kExampleInfo = {
    "example", "hetsim example --out DIR [--format pbtxt|pb|json]",
    "Writes the bundled examples into DIR (created if missing), one file per example, named\n"
    "cluster-512gpu, model-gpt39b, plan-512gpu, cluster-hapt-case, plan-hapt-case, sweep-bandwidth,\n"
    "sweep-add-h100, cluster-a100-512 and plan-megatron-39b (Megatron-LM's GPT 39.1B on 512 A100, see\n"
    "docs/metrics.md), faults-straggler (docs/faults.md), cluster-16k-h100, plan-llama3-405b and\n"
    "plan-llama3-405b-128k (Llama 3 405B on 16,384 H100 on a three-tier Clos, 8K and 128K context;\n"
    "docs/llama3.md), cluster-mixed-cloud (A100 and L40S nodes on one flat 100 Gb/s Ethernet network, one\n"
    "NIC per node) with plan-mixed-replicas (replicas of a stage on A100 and L40S, docs/cost-model.md),\n"
    "cluster-lab-pcie (RTX 4090 nodes on PCIe without P2P, RTX A6000 nodes with NVLink\n"
    "bridges; docs/network.md), and cluster-100k-h100 with plan-llama3-405b-100k (Llama 3 405B on\n"
    "100,000 H100, approximated by default; docs/performance.md) with the format's extension. Paths\n"
    "inside them are relative to DIR.\n"
    "Existing files of those names are replaced."};

int WriteExamples(const Args& args) {
  po::options_description options("options");
  std::string out, format_name;
  options.add_options()("out,o", po::value(&out)->required()->value_name("DIR"), "folder to write into")(
      "format,f", po::value(&format_name)->default_value("pbtxt")->value_name("F"), "pbtxt, pb or json");
  po::variables_map vm;
  if (auto exit = ParseCommandLine(kExampleInfo, args, options, {}, &vm)) return *exit;

  proto::FileFormat format;
  if (format_name == "pbtxt") {
    format = proto::FileFormat::kText;
  } else if (format_name == "pb") {
    format = proto::FileFormat::kBinary;
  } else if (format_name == "json") {
    format = proto::FileFormat::kJson;
  } else {
    return UsageError(kExampleInfo, absl::StrFormat("--format: \"%s\" is not pbtxt, pb or json", format_name));
  }
  std::error_code ec;
  std::filesystem::create_directories(out, ec);
  if (ec) {
    return ReportFailure(kExampleInfo,
                         absl::PermissionDeniedError(absl::StrFormat("%s: cannot create: %s", out, ec.message())));
  }
  // Serialize everything first so that a failure leaves no file behind.
  std::vector<std::pair<std::string, std::string>> files;
  for (const Example& e : BundledExamples(format)) {
    absl::StatusOr<std::string> bytes = proto::SerializeMessage(*e.message, format);
    if (!bytes.ok()) return ReportFailure(kExampleInfo, bytes.status());
    files.emplace_back((std::filesystem::path(out) / absl::StrCat(e.name, ExampleExtension(format))).string(),
                       *std::move(bytes));
  }
  for (const auto& [path, bytes] : files) {
    if (absl::Status s = proto::WriteFileAtomically(path, bytes); !s.ok()) return ReportFailure(kExampleInfo, s);
  }
  for (const auto& file : files) std::printf("%s\n", file.first.c_str());
  return kExitOk;
}

}  // namespace

int RunExample(const Args& args) {
  return RunGuarded(kExampleInfo, [&] { return WriteExamples(args); });
}

}  // namespace hetsim::cli
