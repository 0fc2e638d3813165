#include "topology/gpu_islands.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/connected_components.hpp>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"

namespace hetsim::topology {
namespace {

// Per-GPU metrics of one ClusterSpec.islands entry (a set of identical nodes).
struct Unit {
  double flop_per_s, hbm_bytes, hbm_bytes_per_s, intra_bytes_per_s, node_net_bytes_per_s;
  int64_t nodes, gpus;
  std::string gpu_type;
};

absl::StatusOr<std::vector<Unit>> Units(const spec::ClusterSpec& c) {
  std::vector<Unit> units;
  for (const spec::IslandSpec& isl : c.islands) {
    const spec::GpuSpec& gpu = isl.gpu;
    // Algorithm 1 compares 16-bit tensor peaks: BF16, or FP16 on a GPU without BF16 (V100, T4 train in FP16).
    const bool bf16 = gpu.peak(spec::DType::kBf16) > 0;
    const double peak = bf16 ? gpu.peak(spec::DType::kBf16) : gpu.peak(spec::DType::kFp16);
    for (auto [field, v] : {std::pair<const char*, double>{bf16 ? "peak_tflops_bf16" : "peak_tflops_fp16", peak},
                            {"hbm_gib", gpu.hbm_capacity.value()},
                            {"hbm_bandwidth_gbytes_per_s", gpu.hbm_bandwidth.bytes_per_second()}}) {
      if (!(v > 0)) return absl::InvalidArgumentError(absl::StrFormat("%s.%s: must be > 0", isl.gpu_where, field));
    }
    Unit u;
    u.flop_per_s = peak;
    u.hbm_bytes = gpu.hbm_capacity.value();
    u.hbm_bytes_per_s = gpu.hbm_bandwidth.bytes_per_second();
    u.intra_bytes_per_s = isl.node.bandwidth.bytes_per_second();
    u.node_net_bytes_per_s = isl.nics_per_node * isl.nic_bandwidth.bytes_per_second();
    u.nodes = isl.node_count;
    u.gpus = isl.gpus();
    u.gpu_type = gpu.name;
    units.push_back(u);
  }
  return units;
}

// Phase 1 similarity: every metric within its tolerance of the cluster-wide maximum.
bool Similar(const Unit& a, const Unit& b, const Unit& max, const IslandThresholds& t) {
  auto close = [](double x, double y, double m, double tol) { return m <= 0 || std::abs(x - y) / m <= tol; };
  return close(a.flop_per_s, b.flop_per_s, max.flop_per_s, t.compute) &&
         close(a.hbm_bytes, b.hbm_bytes, max.hbm_bytes, t.memory) &&
         close(a.hbm_bytes_per_s, b.hbm_bytes_per_s, max.hbm_bytes_per_s, t.memory_bandwidth);
}

using Partition = std::vector<std::vector<int32_t>>;

double Bottleneck(const Partition& p, const std::vector<Unit>& u) {
  double peak_c = 0, eff_c = 0, peak_b = 0, eff_b = 0;
  for (const auto& island : p) {
    int64_t gpus = 0;
    double min_c = std::numeric_limits<double>::infinity(), min_b = min_c;
    for (int32_t m : island) {
      gpus += u[m].gpus;
      peak_c += u[m].gpus * u[m].flop_per_s;
      peak_b += u[m].gpus * u[m].hbm_bytes_per_s;
      min_c = std::min(min_c, u[m].flop_per_s);
      min_b = std::min(min_b, u[m].hbm_bytes_per_s);
    }
    eff_c += gpus * min_c;
    eff_b += gpus * min_b;
  }
  return std::max(peak_c / eff_c, peak_b / eff_b);
}

GpuIsland Describe(const std::vector<int32_t>& members, const std::vector<Unit>& u) {
  GpuIsland g;
  g.members = members;
  double min_c = std::numeric_limits<double>::infinity();
  g.effective_hbm_bytes_per_gpu = min_c;
  g.intra_node_bytes_per_s_per_gpu = min_c;
  g.inter_node_bytes_per_s_per_node = min_c;
  for (int32_t m : members) {
    if (std::find(g.gpu_types.begin(), g.gpu_types.end(), u[m].gpu_type) == g.gpu_types.end()) {
      g.gpu_types.push_back(u[m].gpu_type);
    }
    g.nodes += u[m].nodes;
    g.gpus += u[m].gpus;
    g.peak_flop_per_s += u[m].gpus * u[m].flop_per_s;
    g.hbm_bytes += u[m].gpus * u[m].hbm_bytes;
    g.hbm_bytes_per_s += u[m].gpus * u[m].hbm_bytes_per_s;
    min_c = std::min(min_c, u[m].flop_per_s);
    g.effective_hbm_bytes_per_gpu = std::min(g.effective_hbm_bytes_per_gpu, u[m].hbm_bytes);
    g.intra_node_bytes_per_s_per_gpu = std::min(g.intra_node_bytes_per_s_per_gpu, u[m].intra_bytes_per_s);
    g.inter_node_bytes_per_s_per_node = std::min(g.inter_node_bytes_per_s_per_node, u[m].node_net_bytes_per_s);
  }
  g.effective_flop_per_s = g.gpus * min_c;
  return g;
}

}  // namespace

absl::StatusOr<IslandFormation> FormGpuIslands(const spec::ClusterSpec& cluster, const IslandThresholds& t) {
  auto units = Units(cluster);
  if (!units.ok()) return units.status();
  const std::vector<Unit>& u = *units;
  if (u.empty()) return absl::InvalidArgumentError("islands: the cluster has no island");
  Unit max = u[0];
  for (const Unit& x : u) {
    max.flop_per_s = std::max(max.flop_per_s, x.flop_per_s);
    max.hbm_bytes = std::max(max.hbm_bytes, x.hbm_bytes);
    max.hbm_bytes_per_s = std::max(max.hbm_bytes_per_s, x.hbm_bytes_per_s);
  }
  // Phase 1: connected components of the similarity graph (numbered in order of first member).
  boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS> similar(u.size());
  for (size_t i = 0; i < u.size(); ++i) {
    for (size_t j = i + 1; j < u.size(); ++j) {
      if (Similar(u[i], u[j], max, t)) boost::add_edge(i, j, similar);
    }
  }
  std::vector<int> component(u.size());
  const int k = boost::connected_components(similar, component.data());
  Partition p(k);
  for (size_t i = 0; i < u.size(); ++i) p[component[i]].push_back(static_cast<int32_t>(i));
  IslandFormation out;
  out.initial_islands = k;

  // Phase 2: merge the cheapest pair while it stays within merge_factor of the current bottleneck.
  // The islands are few (K <= a handful), so re-scoring every pair after each merge is cheap.
  double current = Bottleneck(p, u);
  while (p.size() > 1) {
    double best = std::numeric_limits<double>::infinity();
    size_t best_a = 0, best_b = 0;
    for (size_t a = 0; a < p.size(); ++a) {
      for (size_t b = a + 1; b < p.size(); ++b) {
        Partition q = p;
        q[a].insert(q[a].end(), q[b].begin(), q[b].end());
        q.erase(q.begin() + static_cast<std::ptrdiff_t>(b));
        const double cost = Bottleneck(q, u);
        if (cost < best) best = cost, best_a = a, best_b = b;
      }
    }
    if (!(best <= t.merge_factor * current)) break;
    p[best_a].insert(p[best_a].end(), p[best_b].begin(), p[best_b].end());
    std::sort(p[best_a].begin(), p[best_a].end());
    p.erase(p.begin() + static_cast<std::ptrdiff_t>(best_b));
    current = best;
  }
  std::sort(p.begin(), p.end());
  for (const auto& members : p) out.islands.push_back(Describe(members, u));
  out.bottleneck = current;
  return out;
}

}  // namespace hetsim::topology
