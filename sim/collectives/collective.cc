#include "sim/collectives/collective.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_format.h"

namespace hetsim::collectives {
namespace {

constexpr CollectiveAlgorithm kAlgorithms[] = {CollectiveAlgorithm::kAuto,     CollectiveAlgorithm::kRing,
                                               CollectiveAlgorithm::kTree,     CollectiveAlgorithm::kHierarchical,
                                               CollectiveAlgorithm::kDirect,   CollectiveAlgorithm::kPairwise,
                                               CollectiveAlgorithm::kNvls,     CollectiveAlgorithm::kCollNet,
                                               CollectiveAlgorithm::kNvlsTree, CollectiveAlgorithm::kCollNetChain};

}  // namespace

absl::string_view AlgorithmName(CollectiveAlgorithm algorithm) {
  switch (algorithm) {
    case CollectiveAlgorithm::kAuto: return "auto";
    case CollectiveAlgorithm::kRing: return "ring";
    case CollectiveAlgorithm::kTree: return "tree";
    case CollectiveAlgorithm::kHierarchical: return "hier";
    case CollectiveAlgorithm::kDirect: return "direct";
    case CollectiveAlgorithm::kPairwise: return "pairwise";
    case CollectiveAlgorithm::kNvls: return "nvls";
    case CollectiveAlgorithm::kCollNet: return "collnet";
    case CollectiveAlgorithm::kNvlsTree: return "nvlstree";
    case CollectiveAlgorithm::kCollNetChain: return "collnetchain";
  }
  return "?";
}

absl::StatusOr<CollectiveAlgorithm> ParseAlgorithm(absl::string_view name) {
  for (CollectiveAlgorithm a : kAlgorithms) {
    if (name == AlgorithmName(a)) return a;
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "algo: unknown algorithm \"%s\" (expected auto, ring, tree, hier, direct, pairwise, nvls, collnet, nvlstree or "
      "collnetchain)",
      name));
}

absl::string_view RingStepsName(RingSteps steps) {
  switch (steps) {
    case RingSteps::kAuto: return "auto";
    case RingSteps::kStepped: return "stepped";
    case RingSteps::kAggregated: return "aggregated";
  }
  return "?";
}

absl::StatusOr<RingSteps> ParseRingSteps(absl::string_view name) {
  for (RingSteps s : {RingSteps::kAuto, RingSteps::kStepped, RingSteps::kAggregated}) {
    if (name == RingStepsName(s)) return s;
  }
  return absl::InvalidArgumentError(
      absl::StrFormat("ring-steps: unknown mode \"%s\" (expected auto, stepped or aggregated)", name));
}

double BusBandwidthFactor(CollectiveOp op, int64_t ranks) {
  const double n = static_cast<double>(ranks);
  switch (op) {
    case CollectiveOp::kAllReduce: return 2.0 * (n - 1) / n;
    case CollectiveOp::kAllGather:
    case CollectiveOp::kReduceScatter:
    case CollectiveOp::kAllToAll: return (n - 1) / n;
    case CollectiveOp::kBroadcast:
    case CollectiveOp::kSendRecv: return 1.0;
  }
  return 1.0;
}

bool Supports(CollectiveAlgorithm algorithm, CollectiveOp op) {
  switch (algorithm) {
    case CollectiveAlgorithm::kAuto: return true;
    case CollectiveAlgorithm::kRing:
      return op == CollectiveOp::kAllReduce || op == CollectiveOp::kAllGather || op == CollectiveOp::kReduceScatter ||
             op == CollectiveOp::kBroadcast;
    case CollectiveAlgorithm::kTree: return op == CollectiveOp::kAllReduce || op == CollectiveOp::kBroadcast;
    case CollectiveAlgorithm::kHierarchical: return op == CollectiveOp::kAllReduce;
    case CollectiveAlgorithm::kDirect: return op == CollectiveOp::kAllToAll || op == CollectiveOp::kSendRecv;
    case CollectiveAlgorithm::kPairwise: return op == CollectiveOp::kAllToAll;
    case CollectiveAlgorithm::kNvls:
      return op == CollectiveOp::kAllReduce || op == CollectiveOp::kAllGather || op == CollectiveOp::kReduceScatter;
    case CollectiveAlgorithm::kCollNet:
      return op == CollectiveOp::kAllReduce || op == CollectiveOp::kAllGather || op == CollectiveOp::kReduceScatter;
    // NCCL runs NVLSTree and CollNetChain for all-reduce only (src/graph/tuning.cc, ncclTopoTuneModel: all-gather and
    // reduce-scatter take Ring, PAT, NVLS or CollNetDirect).
    case CollectiveAlgorithm::kNvlsTree:
    case CollectiveAlgorithm::kCollNetChain: return op == CollectiveOp::kAllReduce;
  }
  return false;
}

std::vector<CollectiveAlgorithm> AlgorithmsFor(CollectiveOp op) {
  std::vector<CollectiveAlgorithm> out;
  for (CollectiveAlgorithm a : kAlgorithms) {
    if (a != CollectiveAlgorithm::kAuto && Supports(a, op)) out.push_back(a);
  }
  return out;
}

absl::Status ValidateRequest(const topology::Topology& topology, const CollectiveRequest& r) {
  if (r.gpus.empty()) return absl::InvalidArgumentError("gpus: the group is empty");
  if (r.op == CollectiveOp::kSendRecv && r.gpus.size() != 2) {
    return absl::InvalidArgumentError(
        absl::StrFormat("gpus: send-recv needs exactly two GPUs (sender, receiver), got %d", r.gpus.size()));
  }
  if (r.op == CollectiveOp::kAllToAll && static_cast<int64_t>(r.gpus.size()) > kMaxAllToAllGpus) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "gpus: all-to-all over %d GPUs would be %d flows; at most %d GPUs are simulated", r.gpus.size(),
        static_cast<int64_t>(r.gpus.size()) * (static_cast<int64_t>(r.gpus.size()) - 1), kMaxAllToAllGpus));
  }
  absl::flat_hash_set<GpuId> seen;
  for (size_t i = 0; i < r.gpus.size(); ++i) {
    const GpuId g = r.gpus[i];
    if (g.value() < 0 || g.value() >= topology.num_gpus()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("gpus[%d]: GPU id %d is outside the cluster's [0, %d)", i, g.value(), topology.num_gpus()));
    }
    if (!seen.insert(g).second)
      return absl::InvalidArgumentError(absl::StrFormat("gpus[%d]: GPU %d appears twice", i, g.value()));
  }
  if (r.bytes < 0 || r.bytes > kMaxCollectiveBytes) {
    return absl::InvalidArgumentError(
        absl::StrFormat("bytes: %d is outside [0, %d] (1 PiB)", r.bytes, kMaxCollectiveBytes));
  }
  if (r.chunks < 0 || r.chunks > kMaxChunks) {
    return absl::InvalidArgumentError(absl::StrFormat("chunks: %d is outside [0, %d]", r.chunks, kMaxChunks));
  }
  if (r.channels < 0 || r.channels > kMaxChannels) {
    return absl::InvalidArgumentError(absl::StrFormat("channels: %d is outside [0, %d]", r.channels, kMaxChannels));
  }
  if (r.inter_node != CollectiveAlgorithm::kAuto && r.inter_node != CollectiveAlgorithm::kRing &&
      r.inter_node != CollectiveAlgorithm::kTree) {
    return absl::InvalidArgumentError(
        absl::StrFormat("inter_node: %s is not ring, tree or auto", AlgorithmName(r.inter_node)));
  }
  // Trees (and hierarchical's trees across nodes) keep their chunks aggregated, and CollNet pipelines
  // its chunks of aggregated rings; a ring does not.
  if (r.ring_steps == RingSteps::kAggregated && r.chunks > 1 && r.algorithm != CollectiveAlgorithm::kTree &&
      r.algorithm != CollectiveAlgorithm::kHierarchical && r.algorithm != CollectiveAlgorithm::kCollNet &&
      r.algorithm != CollectiveAlgorithm::kNvlsTree && r.algorithm != CollectiveAlgorithm::kCollNetChain) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "chunks: %d with aggregated ring steps, which move each ring edge's bytes as one flow (give 0 or 1)",
        r.chunks));
  }
  if (!Supports(r.algorithm, r.op)) {
    std::string names;
    for (CollectiveAlgorithm a : AlgorithmsFor(r.op))
      names += absl::StrFormat("%s%s", names.empty() ? "" : ", ", AlgorithmName(a));
    return absl::InvalidArgumentError(absl::StrFormat("algo: %s does not implement %s (use auto or %s)",
                                                      AlgorithmName(r.algorithm), CollectiveOpName(r.op), names));
  }
  return absl::OkStatus();
}

}  // namespace hetsim::collectives
