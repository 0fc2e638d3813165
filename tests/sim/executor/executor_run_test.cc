// The executor against closed forms: without contention the simulated pipeline equals the DAG's
// longest path exactly (every schedule, with resharding and real flows); fill-and-drain bubbles;
// how much communication Eager-1F1B and H-1F1B hide; HAPT's case-study warm-ups; activation memory
// of GPipe and 1F1B; contention on a shared slow link; gradient synchronisation after the pipeline.
#include <catch2/catch.hpp>

#include <algorithm>
#include <deque>
#include <string>
#include <vector>

#include "proto/inputs.h"
#include "sim/collectives/algorithms.h"
#include "sim/collectives/execution.h"
#include "sim/collectives/simulate.h"
#include "sim/engine/simulator.h"
#include "sim/executor/executor.h"
#include "sim/executor/setup.h"
#include "sim/pipeline/dag.h"
#include "tests/base/time_io.h"
#include "tests/service/driver/build_topology.h"
#include "tests/sim/executor/executor_test_util.h"

namespace hetsim::testing {
namespace {

using executor::MemoryTimeline;
using pipeline::AnalyzeLongestPath;
using pipeline::NodeId;

// Three stages with different (TP, DP) layouts on both islands: every boundary reshards.
v1::Plan ReshardingPlan(v1::Schedule schedule) {
  const int v = schedule == v1::INTERLEAVED_1F1B ? 2 : 1;
  return MakePlan({{"slow", 0, 0, 4, 2, 2, 3.0, 6.0, 2},
                   {"fast", 0, 0, 4, 4, 1, 2.0, 4.5, 2},
                   {"fast", 1, 0, 4, 1, 4, 2.5, 5.0, 2}},
                  12, schedule, 3000000, 4, v);
}

void RequireMatchesLongestPath(const ExecutionSetup& setup, const ExecutionResult& run) {
  const auto path = AnalyzeLongestPath(*setup.dag, setup.durations);
  REQUIRE(run.pipeline_end == path.iteration_time);
  for (int id = 0; id < setup.dag->num_nodes(); ++id) {
    INFO("node " << id);
    REQUIRE(run.node_start[id] == path.earliest_start[id]);
  }
}

TEST_CASE("executor: without contention the pipeline equals the DAG's longest path, every schedule", "[executor]") {
  const v1::Cluster cluster = TwoIslandCluster(2, 4, 10, 2000);
  for (v1::Schedule schedule : {v1::GPIPE, v1::ONE_F_ONE_B, v1::EAGER_1F1B, v1::H_1F1B, v1::INTERLEAVED_1F1B}) {
    INFO("schedule " << v1::Schedule_Name(schedule));
    const auto in = MakeInputs(cluster, ReshardingPlan(schedule));
    const auto setup = MakeSetup(in, NetworkMode::kContentionFree);
    const ExecutionResult run = MakeRun(*setup);
    REQUIRE(run.pipeline_end > 0);
    RequireMatchesLongestPath(*setup, run);
    REQUIRE(run.iteration_time >= run.pipeline_end);

    // Under max-min sharing, contention can only delay nodes.
    const auto contended = MakeSetup(in, NetworkMode::kMaxMinFair);
    const ExecutionResult shared = MakeRun(*contended);
    REQUIRE(shared.pipeline_end >= AnalyzeLongestPath(*contended->dag, contended->durations).iteration_time);
  }
}

TEST_CASE("executor: the bundled 512-GPU plan equals its longest path without contention", "[executor]") {
  auto in = hetsim::proto::LoadPlanInputs(HETSIM_SOURCE_DIR "/examples/plan-512gpu.pbtxt",
                                          HETSIM_SOURCE_DIR "/examples/cluster-512gpu.pbtxt");
  INFO(in.status().message());
  REQUIRE(in.ok());
  const auto setup = MakeSetup(*in, NetworkMode::kContentionFree);
  REQUIRE(setup->num_gpus() == 512);
  const ExecutionResult run = MakeRun(*setup);
  RequireMatchesLongestPath(*setup, run);
  // Every stage synchronises gradients over 8 replicas after (or during) its last backward.
  REQUIRE(run.grad_syncs.size() >= 8 * 1);
  REQUIRE(run.iteration_time > run.pipeline_end);
}

TEST_CASE("executor: equal stages and free communication fill and drain in (m + p - 1)(f + b)", "[executor]") {
  const v1::Cluster cluster = TwoIslandCluster(4, 1, 10, 0);
  std::vector<StageSpec> stages;
  for (int n = 0; n < 4; ++n) stages.push_back({"fast", n, 0, 1, 1, 1, 1.0, 2.0, 1});
  for (v1::Schedule schedule : {v1::GPIPE, v1::ONE_F_ONE_B}) {
    for (int m : {1, 4, 8, 13}) {
      INFO(v1::Schedule_Name(schedule) << " m=" << m);
      const auto setup = MakeSetup(MakeInputs(cluster, MakePlan(stages, m, schedule, 0)), NetworkMode::kMaxMinFair);
      const ExecutionResult run = MakeRun(*setup);
      REQUIRE(run.pipeline_end == (m + 4 - 1) * 3 * kMillisecond);
    }
  }
}

// Stage 0 on the slow island, stage 1 across one Ethernet link of 8 Gb/s (1 byte per ns), no
// latency: c = bytes / 1e9 s. f = 1 ms, b = 2 ms.
struct TwoStage {
  std::unique_ptr<ExecutionSetup> setup;
  ExecutionResult run;
  Time c;
};
TwoStage RunTwoStage(v1::Schedule schedule, double c_ms) {
  const v1::Cluster cluster = TwoIslandCluster(1, 1, 8, 0);
  const auto bytes = static_cast<uint64_t>(c_ms * 1e6);
  auto setup = MakeSetup(
      MakeInputs(cluster, MakePlan({{"slow", 0, 0, 1, 1, 1, 1.0, 2.0, 1}, {"fast", 0, 0, 1, 1, 1, 1.0, 2.0, 1}}, 48,
                                   schedule, bytes)),
      NetworkMode::kMaxMinFair);
  ExecutionResult run = MakeRun(*setup);
  const Time c = setup->boundaries[0].forward_time;
  return {std::move(setup), std::move(run), c};
}

// Spacing of stage 0's forwards K apart in the steady phase (HAPT Lemma 2).
Time KBlock(const TwoStage& t, int K) {
  const auto& dag = *t.setup->dag;
  const int m = dag.num_microbatches();
  Time gap = t.run.node_start[dag.Forward(m / 2 + K, 0)] - t.run.node_start[dag.Forward(m / 2, 0)];
  for (int i = m / 4; i + K < 3 * m / 4; ++i) {
    REQUIRE(t.run.node_start[dag.Forward(i + K, 0)] - t.run.node_start[dag.Forward(i, 0)] == gap);
  }
  return gap;
}

TEST_CASE("executor: Eager-1F1B hides transfers up to (f+b)/2, H-1F1B up to f+b", "[executor]") {
  const Time fb = 3 * kMillisecond;
  SECTION("Eager-1F1B: K = 3") {
    for (double c_ms : {0.5, 1.2, 1.5}) {
      const TwoStage t = RunTwoStage(v1::EAGER_1F1B, c_ms);
      INFO("c = " << t.c);
      REQUIRE(t.setup->dag->schedule().warmup_forwards[0] == 3);
      REQUIRE(KBlock(t, 3) == 3 * fb);  // bubble-free steady phase
    }
    for (double c_ms : {1.6, 2.0, 2.9}) {
      const TwoStage t = RunTwoStage(v1::EAGER_1F1B, c_ms);
      INFO("c = " << t.c);
      REQUIRE(KBlock(t, 3) == 2 * (fb + t.c));  // the round trip dominates: stalls
      REQUIRE(KBlock(t, 3) > 3 * fb);
    }
  }
  SECTION("H-1F1B: K = 1 + delta from Eq. 2") {
    for (double c_ms : {1.2, 2.0, 2.9, 3.0}) {
      const TwoStage t = RunTwoStage(v1::H_1F1B, c_ms);
      const int K = t.setup->dag->schedule().warmup_forwards[0];
      INFO("c = " << t.c << " K = " << K);
      REQUIRE(K == (t.c <= fb / 2 ? 3 : 4));
      REQUIRE(KBlock(t, K) == K * fb);  // bubble-free up to c = f + b
    }
    // Beyond f + b nothing hides the transfer: the round trip, or the link itself (one transfer
    // after another in each direction), sets the pace.
    const TwoStage beyond = RunTwoStage(v1::H_1F1B, 3.5);
    REQUIRE(KBlock(beyond, 4) == std::max(2 * (fb + beyond.c), 4 * beyond.c));
    REQUIRE(KBlock(beyond, 4) > 4 * fb);
  }
}

TEST_CASE("executor: HAPT case study warm-ups {3,2,1}, {5,3,1}, {5,2,1}", "[executor]") {
  // Stage 0 -> 1 over 8 Gb/s Ethernet (c = 2 ms, in ((f+b)/2, f+b]), 1 -> 2 over InfiniBand (c = 2.7% of
  // t_max: below eps t_max with the case study's eps = 0.1, above the default 0.01).
  const v1::Cluster cluster = TwoIslandCluster(2, 1, 8, 0);
  const std::vector<StageSpec> stages = {
      {"slow", 0, 0, 1, 1, 1, 1.0, 2.0, 1}, {"fast", 0, 0, 1, 1, 1, 1.0, 2.0, 1}, {"fast", 1, 0, 1, 1, 1, 1.0, 2.0, 1}};
  auto warmups = [&](v1::Schedule schedule) {
    v1::Plan plan = MakePlan(stages, 16, schedule, 2000000);
    plan.set_h1f1b_epsilon(0.1);
    const auto setup = MakeSetup(MakeInputs(cluster, plan), NetworkMode::kMaxMinFair);
    return setup->dag->schedule().warmup_forwards;
  };
  REQUIRE(warmups(v1::ONE_F_ONE_B) == std::vector<int>{3, 2, 1});
  REQUIRE(warmups(v1::EAGER_1F1B) == std::vector<int>{5, 3, 1});
  REQUIRE(warmups(v1::H_1F1B) == std::vector<int>{5, 2, 1});
}

TEST_CASE("executor: GPipe holds m microbatches' activations, 1F1B at most S - i", "[executor]") {
  const v1::Cluster cluster = TwoIslandCluster(4, 1, 10, 1000);
  std::vector<StageSpec> stages;
  for (int n = 0; n < 4; ++n) stages.push_back({"fast", n, 0, 1, 1, 1, 1.0, 2.0, 1});
  const int m = 10;
  for (v1::Schedule schedule : {v1::GPIPE, v1::ONE_F_ONE_B}) {
    const auto setup = MakeSetup(MakeInputs(cluster, MakePlan(stages, m, schedule, 100000)), NetworkMode::kMaxMinFair);
    const ExecutionResult run = MakeRun(*setup);
    for (int s = 0; s < 4; ++s) {
      const auto& mem = setup->stages[s].cost.memory;
      REQUIRE(mem.activation_bytes_per_microbatch > 0);
      int64_t peak = 0;
      for (const auto& [t, bytes] : MemoryTimeline(*setup, run, s)) peak = std::max(peak, bytes);
      const int64_t in_flight = (peak - mem.ModelStateBytes()) / mem.activation_bytes_per_microbatch;
      INFO(v1::Schedule_Name(schedule) << " stage " << s);
      REQUIRE(in_flight == (schedule == v1::GPIPE ? m : 4 - s));
      REQUIRE(MemoryTimeline(*setup, run, s).back().second == mem.ModelStateBytes());  // all freed
    }
  }
}

TEST_CASE("executor: a transfer over a slow link is slower when two flows share it", "[executor]") {
  // Two data-parallel replicas on each side of one 10 Gb/s Ethernet link.
  const v1::Cluster cluster = TwoIslandCluster(1, 2, 10, 1000);
  const auto in =
      MakeInputs(cluster, MakePlan({{"slow", 0, 0, 2, 1, 2, 1.0, 2.0, 1}, {"fast", 0, 0, 2, 1, 2, 1.0, 2.0, 1}}, 8,
                                   v1::ONE_F_ONE_B, 5000000, 2));
  const auto alone = MakeSetup(in, NetworkMode::kContentionFree);
  const auto shared = MakeSetup(in, NetworkMode::kMaxMinFair);
  REQUIRE(alone->boundaries[0].forward_flows.size() == 2);
  const Time t_alone = alone->boundaries[0].forward_time;
  const Time t_shared = shared->boundaries[0].forward_time;
  REQUIRE(t_shared > t_alone);
  // The Ethernet link dominates: sharing it doubles the transfer (latencies aside).
  REQUIRE(TimeToPicosecondsDouble(t_shared) == Approx(2.0 * TimeToPicosecondsDouble(t_alone)).epsilon(0.01));
  REQUIRE(alone->boundaries[0].slowest_link_class == hetsim::topology::LinkClass::kEthernet);
  // In the run, every forward transfer node takes the shared time.
  const ExecutionResult run = MakeRun(*shared);
  const auto& dag = *shared->dag;
  for (int i = 0; i < 8; ++i) {
    const int id = dag.CommForward(i, 0);
    REQUIRE(run.node_finish[id] - run.node_start[id] >= t_shared);
  }
}

TEST_CASE("executor: a TP collective inside an NVSwitch node takes its isolated time amid other traffic",
          "[executor]") {
  using namespace hetsim::engine;
  using namespace hetsim::network;
  using namespace hetsim::collectives;
  using hetsim::CollectiveOp;
  const v1::Cluster cluster = TwoIslandCluster(2, 4, 10, 1000);
  auto topo = hetsim::testing::BuildTopology(cluster);
  REQUIRE(topo.ok());
  hetsim::topology::Router router(*topo);
  auto request = [](CollectiveOp op, std::vector<int> gpus, int64_t bytes) {
    CollectiveRequest r;
    r.op = op;
    for (int g : gpus) r.gpus.emplace_back(g);
    r.bytes = bytes;
    return r;
  };
  // Fast island GPUs are 0..7 (nodes 0 and 1), the slow island's 8..11.
  const CollectiveRequest tp = request(CollectiveOp::kAllReduce, {0, 1, 2, 3}, 64 << 20);
  auto isolated = SimulateCollective(*topo, router, tp);
  REQUIRE(isolated.ok());

  // The same all-reduce on one network with another node's TP group and two DP groups across nodes.
  const std::vector<CollectiveRequest> others = {request(CollectiveOp::kAllReduce, {4, 5, 6, 7}, 64 << 20),
                                                 request(CollectiveOp::kAllReduce, {0, 4}, 256 << 20),
                                                 request(CollectiveOp::kAllReduce, {1, 5, 9}, 256 << 20)};
  Simulator sim;
  auto network = Network::Create(&sim, NetworkLinks(*topo), NetworkMode::kMaxMinFair);
  REQUIRE(network.ok());
  std::vector<TransferGraph> graphs;
  graphs.reserve(4);
  for (const CollectiveRequest& r : {tp, others[0], others[1], others[2]}) {
    auto choice = ChooseShape(*topo, router, r);
    REQUIRE(choice.ok());
    graphs.push_back(BuildTransferGraph(*topo, r, choice->shape));
  }
  std::deque<CollectiveExecution> runs;
  for (const TransferGraph& g : graphs) {
    runs.emplace_back(network->get(), &router, &g);
    REQUIRE(runs.back().Start(&sim).ok());
  }
  sim.Run();
  REQUIRE(runs[0].done());
  REQUIRE(runs[0].finish_time() - runs[0].start_time() == isolated->time);
  // The cross-node groups did take long enough to overlap it.
  REQUIRE(runs[2].finish_time() > runs[0].finish_time());
}

TEST_CASE("executor: gradient synchronisation runs after the last backward, or overlapped in buckets", "[executor]") {
  const v1::Cluster cluster = TwoIslandCluster(2, 2, 10, 1000);
  v1::Plan plan = MakePlan({{"fast", 0, 0, 2, 1, 2, 1.0, 2.0, 1}, {"fast", 1, 0, 2, 1, 2, 1.0, 2.0, 1}}, 8,
                           v1::ONE_F_ONE_B, 100000, 2);
  {
    const auto setup = MakeSetup(MakeInputs(cluster, plan), NetworkMode::kMaxMinFair);
    const ExecutionResult run = MakeRun(*setup);
    REQUIRE(run.grad_syncs.size() == 2);
    for (const auto& g : run.grad_syncs) {
      REQUIRE(g.start == run.last_backward_end[g.stage]);
      REQUIRE(g.finish > g.start);
      REQUIRE(run.stage_end[g.stage] == g.finish + setup->stages[g.stage].optimizer_time);
    }
    REQUIRE(run.iteration_time == std::max(run.stage_end[0], run.stage_end[1]));
  }
  plan.set_overlap_grad_reduce(true);
  plan.set_grad_bucket_bytes(500000);  // 2 MB of BF16 gradients: 4 buckets
  {
    const auto setup = MakeSetup(MakeInputs(cluster, plan), NetworkMode::kMaxMinFair);
    REQUIRE(setup->stages[0].grad_buckets.size() == 4);
    const ExecutionResult run = MakeRun(*setup);
    REQUIRE(run.grad_syncs.size() == 8);
    for (int s = 0; s < 2; ++s) {
      Time previous = 0;
      for (const auto& g : run.grad_syncs) {
        if (g.stage != s) continue;
        REQUIRE(g.start >= previous);  // buckets in order, one at a time
        previous = g.finish;
      }
      // The first bucket starts during the last backward.
      const auto first =
          std::find_if(run.grad_syncs.begin(), run.grad_syncs.end(), [&](const auto& g) { return g.stage == s; });
      REQUIRE(first->start < run.last_backward_end[s]);
    }
  }
}

// Two stages of 4 layers (1M FP16 parameters each), DP 2 on 2 GPUs, interleaved in 2 chunks.
v1::Plan InterleavedDpPlan() {
  return MakePlan({{"fast", 0, 0, 2, 1, 2, 1.0, 2.0, 4}, {"fast", 1, 0, 2, 1, 2, 1.0, 2.0, 4}}, 8, v1::INTERLEAVED_1F1B,
                  100000, 2, 2);
}

// A plan on the two-island test cluster, set up and run with max-min sharing.
struct TestClusterRun {
  std::unique_ptr<ExecutionSetup> setup;
  ExecutionResult run;
};
TestClusterRun RunOnTestCluster(const v1::Plan& plan) {
  auto setup = MakeSetup(MakeInputs(TwoIslandCluster(2, 2, 10, 1000), plan), NetworkMode::kMaxMinFair);
  ExecutionResult run = MakeRun(*setup);
  return {std::move(setup), std::move(run)};
}

// Stage `stage`'s gradient buckets, or its parameter gathers, in the order they ran.
std::vector<executor::GradSyncRecord> SyncsOf(const ExecutionResult& run, int stage, bool param_gather) {
  std::vector<executor::GradSyncRecord> out;
  for (const auto& g : run.grad_syncs) {
    if (g.stage == stage && g.param_gather == param_gather) out.push_back(g);
  }
  return out;
}

// Interleaving: each model chunk has its own buckets, of its own gradients, ready through the chunk's
// own last backward (Megatron-LM's per-chunk DDP), so every chunk but the last to finish reduces
// while the stage still computes. 4 layers of 1M FP16 parameters a stage, 2 chunks of 2 layers: 4 MB
// of gradients a chunk, two 2 MB buckets each.
TEST_CASE("executor: under interleaving each chunk's gradient buckets follow its own last backward", "[executor]") {
  v1::Plan plan = InterleavedDpPlan();
  plan.set_overlap_grad_reduce(true);
  plan.set_grad_bucket_bytes(2000000);
  const auto [setup, run] = RunOnTestCluster(plan);
  const int S = setup->num_stages();
  for (int s = 0; s < S; ++s) {
    INFO("stage " << s);
    const executor::StageSetup& st = setup->stages[s];
    const auto& order = setup->dag->stage_compute_order()[s];
    REQUIRE(st.grad_buckets.size() == 4);
    REQUIRE(st.bucket_ready.size() == 4);
    // Chunk 1's last operation comes first in the schedule; chunk 0's is the stage's last.
    const NodeId chunk1_end = st.bucket_ready[0].node;
    CHECK(setup->dag->node(chunk1_end).virtual_stage == S + s);
    CHECK(st.bucket_ready[2].node == order.back());
    CHECK(setup->dag->node(order.back()).virtual_stage == s);
    for (int j = 0; j < 4; ++j) {
      CHECK(st.grad_buckets[j].bytes == 2000000);
      CHECK(st.bucket_ready[j].node == (j < 2 ? chunk1_end : order.back()));
      CHECK(st.bucket_ready[j].piece == j % 2);
      CHECK(st.bucket_ready[j].pieces == 2);
    }
    // The first bucket launches half-way through chunk 1's last backward, on a network still free of
    // gradient traffic, long before the stage's last operation starts.
    const std::vector<executor::GradSyncRecord> syncs = SyncsOf(run, s, false);
    REQUIRE(syncs.size() == 4);
    CHECK(syncs[0].start == run.node_start[chunk1_end] + setup->durations[chunk1_end] / 2);
    CHECK(syncs[1].finish <= run.node_start[order.back()]);
    // Chunk 0's buckets fill through the stage's last backward.
    CHECK(syncs[2].start >= run.node_start[order.back()] + setup->durations[order.back()] / 2);
  }
}

// Plan.overlap_param_gather: the ZeRO-1 parameter all-gather of the step before runs at the
// iteration's start, one per model chunk in forward order, and each chunk's first forward waits for
// its own; nothing is gathered after the optimizer step. Stage 0's first forward has no other
// predecessor, so it starts exactly when chunk 0's gather ends.
TEST_CASE("executor: overlapped parameter gathers run at the start, chunk by chunk", "[executor]") {
  v1::Plan plan = InterleavedDpPlan();
  for (v1::Stage& st : *plan.mutable_stages()) st.set_zero_stage(1);
  const Time late = RunOnTestCluster(plan).run.iteration_time;
  plan.set_overlap_param_gather(true);
  const auto [setup, run] = RunOnTestCluster(plan);
  const int S = setup->num_stages();
  for (int s = 0; s < S; ++s) {
    INFO("stage " << s);
    const executor::StageSetup& st = setup->stages[s];
    REQUIRE(st.early_param_gathers.size() == 2);
    // 2 layers of 1M FP16 parameters a chunk.
    for (const auto& g : st.early_param_gathers) CHECK(g.bytes == 4000000);
    const std::vector<executor::GradSyncRecord> gathers = SyncsOf(run, s, true);
    REQUIRE(gathers.size() == 2);
    CHECK(gathers[0].start == 0);
    CHECK(gathers[1].start == gathers[0].finish);
    for (int c = 0; c < 2; ++c) {
      CHECK(gathers[c].step == c);
      CHECK(run.node_start[setup->dag->Forward(0, c * S + s)] >= gathers[c].finish);
    }
    // The step ends the stage: no gather after it.
    CHECK(run.stage_end[s] == run.optimizer_start[s] + st.optimizer_time);
  }
  const Time first_gather_end = run.grad_syncs.front().finish;
  CHECK(run.node_start[setup->dag->Forward(0, 0)] == first_gather_end);
  // The gather moved off the end of the iteration: it ends sooner than with the gather after the step.
  CHECK(run.iteration_time < late);
  // Stage 0's first forward waited for its whole gather: that is sync, and the pipeline starts after
  // it. Stage 1 gathered behind the pipeline fill: nothing exposed.
  CHECK(run.pipeline_start == first_gather_end);
  CHECK(executor::EarlyGatherWait(*setup, run, 0) >= first_gather_end);
  CHECK(executor::EarlyGatherWait(*setup, run, 1) == 0);
  // Without contention the pipeline after its start is the DAG's longest path, as without the gathers.
  const auto free = MakeSetup(MakeInputs(TwoIslandCluster(2, 2, 10, 1000), plan), NetworkMode::kContentionFree);
  const ExecutionResult free_run = MakeRun(*free);
  CHECK(free_run.pipeline_end - free_run.pipeline_start ==
        AnalyzeLongestPath(*free->dag, free->durations).iteration_time);
}

// Plan.grad_reduce_in_fp32 on the FP16 plan above: each chunk's 2M gradients reduce in 8 MB (4 bytes
// each) where the parameters still gather in 4 MB, and the gradient buffers take 4 bytes a parameter.
TEST_CASE("executor: FP32 gradients double the reduction and the buffers, not the parameter gathers", "[executor]") {
  v1::Plan plan = InterleavedDpPlan();
  for (v1::Stage& st : *plan.mutable_stages()) st.set_zero_stage(1);
  const auto [base, base_run] = RunOnTestCluster(plan);
  plan.set_grad_reduce_in_fp32(true);
  const auto [setup, run] = RunOnTestCluster(plan);
  for (int s = 0; s < setup->num_stages(); ++s) {
    INFO("stage " << s);
    const executor::StageSetup& st = setup->stages[s];
    REQUIRE(st.grad_buckets.size() == 2);  // one per chunk
    for (const auto& b : st.grad_buckets) CHECK(b.bytes == 8000000);
    for (const auto& b : base->stages[s].grad_buckets) CHECK(b.bytes == 4000000);
    REQUIRE(st.param_gather.has_value());
    CHECK(st.param_gather->bytes == 8000000);  // the stage's 4M parameters, 2 bytes each
    CHECK(st.param_gather->bytes == base->stages[s].param_gather->bytes);
    CHECK(st.cost.memory.grad_bytes == 2 * base->stages[s].cost.memory.grad_bytes);
    CHECK(st.cost.memory.param_bytes == base->stages[s].cost.memory.param_bytes);
  }
  CHECK(run.iteration_time > base_run.iteration_time);  // more bytes to reduce after the last backward
}

}  // namespace

}  // namespace hetsim::testing
