// 1 GiB all-reduce on H100 nodes (8 GPUs on NVSwitch, 8 x 400 Gb/s NICs) joined by a full-bisection
// fat tree (16 nodes per leaf): the speed goals of issue 4 (512 GPUs hierarchical < 50 ms wall, flat
// ring < 1 s, 4096 GPUs hierarchical < 0.5 s, memory < 1 GiB). Each iteration routes from a fresh
// Router (route computation is part of the cost) and simulates the collective on the max-min network.
#include <sys/resource.h>

#include <benchmark/benchmark.h>

#include "sim/collectives/simulate.h"
#include "tests/service/driver/build_topology.h"
#include "topology/device_graph.h"
#include "topology/routing.h"

namespace hetsim {
namespace {

v1::Cluster FatTreeCluster(int nodes) {
  v1::Cluster c;
  c.set_name("h100-fat-tree");
  auto* g = c.add_gpu_types();
  g->set_name("H100");
  g->set_peak_tflops_bf16(989);
  g->set_hbm_gib(80);
  g->set_hbm_bandwidth_gbytes_per_s(3350);
  auto* n = c.add_node_types();
  n->set_name("dgx");
  n->set_gpu_type("H100");
  n->set_gpus_per_node(8);
  n->set_intra_node_fabric(v1::NVSWITCH);
  n->set_intra_node_bandwidth_gbps(3600);
  n->set_intra_node_latency_ns(1000);
  auto* i = c.add_islands();
  i->set_name("a");
  i->set_node_type("dgx");
  i->set_node_count(nodes);
  i->set_fabric(v1::INFINIBAND);
  i->set_topology(v1::FAT_TREE);
  i->set_nics_per_node(8);
  i->set_nic_bandwidth_gbps(400);
  i->set_nic_latency_ns(500);
  i->set_switch_latency_ns(200);
  i->set_oversubscription(1);
  i->set_nodes_per_leaf(16);
  return c;
}

void RunCollective(benchmark::State& state, CollectiveOp op, collectives::CollectiveAlgorithm algorithm,
                   int32_t channels,
                   collectives::CollectiveAlgorithm inter_node = collectives::CollectiveAlgorithm::kAuto,
                   collectives::RingSteps ring_steps = collectives::RingSteps::kAuto, bool representative = false,
                   bool representative_by_default = false) {
  const int gpus = static_cast<int>(state.range(0));
  const auto topo = *hetsim::testing::BuildTopology(FatTreeCluster(gpus / 8));
  collectives::CollectiveRequest req;
  req.op = op;
  for (GpuId g : IdsBelow<GpuId>(gpus)) req.gpus.push_back(g);
  req.bytes = int64_t{1} << 30;
  req.algorithm = algorithm;
  req.channels = channels;
  req.inter_node = inter_node;
  req.ring_steps = ring_steps;
  req.representative = representative;
  req.representative_by_default = representative_by_default;
  uint64_t flows = 0, events = 0;
  collectives::CollectiveResult last;
  for (auto _ : state) {
    topology::Router router(topo);
    auto r = collectives::SimulateCollective(topo, router, req);
    if (!r.ok()) {
      state.SkipWithError(std::string(r.status().message()).c_str());
      return;
    }
    flows += r->flows;
    events += r->events;
    last = *r;
  }
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  state.counters["flows/s"] = benchmark::Counter(static_cast<double>(flows), benchmark::Counter::kIsRate);
  state.counters["events/s"] = benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
  state.counters["flows"] = static_cast<double>(last.flows);
  state.counters["sim_ms"] = TimeToMilliseconds(last.time);
  state.counters["busbw_GBps"] = last.busbw_bytes_per_s / 1e9;
  state.counters["chunks"] = last.shape.chunks;
  state.counters["sim_us"] = TimeToSeconds(last.time) * 1e6;
  state.counters["aggregated"] = last.shape.aggregated ? 1 : 0;
  state.counters["representative"] = last.shape.representative ? 1 : 0;
  state.counters["inter_tree"] = last.shape.inter_node == collectives::CollectiveAlgorithm::kTree ? 1 : 0;
  state.counters["recomputes"] = static_cast<double>(last.network.recomputations);
  state.counters["visited"] = static_cast<double>(last.network.flows_visited);
  state.counters["rerated"] = static_cast<double>(last.network.flows_rerated);
  state.counters["closures"] = static_cast<double>(last.network.component_closures);
  state.counters["merged"] = static_cast<double>(last.network.flows_merged);
  state.counters["maxrss_MiB"] = static_cast<double>(usage.ru_maxrss) / 1024.0;
}

void AllReduce(benchmark::State& state, collectives::CollectiveAlgorithm algorithm, int32_t channels,
               collectives::CollectiveAlgorithm inter_node = collectives::CollectiveAlgorithm::kAuto,
               collectives::RingSteps ring_steps = collectives::RingSteps::kAuto, bool representative = false) {
  RunCollective(state, CollectiveOp::kAllReduce, algorithm, channels, inter_node, ring_steps, representative);
}
// The opt-in representative approximation (sim/collectives/representative.h): one channel of eight, one
// rail of a hierarchy, eight node-shift strata of an all-to-all, as weighted flows.
void AllReduceRepresentative(benchmark::State& state, collectives::CollectiveAlgorithm algorithm, int32_t channels,
                             collectives::CollectiveAlgorithm inter_node = collectives::CollectiveAlgorithm::kAuto) {
  AllReduce(state, algorithm, channels, inter_node, collectives::RingSteps::kAuto, true);
}

// All-to-all of a 1 GiB send buffer per rank (2 MiB to each of 512 peers).
void BM_AllToAllDirect(benchmark::State& state) {
  RunCollective(state, CollectiveOp::kAllToAll, collectives::CollectiveAlgorithm::kDirect, 0);
}
void BM_AllToAllDirectRepresentative(benchmark::State& state) {
  RunCollective(state, CollectiveOp::kAllToAll, collectives::CollectiveAlgorithm::kDirect, 0,
                collectives::CollectiveAlgorithm::kAuto, collectives::RingSteps::kAuto, true);
}
void BM_AllToAllPairwise(benchmark::State& state) {
  RunCollective(state, CollectiveOp::kAllToAll, collectives::CollectiveAlgorithm::kPairwise, 0);
}

void BM_AllReduceHierarchical(benchmark::State& state) {
  AllReduce(state, collectives::CollectiveAlgorithm::kHierarchical, 0);
}
void BM_AllReduceHierRingInter(benchmark::State& state) {
  AllReduce(state, collectives::CollectiveAlgorithm::kHierarchical, 0, collectives::CollectiveAlgorithm::kRing);
}
void BM_AllReduceHierTreeInter(benchmark::State& state) {
  AllReduce(state, collectives::CollectiveAlgorithm::kHierarchical, 0, collectives::CollectiveAlgorithm::kTree);
}
void BM_AllReduceHierRingInterStepped(benchmark::State& state) {
  AllReduce(state, collectives::CollectiveAlgorithm::kHierarchical, 0, collectives::CollectiveAlgorithm::kRing,
            collectives::RingSteps::kStepped);
}
void BM_AllReduceHierTreeInterStepped(benchmark::State& state) {
  AllReduce(state, collectives::CollectiveAlgorithm::kHierarchical, 0, collectives::CollectiveAlgorithm::kTree,
            collectives::RingSteps::kStepped);
}
void BM_AllReduceFlatTree(benchmark::State& state) { AllReduce(state, collectives::CollectiveAlgorithm::kTree, 0); }
// `hetsim collective`'s default (no --exact): the aggregated flat tree as its representative, every chunk a flow
// (CollectiveRequest::representative_by_default); the same simulated time as BM_AllReduceFlatTree here.
void BM_AllReduceFlatTreeDefault(benchmark::State& state) {
  RunCollective(state, CollectiveOp::kAllReduce, collectives::CollectiveAlgorithm::kTree, 0,
                collectives::CollectiveAlgorithm::kAuto, collectives::RingSteps::kAuto, false, true);
}
void BM_AllReduceFlatTreeRepresentative(benchmark::State& state) {
  AllReduceRepresentative(state, collectives::CollectiveAlgorithm::kTree, 0);
}
void BM_AllReduceHierTreeInterRepresentative(benchmark::State& state) {
  AllReduceRepresentative(state, collectives::CollectiveAlgorithm::kHierarchical, 0,
                          collectives::CollectiveAlgorithm::kTree);
}
void BM_AllReduceHierRingInterRepresentative(benchmark::State& state) {
  AllReduceRepresentative(state, collectives::CollectiveAlgorithm::kHierarchical, 0,
                          collectives::CollectiveAlgorithm::kRing);
}
void BM_AllReduceRing8ChannelsRepresentative(benchmark::State& state) {
  AllReduceRepresentative(state, collectives::CollectiveAlgorithm::kRing, 8);
}
void BM_AllReduceFlatRing(benchmark::State& state) { AllReduce(state, collectives::CollectiveAlgorithm::kRing, 1); }
void BM_AllReduceFlatRingStepped(benchmark::State& state) {
  AllReduce(state, collectives::CollectiveAlgorithm::kRing, 1, collectives::CollectiveAlgorithm::kAuto,
            collectives::RingSteps::kStepped);
}
void BM_AllReduceRing8Channels(benchmark::State& state) {
  AllReduce(state, collectives::CollectiveAlgorithm::kRing, 8);
}
void BM_AllReduceRing8ChannelsStepped(benchmark::State& state) {
  AllReduce(state, collectives::CollectiveAlgorithm::kRing, 8, collectives::CollectiveAlgorithm::kAuto,
            collectives::RingSteps::kStepped);
}

// Rings of more than 128 ranks and double trees of more than 65,536 stepped flows run aggregated
// (docs/decisions.md); the Stepped variants are the same collectives with every ring step and every
// tree chunk simulated, for comparison.
BENCHMARK(BM_AllReduceHierarchical)->Arg(512)->Arg(4096)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_AllReduceHierRingInter)->Arg(512)->Arg(4096)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_AllReduceHierTreeInter)->Arg(512)->Arg(4096)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_AllReduceHierTreeInterStepped)->Arg(512)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);
BENCHMARK(BM_AllReduceFlatTree)->Arg(512)->Arg(4096)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_AllReduceFlatTreeDefault)->Arg(512)->Arg(4096)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_AllReduceHierRingInterStepped)->Arg(4096)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);
BENCHMARK(BM_AllReduceFlatTreeRepresentative)->Arg(512)->Arg(4096)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_AllReduceHierTreeInterRepresentative)->Arg(512)->Arg(4096)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_AllReduceHierRingInterRepresentative)->Arg(512)->Arg(4096)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_AllReduceRing8ChannelsRepresentative)->Arg(512)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_AllToAllDirectRepresentative)->Arg(512)->Arg(2048)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_AllToAllDirect)->Arg(512)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);
BENCHMARK(BM_AllToAllPairwise)->Arg(512)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);
BENCHMARK(BM_AllReduceFlatRing)->Arg(512)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_AllReduceFlatRingStepped)->Arg(512)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_AllReduceRing8Channels)->Arg(512)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_AllReduceRing8ChannelsStepped)->Arg(512)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);

}  // namespace
}  // namespace hetsim
