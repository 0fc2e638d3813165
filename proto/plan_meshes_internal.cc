#include "proto/plan_meshes_internal.h"

#include <cstdint>

#include "absl/strings/str_format.h"
#include "proto/gpu_presets.h"

namespace hetsim::proto {

using namespace hetsim::v1;  // NOLINT: the schema's message names read best unqualified here

IslandIndex IndexIslands(const Cluster& c) {
  absl::flat_hash_map<std::string, const NodeType*> nodes;
  absl::flat_hash_map<std::string, const GpuType*> gpus;
  for (const NodeType& n : c.node_types()) nodes.emplace(n.name(), &n);
  for (const GpuType& g : c.gpu_types()) gpus.emplace(g.name(), &g);
  IslandIndex out;
  for (const Island& is : c.islands()) {
    const NodeType* n = nodes.at(is.node_type());
    out.emplace(is.name(), IslandInfo{&is, n, gpus.at(n->gpu_type())});
  }
  return out;
}

bool CheckMesh(Problems& p, const Mesh& m, const std::string& at, const IslandIndex& islands) {
  if (m.island().empty()) {
    p.Add(at + "island", "required");
    return false;
  }
  auto it = islands.find(m.island());
  if (it == islands.end()) {
    p.Add(at + "island", "unknown island \"%s\"", m.island());
    return false;
  }
  const uint32_t nodes = it->second.island->node_count();
  const uint32_t gpus = it->second.node->gpus_per_node();
  bool ok = true;
  if (m.node_count() == 0) {
    p.Add(at + "node_count", "required (must be >= 1)");
    ok = false;
  }
  if (m.gpus_per_node() == 0) {
    p.Add(at + "gpus_per_node", "required (must be >= 1)");
    ok = false;
  }
  if (m.first_node() >= nodes) {
    p.Add(at + "first_node", "%d is outside island \"%s\" (%d nodes)", m.first_node(), m.island(), nodes);
    ok = false;
  } else if (int64_t{m.first_node()} + m.node_count() > nodes) {
    p.Add(at + "node_count", "nodes %d..%d are outside island \"%s\" (%d nodes)", m.first_node(),
          int64_t{m.first_node()} + m.node_count() - 1, m.island(), nodes);
    ok = false;
  }
  if (m.first_gpu() >= gpus) {
    p.Add(at + "first_gpu", "%d is outside the %d GPUs of a node of island \"%s\"", m.first_gpu(), gpus, m.island());
    ok = false;
  } else if (int64_t{m.first_gpu()} + m.gpus_per_node() > gpus) {
    p.Add(at + "gpus_per_node", "GPUs %d..%d are outside the %d GPUs of a node of island \"%s\"", m.first_gpu(),
          int64_t{m.first_gpu()} + m.gpus_per_node() - 1, gpus, m.island());
    ok = false;
  }
  return ok;
}

void CheckMeshDegrees(Problems& p, const Mesh& m, uint32_t tp, uint32_t cp, uint32_t dp, const std::string& at) {
  const int64_t gpus = int64_t{m.node_count()} * m.gpus_per_node();
  const uint32_t gpn = m.gpus_per_node();
  if (gpn > 0 && gpn % tp != 0 && tp % gpn != 0) {
    p.Add(at + "tensor_parallel",
          "%d neither divides nor is a multiple of the mesh's gpus_per_node %d (a TP group is part of a node or "
          "whole nodes)",
          tp, gpn);
  } else if (cp == 1 && int64_t{tp} * dp != gpus) {
    p.Add(at + "data_parallel", "tensor_parallel %d x data_parallel %d = %d, but the mesh has %d GPUs", tp, dp,
          int64_t{tp} * dp, gpus);
  } else if (cp > 1 && int64_t{tp} * cp * dp != gpus) {
    p.Add(at + "data_parallel",
          "tensor_parallel %d x context_parallel %d x data_parallel %d = %d, but the mesh has %d GPUs", tp, cp, dp,
          int64_t{tp} * cp * dp, gpus);
  }
}

bool CheckDegreeRanges(Problems& p, const std::string& at, std::initializer_list<DegreeField> fields) {
  bool ok = true;
  for (const DegreeField& f : fields) {
    if (f.value <= f.max) continue;
    p.Add(at + f.name, "%d is outside [0, %d]", f.value, f.max);
    ok = false;
  }
  return ok;
}

std::optional<GpuClaims::Owner> GpuClaims::Claim(const Mesh& mesh, const Owner& owner) {
  absl::flat_hash_map<uint64_t, Owner>& island = owners_[mesh.island()];
  for (uint64_t node = mesh.first_node(); node < uint64_t{mesh.first_node()} + mesh.node_count(); ++node) {
    for (uint64_t gpu = mesh.first_gpu(); gpu < uint64_t{mesh.first_gpu()} + mesh.gpus_per_node(); ++gpu) {
      const auto [it, fresh] = island.try_emplace(node << 32 | gpu, owner);
      if (!fresh) return it->second;
    }
  }
  return std::nullopt;
}

void CheckIslandGpu(Problems& p, const IslandInfo& island, const std::string& at, DType dtype, bool measured) {
  const GpuType& gpu = *island.gpu;
  if (measured) return;
  if (PeakTflops(gpu, dtype) <= 0) {
    p.Add(at, "GPU type \"%s\" of island \"%s\" has no peak FLOP/s for the model's dtype %s", gpu.name(),
          island.island->name(), DType_Name(dtype));
  } else if (dtype == FP8 && PeakTflops(gpu, BF16) <= 0 && PeakTflops(gpu, FP16) <= 0) {
    p.Add(at,
          "GPU type \"%s\" of island \"%s\" has no BF16 or FP16 peak FLOP/s: an FP8 model's attention core, "
          "LM head and router run in 16 bits",
          gpu.name(), island.island->name());
  }
}

std::vector<std::pair<const Mesh*, std::string>> StageMeshes(const Stage& s, int index) {
  std::vector<std::pair<const Mesh*, std::string>> out;
  if (s.replica_groups().empty()) {
    out.emplace_back(&s.mesh(), absl::StrFormat("stages[%d].mesh", index));
    return out;
  }
  for (int g = 0; g < s.replica_groups_size(); ++g) {
    out.emplace_back(&s.replica_groups(g).mesh(), absl::StrFormat("stages[%d].replica_groups[%d].mesh", index, g));
  }
  return out;
}

}  // namespace hetsim::proto
