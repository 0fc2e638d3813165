// `hetsim check FILE... [--cluster C] [--type T] [--out SUMMARY]`: loads and validates inputs and prints
// what they describe.
#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "app/lib/cli.h"
#include "app/lib/command_list.h"
#include "app/lib/summary.h"
#include "proto/any_message.h"
#include "proto/inputs.h"
#include "proto/io.h"
#include "proto/validate_cluster.h"
#include "proto/validate_faults.h"
#include "proto/validate_model.h"
#include "proto/validate_sweep.h"
#include "sim/faults/fault_set.h"
#include "topology/device_graph.h"

namespace hetsim::app {
namespace {

const CommandInfo kInfo = {
    "check", "hetsim check FILE... [--cluster CLUSTER] [--type T] [--out SUMMARY]",
    "Loads and validates each FILE (a cluster, model, plan or sweep; the type is detected as `hetsim\n"
    "convert` does, or given by --type for all FILEs) and prints a summary of it. A plan (or a faults file)\n"
    "is checked against its model and a cluster: --cluster, or the one cluster among the FILEs. A sweep's base\n"
    "inputs are loaded and checked too. Every problem is printed as <file>: <field path>: <problem>;\n"
    "the exit code is 2 if any file has one. --out also writes the summary to a file (only on success)."};

using proto::MessageType;

struct Checked {
  std::string summary;
  absl::Status status;
};

Checked CheckSweep(const hetsim::v1::Sweep& sweep, const std::string& path) {
  if (absl::Status s = proto::ValidateSweep(sweep, path); !s.ok()) return {"", s};
  std::string summary = SummarizeSweep(sweep, path);
  const std::string cluster = proto::ResolveRelativeTo(path, sweep.cluster_path());
  if (!sweep.plan_path().empty()) {
    absl::StatusOr<proto::PlanInputs> in =
        proto::LoadPlanInputs(proto::ResolveRelativeTo(path, sweep.plan_path()), cluster);
    if (!in.ok()) return {"", in.status()};
  } else {
    if (absl::StatusOr<hetsim::v1::Cluster> c = proto::LoadCluster(cluster); !c.ok()) return {"", c.status()};
  }
  if (!sweep.model_path().empty()) {
    const std::string model_path = proto::ResolveRelativeTo(path, sweep.model_path());
    absl::StatusOr<hetsim::v1::Model> model = proto::LoadAs<hetsim::v1::Model>(model_path);
    if (!model.ok()) return {"", model.status()};
    if (absl::Status s = proto::ValidateModel(*model, model_path); !s.ok()) return {"", s};
  }
  return {summary, absl::OkStatus()};
}

// A faults file against the cluster it is meant for: fields, then link names on the device graph.
Checked CheckFaults(const hetsim::v1::Faults& faults, const std::string& path, const std::string& cluster_path) {
  if (cluster_path.empty()) {
    return {"", absl::InvalidArgumentError(absl::StrFormat(
                    "%s: faults are checked against a cluster: pass --cluster, or give one cluster file", path))};
  }
  absl::StatusOr<hetsim::v1::Cluster> cluster = proto::LoadCluster(cluster_path);
  if (!cluster.ok()) return {"", cluster.status()};
  if (absl::Status s = proto::ValidateFaults(faults, *cluster, path); !s.ok()) return {"", s};
  absl::StatusOr<topology::Topology> topo = topology::Topology::Build(*cluster);
  if (!topo.ok()) return {"", topo.status()};
  absl::StatusOr<sim::faults::FaultSet> set = sim::faults::ResolveFaults(faults, *topo, sim::faults::SourcesOf(faults, path));
  if (!set.ok()) return {"", set.status()};
  std::string summary = absl::StrFormat("%s: %d fault%s on cluster \"%s\"\n", path, set->faults.size(),
                                        set->faults.size() == 1 ? "" : "s", cluster->name());
  for (const sim::faults::ResolvedFault& f : set->faults) absl::StrAppend(&summary, "  ", f.description, "\n");
  if (faults.has_jitter()) {
    absl::StrAppendFormat(&summary, "  jitter %s spread %g, seed %d, %s\n",
                          hetsim::v1::JitterDistribution_Name(faults.jitter().distribution()), faults.jitter().spread(),
                          faults.jitter().seed(),
                          faults.jitter().gpus().empty() ? "every GPU"
                                                         : absl::StrFormat("%d GPUs", faults.jitter().gpus_size()));
  }
  return {summary, absl::OkStatus()};
}

Checked CheckOne(const proto::AnyMessage& m, const std::string& path, const std::string& cluster_path) {
  switch (m.type) {
    case MessageType::kCluster: {
      absl::StatusOr<hetsim::v1::Cluster> c = proto::LoadCluster(path);
      if (!c.ok()) return {"", c.status()};
      return {SummarizeCluster(*c, path), absl::OkStatus()};
    }
    case MessageType::kModel: {
      const auto& model = static_cast<const hetsim::v1::Model&>(*m.message);
      if (absl::Status s = proto::ValidateModel(model, path); !s.ok()) return {"", s};
      return {SummarizeModel(model, path), absl::OkStatus()};
    }
    case MessageType::kPlan: {
      if (cluster_path.empty()) {
        return {"", absl::InvalidArgumentError(absl::StrFormat(
                        "%s: a plan is checked against a cluster: pass --cluster, or give one cluster file", path))};
      }
      absl::StatusOr<proto::PlanInputs> in = proto::LoadPlanInputs(path, cluster_path);
      if (!in.ok()) return {"", in.status()};
      return {absl::StrCat(SummarizeModel(in->model, in->model_path.empty() ? path : in->model_path),
                           SummarizePlan(*in)),
              absl::OkStatus()};
    }
    case MessageType::kSweep:
      return CheckSweep(static_cast<const hetsim::v1::Sweep&>(*m.message), path);
    case MessageType::kFaults:
      return CheckFaults(static_cast<const hetsim::v1::Faults&>(*m.message), path, cluster_path);
    case MessageType::kReport:
      return {absl::StrFormat("%s: report of plan \"%s\" (reports are not validated)\n", path,
                              static_cast<const hetsim::v1::Report&>(*m.message).plan_name()),
              absl::OkStatus()};
  }
  return {"", absl::InternalError("unhandled message type")};
}

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
  if (auto exit = ParseCommandLine(kInfo, args, options, positional, &vm)) return *exit;
  std::optional<MessageType> type;
  if (auto exit = ParseTypeOption(kInfo, type_name, &type)) return *exit;

  std::vector<std::optional<proto::AnyMessage>> loaded;
  int failures = 0;
  int worst = kExitOk;
  auto fail = [&](const absl::Status& s) {
    ++failures;
    worst = std::max(worst, ReportFailure(kInfo, s));  // bad input (2) outranks internal (1)
  };
  std::vector<std::string> clusters;
  for (const std::string& f : files) {
    absl::StatusOr<proto::AnyMessage> m = proto::LoadAnyMessage(f, type);
    if (!m.ok()) {
      fail(m.status());
      loaded.emplace_back();
      continue;
    }
    if (m->type == MessageType::kCluster) clusters.push_back(f);
    loaded.emplace_back(*std::move(m));
  }
  if (cluster_path.empty() && clusters.size() == 1) cluster_path = clusters[0];
  std::string summary;
  for (size_t i = 0; i < files.size(); ++i) {
    if (!loaded[i]) continue;
    const bool ambiguous_cluster = (loaded[i]->type == MessageType::kPlan || loaded[i]->type == MessageType::kFaults) &&
                                   cluster_path.empty() && clusters.size() > 1;
    Checked c = ambiguous_cluster
                    ? Checked{"", absl::InvalidArgumentError(absl::StrFormat(
                                      "%s: several clusters given; choose the plan's with --cluster", files[i]))}
                    : CheckOne(*loaded[i], files[i], cluster_path);
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
  std::printf("OK: %zu file%s valid\n", files.size(), files.size() == 1 ? "" : "s");
  if (!out.empty()) {
    if (absl::Status s = proto::WriteFileAtomically(out, summary); !s.ok()) return ReportFailure(kInfo, s);
  }
  return kExitOk;
}

}  // namespace

int RunCheck(const Args& args) {
  return RunGuarded(kInfo, [&] { return Check(args); });
}

}  // namespace hetsim::app
