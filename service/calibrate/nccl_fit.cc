#include "service/calibrate/nccl_fit.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <tuple>

#include "absl/algorithm/container.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "base/wall_limit.h"
#include "proto/fabric_presets.h"
#include "service/calibrate/least_squares_internal.h"
#include "service/calibrate/nccl_cluster_match.h"
#include "service/calibrate/report.h"
#include "service/driver/cluster_topology.h"
#include "sim/collectives/simulate.h"
#include "topology/device_graph.h"

namespace hetsim::calibrate {
namespace {

constexpr const char* kFields[] = {"bandwidth_efficiency", "launch_latency_ns", "ll_step_latency_ns",
                                   "ll128_step_latency_ns", "simple_step_latency_ns"};

// Parameters in fit units: efficiency, then the four latencies in microseconds (all of order 1).
std::vector<double> ToVector(const v1::NcclFabric& f) {
  return {f.bandwidth_efficiency(), f.launch_latency_ns() / 1e3, f.ll_step_latency_ns() / 1e3,
          f.ll128_step_latency_ns() / 1e3, f.simple_step_latency_ns() / 1e3};
}

void FromVector(const std::vector<double>& x, v1::NcclFabric* f) {
  // Zero would mean "the preset": a fitted latency is at least 1 ns.
  auto ns = [](double us) { return std::max<int64_t>(1, std::llround(us * 1e3)); };
  f->set_bandwidth_efficiency(x[0]);
  f->set_launch_latency_ns(ns(x[1]));
  f->set_ll_step_latency_ns(ns(x[2]));
  f->set_ll128_step_latency_ns(ns(x[3]));
  f->set_simple_step_latency_ns(ns(x[4]));
}

double FieldValue(const v1::NcclFabric& f, int i) {
  const std::vector<double> v = ToVector(f);
  return i == 0 ? v[0] : v[i] * 1e3;
}

struct Evaluated {
  std::vector<double> seconds;  // per row, logs in order
  std::vector<std::string> what;
};

// The algorithm a log's NCCL_ALGO forces, when it names one that hetsim has for the log's collective
// ("Ring", "Tree"); kAuto (hetsim's choice, as NCCL's) for none or a list.
collectives::CollectiveAlgorithm ForcedAlgorithm(const NcclLog& log) {
  if (log.nvls) return collectives::CollectiveAlgorithm::kNvls;
  if (log.collnet) return collectives::CollectiveAlgorithm::kCollNet;
  if (log.nvls_tree) return collectives::CollectiveAlgorithm::kNvlsTree;
  if (log.collnet_chain) return collectives::CollectiveAlgorithm::kCollNetChain;
  if (log.algorithm.empty()) return collectives::CollectiveAlgorithm::kAuto;
  absl::StatusOr<collectives::CollectiveAlgorithm> a =
      collectives::ParseAlgorithm(absl::AsciiStrToLower(log.algorithm));
  if (!a.ok() || *a == collectives::CollectiveAlgorithm::kAuto || !collectives::Supports(*a, log.op)) {
    return collectives::CollectiveAlgorithm::kAuto;
  }
  return *a;
}

// The fit's warnings that say which runs of a file of several were read, and which were not.
void NameRuns(const std::vector<NcclLog>& logs, const std::vector<std::string>& skipped,
              std::vector<std::string>& warnings) {
  for (const std::string& why : skipped) warnings.push_back("run not read: " + why);
  for (const NcclLog& log : logs) {
    const bool several = absl::c_count_if(logs, [&](const NcclLog& l) { return l.file == log.file; }) > 1;
    if (several || !skipped.empty()) warnings.push_back(absl::StrFormat("%s: run read: %s", log.file, RunName(log)));
  }
}

// Every row of `logs` simulated on `cluster`: the first log.hosts nodes of island `island`, the first
// ranks / hosts GPUs of each.
// `instead` (not kAuto): the rows of logs that name no algorithm run that one where it applies (+inf where it
// does not run on the log's GPUs), not the automatic choice.
absl::StatusOr<Evaluated> Predict(const v1::Cluster& cluster, int island, const std::vector<const NcclLog*>& logs,
                                  collectives::CollectiveAlgorithm instead = collectives::CollectiveAlgorithm::kAuto,
                                  bool channel_caps = true) {
  HETSIM_ASSIGN_OR_RETURN(driver::ClusterNetwork network, driver::BuildClusterNetwork(cluster, "cluster"));
  const topology::Topology& topo = *network.topology;
  Evaluated out;
  for (const NcclLog* log : logs) {
    const int per_host = log->ranks / log->hosts;
    if (log->hosts > topo.num_nodes(island) || per_host > topo.gpus_per_node(island)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s:1: %d ranks on %d hosts do not fit island \"%s\" (%d nodes of %d GPUs)", log->file, log->ranks,
          log->hosts, cluster.islands(island).name(), topo.num_nodes(island), topo.gpus_per_node(island)));
    }
    collectives::CollectiveRequest req;
    req.op = log->op;
    req.algorithm = ForcedAlgorithm(*log);
    req.nccl_channel_caps = channel_caps;
    const bool alternative = req.algorithm == collectives::CollectiveAlgorithm::kAuto &&
                             instead != collectives::CollectiveAlgorithm::kAuto &&
                             collectives::Supports(instead, log->op);
    if (alternative) req.algorithm = instead;
    for (int h = 0; h < log->hosts; ++h) {
      for (int g = 0; g < per_host; ++g) req.gpus.push_back(*topo.GpuIdOf(island, h, g));
    }
    // sendrecv_perf pairs neighbours; the pair from the first to the last rank crosses hosts when the
    // log does.
    if (req.op == hetsim::CollectiveOp::kSendRecv) req.gpus = {req.gpus.front(), req.gpus.back()};
    if (req.gpus.size() < 2) {
      return absl::InvalidArgumentError(absl::StrFormat("%s:1: one rank: nothing to calibrate", log->file));
    }
    for (const NcclRow& row : log->rows) {
      req.bytes = row.bytes;
      absl::StatusOr<collectives::CollectiveResult> r = collectives::SimulateCollective(topo, *network.router, req);
      if (!r.ok() && alternative && absl::IsInvalidArgument(r.status())) {
        out.seconds.push_back(std::numeric_limits<double>::infinity());
        out.what.emplace_back();
        continue;
      }
      if (!r.ok())
        return absl::InvalidArgumentError(absl::StrFormat("%s:%d: %s", log->file, row.line, r.status().message()));
      out.seconds.push_back(hetsim::TimeToSeconds(r->time));
      out.what.push_back(absl::StrFormat("%s %d B on %d GPUs (%d hosts)", hetsim::CollectiveOpName(log->op), row.bytes,
                                         log->ranks, log->hosts));
    }
  }
  return out;
}

// `log` with at most kMaxFitRowsPerLog rows, evenly spaced over its own (the first and the last
// kept): a log of every size up to its largest fits as its doubling sizes do, and each fitting step
// re-simulates every row it holds (a 10,000-row log took 10 minutes).
NcclLog ThinnedForFit(const NcclLog& log) {
  if (log.rows.size() <= kMaxFitRowsPerLog) return log;
  NcclLog thin = log;
  thin.rows.clear();
  const size_t n = log.rows.size(), k = kMaxFitRowsPerLog;
  for (size_t i = 0; i < k; ++i) thin.rows.push_back(log.rows[i * (n - 1) / (k - 1)]);
  return thin;
}

// Fits the NcclFabric that `target` selects in `cluster` to the rows of `all_logs` (at most
// kMaxFitRowsPerLog of each).
absl::Status FitFabric(v1::Cluster& cluster, int island, const std::vector<const NcclLog*>& all_logs,
                       const std::function<v1::NcclFabric*(v1::Cluster&)>& target, const std::string& at,
                       std::vector<FittedParameter>& fitted) {
  if (all_logs.empty()) return absl::OkStatus();
  std::vector<NcclLog> thinned;
  for (const NcclLog* log : all_logs) thinned.push_back(ThinnedForFit(*log));
  std::vector<const NcclLog*> logs;
  for (const NcclLog& log : thinned) logs.push_back(&log);
  std::vector<double> measured;
  for (const NcclLog* log : logs) {
    for (const NcclRow& row : log->rows) measured.push_back(row.time_us * 1e-6);
  }
  const v1::NcclFabric before = *target(cluster);
  LeastSquaresProblem problem;
  problem.start = ToVector(before);
  constexpr double kMinUs = kMinFittedLatencyNs / 1e3, kMaxUs = kMaxFittedLatencyNs / 1e3;
  problem.lower = {kMinBandwidthEfficiency, kMinUs, kMinUs, kMinUs, kMinUs};
  problem.upper = {kMaxBandwidthEfficiency, kMaxUs, kMaxUs, kMaxUs, kMaxUs};
  problem.min_step = {1e-5, 0.005, 0.005, 0.005, 0.005};  // latencies are whole nanoseconds
  problem.residuals = [&](const std::vector<double>& x) -> absl::StatusOr<std::vector<double>> {
    HETSIM_RETURN_IF_ERROR(CurrentWallLimit().Check("fitting the NCCL parameters"));
    v1::Cluster c = cluster;
    FromVector(x, target(c));
    absl::StatusOr<Evaluated> e = Predict(c, island, logs);
    if (!e.ok()) return e.status();
    std::vector<double> r;
    for (size_t k = 0; k < measured.size(); ++k) r.push_back((e->seconds[k] - measured[k]) / measured[k]);
    return r;
  };
  absl::StatusOr<LeastSquaresResult> result = SolveLeastSquares(problem);
  if (!result.ok()) return result.status();
  FromVector(result->x, target(cluster));
  for (int i = 0; i < 5; ++i) {
    fitted.push_back({absl::StrCat(at, ".nccl.", kFields[i]), FieldValue(before, i), FieldValue(*target(cluster), i)});
  }
  return absl::OkStatus();
}

// The index of island `name` (empty: the first).
absl::StatusOr<int> FindIsland(const v1::Cluster& cluster, const std::string& name) {
  if (cluster.islands_size() == 0) return absl::InvalidArgumentError("cluster: islands: required");
  if (name.empty()) return 0;
  for (int i = 0; i < cluster.islands_size(); ++i) {
    if (cluster.islands(i).name() == name) return i;
  }
  return absl::InvalidArgumentError(absl::StrFormat("--island: no island named \"%s\"", name));
}

// Resolves the presets of island `island`'s node type and inter-node fabric into the fields, so that
// the fit starts from (and writes) explicit values. Returns the node type's index.
absl::StatusOr<int> ResolveFabricPresets(v1::Cluster& cluster, int island) {
  cluster.set_ideal(false);  // the parameters only act on non-ideal hardware
  v1::Island* isl = cluster.mutable_islands(island);
  int node_type = -1;
  for (int i = 0; i < cluster.node_types_size(); ++i) {
    if (cluster.node_types(i).name() == isl->node_type()) node_type = i;
  }
  if (node_type < 0) {
    return absl::InvalidArgumentError(absl::StrFormat("cluster: islands[%d].node_type: unknown", island));
  }
  v1::NodeType* nt = cluster.mutable_node_types(node_type);
  std::string gpu_preset;
  for (const v1::GpuType& g : cluster.gpu_types()) {
    if (g.name() == nt->gpu_type()) gpu_preset = g.preset();
  }
  *nt->mutable_nccl() =
      proto::ResolveNcclFabric(nt->nccl(), proto::IntraNodeFabricPreset(nt->intra_node_fabric(), gpu_preset));
  *isl->mutable_nccl() = proto::ResolveNcclFabric(isl->nccl(), proto::InterNodeFabricPreset(isl->fabric()));
  return node_type;
}

// A row more than this much faster than the island's links at 100% efficiency with no latency ran what
// the links alone cannot: an in-network reduction. Above nccl-tests' run-to-run noise (~1%).
constexpr double kFasterThanLinksTolerance = 0.03;

absl::Status CheckLinksCanCarry(const v1::Cluster& cluster, int island, int node_type,
                                const std::vector<const NcclLog*>& logs) {
  v1::Cluster best = cluster;
  const std::vector<double> fastest = {kMaxBandwidthEfficiency, kMinFittedLatencyNs / 1e3, kMinFittedLatencyNs / 1e3,
                                       kMinFittedLatencyNs / 1e3, kMinFittedLatencyNs / 1e3};
  FromVector(fastest, best.mutable_node_types(node_type)->mutable_nccl());
  FromVector(fastest, best.mutable_islands(island)->mutable_nccl());
  if (best.node_types(node_type).nvlink_sharp()) best.mutable_node_types(node_type)->set_nvls_bandwidth_efficiency(1);
  // The links alone: without NCCL's per-channel tree caps, its software's limit, not the links' (a 2-node GH200 tree
  // measured above hetsim's capped tree is NCCL beating its own tuner's table, not an in-network reduction).
  absl::StatusOr<Evaluated> e = Predict(best, island, logs, collectives::CollectiveAlgorithm::kAuto, false);
  if (!e.ok()) return e.status();
  // Any algorithm NCCL may have run: at 100% efficiency the automatic choice can differ from the run's (NCCL's
  // tuner takes the tree between two nodes only below its per-channel cap, sim/collectives/algorithms.cc).
  for (collectives::CollectiveAlgorithm a :
       {collectives::CollectiveAlgorithm::kRing, collectives::CollectiveAlgorithm::kTree}) {
    absl::StatusOr<Evaluated> other = Predict(best, island, logs, a, false);
    if (!other.ok()) return other.status();
    for (size_t i = 0; i < e->seconds.size(); ++i) e->seconds[i] = std::min(e->seconds[i], other->seconds[i]);
  }
  size_t k = 0;
  double worst = 0;
  double least_us = 0;
  const NcclLog* worst_log = nullptr;
  const NcclRow* worst_row = nullptr;
  for (const NcclLog* log : logs) {
    for (const NcclRow& row : log->rows) {
      const double faster = 1 - row.time_us * 1e-6 / e->seconds[k];
      if (faster > worst)
        std::tie(worst, least_us, worst_log, worst_row) = std::tuple(faster, e->seconds[k] * 1e6, log, &row);
      ++k;
    }
  }
  if (worst <= kFasterThanLinksTolerance) return absl::OkStatus();
  // "100.0% faster" for a row 10^6 times too fast, its time as "0.00 us": the ratio and %g (session 36).
  const double times = least_us / worst_row->time_us;
  const std::string how = times < 2 ? absl::StrFormat("%.1f%%", 100 * worst) : absl::StrFormat("%.3g times", times);
  // A run that already names its in-network algorithm (NCCL_ALGO=NVLS: NVIDIA/nccl#1259's 2-GPU NVLS table
  // under CUDA graphs, -G 10) is faster than hetsim's model of that algorithm can be: saying "NVLS the log does
  // not show" would contradict the log.
  if (worst_log->nvls || worst_log->nvls_tree || worst_log->collnet || worst_log->collnet_chain) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s:%d: %d B in %g us (busbw %.2f GB/s, hetsim's fastest is %g us) is %s faster than hetsim's model of the "
        "run's own algorithm (%s) on island \"%s\" can be at 100%% NCCL efficiency with no latency: small sizes "
        "run under CUDA graphs (nccl-tests -G) or with latencies below the model's, or link bandwidths in the "
        "cluster below the hardware's; fit the other runs without this one",
        worst_log->file, worst_row->line, worst_row->bytes, worst_row->time_us, worst_row->busbw_gbytes_per_s, least_us,
        how, RunName(*worst_log), cluster.islands(island).name()));
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "%s:%d: %d B in %g us (busbw %.2f GB/s, the links need at least %g us) is %s faster than island \"%s\"'s "
      "links carry at 100%% NCCL "
      "efficiency with no latency: NVLink SHARP (NVLS) or CollNet in-network reduction the log's NCCL lines do not "
      "show "
      "(add NCCL_DEBUG=INFO, or rerun with NCCL_NVLS_ENABLE=0 NCCL_COLLNET_ENABLE=0), or link bandwidths in the "
      "cluster below the hardware's",
      worst_log->file, worst_row->line, worst_row->bytes, worst_row->time_us, worst_row->busbw_gbytes_per_s, least_us,
      how, cluster.islands(island).name()));
}

// A run that shows NVLink SHARP says the node's NVSwitch reduces: the node type gets nvlink_sharp, and
// the run is fitted as NVLS. InvalidArgument when the node type's fabric is not NVSWITCH.
absl::Status EnableNvlsWhereRun(v1::Cluster& cluster, int node_type, const std::vector<const NcclLog*>& logs,
                                std::vector<std::string>& warnings) {
  const auto nvls = absl::c_find_if(logs, [](const NcclLog* l) { return l->nvls || l->nvls_tree; });
  if (nvls == logs.end()) return absl::OkStatus();
  v1::NodeType* node = cluster.mutable_node_types(node_type);
  if (node->intra_node_fabric() != v1::NVSWITCH) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s:%d: NCCL ran NVLink SHARP (NVLS), but node type \"%s\" is %s, not NVSWITCH", (*nvls)->file,
                        (*nvls)->first_line, node->name(), v1::IntraNodeFabric_Name(node->intra_node_fabric())));
  }
  if (!node->nvlink_sharp()) {
    node->set_nvlink_sharp(true);
    warnings.push_back(absl::StrFormat("%s: NCCL ran NVLink SHARP (NVLS): node type \"%s\" gets nvlink_sharp: true",
                                       RunName(**nvls), node->name()));
  }
  return absl::OkStatus();
}

// A run that shows CollNet says the island's InfiniBand switches reduce (SHARP): the island gets
// infiniband_sharp, and the run is fitted as CollNet. InvalidArgument when the island is not InfiniBand.
absl::Status EnableCollNetWhereRun(v1::Cluster& cluster, int island, const std::vector<const NcclLog*>& logs,
                                   std::vector<std::string>& warnings) {
  const auto collnet = absl::c_find_if(logs, [](const NcclLog* l) { return l->collnet || l->collnet_chain; });
  if (collnet == logs.end()) return absl::OkStatus();
  v1::Island* isl = cluster.mutable_islands(island);
  if (isl->fabric() != v1::INFINIBAND && isl->fabric() != v1::INTER_NODE_FABRIC_UNSPECIFIED) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s:%d: NCCL ran CollNet (InfiniBand SHARP), but island \"%s\" is %s", (*collnet)->file,
                        (*collnet)->first_line, isl->name(), v1::InterNodeFabric_Name(isl->fabric())));
  }
  if (!isl->infiniband_sharp()) {
    isl->set_infiniband_sharp(true);
    warnings.push_back(
        absl::StrFormat("%s: NCCL ran CollNet (InfiniBand SHARP): island \"%s\" gets infiniband_sharp: true",
                        RunName(**collnet), isl->name()));
  }
  return absl::OkStatus();
}

// NVLS runs fit the node type's own NVLS efficiency: fitted as the ring's efficiency times NCCL's share
// (kNvlsRingShare), which then moves to nvls_bandwidth_efficiency; the rings keep what the other runs
// fitted (or, with no other single-host run, the fabric's values, the NVLS runs' latencies kept).
absl::Status FitNvlsEfficiency(v1::Cluster& cluster, int island, int node_type, bool rings_fitted,
                               const std::vector<const NcclLog*>& nvls_logs, std::vector<FittedParameter>& fitted) {
  if (nvls_logs.empty()) return absl::OkStatus();
  v1::NodeType* node = cluster.mutable_node_types(node_type);
  const v1::NcclFabric rings = node->nccl();
  const double before = node->nvls_bandwidth_efficiency() > 0
                            ? node->nvls_bandwidth_efficiency()
                            : rings.bandwidth_efficiency() * collectives::kNvlsRingShare;
  node->clear_nvls_bandwidth_efficiency();
  std::vector<FittedParameter> nvls_fit;
  const std::string at = absl::StrFormat("node_types[%d]", node_type);
  if (absl::Status s = FitFabric(
          cluster, island, nvls_logs,
          [node_type](v1::Cluster& c) { return c.mutable_node_types(node_type)->mutable_nccl(); }, at, nvls_fit);
      !s.ok()) {
    return s;
  }
  node = cluster.mutable_node_types(node_type);
  const double share = node->nccl().bandwidth_efficiency() * collectives::kNvlsRingShare;
  if (rings_fitted) {
    *node->mutable_nccl() = rings;
  } else {
    node->mutable_nccl()->set_bandwidth_efficiency(rings.bandwidth_efficiency());
    fitted.insert(fitted.end(), nvls_fit.begin() + 1, nvls_fit.end());
  }
  node->set_nvls_bandwidth_efficiency(share);
  fitted.push_back({at + ".nvls_bandwidth_efficiency", before, share});
  return absl::OkStatus();
}

// Single-host logs fit the node type, then multi-host logs the island's inter-node fabric.
absl::Status FitIntraThenInter(v1::Cluster& cluster, int island, int node_type,
                               const std::vector<const NcclLog*>& intra, const std::vector<const NcclLog*>& inter,
                               std::vector<FittedParameter>& fitted) {
  if (absl::Status s = FitFabric(
          cluster, island, intra,
          [node_type](v1::Cluster& c) { return c.mutable_node_types(node_type)->mutable_nccl(); },
          absl::StrFormat("node_types[%d]", node_type), fitted);
      !s.ok()) {
    return s;
  }
  // A collective pays the larger of the node type's and the island's launch latency: an island value
  // below the node type's has no effect (nothing to fit), so the inter-node fit starts above it.
  v1::Island* isl = cluster.mutable_islands(island);
  const int64_t node_launch = cluster.node_types(node_type).nccl().launch_latency_ns();
  if (!inter.empty() && isl->nccl().launch_latency_ns() <= node_launch) {
    isl->mutable_nccl()->set_launch_latency_ns(node_launch * 11 / 10 + 1);
  }
  return FitFabric(
      cluster, island, inter, [island](v1::Cluster& c) { return c.mutable_islands(island)->mutable_nccl(); },
      absl::StrFormat("islands[%d]", island), fitted);
}

}  // namespace

absl::StatusOr<SourceFit> NcclTestsSource::Fit(v1::Cluster& cluster) {
  absl::StatusOr<int> island = FindIsland(cluster, options_.island);
  if (!island.ok()) return island.status();
  SourceFit fit;
  NameRuns(logs_, options_.skipped_runs, fit.warnings);
  std::vector<const NcclLog*> intra, inter, all;
  for (const NcclLog& log : logs_) {
    if (absl::Status s = CheckLogAgainstIsland(log, cluster, *island, fit.warnings); !s.ok()) return s;
    (log.hosts > 1 ? inter : intra).push_back(&log);
    all.push_back(&log);
  }
  absl::StatusOr<int> node_type = ResolveFabricPresets(cluster, *island);
  if (!node_type.ok()) return node_type.status();
  if (absl::Status s = EnableNvlsWhereRun(cluster, *node_type, all, fit.warnings); !s.ok()) return s;
  if (absl::Status s = EnableCollNetWhereRun(cluster, *island, all, fit.warnings); !s.ok()) return s;
  if (absl::Status s = CheckLinksCanCarry(cluster, *island, *node_type, all); !s.ok()) return s;
  // The cluster's presets, before the fit: where a poor fit's logs sit far above them, the guards name it.
  const v1::Cluster presets = cluster;
  std::vector<const NcclLog*> ring_intra, nvls_intra;
  for (const NcclLog* log : intra) (log->nvls ? nvls_intra : ring_intra).push_back(log);
  if (absl::Status s = FitIntraThenInter(cluster, *island, *node_type, ring_intra, inter, fit.parameters); !s.ok()) {
    return s;
  }
  if (absl::Status s = FitNvlsEfficiency(cluster, *island, *node_type, !ring_intra.empty(), nvls_intra, fit.parameters);
      !s.ok()) {
    return s;
  }
  absl::StatusOr<Evaluated> e = Predict(cluster, *island, all);
  if (!e.ok()) return e.status();
  size_t k = 0;
  for (const NcclLog* log : all) {
    for (const NcclRow& row : log->rows) {
      fit.points.push_back(
          {absl::StrFormat("%s:%d", log->file, row.line), e->what[k], row.time_us * 1e-6, e->seconds[k]});
      ++k;
    }
  }
  fit.problems = NcclFitProblems(fit.parameters, MeanAbsolutePercentError({fit}), options_.max_mape_percent);
  if (!fit.problems.empty()) {
    for (std::string& p : DisagreeingRuns(all)) fit.problems.push_back(std::move(p));
    for (std::string& p : TimeFallingRows(all)) fit.problems.push_back(std::move(p));
    absl::StatusOr<Evaluated> preset = Predict(presets, *island, all);
    if (!preset.ok()) return preset.status();
    for (std::string& p : FloorRows(all, preset->seconds)) fit.problems.push_back(std::move(p));
  }
  return fit;
}

}  // namespace hetsim::calibrate
