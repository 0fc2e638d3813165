// A collective as a DAG of point-to-point transfers: each transfer moves bytes from one GPU to another
// along a path (src, dst, ECMP key) and may start only when the transfers it depends on have
// completed. Algorithms build the DAG; the execution runs it on the flow-level network.
// Two additions serve aggregated rings (docs/decisions.md): a join is a transfer without a path that
// completes as soon as its dependencies have (a barrier, n + n edges instead of n x n), and a transfer
// may pay its route's latency several times (the latency of the ring steps it stands for).
// The opt-in representative approximation (representative.h) marks paths that stand for several
// symmetric paths of the full collective: their flows run weighted.
#ifndef HETSIM_SIM_COLLECTIVES_TRANSFER_GRAPH_INTERNAL_H_
#define HETSIM_SIM_COLLECTIVES_TRANSFER_GRAPH_INTERNAL_H_

#include <cstdint>
#include <span>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "topology/device_graph.h"

namespace hetsim::collectives {

using TransferIndex = int32_t;
inline constexpr TransferIndex kNoTransfer = -1;
inline constexpr int32_t kNoPath = -1;  // path_of a join

struct TransferPath {
  GpuId src;
  GpuId dst;
  uint64_t flow_key;  // picks among equal-cost routes (a channel, a tree)
  friend bool operator==(const TransferPath&, const TransferPath&) = default;
};

class TransferGraph {
 public:
  // The index of the path (src, dst, key), registered once; transfers on it share one route lookup.
  int32_t Path(GpuId src, GpuId dst, uint64_t flow_key);
  // Adds a transfer that waits for every listed transfer (kNoTransfer entries are ignored; all others
  // must already exist, which keeps the graph acyclic).
  TransferIndex Add(int32_t path, int64_t bytes, std::span<const TransferIndex> deps);
  TransferIndex Add(int32_t path, int64_t bytes, std::initializer_list<TransferIndex> deps) {
    return Add(path, bytes, std::span<const TransferIndex>(deps.begin(), deps.size()));
  }
  // A barrier: no path, no bytes, done as soon as every listed transfer is.
  TransferIndex AddJoin(std::span<const TransferIndex> deps) { return Add(kNoPath, 0, deps); }
  // Transfer `t` waits for its route's latency `repeats` (>= 1) times in all before its bytes flow.
  void SetLatencyRepeats(TransferIndex t, int32_t repeats);
  // Transfer `t` is priced without a flow (an opt-in approximation for short transfers): it takes its
  // route's latency plus its bytes at the rate it would get then (CollectiveExecution::PriceTimed),
  // held to its end, taking no bandwidth from the flows it meets. Its execution alone sees it: not
  // other executions on the same network, not the links' counters, not later capacity changes. Used by
  // `hetsim collective --representative` only, which runs one collective on its own network.
  void SetTimed(TransferIndex t);
  bool timed(TransferIndex t) const { return static_cast<size_t>(t) < timed_.size() && timed_[t] != 0; }
  bool has_timed() const { return !timed_.empty(); }
  // Path `path` is a representative standing for `multiplicity` (>= 1) symmetric paths, itself
  // included (representative.h); the execution weights its flows per hop.
  void SetMultiplicity(int32_t path, double multiplicity);
  // Per path: 0 for an ordinary path, else its multiplicity; empty when the graph has no representative.
  const std::vector<double>& multiplicities() const { return multiplicity_; }
  // The collective's GPUs, whose ports and NICs representatives' link classes rotate over.
  void SetGroup(std::vector<GpuId> gpus) { group_ = std::move(gpus); }
  const std::vector<GpuId>& group() const { return group_; }
  // Runs the graph with NCCL protocol `protocol`: the execution scales bytes, adds the protocol's step
  // latency to every route and waits `launch_latency` before the first transfer (nccl_model.h).
  // `channel_cap_factor` (>= 1) stretches every transfer's bytes further: NCCL's per-channel cap on a tree
  // across nodes (CollectiveShape::channel_cap_factor).
  void SetNccl(topology::NcclProtocol protocol, Time launch_latency, double channel_cap_factor = 1.0) {
    nccl_ = true;
    protocol_ = protocol;
    launch_latency_ = launch_latency;
    channel_cap_factor_ = channel_cap_factor;
  }
  bool nccl() const { return nccl_; }
  topology::NcclProtocol protocol() const { return protocol_; }
  double channel_cap_factor() const { return channel_cap_factor_; }
  Time launch_latency() const { return launch_latency_; }

  size_t size() const { return transfers_.size(); }
  const std::vector<TransferPath>& paths() const { return paths_; }
  int32_t path_of(TransferIndex t) const { return transfers_[t].path; }
  int64_t bytes_of(TransferIndex t) const { return transfers_[t].bytes; }
  int32_t num_deps(TransferIndex t) const { return transfers_[t].num_deps; }
  int32_t latency_repeats(TransferIndex t) const {
    return static_cast<size_t>(t) < latency_repeats_.size() ? latency_repeats_[t] : 1;
  }
  int64_t total_bytes() const { return total_bytes_; }
  // A hint: asks for transfer `t`'s record (path, bytes, dependency count), which launching it reads.
  void PrefetchTransfer(TransferIndex t) const { __builtin_prefetch(&transfers_[t]); }
  // Hints for a run, after BuildSuccessors: ask for transfer `t`'s offsets in the successor lists
  // (no load), and for its successor list itself (reads the offset).
  void PrefetchSuccessorRange(TransferIndex t) const { __builtin_prefetch(&succ_begin_[t]); }
  void PrefetchSuccessorList(TransferIndex t) const { __builtin_prefetch(succ_.data() + succ_begin_[t]); }

  // Successor lists (compressed rows), built on first use after the last Add.
  std::span<const TransferIndex> successors(TransferIndex t) const;
  void BuildSuccessors() const;

 private:
  std::vector<TransferPath> paths_;
  absl::flat_hash_map<std::tuple<GpuId, GpuId, uint64_t>, int32_t> path_index_;
  // One record per transfer: a transfer's launch reads them together (a large run's graphs are
  // mostly out of cache, and three arrays were three misses per transfer).
  struct Transfer {
    int64_t bytes;
    int32_t path;
    int32_t num_deps;
  };
  std::vector<Transfer> transfers_;
  std::vector<int32_t> latency_repeats_;  // grown only when a transfer repeats its latency (else 1)
  std::vector<uint8_t> timed_;            // grown only when a transfer is timed (else 0)
  std::vector<double> multiplicity_;      // per path once a representative is set (0: ordinary)
  std::vector<GpuId> group_;              // set with representatives
  std::vector<std::pair<TransferIndex, TransferIndex>> edges_;  // (dependency, dependent)
  int64_t total_bytes_ = 0;
  bool nccl_ = false;
  topology::NcclProtocol protocol_ = topology::NcclProtocol::kSimple;
  Time launch_latency_ = 0;
  double channel_cap_factor_ = 1.0;
  mutable std::vector<int32_t> succ_begin_;
  mutable std::vector<TransferIndex> succ_;
};

}  // namespace hetsim::collectives

#endif  // HETSIM_SIM_COLLECTIVES_TRANSFER_GRAPH_INTERNAL_H_
