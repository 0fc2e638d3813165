// `hetsim check FILE... [--cluster C] [--type T] [--out SUMMARY]`: loads and validates inputs and prints
// what they describe.
#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "app/cli/cli.h"
#include "base/counted.h"
#include "proto/any_message.h"
#include "proto/inputs.h"
#include "proto/io.h"
#include "proto/output_files.h"
#include "proto/summary.h"
#include "proto/validate_cluster.h"
#include "proto/validate_faults.h"
#include "proto/validate_model.h"
#include "proto/validate_sweep.h"
#include "service/driver/check_file.h"
#include "service/sweep/space.h"
#include "sim/faults/fault_set.h"
#include "topology/device_graph.h"

namespace hetsim::cli {
namespace {

const CommandInfo kCheckInfo = {
    "check", "hetsim check FILE... [--cluster CLUSTER] [--type T] [--out SUMMARY]",
    "Loads and validates each FILE (a cluster, model, plan or sweep; the type is detected as `hetsim\n"
    "convert` does, or given by --type for all FILEs) and prints a summary of it. A plan (or a faults file)\n"
    "is checked against its model and a cluster: --cluster, or the one cluster among the FILEs. A sweep's base\n"
    "inputs are loaded and checked too. Every problem is printed as <file>: <field path>: <problem>;\n"
    "the exit code is 2 if any file has one. --out also writes the summary to a file (only on success)."};

using proto::MessageType;

int Check(const Args& args) {
  po::options_description options("options");
  std::vector<std::string> files;
  std::string cluster_path, type_name, out;
  options.add_options()("cluster,c", po::value(&cluster_path)->value_name("CLUSTER"), "cluster for the plans")(
      "type,t", po::value(&type_name)->value_name("T"), "message type of every FILE (else detected)")(
      "out,o", po::value(&out)->value_name("SUMMARY"), "also write the summary to this file")(
      "files", po::value(&files)->required(), "files to check");
  po::positional_options_description positional;
  positional.add("files", -1);
  po::variables_map vm;
  if (auto exit = ParseCommandLine(kCheckInfo, args, options, positional, &vm)) return *exit;
  std::optional<MessageType> type;
  if (auto exit = ParseTypeOption(kCheckInfo, type_name, &type)) return *exit;

  int failures = 0;
  int worst = kExitOk;
  auto fail = [&](const absl::Status& s) {
    ++failures;
    worst = std::max(worst, ReportFailure(kCheckInfo, s));  // bad input (2) outranks internal (1)
  };
  driver::CheckedFiles checked = driver::CheckFiles(files, type, cluster_path);
  for (const absl::Status& s : checked.unreadable) fail(s);
  // A sweep's axes against its base inputs (an index past a list, a path the base lacks), as `hetsim
  // sweep` binds them before any point runs: the driver's check reads the files, not the axes in them.
  size_t readable = 0;
  for (const std::string& f : files) {
    absl::StatusOr<proto::AnyMessage> m = proto::LoadAnyMessage(f, type);
    if (!m.ok() || readable >= checked.checked.size()) continue;
    driver::Checked& c = checked.checked[readable++];
    if (!c.status.ok() || m->type != MessageType::kSweep) continue;
    c.status = sweep::CheckSweepAxes(static_cast<const hetsim::v1::Sweep&>(*m->message), f);
  }
  std::string summary;
  for (const driver::Checked& c : checked.checked) {
    if (!c.status.ok()) {
      fail(c.status);
    } else {
      summary += c.summary;
    }
  }
  std::fputs(summary.c_str(), stdout);
  if (failures > 0) {
    std::fprintf(stderr, "hetsim check: %d of %zu files have problems\n", failures, files.size());
    return worst;
  }
  std::printf("OK: %s valid\n", Counted(files.size(), "file").c_str());
  if (!out.empty()) {
    std::vector<std::string> inputs = files;
    inputs.push_back(checked.cluster_path);
    if (absl::Status s = proto::WriteOutputFile(out, summary, std::move(inputs)); !s.ok()) {
      return ReportFailure(kCheckInfo, s);
    }
  }
  return kExitOk;
}

}  // namespace

int RunCheck(const Args& args) {
  return RunGuarded(kCheckInfo, [&] { return Check(args); });
}

}  // namespace hetsim::cli
