// The planner's price of a plan of pipelines' layer ranges as NCCL runs them (issue 39) against closed
// forms on the lab cluster (examples/cluster-lab-pcie.pbtxt: RTX 4090 nodes without GPU peer-to-peer,
// NCCL's SHM connections at 2 channels x 0.95 GB/s; one 100 Gb/s Ethernet NIC a node): four one-GPU
// pipelines on GPUs 0 and 1 of two nodes hold one range, whose ring (as the simulator groups it by
// node) has two SHM hops inside the nodes and two NIC hops between them. A ring's step waits for its
// slowest hop; each collective pays NCCL's launch latency once and its protocol's step latency and the
// route's wire latency every step, with the protocol of the smallest time (nccl_model.h):
//   reduce-scatter or all-gather of b bytes over p GPUs = launch + (p - 1) x max over hops of
//   (wire + step latency + b / p / (rate x the protocol's payload share)),
// so a large bucket runs at the SHM hop (not the NIC's share the planner used to give it) and a small
// one costs p - 1 latencies plus its bytes over the bandwidth. ZeRO-3's gathers: every layer of a stage
// gathers its parameters over the range's GPUs before its forward and again before its backward.
#include <catch2/catch.hpp>

#include <algorithm>
#include <limits>
#include <memory>
#include <vector>

#include "base/spec/cluster.h"
#include "planner/nccl_price.h"
#include "planner/pipelines.h"
#include "proto/inputs.h"
#include "proto/io.h"
#include "proto/resolve.h"
#include "sim/collectives/nccl_model.h"
#include "sim/workload/model_cost.h"
#include "sim/workload/stage_cost.h"
#include "tests/planner/planner_test_util.h"
#include "topology/routing.h"

namespace hetsim::planner {
namespace {

constexpr double kParams[] = {1e7, 2e7, 3e7};  // three layers' parameters (BF16: 2 bytes each)

// Layers of kParams' parameters, `copies` times over.
workload::ModelCost ThreeLayerModel(int copies = 1) {
  v1::Model m;
  m.set_name("three");
  m.set_dtype(v1::BF16);
  v1::LayerList* list = m.mutable_layer_list();
  list->set_seq_length(1024);
  for (int c = 0; c < copies * 3; ++c) {
    const double params = kParams[c % 3];
    v1::Layer* l = list->add_layers();
    l->set_name("l");
    l->set_forward_gflop_per_sample(10);
    l->set_param_count(static_cast<uint64_t>(params));
    l->set_activation_bytes_per_sample(1000000);
    l->set_output_bytes_per_sample(1000000);
  }
  return workload::ModelCost::Create(proto::ResolveModel(m, "model"));
}

std::unique_ptr<ClusterModel> LabCluster() {
  absl::StatusOr<v1::Cluster> c =
      proto::LoadCluster(proto::Source::File(HETSIM_SOURCE_DIR "/examples/cluster-lab-pcie.pbtxt"));
  REQUIRE(c.ok());
  auto model = testing::ClusterModelOf(*c, spec::DType::kBf16);
  INFO(model.status().message());
  REQUIRE(model.ok());
  return *std::move(model);
}

// Four one-stage pipelines of every layer at `zero_stage`, each on one RTX 4090 ({node, GPU}: 0 0, 0 1,
// 1 0, 1 1), every last backward ending at 1 ms.
struct FourPipelines {
  std::vector<std::vector<SearchedStage>> stages = std::vector<std::vector<SearchedStage>>(4);
  std::vector<Prediction> predictions = std::vector<Prediction>(4);

  std::vector<PricedPipeline> Priced(const ClusterModel& cluster, int zero_stage, Time forward = 0, Time backward = 0) {
    std::vector<PricedPipeline> out;
    for (int p = 0; p < 4; ++p) {
      SearchedStage s;
      s.first_layer = 0;
      s.num_layers = 3;
      s.island = 0;
      s.shape = {1, 1};
      s.option.config.zero_stage = zero_stage;
      s.option.forward = forward;
      s.option.backward = backward;
      stages[p] = {s};
      predictions[p].stages.assign(1, StagePrediction{});
      predictions[p].stages[0].last_backward_end = MillisecondsToTime(1);
      predictions[p].pipeline = MillisecondsToTime(1);
      out.push_back({&cluster, &stages[p], &predictions[p], {p / 2}, {p % 2}});
    }
    return out;
  }
};

// The ring's GPUs in the simulator's order and what a hop of it costs under protocol `p`.
struct Ring {
  const ClusterModel& cluster;
  std::vector<GpuId> gpus;

  struct Hop {
    double latency_s = 0;    // wire + the protocol's step latency
    double bytes_per_s = 0;  // the route's bottleneck x the protocol's payload share
  };
  Hop HopOf(size_t k, collectives::NcclProtocol p) const {
    topology::Router router(cluster.topology());
    absl::StatusOr<const topology::Route*> route = router.GpuRoute(gpus[k], gpus[(k + 1) % gpus.size()]);
    REQUIRE(route.ok());
    return {TimeToSeconds(router.Latency(**route) + collectives::RouteStepLatency(cluster.topology(), **route, p)),
            router.BottleneckBytesPerSecond(**route) * collectives::ProtocolBandwidthFraction(p)};
  }
  // A reduce-scatter or an all-gather of `bytes`: the closed form above at its fastest protocol among those NCCL
  // enables for the ring (LL and Simple here: its SHM hops are no NVLink, collectives::NcclEnablesLl128).
  double HalfSeconds(double bytes) const {
    const double n = static_cast<double>(gpus.size());
    double best = std::numeric_limits<double>::infinity();
    for (collectives::NcclProtocol p : collectives::CandidateProtocols(cluster.topology(), std::nullopt, gpus)) {
      double step = 0;
      for (size_t k = 0; k < gpus.size(); ++k) {
        const Hop h = HopOf(k, p);
        step = std::max(step, h.latency_s + bytes / n / h.bytes_per_s);
      }
      best = std::min(best, TimeToSeconds(collectives::LaunchLatency(cluster.topology(), gpus)) + (n - 1) * step);
    }
    return best;
  }
};

Ring LabRing(const ClusterModel& cluster) {
  Ring r{cluster, {}};
  for (int p = 0; p < 4; ++p) {
    absl::StatusOr<GpuId> g = cluster.topology().GpuIdOf(0, p / 2, p % 2);
    REQUIRE(g.ok());
    r.gpus.push_back(*g);
  }
  return r;
}

double BucketSeconds(const LayerRangesPrice& price, size_t k) {
  REQUIRE(price.range_times.size() == 1);
  return TimeToSeconds(price.range_times[0].bucket_end[k] - price.range_times[0].bucket_start[k]);
}

TEST_CASE("range rings: a ring of four GPUs waits for its SHM hops, at their alpha-beta",
          "[planner][pipelines][ranges][nccl]") {
  const workload::ModelCost model = ThreeLayerModel();
  const std::unique_ptr<ClusterModel> cluster = LabCluster();
  const Ring ring = LabRing(*cluster);
  const double shm = spec::kNcclPcieChannels * spec::kShmDirectChannelBytesPerS;
  // Hops 0 -> 1 and 2 -> 3 are SHM connections inside a node, 1 -> 2 and 3 -> 0 the NICs (100 Gb/s at
  // Ethernet's 80%: 10 GB/s), over 5 times faster.
  const Ring::Hop inside = ring.HopOf(0, collectives::NcclProtocol::kSimple);
  const Ring::Hop between = ring.HopOf(1, collectives::NcclProtocol::kSimple);
  CHECK(inside.bytes_per_s == Approx(shm).epsilon(1e-12));
  CHECK(between.bytes_per_s > 5 * shm);
  // ZeRO-1 with the gathers at the start: after the backward the range only reduce-scatters its
  // gradients, B = 2 x 6e7 bytes, in one bucket: launch + 3 (alpha + B / 4 / shm).
  FourPipelines four;
  const double bytes = 2 * (kParams[0] + kParams[1] + kParams[2]);
  const LayerRangesPrice price =
      PriceLayerRanges(model, *cluster, {.overlap_param_gather = true}, four.Priced(*cluster, 1));
  const double launch = TimeToSeconds(collectives::LaunchLatency(cluster->topology(), ring.gpus));
  const double closed = launch + 3 * (inside.latency_s + bytes / 4 / shm);
  CHECK(ring.HalfSeconds(bytes) == Approx(closed).epsilon(1e-9));  // Simple, at the SHM hop
  CHECK(BucketSeconds(price, 0) == Approx(closed).epsilon(1e-6));
  // The NIC's share alone (the price before) is over 5 times shorter.
  CHECK(BucketSeconds(price, 0) > 5 * 3 * bytes / 4 / between.bytes_per_s);
}

TEST_CASE("range rings: a small bucket costs p - 1 latencies plus its bytes over the bandwidth",
          "[planner][pipelines][ranges][nccl]") {
  const workload::ModelCost model = ThreeLayerModel();
  const std::unique_ptr<ClusterModel> cluster = LabCluster();
  const Ring ring = LabRing(*cluster);
  FourPipelines four;
  const double bytes = 2 * (kParams[0] + kParams[1] + kParams[2]);
  const int64_t bucket = 64 << 10;
  const LayerRangesPrice price = PriceLayerRanges(
      model, *cluster, {.grad_bucket_bytes = bucket, .overlap_param_gather = true}, four.Priced(*cluster, 1));
  const size_t buckets = static_cast<size_t>((static_cast<int64_t>(bytes) + bucket - 1) / bucket);
  REQUIRE(price.range_times[0].bucket_end.size() == buckets);
  const double one = ring.HalfSeconds(static_cast<double>(bucket));
  // 3 latencies (launch once) and 3/4 of 64 KiB over the slowest hop: latency-bound, not free.
  CHECK(one > 3 * ring.HopOf(0, collectives::NcclProtocol::kSimple).latency_s);
  for (size_t k : {size_t{0}, buckets / 2, buckets - 2}) CHECK(BucketSeconds(price, k) == Approx(one).epsilon(1e-6));
  const double last = ring.HalfSeconds(bytes - static_cast<double>(bucket) * static_cast<double>(buckets - 1));
  CHECK(BucketSeconds(price, buckets - 1) == Approx(last).epsilon(1e-6));
  // One after another from the holders' last backward (1 ms): the range ends after all of them.
  CHECK(TimeToSeconds(price.range_times[0].bucket_end.back()) ==
        Approx(1e-3 + static_cast<double>(buckets - 1) * one + last).epsilon(1e-6));
}

TEST_CASE("range rings: ZeRO-3 gathers every layer over the range's GPUs in each pass",
          "[planner][pipelines][ranges][nccl][zero]") {
  const workload::ModelCost model = ThreeLayerModel();
  const std::unique_ptr<ClusterModel> cluster = LabCluster();
  const Ring ring = LabRing(*cluster);
  FourPipelines four;
  // Each layer all-gathers its 2 x params bytes over the four GPUs (a pipeline of DP 1 gathered nothing).
  std::vector<double> gather;
  double sum = 0;
  for (double params : kParams) sum += gather.emplace_back(ring.HalfSeconds(2 * params));
  const ZeroThreeGathers exposed = RangeGathersOfZeroThree(model, *cluster, false, four.Priced(*cluster, 3));
  REQUIRE(exposed.forward.size() == 4);
  for (size_t p = 0; p < 4; ++p) {
    CHECK(TimeToSeconds(exposed.forward[p][0]) == Approx(sum).epsilon(1e-6));
    CHECK(TimeToSeconds(exposed.backward[p][0]) == Approx(sum).epsilon(1e-6));
  }
  // zero3_prefetch: each gather hides behind the layer before it in pass order (a third of the pass):
  // the forward exposes the first layer's and what the next two outlast, the backward the last's.
  const Time pass = SecondsToTime(3 * gather[1]);
  const ZeroThreeGathers hidden = RangeGathersOfZeroThree(model, *cluster, true, four.Priced(*cluster, 3, pass, pass));
  const double layer = TimeToSeconds(pass / 3);
  const double forward = gather[0] + std::max(0.0, gather[1] - layer) + std::max(0.0, gather[2] - layer);
  const double backward = std::max(0.0, gather[0] - layer) + std::max(0.0, gather[1] - layer) + gather[2];
  CHECK(TimeToSeconds(hidden.forward[0][0]) == Approx(forward).epsilon(1e-6));
  CHECK(TimeToSeconds(hidden.backward[0][0]) == Approx(backward).epsilon(1e-6));
  // Not at ZeRO-3: nothing.
  CHECK(RangeGathersOfZeroThree(model, *cluster, false, four.Priced(*cluster, 1)).forward.empty());
  // After the backward a ZeRO-3 range reduce-scatters its gradients once, nothing gathers after the step.
  const LayerRangesPrice price = PriceLayerRanges(model, *cluster, {}, four.Priced(*cluster, 3));
  CHECK(BucketSeconds(price, 0) == Approx(ring.HalfSeconds(2 * (kParams[0] + kParams[1] + kParams[2]))).epsilon(1e-6));
}

// Two 3-stage pipelines of one layer a stage, pipeline 0 on GPUs 0-2 of node 0, pipeline 1 on GPUs 0-2 of
// node 1 of the lab cluster, every last backward ending at 1 ms: three ranges (one a layer), each a ring
// of two GPUs whose both hops are the nodes' NICs (no SHM hop), all three leaving each node through its one
// NIC at once.
struct ThreeRangesOnTwoNodes {
  std::vector<std::vector<SearchedStage>> stages = std::vector<std::vector<SearchedStage>>(2);
  std::vector<Prediction> predictions = std::vector<Prediction>(2);

  std::vector<PricedPipeline> Priced(const ClusterModel& cluster) {
    std::vector<PricedPipeline> out;
    for (int p = 0; p < 2; ++p) {
      stages[p].clear();
      predictions[p].stages.assign(3, StagePrediction{});
      for (int i = 0; i < 3; ++i) {
        SearchedStage& s = stages[p].emplace_back();
        s.first_layer = i;
        s.num_layers = 1;
        s.shape = {1, 1};
        s.option.config.zero_stage = 1;
        predictions[p].stages[i].last_backward_end = MillisecondsToTime(1);
      }
      predictions[p].pipeline = MillisecondsToTime(1);
      out.push_back({&cluster, &stages[p], &predictions[p], {p, p, p}, {0, 1, 2}});
    }
    return out;
  }
  // Range k's ring: GPU k of each node.
  static Ring RingOf(const ClusterModel& cluster, int k) {
    Ring ring{cluster, {}};
    for (int node = 0; node < 2; ++node) ring.gpus.push_back(*cluster.topology().GpuIdOf(0, node, k));
    return ring;
  }
  // What the simulator's NIC link carries (every node's alike).
  static double Nic(const ClusterModel& cluster) {
    const topology::Topology& t = cluster.topology();
    return t.link(t.nic_uplink(t.nic_of(GpuId(0)))).bandwidth.bytes_per_second();
  }
};

// Range k's first bucket: its end less its start.
double FirstBucketSeconds(const LayerRangesPrice& price, int k) {
  return TimeToSeconds(price.range_times[k].bucket_end[0] - price.range_times[k].bucket_start[0]);
}

TEST_CASE("range rings: ranges at once share each node's NIC, in their protocol's wire bytes",
          "[planner][pipelines][ranges][nccl]") {
  // ZeRO-1 with the gathers at the start: range k (layer k, P_k parameters) reduce-scatters B_k = 2 P_k
  // bytes over its two GPUs, B_k / 2 of them through each node's NIC (the simulator's link: 100 Gb/s at
  // Ethernet's 0.80, C = 10 GB/s). Alone, each would run at C (NCCL's estimate of its ring: both hops are
  // NICs). At once, max-min shares C: all three at C / 3 until the smallest is done, then two at C / 2:
  // the ranges' bandwidth terms end at 3 P_0 / C, (P_0 + 2 P_1) / C = 5e7 / C and (P_0 + P_1 + P_2) / C
  // = 6e7 / C, each then paying its latency (what the ring alone costs beyond its bytes over C).
  const std::unique_ptr<ClusterModel> cluster = LabCluster();
  ThreeRangesOnTwoNodes two;
  const LayerRangesPrice price =
      PriceLayerRanges(ThreeLayerModel(), *cluster, {.overlap_param_gather = true}, two.Priced(*cluster));
  REQUIRE(price.range_times.size() == 3);
  const double nic = ThreeRangesOnTwoNodes::Nic(*cluster);
  CHECK(nic == Approx(0.8 * 100e9 / 8).epsilon(1e-12));
  const double ends[3] = {3 * kParams[0] / nic, (kParams[0] + 2 * kParams[1]) / nic,
                          (kParams[0] + kParams[1] + kParams[2]) / nic};
  for (int k = 0; k < 3; ++k) {
    const Ring ring = ThreeRangesOnTwoNodes::RingOf(*cluster, k);
    // Alone: Simple at the NIC (a large bucket), so the latency is what it costs beyond B_k / 2 over C.
    const double alone = ring.HalfSeconds(2 * kParams[k]);
    CHECK(ring.HopOf(0, collectives::NcclProtocol::kSimple).bytes_per_s == Approx(nic).epsilon(1e-12));
    const double latency = alone - kParams[k] / nic;
    CHECK(latency > 0);
    INFO("range " << k);
    CHECK(FirstBucketSeconds(price, k) == Approx(ends[k] + latency).epsilon(1e-6));
  }
}

TEST_CASE("range rings: small buckets of ranges at once share the NIC in LL's wire bytes",
          "[planner][pipelines][ranges][nccl]") {
  // The same three ranges in 16 KiB buckets: each bucket's ring of two GPUs runs the protocol of its
  // fastest estimate alone (LL below about 32 KiB here, Simple above: LL's step latency is the smaller,
  // but only 1/4 of its wire bytes are payload, nccl_model.h); the first buckets of the three ranges run
  // at once, equal, each a third of the NIC: its 8 KiB through the NIC at C x 1/4 / 3, plus the latency
  // the bucket costs alone beyond its bytes at C x 1/4.
  const std::unique_ptr<ClusterModel> cluster = LabCluster();
  ThreeRangesOnTwoNodes two;
  const int64_t bucket = 16 << 10;
  const LayerRangesPrice price = PriceLayerRanges(
      ThreeLayerModel(), *cluster, {.grad_bucket_bytes = bucket, .overlap_param_gather = true}, two.Priced(*cluster));
  REQUIRE(price.range_times.size() == 3);
  const double nic = ThreeRangesOnTwoNodes::Nic(*cluster);
  const double half = static_cast<double>(bucket) / 2;
  for (int k = 0; k < 3; ++k) {
    const Ring ring = ThreeRangesOnTwoNodes::RingOf(*cluster, k);
    const double alone = ring.HalfSeconds(static_cast<double>(bucket));
    // The fastest alone is LL.
    const Ring::Hop ll = ring.HopOf(0, collectives::NcclProtocol::kLL);
    const double ll_alone = TimeToSeconds(collectives::LaunchLatency(cluster->topology(), ring.gpus)) + ll.latency_s +
                            half / ll.bytes_per_s;
    REQUIRE(alone == Approx(ll_alone).epsilon(1e-9));
    CHECK(ll.bytes_per_s == Approx(nic / 4).epsilon(1e-12));
    INFO("range " << k);
    CHECK(FirstBucketSeconds(price, k) == Approx(alone + 2 * half / (nic / 4)).epsilon(1e-6));
  }
}

TEST_CASE("range rings: on one flat network each range crosses its own nodes' NICs, no link every range shares",
          "[planner][pipelines][ranges][nccl]") {
  // The mixed cloud (examples/cluster-mixed-cloud.pbtxt: 2 A100 and 2 L40S nodes, one 100 Gb/s NIC a node,
  // all on one network, no gateway): an A100 pipeline and an L40S pipeline of six one-layer stages, stages
  // 0-2 on GPUs 0-2 of each island's node 0, stages 3-5 on node 1; layer k of kParams[k % 3] parameters.
  // Ranges 0-2 ring over the two node-0 NICs, ranges 3-5 over the node-1 NICs: each NIC shares three ranges,
  // as ThreeRangesOnTwoNodes on the lab (ends 3 P_0 / C, (P_0 + 2 P_1) / C, (P_0 + P_1 + P_2) / C, then
  // each its latency), C the NIC link (100 Gb/s x Ethernet's 0.80). Before session 42 the islands' crossing
  // was one link of a boundary's rate shared by all six ranges: the last ended at 2 (P_0 + P_1 + P_2) / C.
  absl::StatusOr<v1::Cluster> c =
      proto::LoadCluster(proto::Source::File(HETSIM_SOURCE_DIR "/examples/cluster-mixed-cloud.pbtxt"));
  REQUIRE(c.ok());
  absl::StatusOr<std::unique_ptr<ClusterModel>> cluster = testing::ClusterModelOf(*c, spec::DType::kBf16);
  REQUIRE(cluster.ok());
  const workload::ModelCost model = ThreeLayerModel(2);
  std::vector<std::vector<SearchedStage>> stages(2);
  std::vector<Prediction> predictions(2);
  std::vector<PricedPipeline> pipelines;
  for (int p = 0; p < 2; ++p) {
    predictions[p].stages.assign(6, StagePrediction{});
    for (int i = 0; i < 6; ++i) {
      SearchedStage& s = stages[p].emplace_back();
      s.first_layer = i;
      s.num_layers = 1;
      s.island = p;
      s.shape = {1, 1};
      s.option.config.zero_stage = 1;
      predictions[p].stages[i].last_backward_end = MillisecondsToTime(1);
    }
    predictions[p].pipeline = MillisecondsToTime(1);
    pipelines.push_back({cluster->get(), &stages[p], &predictions[p], {0, 0, 0, 1, 1, 1}, {0, 1, 2, 0, 1, 2}});
  }
  const LayerRangesPrice price = PriceLayerRanges(model, **cluster, {.overlap_param_gather = true}, pipelines);
  REQUIRE(price.range_times.size() == 6);
  const double nic = 0.8 * 100e9 / 8;
  const double ends[3] = {3 * kParams[0] / nic, (kParams[0] + 2 * kParams[1]) / nic,
                          (kParams[0] + kParams[1] + kParams[2]) / nic};
  for (int k = 0; k < 6; ++k) {
    const topology::Topology& t = (*cluster)->topology();
    const Ring ring{**cluster, {*t.GpuIdOf(0, k / 3, k % 3), *t.GpuIdOf(1, k / 3, k % 3)}};
    REQUIRE(ring.HopOf(0, collectives::NcclProtocol::kSimple).bytes_per_s == Approx(nic).epsilon(1e-12));
    const double latency = ring.HalfSeconds(2 * kParams[k % 3]) - kParams[k % 3] / nic;
    CHECK(latency > 0);
    INFO("range " << k);
    CHECK(FirstBucketSeconds(price, k) == Approx(ends[k % 3] + latency).epsilon(1e-6));
  }
}

TEST_CASE("range rings: a double tree between two nodes loads each NIC with 2/3 of a ring's bytes", "[planner][nccl]") {
  // Four GPUs, two on each of the mixed cloud's A100 nodes (one NIC a node). A ring (one channel) sends
  // 2 (n - 1) / n = 3/2 of the bytes S out of each node and into it. NCCL's double tree over the two
  // nodes (a chain inside each) has one edge between them in each tree, each tree moving half of S up and
  // down it: S each way through each NIC, 2/3 of the ring's. A hierarchy's rails (2 of them, a ring of 2
  // nodes each with half of S) move 2 (2 - 1) / 2 x S/2 each, S in all through the node's one NIC: 2/3 too.
  // The flows through the NIC (NicFlows, session 43): the simulator's network shares a NIC per flow (sim/network,
  // max-min), and each transfer of an algorithm is a flow: a ring's channel leaves each node once (1 flow a
  // channel, both channels through the one NIC: 2); a double tree's two trees each cross between the nodes on one
  // edge, up and down, so each way 1 flow a tree (4 with 2 channels); a hierarchy's 2 rails each ring over the
  // nodes through the NIC: 2.
  absl::StatusOr<v1::Cluster> c =
      proto::LoadCluster(proto::Source::File(HETSIM_SOURCE_DIR "/examples/cluster-mixed-cloud.pbtxt"));
  REQUIRE(c.ok());
  absl::StatusOr<std::unique_ptr<ClusterModel>> cluster = testing::ClusterModelOf(*c, spec::DType::kBf16);
  REQUIRE(cluster.ok());
  const topology::Topology& t = (*cluster)->topology();
  const std::vector<GpuId> gpus = {*t.GpuIdOf(0, 0, 0), *t.GpuIdOf(0, 0, 1), *t.GpuIdOf(0, 1, 0), *t.GpuIdOf(0, 1, 1)};
  collectives::CollectiveShape shape;
  shape.channels = 1;
  shape.algorithm = collectives::CollectiveAlgorithm::kRing;
  CHECK(NicLoadRatio(t, gpus, shape) == Approx(1).epsilon(1e-12));
  CHECK(NicFlows(t, gpus, shape) == 1);
  shape.channels = 2;  // both channels leave through the node's one NIC
  CHECK(NicLoadRatio(t, gpus, shape) == Approx(1).epsilon(1e-12));
  CHECK(NicFlows(t, gpus, shape) == 2);
  shape.algorithm = collectives::CollectiveAlgorithm::kTree;
  CHECK(NicFlows(t, gpus, shape) == 4);
  shape.channels = 1;
  CHECK(NicLoadRatio(t, gpus, shape) == Approx(2.0 / 3).epsilon(1e-12));
  CHECK(NicFlows(t, gpus, shape) == 2);
  shape.algorithm = collectives::CollectiveAlgorithm::kHierarchical;
  shape.inter_node = collectives::CollectiveAlgorithm::kRing;
  CHECK(NicLoadRatio(t, gpus, shape) == Approx(2.0 / 3).epsilon(1e-12));
  CHECK(NicFlows(t, gpus, shape) == 2);
  // Inside one node nothing leaves it (one flow, for the weight).
  shape.algorithm = collectives::CollectiveAlgorithm::kTree;
  CHECK(NicLoadRatio(t, {gpus[0], gpus[1]}, shape) == 1);
  CHECK(NicFlows(t, {gpus[0], gpus[1]}, shape) == 1);
}

TEST_CASE("range rings: a NIC as a link of ShareLinks counts the collective's flows at the NIC's rate",
          "[planner][nccl]") {
  // As a link of ShareLinks: a double tree's price through that NIC (2/3 of a ring's bytes, Simple) counts 2 flows
  // and goes 3 times as fast per flow as a one-channel ring (the weight of its share, SharedLink::Weight).
  NcclPrice tree;
  tree.nic_load = 2.0 / 3;
  tree.nic_flows = 2;
  const SharedLink link = tree.NicLink(7, 1e10, 1);
  CHECK(link.bytes_per_s == Approx(1.5e10).epsilon(1e-12));
  CHECK(link.flows == 2);
  CHECK(link.Weight() == Approx(3).epsilon(1e-12));
  // Two shard rings of LL (a quarter of the wire is payload) through one NIC of C: 2 flows, C / 4 / 2 of payload
  // each alone, weight 2 x (C / 8) / C = 1/4. Beside a Simple ring's one flow (weight 1) each of the 3 flows gets
  // C / 3 of the wire, and each LL ring moves C / 3 / 4 = C / 12 of payload, a quarter of the Simple ring's.
  NcclPrice ll;
  ll.payload_fraction = 0.25;
  const SharedLink rings = ll.NicLink(7, 1e10, 2);
  CHECK(rings.bytes_per_s == Approx(1.25e9).epsilon(1e-12));
  CHECK(rings.flows == 2);
  CHECK(rings.Weight() == Approx(0.25).epsilon(1e-12));
}

// The 8-expert case model (tests/planner_data/moe-hapt-case.pbtxt) as two one-stage pipelines of TP 1 x DP 8 at
// EP 8 on the two nodes of the A100 island of tests/planner_data/cluster-a100-rtx4090.pbtxt made two nodes long
// (one 400 Gb/s InfiniBand NIC a GPU), or with `nics_per_node` NICs a node sharing the node's 3200 Gb/s: the
// range's experts reduce in 8 rings, expert rank e of each node's copy, each GPU in one; no crossing between
// islands.
struct ExpertsOnTwoNodes {
  workload::ModelCost model;
  std::unique_ptr<ClusterModel> cluster;
  std::vector<std::vector<SearchedStage>> stages = std::vector<std::vector<SearchedStage>>(2);
  std::vector<Prediction> predictions = std::vector<Prediction>(2);

  explicit ExpertsOnTwoNodes(int nics_per_node)
      : model(workload::ModelCost::Create(proto::ResolveModel(
            *proto::LoadAs<v1::Model>(HETSIM_SOURCE_DIR "/tests/planner_data/moe-hapt-case.pbtxt"), "gpt"))) {
    absl::StatusOr<v1::Cluster> c =
        proto::LoadCluster(proto::Source::File(HETSIM_SOURCE_DIR "/tests/planner_data/cluster-a100-rtx4090.pbtxt"));
    REQUIRE(c.ok());
    v1::Island& a100 = *c->mutable_islands(0);
    a100.set_node_count(2);
    a100.set_nic_bandwidth_gbps(3200.0 / nics_per_node);
    a100.set_nics_per_node(static_cast<uint32_t>(nics_per_node));
    absl::StatusOr<std::unique_ptr<ClusterModel>> m = testing::ClusterModelOf(*c, model.dtype());
    INFO(m.status().message());
    REQUIRE(m.ok());
    cluster = *std::move(m);
  }

  std::vector<PricedPipeline> Priced() {
    std::vector<PricedPipeline> out;
    for (int p = 0; p < 2; ++p) {
      SearchedStage s;
      s.num_layers = model.num_layers();
      s.shape = {1, 8};
      s.option.config.tensor_parallel = 1;
      s.option.config.data_parallel = 8;
      s.option.config.expert_parallel = 8;
      s.option.config.expert_tensor_parallel = 1;
      stages[p] = {s};
      predictions[p].stages.assign(1, StagePrediction{});
      predictions[p].stages[0].last_backward_end = MillisecondsToTime(1);
      predictions[p].pipeline = MillisecondsToTime(1);
      out.push_back({cluster.get(), &stages[p], &predictions[p], {p}, {0}});
    }
    return out;
  }
};

TEST_CASE("range rings: the experts' rings cross the NICs of their own GPUs, all of them where a node has one",
          "[planner][pipelines][ranges][nccl][experts]") {
  // After the range's dense bucket its experts' bucket: each of the 8 rings all-reduces the finest shard's
  // gradients E over its 2 GPUs (GPU e of each node), E through each node's NIC it leaves by. The holding
  // stages' NIC shares (an eighth of a node's NICs a GPU) left every ring its own NIC before.
  for (const int nics : {8, 1}) {
    ExpertsOnTwoNodes two(nics);
    const ClusterModel& cluster = *two.cluster;
    const topology::Topology& t = cluster.topology();
    const LayerRangesPrice price = PriceLayerRanges(two.model, cluster, {}, two.Priced());
    REQUIRE(price.range_times.size() == 1);
    const LayerRangesPrice::Range& range = price.range_times[0];
    REQUIRE(range.bucket_end.size() == 2);  // the dense bucket, then the experts'
    const double bucket = TimeToSeconds(range.bucket_end[1] - range.bucket_start[1]);
    const int64_t bytes = workload::ExpertGradSyncBytes(two.model, 0, two.model.num_layers(), 8, false);
    const std::vector<GpuId> ring = {*t.GpuIdOf(0, 0, 0), *t.GpuIdOf(0, 1, 0)};
    RangeNccl nccl(cluster);
    const std::optional<NcclPrice> alone = nccl.Of(ring, CollectiveOp::kAllReduce, bytes);
    REQUIRE(alone);
    const double nic = t.link(t.nic_uplink(t.nic_of(ring[0]))).bandwidth.bytes_per_second();
    INFO(nics << " NICs a node: experts' bucket " << bucket << " s, alone " << alone->seconds << " s, NIC " << nic);
    if (nics == 8) {
      // A NIC a GPU: each NIC carries one expert ring, which runs as NCCL's estimate of it alone.
      CHECK(bucket == Approx(alone->seconds).epsilon(1e-6));
    } else {
      // One NIC a node: the 8 rings share it, each E at an eighth of the link (Simple: every wire byte payload).
      CHECK(bucket == Approx(alone->latency_s + 8 * static_cast<double>(bytes) / nic).epsilon(1e-6));
      CHECK(bucket > 4 * alone->seconds);
    }
  }
}

TEST_CASE("range rings: a hierarchical all-reduce crosses the islands with its rails' bytes, not a ring's",
          "[planner][pipelines][ranges][nccl]") {
  // Six one-GPU pipelines on the HAPT case's cluster (examples/cluster-hapt-case.pbtxt): the four A100s
  // of two nodes and the two V100s of one, joined by one 5 Gb/s Ethernet link. NCCL's choice for the
  // range's 6 GPUs on 3 nodes is the hierarchical all-reduce: a reduce-scatter inside each node, then per
  // rail (2 of them) a ring over the 3 nodes, which carries 2 (3 - 1) / 3 of each rail's half of the
  // bytes B each way over the link: 4/3 B in all, against a flat ring's 2 (6 - 1) / 6 B = 5/3 B. The
  // range's bandwidth term is the link's for 4/3 B (the intra-node steps on NVSwitch add under 1%).
  const workload::ModelCost model = ThreeLayerModel();
  absl::StatusOr<v1::Cluster> c =
      proto::LoadCluster(proto::Source::File(HETSIM_SOURCE_DIR "/examples/cluster-hapt-case.pbtxt"));
  REQUIRE(c.ok());
  absl::StatusOr<std::unique_ptr<ClusterModel>> cluster = testing::ClusterModelOf(*c, spec::DType::kFp16);
  REQUIRE(cluster.ok());
  const int places[6][3] = {{0, 0, 0}, {0, 0, 1}, {0, 1, 0}, {0, 1, 1}, {1, 0, 0}, {1, 0, 1}};  // island, node, GPU
  std::vector<std::vector<SearchedStage>> stages(6);
  std::vector<Prediction> predictions(6);
  std::vector<PricedPipeline> pipelines;
  for (int p = 0; p < 6; ++p) {
    SearchedStage s;
    s.num_layers = 3;
    s.island = places[p][0];
    s.shape = {1, 1};
    stages[p] = {s};
    predictions[p].stages.assign(1, StagePrediction{});
    predictions[p].stages[0].last_backward_end = MillisecondsToTime(1);
    predictions[p].pipeline = MillisecondsToTime(1);
    pipelines.push_back({cluster->get(), &stages[p], &predictions[p], {places[p][1]}, {places[p][2]}});
  }
  const LayerRangesPrice price = PriceLayerRanges(model, **cluster, {}, pipelines);
  const double bytes = 2 * (kParams[0] + kParams[1] + kParams[2]);
  const double link = (*cluster)->BoundaryLink(1, 0).bytes_per_s;
  INFO("range " << BucketSeconds(price, 0) << " s, link " << link << " B/s");
  CHECK(BucketSeconds(price, 0) == Approx(4.0 / 3.0 * bytes / link).epsilon(0.01));
  CHECK(BucketSeconds(price, 0) < 0.85 * 5.0 / 3.0 * bytes / link);
}

// One 1-stage pipeline's passes, F0 B0 F1 B1 ..., each starting at the end of the one before or at its
// release (what Predict's DAG gives a 1-stage pipeline): `forward` and `backward` long.
PredictedPasses OneStagePasses(int microbatches, Time forward, Time backward, const std::vector<Time>& release) {
  PredictedPasses out;
  out.nodes.emplace_back();
  Time at = 0;
  for (int k = 0; k < 2 * microbatches; ++k) {
    out.nodes[0].push_back(k);
    const Time start = std::max(at, release.empty() ? Time() : release[static_cast<size_t>(k)]);
    out.ready.push_back(at);
    out.start.push_back(start);
    out.end.push_back(start + (k % 2 == 0 ? forward : backward));
    out.backward.push_back(k % 2 == 1);
    at = out.end.back();
  }
  return out;
}

TEST_CASE("range rings: under ZeRO-3 a pipeline faster per microbatch waits at each call for the slower holder",
          "[planner][pipelines][ranges][zero]") {
  // The simulator's closed form (tests/sim/executor/executor_pipelines_test.cc): "long", 4 microbatches of
  // F = f + G, B = 2f + G, beside "short", 2 of 2f + G and 4f + G, one range over both. Each call starts at
  // the later holder's; short joins from its last pass's end: long's last backward ends at
  // m2 (6f + 2G) + (m1 - m2)(3f + 2G) = 18f + 8G, short's at 12f + 4G.
  const Time f = MillisecondsToTime(10), G = MillisecondsToTime(3);
  const std::vector<ZeroThreeCallRange> ranges = {{{{0, 0}, {1, 0}}, {0, 0}, {0, 0}}};
  std::vector<std::vector<Time>> release(2);
  std::vector<PredictedPasses> passes(2);
  int rounds = 0;
  do {
    passes[0] = OneStagePasses(4, f + G, 2 * f + G, release[0]);
    passes[1] = OneStagePasses(2, 2 * f + G, 4 * f + G, release[1]);
    for (size_t p = 0; p < 2; ++p) release[p].resize(passes[p].start.size(), Time());
    REQUIRE(++rounds < 100);
  } while (ZeroThreeCallReleases(ranges, passes, release));
  CHECK(passes[0].end.back() == 18 * f + 8 * G);
  CHECK(passes[1].end.back() == 12 * f + 4 * G);
  CHECK(passes[0].start == std::vector<Time>{0, 2 * f + G, 6 * f + 2 * G, 8 * f + 3 * G, 12 * f + 4 * G, 13 * f + 5 * G,
                                             15 * f + 6 * G, 16 * f + 7 * G});
  // Holders of the same speed and count: nothing waits.
  release.assign(2, {});
  passes[0] = OneStagePasses(2, f + G, 2 * f + G, {});
  passes[1] = OneStagePasses(2, f + G, 2 * f + G, {});
  release[0].resize(4);
  release[1].resize(4);
  CHECK(!ZeroThreeCallReleases(ranges, passes, release));
}

// A 2-stage pipeline of one microbatch (stage 0: F0 = node 0, B0 = node 3; stage 1: F0 = node 1, B0 = node 2),
// each pass at the end of its predecessor or at its release: `forward` and `backward` long on either stage.
PredictedPasses TwoStagePasses(Time forward, Time backward, const std::vector<Time>& release) {
  PredictedPasses out;
  out.nodes = {{0, 3}, {1, 2}};
  out.ready.assign(4, 0);
  out.start.assign(4, 0);
  out.end.assign(4, 0);
  out.backward = {false, false, true, true};
  Time at = 0;
  for (const int u : {0, 1, 2, 3}) {
    out.ready[u] = at;
    out.start[u] = std::max(at, release.empty() ? Time() : release[static_cast<size_t>(u)]);
    out.end[u] = out.start[u] + (out.backward[u] ? backward : forward);
    at = out.end[u];
  }
  return out;
}

TEST_CASE("range rings: under ZeRO-3 a stage holding two ranges waits for the second at its first layer",
          "[planner][pipelines][ranges][zero]") {
  // The simulator's closed form (tests/sim/executor/executor_pipelines_test.cc): "one" holds layers 0 and 1,
  // 2 microbatches of F = 2f + 2G, B = 4f + 2G; "two" holds layer 0 on stage 0 and layer 1 on stage 1, one
  // microbatch of F = 2f + G, B = 4f + G a stage. One reaches layer 1 f + G into a forward, layer 0 2f + G
  // into a backward: its passes end at 3f + 2G, 10f + 4G, 14f + 6G and 18f + 8G.
  const Time f = MillisecondsToTime(10), G = MillisecondsToTime(3);
  const std::vector<ZeroThreeCallRange> ranges = {{{{0, 0}, {1, 0}}, {0, 0}, {2 * f + G, 0}},
                                                  {{{0, 0}, {1, 1}}, {f + G, 0}, {0, 0}}};
  std::vector<std::vector<Time>> release(2);
  std::vector<PredictedPasses> passes(2);
  int rounds = 0;
  do {
    passes[0] = OneStagePasses(2, 2 * f + 2 * G, 4 * f + 2 * G, release[0]);
    passes[1] = TwoStagePasses(2 * f + G, 4 * f + G, release[1]);
    for (size_t p = 0; p < 2; ++p) release[p].resize(passes[p].start.size(), Time());
    REQUIRE(++rounds < 100);
  } while (ZeroThreeCallReleases(ranges, passes, release));
  CHECK(passes[0].end == std::vector<Time>{3 * f + 2 * G, 10 * f + 4 * G, 14 * f + 6 * G, 18 * f + 8 * G});
  CHECK(passes[1].end[3] == 12 * f + 4 * G);
  CHECK(passes[1].end[2] == 8 * f + 3 * G);
  // Every call at the pass's start instead (both offsets 0): 18f + 10G, as until session 38.
  const std::vector<ZeroThreeCallRange> at_start = {{{{0, 0}, {1, 0}}, {0, 0}, {0, 0}},
                                                    {{{0, 0}, {1, 1}}, {0, 0}, {0, 0}}};
  release.assign(2, {});
  rounds = 0;
  do {
    passes[0] = OneStagePasses(2, 2 * f + 2 * G, 4 * f + 2 * G, release[0]);
    passes[1] = TwoStagePasses(2 * f + G, 4 * f + G, release[1]);
    for (size_t p = 0; p < 2; ++p) release[p].resize(passes[p].start.size(), Time());
    REQUIRE(++rounds < 100);
  } while (ZeroThreeCallReleases(at_start, passes, release));
  CHECK(passes[0].end.back() == 18 * f + 10 * G);
}

}  // namespace
}  // namespace hetsim::planner
