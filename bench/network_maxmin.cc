// Max-min fair network under load: flows per second and engine events per second on a synthetic
// two-level fat tree (hosts -> leaf switches -> spine switches, 2:1 oversubscribed), for
//   - a closed loop of random permutation traffic (every host keeps one flow in flight to a random
//     host; each completion starts the next flow), where flows start and end at scattered times and
//     every recompute touches the big component coupled through the spine;
//   - ring steps (every host sends to its neighbour at once, next step when all are done), the
//     pattern of ring collectives, where starts and ends coincide and batch into one recompute.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "sim/engine/simulator.h"
#include "sim/engine/split_mix.h"
#include "sim/network/network.h"

namespace hetsim::network {
namespace {

// Hosts in groups of 16 under a leaf; every leaf has an uplink and a downlink to each of 8 spines.
class FatTree {
 public:
  static constexpr int kHostsPerLeaf = 16;
  static constexpr int kSpines = 8;
  static constexpr double kHostBytesPerSecond = 50e9;  // 400 Gb/s
  static constexpr Time kHopLatency = 500 * kNanosecond;

  explicit FatTree(int hosts) : hosts_(hosts), leaves_((hosts + kHostsPerLeaf - 1) / kHostsPerLeaf) {
    const double uplink = kHostsPerLeaf * kHostBytesPerSecond / kSpines / 2;  // 2:1 oversubscribed
    for (int h = 0; h < hosts_; ++h) {
      links_.push_back({Bandwidth(kHostBytesPerSecond), kHopLatency});  // host -> leaf: 2h
      links_.push_back({Bandwidth(kHostBytesPerSecond), kHopLatency});  // leaf -> host: 2h + 1
    }
    spine_base_ = static_cast<LinkId>(links_.size());
    for (int l = 0; l < leaves_; ++l) {
      for (int s = 0; s < kSpines; ++s) {
        links_.push_back({Bandwidth(uplink), kHopLatency});  // leaf -> spine
        links_.push_back({Bandwidth(uplink), kHopLatency});  // spine -> leaf
      }
    }
  }

  const std::vector<LinkSpec>& links() const { return links_; }

  // Deterministic ECMP: the spine is chosen by a hash of the endpoints and a flow key.
  void Route(int src, int dst, uint64_t key, std::vector<LinkId>& route) const {
    route.clear();
    route.push_back(static_cast<LinkId>(2 * src));
    const int src_leaf = src / kHostsPerLeaf;
    const int dst_leaf = dst / kHostsPerLeaf;
    if (src_leaf != dst_leaf) {
      engine::SplitMix64 hash(static_cast<uint64_t>(src) * 1000003 + static_cast<uint64_t>(dst) + key);
      const int spine = static_cast<int>(hash.Below(kSpines));
      route.push_back(LinkId(spine_base_.value() + 2 * (src_leaf * kSpines + spine)));
      route.push_back(LinkId(spine_base_.value() + 2 * (dst_leaf * kSpines + spine) + 1));
    }
    route.push_back(static_cast<LinkId>(2 * dst + 1));
  }

 private:
  int hosts_;
  int leaves_;
  LinkId spine_base_;
  std::vector<LinkSpec> links_;
};

class PermutationLoop : public FlowObserver {
 public:
  PermutationLoop(const FatTree* tree, Network* net, int hosts, uint64_t flows_to_start)
      : tree_(tree), net_(net), hosts_(hosts), remaining_(flows_to_start) {}

  void StartFrom(int src) {
    if (remaining_ == 0) return;
    --remaining_;
    int dst = static_cast<int>(rng_.Below(static_cast<uint64_t>(hosts_ - 1)));
    if (dst >= src) ++dst;
    tree_->Route(src, dst, rng_.Next(), route_);
    const int64_t bytes = static_cast<int64_t>(1 + rng_.Below(16 << 20));
    net_->StartFlow(route_, bytes, this, static_cast<uint64_t>(src));
  }
  void OnFlowCompleted(FlowId, uint64_t tag) override { StartFrom(static_cast<int>(tag)); }

 private:
  const FatTree* tree_;
  Network* net_;
  int hosts_;
  uint64_t remaining_;
  engine::SplitMix64 rng_{1};
  std::vector<LinkId> route_;
};

// Runs one simulation per iteration: `start(net)` makes the traffic driver and starts its flows.
template <class StartTraffic>
void RunAndReport(benchmark::State& state, const FatTree& tree, StartTraffic start) {
  uint64_t total_flows = 0;
  uint64_t total_events = 0;
  NetworkStats stats;
  for (auto _ : state) {
    engine::Simulator sim;
    auto net = Network::Create(&sim, tree.links(), NetworkMode::kMaxMinFair);
    auto driver = start(net->get());
    sim.Run();
    stats = (*net)->stats();
    total_flows += stats.flows_completed;
    total_events += sim.events_processed();
  }
  state.counters["flows_per_s"] = benchmark::Counter(static_cast<double>(total_flows), benchmark::Counter::kIsRate);
  state.counters["events_per_s"] = benchmark::Counter(static_cast<double>(total_events), benchmark::Counter::kIsRate);
  state.counters["flows_per_recompute"] =
      stats.recomputations == 0 ? 0.0 : static_cast<double>(stats.flows_visited) / stats.recomputations;
  state.counters["max_active"] = static_cast<double>(stats.max_active_flows);
}

void BM_NetworkPermutationClosedLoop(benchmark::State& state) {
  const int hosts = static_cast<int>(state.range(0));
  const uint64_t flows = static_cast<uint64_t>(state.range(1));
  const FatTree tree(hosts);
  RunAndReport(state, tree, [&](Network* net) {
    auto loop = std::make_unique<PermutationLoop>(&tree, net, hosts, flows);
    for (int h = 0; h < hosts; ++h) loop->StartFrom(h);
    return loop;
  });
}
BENCHMARK(BM_NetworkPermutationClosedLoop)
    ->Args({64, 20000})
    ->Args({512, 20000})
    ->Args({2048, 20000})
    ->Unit(benchmark::kMillisecond);

class RingSteps : public FlowObserver {
 public:
  RingSteps(const FatTree* tree, Network* net, int hosts, int steps, int64_t bytes)
      : tree_(tree), net_(net), hosts_(hosts), steps_left_(steps), bytes_(bytes) {}

  void StartStep() {
    outstanding_ = hosts_;
    for (int h = 0; h < hosts_; ++h) {
      tree_->Route(h, (h + 1) % hosts_, 0, route_);
      net_->StartFlow(route_, bytes_, this, 0);
    }
  }
  void OnFlowCompleted(FlowId, uint64_t) override {
    if (--outstanding_ == 0 && --steps_left_ > 0) StartStep();
  }

 private:
  const FatTree* tree_;
  Network* net_;
  int hosts_;
  int steps_left_;
  int64_t bytes_;
  int outstanding_ = 0;
  std::vector<LinkId> route_;
};

void BM_NetworkRingSteps(benchmark::State& state) {
  const int hosts = static_cast<int>(state.range(0));
  const FatTree tree(hosts);
  RunAndReport(state, tree, [&](Network* net) {
    auto ring = std::make_unique<RingSteps>(&tree, net, hosts, /*steps=*/64, /*bytes=*/8 << 20);
    ring->StartStep();
    return ring;
  });
}
BENCHMARK(BM_NetworkRingSteps)->Arg(512)->Arg(4096)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace hetsim::network
