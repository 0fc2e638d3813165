#include "service/driver/check_file.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/counted.h"
#include "proto/inputs.h"
#include "proto/io.h"
#include "proto/summary.h"
#include "proto/validate_cluster.h"
#include "proto/validate_faults.h"
#include "proto/validate_model.h"
#include "proto/validate_sweep.h"
#include "service/driver/cluster_topology.h"
#include "service/driver/resolve_faults.h"
#include "sim/faults/fault_set.h"
#include "topology/device_graph.h"

namespace hetsim::driver {

using proto::MessageType;

namespace {

Checked CheckSweep(const hetsim::v1::Sweep& sweep, const std::string& path) {
  if (absl::Status s = proto::ValidateSweep(sweep, path); !s.ok()) return {"", s};
  std::string summary = proto::SummarizeSweep(sweep, path);
  const std::string cluster = proto::ResolveRelativeTo(path, sweep.cluster_path());
  if (!sweep.plan_path().empty()) {
    absl::StatusOr<proto::PlanInputs> in =
        proto::LoadPlanInputs(proto::ResolveRelativeTo(path, sweep.plan_path()), cluster);
    if (!in.ok()) return {"", in.status()};
  } else {
    if (absl::StatusOr<hetsim::v1::Cluster> c = proto::LoadCluster(cluster); !c.ok()) return {"", c.status()};
  }
  if (!sweep.model_path().empty()) {
    absl::StatusOr<hetsim::v1::Model> model =
        proto::LoadModel(proto::Source::File(proto::ResolveRelativeTo(path, sweep.model_path())));
    if (!model.ok()) return {"", model.status()};
  }
  return {summary, absl::OkStatus()};
}

// A faults file against the cluster it is meant for: fields, then link names on the device graph.
Checked CheckFaults(const hetsim::v1::Faults& faults, const std::string& path, const proto::Source& cluster_source) {
  absl::StatusOr<hetsim::v1::Cluster> cluster = proto::LoadCluster(cluster_source);
  if (!cluster.ok()) return {"", cluster.status()};
  if (absl::Status s = proto::ValidateFaults(faults, *cluster, path); !s.ok()) return {"", s};
  absl::StatusOr<std::unique_ptr<topology::Topology>> topo = driver::BuildTopology(*cluster, cluster_source.label());
  if (!topo.ok()) return {"", topo.status()};
  absl::StatusOr<faults::FaultSet> set = driver::ResolveFaults(faults, **topo, driver::SourcesOf(faults, path));
  if (!set.ok()) return {"", set.status()};
  std::string summary =
      absl::StrFormat("%s: %s on cluster \"%s\"\n", path, Counted(set->faults.size(), "fault"), cluster->name());
  for (const faults::ResolvedFault& f : set->faults) absl::StrAppend(&summary, "  ", f.description, "\n");
  if (faults.has_jitter()) {
    absl::StrAppendFormat(&summary, "  jitter %s spread %g, seed %d, %s\n",
                          hetsim::v1::JitterDistribution_Name(faults.jitter().distribution()), faults.jitter().spread(),
                          faults.jitter().seed(),
                          faults.jitter().gpus().empty() ? "every GPU" : Counted(faults.jitter().gpus_size(), "GPU"));
  }
  return {summary, absl::OkStatus()};
}

// Plans and faults are checked against a cluster.
absl::Status NeedsCluster(const std::string& path, const char* what) {
  return absl::InvalidArgumentError(
      absl::StrFormat("%s: %s checked against a cluster: pass --cluster, or give one cluster file", path, what));
}

}  // namespace

Checked CheckOne(const proto::AnyMessage& m, const proto::Source& file, const proto::Source* cluster) {
  const std::string& path = file.label();
  switch (m.type) {
    case MessageType::kCluster: {
      absl::StatusOr<hetsim::v1::Cluster> c = proto::LoadCluster(file);
      if (!c.ok()) return {"", c.status()};
      return {proto::SummarizeCluster(*c, path), absl::OkStatus()};
    }
    case MessageType::kModel: {
      const auto& model = static_cast<const hetsim::v1::Model&>(*m.message);
      if (absl::Status s = proto::ValidateModel(model, path); !s.ok()) return {"", s};
      return {proto::SummarizeModel(model, path), absl::OkStatus()};
    }
    case MessageType::kPlan: {
      if (cluster == nullptr) return {"", NeedsCluster(path, "a plan is")};
      absl::StatusOr<proto::PlanInputs> in = proto::LoadPlanInputs(file, *cluster);
      if (!in.ok()) return {"", in.status()};
      return {absl::StrCat(proto::SummarizeModel(in->model, in->model_path.empty() ? path : in->model_path),
                           proto::SummarizePlan(*in)),
              absl::OkStatus()};
    }
    case MessageType::kSweep: return CheckSweep(static_cast<const hetsim::v1::Sweep&>(*m.message), path);
    case MessageType::kFaults:
      if (cluster == nullptr) return {"", NeedsCluster(path, "faults are")};
      return CheckFaults(static_cast<const hetsim::v1::Faults&>(*m.message), path, *cluster);
    case MessageType::kReport:
      return {absl::StrFormat("%s: report of plan \"%s\" (reports are not validated)\n", path,
                              static_cast<const hetsim::v1::Report&>(*m.message).plan_name()),
              absl::OkStatus()};
  }
  return {"", absl::InternalError("unhandled message type")};
}

CheckedFiles CheckFiles(const std::vector<std::string>& files, std::optional<proto::MessageType> type,
                        std::string cluster_path) {
  CheckedFiles out;
  std::vector<std::optional<proto::AnyMessage>> loaded;
  std::vector<std::string> clusters;
  for (const std::string& f : files) {
    absl::StatusOr<proto::AnyMessage> m = proto::LoadAnyMessage(f, type);
    if (!m.ok()) {
      out.unreadable.push_back(m.status());
      loaded.emplace_back();
      continue;
    }
    if (m->type == proto::MessageType::kCluster) clusters.push_back(f);
    loaded.emplace_back(*std::move(m));
  }
  if (cluster_path.empty() && clusters.size() == 1) cluster_path = clusters[0];
  for (size_t i = 0; i < files.size(); ++i) {
    if (!loaded[i]) continue;
    const bool ambiguous_cluster =
        (loaded[i]->type == proto::MessageType::kPlan || loaded[i]->type == proto::MessageType::kFaults) &&
        cluster_path.empty() && clusters.size() > 1;
    out.checked.push_back(
        ambiguous_cluster ? Checked{"", absl::InvalidArgumentError(absl::StrFormat(
                                            "%s: several clusters given; choose the plan's with --cluster", files[i]))}
                          : CheckOne(*loaded[i], files[i], cluster_path));
  }
  out.cluster_path = std::move(cluster_path);
  return out;
}

}  // namespace hetsim::driver
