#include "sim/collectives/transfer_graph_internal.h"

namespace hetsim::collectives {

int32_t TransferGraph::Path(GpuId src, GpuId dst, uint64_t flow_key) {
  auto [it, inserted] =
      path_index_.try_emplace(std::make_tuple(src, dst, flow_key), static_cast<int32_t>(paths_.size()));
  if (inserted) {
    paths_.push_back({src, dst, flow_key});
    if (!multiplicity_.empty()) multiplicity_.push_back(0);
  }
  return it->second;
}

TransferIndex TransferGraph::Add(int32_t path, int64_t bytes, std::span<const TransferIndex> deps) {
  const auto id = static_cast<TransferIndex>(transfers_.size());
  total_bytes_ += bytes;
  int32_t n = 0;
  for (TransferIndex d : deps) {
    if (d == kNoTransfer) continue;
    edges_.emplace_back(d, id);
    ++n;
  }
  transfers_.push_back(Transfer{bytes, path, n});
  succ_begin_.clear();
  return id;
}

void TransferGraph::SetLatencyRepeats(TransferIndex t, int32_t repeats) {
  if (repeats == 1 && static_cast<size_t>(t) >= latency_repeats_.size()) return;
  if (latency_repeats_.size() <= static_cast<size_t>(t)) latency_repeats_.resize(t + 1, 1);
  latency_repeats_[t] = repeats;
}

void TransferGraph::SetTimed(TransferIndex t) {
  if (timed_.size() <= static_cast<size_t>(t)) timed_.resize(t + 1, 0);
  timed_[t] = 1;
}

void TransferGraph::SetMultiplicity(int32_t path, double multiplicity) {
  multiplicity_.resize(paths_.size(), 0);
  multiplicity_[path] = multiplicity;
}

void TransferGraph::BuildSuccessors() const {
  if (succ_begin_.size() == transfers_.size() + 1) return;
  // Counting sort of the edges by dependency: successors keep their insertion order.
  succ_begin_.assign(transfers_.size() + 1, 0);
  for (const auto& e : edges_) ++succ_begin_[e.first + 1];
  for (size_t i = 1; i < succ_begin_.size(); ++i) succ_begin_[i] += succ_begin_[i - 1];
  succ_.assign(edges_.size(), kNoTransfer);
  std::vector<int32_t> fill(succ_begin_.begin(), succ_begin_.end() - 1);
  for (const auto& e : edges_) succ_[fill[e.first]++] = e.second;
}

std::span<const TransferIndex> TransferGraph::successors(TransferIndex t) const {
  BuildSuccessors();
  return {succ_.data() + succ_begin_[t], succ_.data() + succ_begin_[t + 1]};
}

}  // namespace hetsim::collectives
