#include "proto/validate_faults.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "proto/limits.h"

namespace hetsim::proto {
namespace {

using namespace hetsim::v1;  // NOLINT: the schema's message names read best unqualified here

constexpr const char* kLinkClasses[] = {"NVLINK", "PCIE", "INFINIBAND", "ROCE", "ETHERNET"};
// Times are converted to picoseconds: keep them inside the simulated range.
constexpr double kMaxFaultMs = limits::kMaxSimulatedPs / 1e9;

const NodeType* NodeTypeOf(const Cluster& c, const Island& island) {
  for (const NodeType& t : c.node_types()) {
    if (t.name() == island.node_type()) return &t;
  }
  return nullptr;
}

void CheckMs(Problems& p, const std::string& path, double ms) { CheckRange(p, path, ms, 0, kMaxFaultMs); }

void CheckGpu(Problems& p, const std::string& path, uint32_t gpu, int64_t gpus) {
  if (gpu >= gpus) p.Add(path, "GPU %d is outside the cluster's %d GPUs (global ids 0-%d)", gpu, gpus, gpus - 1);
}

bool IsLinkTarget(Fault::TargetCase t) {
  return t == Fault::kLinkClass || t == Fault::kLink || t == Fault::kInterIslandLink;
}

void CheckTarget(const Fault& f, const Cluster& c, const std::string& at, Problems& p) {
  switch (f.target_case()) {
    case Fault::TARGET_NOT_SET:
      p.Add(at + "target", "required: a target (gpu, node, link_class, link or inter_island_link)");
      return;
    case Fault::kGpu: CheckGpu(p, at + "gpu", f.gpu(), ClusterGpuCount(c)); return;
    case Fault::kNode: {
      const Island* island = nullptr;
      for (const Island& i : c.islands()) {
        if (i.name() == f.node().island()) island = &i;
      }
      if (f.node().island().empty()) {
        p.Add(at + "node.island", "required");
      } else if (island == nullptr) {
        p.Add(at + "node.island", "unknown island \"%s\"", f.node().island());
      } else if (f.node().node() >= island->node_count()) {
        p.Add(at + "node.node", "%d is outside island \"%s\" (%d nodes)", f.node().node(), island->name(),
              island->node_count());
      }
      return;
    }
    case Fault::kLinkClass: {
      for (const char* name : kLinkClasses) {
        if (f.link_class() == name) return;
      }
      p.Add(at + "link_class", "\"%s\" is not a link class (NVLINK, PCIE, INFINIBAND, ROCE, ETHERNET)", f.link_class());
      return;
    }
    case Fault::kLink: {
      std::vector<absl::string_view> ends = absl::StrSplit(f.link(), "->");
      if (ends.size() != 2 || ends[0].empty() || ends[1].empty()) {
        p.Add(at + "link", "\"%s\" is not \"<device>-><device>\" (e.g. \"a100/gateway0->h100/gateway0\")", f.link());
      }
      return;
    }
    case Fault::kInterIslandLink:
      if (f.inter_island_link() >= static_cast<uint32_t>(c.inter_island_links_size())) {
        p.Add(at + "inter_island_link", "%d is outside the cluster's %d inter_island_links", f.inter_island_link(),
              c.inter_island_links_size());
      }
      return;
  }
}

}  // namespace

int64_t ClusterGpuCount(const Cluster& c) {
  int64_t gpus = 0;
  for (const Island& i : c.islands()) {
    if (const NodeType* t = NodeTypeOf(c, i)) gpus += int64_t{i.node_count()} * t->gpus_per_node();
  }
  return gpus;
}

void ValidateFault(const Fault& f, const Cluster& c, absl::string_view path, Problems& p) {
  const std::string at(path);
  CheckTarget(f, c, at, p);
  const bool link = IsLinkTarget(f.target_case());
  CheckMs(p, at + "at_ms", f.at_ms());
  CheckMs(p, at + "duration_ms", f.duration_ms());
  CheckMs(p, at + "period_ms", f.period_ms());
  CheckMs(p, at + "down_ms", f.down_ms());
  if (f.kind() != SLOW && f.factor() != 0) p.Add(at + "factor", "only SLOW faults take a factor");
  if (f.kind() != FLAP && (f.period_ms() != 0 || f.down_ms() != 0)) {
    p.Add(at + (f.period_ms() != 0 ? "period_ms" : "down_ms"), "only FLAP faults take period_ms and down_ms");
  }
  switch (f.kind()) {
    case SLOW: CheckPositive(p, at + "factor", f.factor(), kMaxFaultFactor); break;
    case FLAP:
      if (!link) p.Add(at + "kind", "FLAP needs a link target (link_class, link or inter_island_link)");
      if (f.period_ms() == 0) {
        p.Add(at + "period_ms", "required for FLAP (must be > 0)");
      } else if (f.down_ms() == 0) {
        p.Add(at + "down_ms", "required for FLAP (0 < down_ms < period_ms)");
      } else if (std::isfinite(f.down_ms()) && std::isfinite(f.period_ms()) && f.down_ms() >= f.period_ms()) {
        p.Add(at + "down_ms", "%g is not less than period_ms %g (the link would never come back up)", f.down_ms(),
              f.period_ms());
      }
      break;
    case FAIL:
      if (f.duration_ms() != 0) p.Add(at + "duration_ms", "a FAIL fault is permanent (no duration_ms)");
      break;
    case FAULT_KIND_UNSPECIFIED: p.Add(at + "kind", "required: SLOW, FLAP or FAIL"); break;
    case FaultKind_INT_MIN_SENTINEL_DO_NOT_USE_:  // protoc's range markers, never a value
    case FaultKind_INT_MAX_SENTINEL_DO_NOT_USE_: break;
  }
}

void ValidateJitter(const Jitter& j, const Cluster& c, absl::string_view path, Problems& p) {
  const std::string at(path);
  if (j.seed() == 0) p.Add(at + "seed", "required (any non-zero number: the same seed gives the same run)");
  if (j.distribution() == JITTER_DISTRIBUTION_UNSPECIFIED) {
    p.Add(at + "distribution", "required: UNIFORM, NORMAL or LOGNORMAL");
  }
  if (!std::isfinite(j.spread()) || j.spread() < 0 || j.spread() >= 1) {
    p.Add(at + "spread", "%g is outside [0, 1)", j.spread());
  }
  const int64_t gpus = ClusterGpuCount(c);
  for (int i = 0; i < j.gpus_size(); ++i) CheckGpu(p, absl::StrFormat("%sgpus[%d]", at, i), j.gpus(i), gpus);
}

absl::Status ValidateFaults(const Faults& faults, const Cluster& cluster, absl::string_view file) {
  Problems p(file);
  for (int i = 0; i < faults.faults_size(); ++i) {
    ValidateFault(faults.faults(i), cluster, absl::StrFormat("faults[%d].", i), p);
  }
  if (faults.has_jitter()) ValidateJitter(faults.jitter(), cluster, "jitter.", p);
  return p.ToStatus();
}

}  // namespace hetsim::proto
