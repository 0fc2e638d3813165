// What-if faults in the executor against hand-computed outcomes: a straggler on the bottleneck stage
// of an equal-stage 1F1B pipeline, a straggler window starting mid-task, a degraded link, a flapping
// link, a GPU failure (prefix of the fault-free run, lost work), seeded jitter, faults after the end.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "google/protobuf/text_format.h"
#include "proto/validate_faults.h"
#include "service/driver/resolve_faults.h"
#include "sim/executor/executor.h"
#include "sim/faults/compute_model.h"
#include "sim/faults/fault_set.h"
#include "tests/base/time_io.h"
#include "tests/sim/executor/executor_test_util.h"
#include "traces/chrome_trace.h"
#include "traces/fault_report.h"
#include "traces/metrics.h"
#include "traces/replica_group_report.h"

namespace hetsim::testing {
namespace {

using executor::ExecutorOptions;
using faults::FaultSet;

// `text` checked against `cluster` (the one `setup` was built from), then resolved on its topology.
FaultSet Resolve(const ExecutionSetup& setup, const v1::Cluster& cluster, const std::string& text) {
  v1::Faults faults;
  REQUIRE(google::protobuf::TextFormat::ParseFromString(text, &faults));
  const absl::Status valid = hetsim::proto::ValidateFaults(faults, cluster, "test-faults.pbtxt");
  INFO(valid.message());
  REQUIRE(valid.ok());
  auto set =
      hetsim::driver::ResolveFaults(faults, *setup.topology, hetsim::driver::SourcesOf(faults, "test-faults.pbtxt"));
  INFO(set.status().message());
  REQUIRE(set.ok());
  return *std::move(set);
}

ExecutionResult RunWith(const ExecutionSetup& setup, const FaultSet& faults, bool record_flows = false) {
  ExecutorOptions options;
  options.faults = &faults;
  options.record_flows = record_flows;
  return MakeRun(setup, options);
}

// Four equal stages (F 1 ms, B 2 ms), one GPU each (global GPUs 0-3), free transfers, 1F1B.
const v1::Cluster& EqualPipelineCluster() {
  static const v1::Cluster cluster = TwoIslandCluster(4, 1, 10, 0);
  return cluster;
}

std::unique_ptr<ExecutionSetup> EqualPipeline(int microbatches) {
  const v1::Cluster& cluster = EqualPipelineCluster();
  std::vector<StageSpec> stages;
  for (int n = 0; n < 4; ++n) stages.push_back({"fast", n, 0, 1, 1, 1, 1.0, 2.0, 1});
  return MakeSetup(MakeInputs(cluster, MakePlan(stages, microbatches, v1::ONE_F_ONE_B, 0)), NetworkMode::kMaxMinFair);
}

}  // namespace

TEST_CASE("faults: a 2x straggler on the last stage of an equal 1F1B pipeline adds m (f + b)", "[faults]") {
  // S = 4 stages, m = 8 microbatches, f = 1 ms, b = 2 ms, transfers free. Fault-free 1F1B:
  // (m + S - 1)(f + b) = 11 x 3 = 33 ms. With the last stage twice as slow (f' = 2, b' = 4) it is the
  // bottleneck: the first forward reaches it after (S - 1) f = 3 ms, it then runs its m F/B pairs back
  // to back (the faster stages upstream always have the next forward ready: the 1F1B warm-up keeps
  // them ahead), m (f' + b') = 48 ms, and the last backward drains through (S - 1) b = 6 ms:
  // 3 + 48 + 6 = 57 ms, i.e. exactly m (f + b) (factor - 1) = 24 ms more.
  const auto setup = EqualPipeline(8);
  const ExecutionResult clean = MakeRun(*setup);
  REQUIRE(clean.pipeline_end == 33 * kMillisecond);
  const FaultSet faults = Resolve(*setup, EqualPipelineCluster(), "faults { gpu: 3 kind: SLOW factor: 2 }");
  const ExecutionResult slow = RunWith(*setup, faults);
  CHECK(slow.pipeline_end == 57 * kMillisecond);
  CHECK(slow.pipeline_end - clean.pipeline_end == 8 * 3 * kMillisecond);
  // Every one of the stage's 16 tasks was slowed by its own length (F +1 ms, B +2 ms): 8 x 3 ms;
  // its optimizer step too.
  const auto& effect = slow.faults.effects[0];
  CHECK(effect.tasks_slowed == 17);
  CHECK(effect.task_delay == 24 * kMillisecond + setup->stages[3].optimizer_time);
  CHECK(effect.stages == std::vector<int>{3});
  CHECK_FALSE(slow.faults.failed);
}

TEST_CASE("faults: a node slowdown equals the slowdown of its GPUs", "[faults]") {
  const auto setup = EqualPipeline(8);
  const ExecutionResult by_gpu =
      RunWith(*setup, Resolve(*setup, EqualPipelineCluster(), "faults { gpu: 3 kind: SLOW factor: 2 }"));
  const ExecutionResult by_node = RunWith(
      *setup,
      Resolve(*setup, EqualPipelineCluster(), "faults { node { island: \"fast\" node: 3 } kind: SLOW factor: 2 }"));
  CHECK(by_node.node_finish == by_gpu.node_finish);
  CHECK(by_node.iteration_time == by_gpu.iteration_time);
}

TEST_CASE("faults: a straggler window stretches only the part of a task inside it", "[faults]") {
  // The rule (docs/faults.md): a task progresses at the GPU's speed at every instant. Stage 0's first
  // forward runs [0, 1 ms). A 3x slowdown on GPU 0 during [0.5, 0.75) ms: 0.5 ms of work before it,
  // 0.25 ms of window doing 0.25 / 3 ms of work, then the remaining 0.5 - 0.08333 ms at full speed:
  // the forward ends at 1 ms + 0.25 ms x (1 - 1/3) = 1.1666... ms.
  const auto setup = EqualPipeline(1);
  const ExecutionResult r = RunWith(
      *setup,
      Resolve(*setup, EqualPipelineCluster(), "faults { gpu: 0 kind: SLOW factor: 3 at_ms: 0.5 duration_ms: 0.25 }"));
  const int f0 = setup->dag->Forward(0, 0);
  CHECK(r.node_start[f0] == 0);
  CHECK(AbsTime(r.node_finish[f0] - (kMillisecond + kMillisecond / 6)) <= 1_ps);
  // A task that starts inside the window and outlives it: 2x during [0, 0.5) ms does 0.25 ms of F0's
  // work, the other 0.75 ms run at full speed: F0 ends at 1.25 ms, and with one microbatch everything
  // after it moves by 0.25 ms.
  const ExecutionResult early = RunWith(
      *setup, Resolve(*setup, EqualPipelineCluster(), "faults { gpu: 0 kind: SLOW factor: 2 duration_ms: 0.5 }"));
  CHECK(early.node_finish[f0] == kMillisecond + kMillisecond / 4);
  CHECK(early.pipeline_end == MakeRun(*setup).pipeline_end + kMillisecond / 4);
}

namespace {

// Stage 0 on the fast island's GPU 0, stage 1 on the slow island's GPU 1; 10^6 bytes per microbatch
// cross the single 10 Gb/s Ethernet link (1.25e9 B/s: 0.8 ms) forward, and back. No latency.
const v1::Cluster& EthernetCluster() {
  static const v1::Cluster cluster = TwoIslandCluster(1, 1, 10, 0);
  return cluster;
}

std::unique_ptr<ExecutionSetup> TwoStagesOverEthernet(NetworkMode mode) {
  const v1::Cluster& cluster = EthernetCluster();
  return MakeSetup(
      MakeInputs(cluster, MakePlan({{"fast", 0, 0, 1, 1, 1, 1.0, 2.0, 1}, {"slow", 0, 0, 1, 1, 1, 1.0, 2.0, 1}}, 1,
                                   v1::ONE_F_ONE_B, 1000000)),
      mode);
}

}  // namespace

TEST_CASE("faults: a link degraded 2x from t = 0 doubles a transfer's byte time", "[faults]") {
  for (NetworkMode mode : {NetworkMode::kMaxMinFair, NetworkMode::kContentionFree}) {
    const auto setup = TwoStagesOverEthernet(mode);
    REQUIRE(setup->boundaries[0].forward_time == 8 * kMillisecond / 10);
    const ExecutionResult clean = MakeRun(*setup);
    // F 1 + CF 0.8 + F 1 + B 2 + CB 0.8 + B 2 = 7.6 ms.
    REQUIRE(clean.pipeline_end == 76 * kMillisecond / 10);
    for (const char* target : {"inter_island_link: 0", "link_class: \"ETHERNET\""}) {
      INFO(target);
      const ExecutionResult slow = RunWith(
          *setup, Resolve(*setup, EthernetCluster(), std::string("faults { ") + target + " kind: SLOW factor: 2 }"));
      // Each direction's 0.8 ms becomes 1.6 ms.
      CHECK(slow.pipeline_end == clean.pipeline_end + 2 * 8 * kMillisecond / 10);
    }
    // One direction only, by name: the forward transfer doubles, the backward does not.
    const std::string name = "fast/gateway0->slow/gateway0";
    const ExecutionResult one =
        RunWith(*setup, Resolve(*setup, EthernetCluster(), "faults { link: \"" + name + "\" kind: SLOW factor: 2 }"));
    CHECK(one.pipeline_end == clean.pipeline_end + 8 * kMillisecond / 10);
  }
}

TEST_CASE("faults: a flapping link delays a transfer by the down time it overlaps", "[faults]") {
  for (NetworkMode mode : {NetworkMode::kMaxMinFair, NetworkMode::kContentionFree}) {
    const auto setup = TwoStagesOverEthernet(mode);
    const ExecutionResult clean = MakeRun(*setup);
    // The forward transfer runs [1, 1.8) ms. The link goes down at 1.2 ms for 0.3 ms (then every
    // 10 ms, after the iteration): the transfer stalls 0.3 ms, and so does everything after it.
    // (Within 2 ps: remaining bytes are doubles, and transfer times round up to the picosecond.)
    const ExecutionResult flap =
        RunWith(*setup, Resolve(*setup, EthernetCluster(),
                                "faults { inter_island_link: 0 kind: FLAP at_ms: 1.2 period_ms: 10 down_ms: 0.3 }"));
    CHECK(AbsTime(flap.pipeline_end - (clean.pipeline_end + 3 * kMillisecond / 10)) <= 2_ps);
    CHECK(flap.faults.effects[0].downs == 1);
    CHECK(flap.faults.effects[0].down_time == 3 * kMillisecond / 10);
    // Down periods that miss every transfer change nothing. Fault-free, the link carries CF0 during
    // [1, 1.8) ms and CB0 during [4.8, 5.6) ms; down for 0.5 ms every 2 ms from 0.1 ms: [0.1, 0.6),
    // [2.1, 2.6), [4.1, 4.6), [6.1, 6.6), ... all while it is idle.
    const ExecutionResult idle =
        RunWith(*setup, Resolve(*setup, EthernetCluster(),
                                "faults { inter_island_link: 0 kind: FLAP at_ms: 0.1 period_ms: 2 down_ms: 0.5 }"));
    CHECK(idle.pipeline_end == clean.pipeline_end);
    CHECK(idle.faults.effects[0].downs >= 4);
  }
}

TEST_CASE("faults: a GPU failure stops the iteration at its time and keeps the fault-free prefix", "[faults]") {
  const auto setup = EqualPipeline(8);
  const ExecutionResult clean = MakeRun(*setup);
  const Time t = 9 * kMillisecond + kMillisecond / 2;
  const ExecutionResult failed =
      RunWith(*setup, Resolve(*setup, EqualPipelineCluster(), "faults { gpu: 3 kind: FAIL at_ms: 9.5 }"), true);
  REQUIRE(failed.faults.failed);
  CHECK(failed.faults.failed_at == t);
  CHECK(failed.faults.failed_fault == 0);
  CHECK(failed.iteration_time == t);
  // Before the failure the run is the fault-free one; what was running is cut at t; nothing else ran.
  int completed = 0, interrupted = 0, never = 0;
  for (int id = 0; id < setup->dag->num_nodes(); ++id) {
    INFO("node " << id);
    if (clean.node_finish[id] < t) {
      CHECK(failed.node_start[id] == clean.node_start[id]);
      CHECK(failed.node_finish[id] == clean.node_finish[id]);
      ++completed;
    } else if (clean.node_start[id] < t) {
      CHECK(failed.node_start[id] == clean.node_start[id]);
      CHECK(failed.node_finish[id] == t);
      ++interrupted;
    } else {
      CHECK(failed.node_start[id] == -1_ps);
      CHECK(failed.node_finish[id] == -1_ps);
      ++never;
    }
  }
  CHECK(static_cast<int>(failed.interrupted.size()) == interrupted);
  // The last stage runs F0 [3, 4), B0 [4, 6), F1 [6, 7), B1 [7, 9), F2 [9, 10): two microbatches done,
  // F2 cut at 9.5 ms.
  const auto& dag = *setup->dag;
  for (int mb = 0; mb < 2; ++mb) {
    CHECK(failed.node_finish[dag.Forward(mb, 3)] <= 9 * kMillisecond);
    CHECK(failed.node_finish[dag.Backward(mb, 3)] <= 9 * kMillisecond);
  }
  CHECK(failed.node_start[dag.Forward(2, 3)] == 9 * kMillisecond);
  CHECK(failed.node_finish[dag.Forward(2, 3)] == t);
  CHECK(failed.node_start[dag.Backward(2, 3)] == -1_ps);
  CHECK(never > 0);
  CHECK(failed.optimizer_start[0] == -1_ps);
  // No microbatch's backward reached stage 0 by 9.5 ms (B0 there starts at 10 ms).
  const std::string lost = hetsim::traces::LostWork(*setup, failed);
  CHECK_THAT(lost, Catch::StartsWith("0 of 8 microbatches finished (8 lost, 8 samples)"));
  CHECK_THAT(lost, Catch::Contains("stage 3: 2 of 8 forwards, 2 of 8 backwards (1 cut at the failure)"));
  CHECK_THAT(lost, Catch::Contains("not completed on stages 0, 1, 2, 3"));
  CHECK(hetsim::traces::LostWork(*setup, clean).empty());
}

TEST_CASE("faults: a link failure while flows stall on a down link ends cleanly", "[faults]") {
  const auto setup = TwoStagesOverEthernet(NetworkMode::kMaxMinFair);
  // Down from 1.2 ms for 5 ms of every 10; the link fails at 2 ms, the forward transfer stalled.
  const ExecutionResult r = RunWith(*setup, Resolve(*setup, EthernetCluster(), R"pb(
    faults { inter_island_link: 0 kind: FLAP at_ms: 1.2 period_ms: 10 down_ms: 5 }
    faults { link_class: "ETHERNET" kind: FAIL at_ms: 2 })pb"));
  REQUIRE(r.faults.failed);
  CHECK(r.faults.failed_fault == 1);
  CHECK(r.iteration_time == 2 * kMillisecond);
  CHECK(r.faults.effects[0].down_time == 8 * kMillisecond / 10);
  CHECK(r.interrupted.size() == 1);  // CF0
}

TEST_CASE("faults: faults after the iteration change nothing", "[faults]") {
  const auto setup = EqualPipeline(4);
  const ExecutionResult clean = MakeRun(*setup);
  const ExecutionResult late = RunWith(*setup, Resolve(*setup, EqualPipelineCluster(), R"pb(
    faults { gpu: 1 kind: FAIL at_ms: 1000 }
    faults { link_class: "NVLINK" kind: FLAP at_ms: 500 period_ms: 1 down_ms: 0.5 }
    faults { gpu: 2 kind: SLOW factor: 5 at_ms: 900 })pb"));
  CHECK_FALSE(late.faults.failed);
  CHECK(late.node_finish == clean.node_finish);
  CHECK(late.iteration_time == clean.iteration_time);
  CHECK(late.events == clean.events + 0);  // pending fault events are cancelled, never run
  for (const auto& e : late.faults.effects) CHECK_FALSE(e.started);
}

TEST_CASE("faults: jitter is reproducible from its seed, and spread 0 is no jitter", "[faults]") {
  const auto setup = EqualPipeline(16);
  const ExecutionResult clean = MakeRun(*setup);
  const std::string jitter = "jitter { seed: 7 distribution: LOGNORMAL spread: 0.1 }";
  const ExecutionResult a = RunWith(*setup, Resolve(*setup, EqualPipelineCluster(), jitter));
  const ExecutionResult b = RunWith(*setup, Resolve(*setup, EqualPipelineCluster(), jitter));
  CHECK(a.node_start == b.node_start);
  CHECK(a.node_finish == b.node_finish);
  CHECK(a.iteration_time == b.iteration_time);
  CHECK(a.node_finish != clean.node_finish);
  const ExecutionResult other = RunWith(
      *setup, Resolve(*setup, EqualPipelineCluster(), "jitter { seed: 8 distribution: LOGNORMAL spread: 0.1 }"));
  CHECK(other.node_finish != a.node_finish);
  const ExecutionResult none =
      RunWith(*setup, Resolve(*setup, EqualPipelineCluster(), "jitter { seed: 7 distribution: UNIFORM spread: 0 }"));
  CHECK(none.node_finish == clean.node_finish);
  CHECK(none.iteration_time == clean.iteration_time);
  // Only the listed GPUs jitter: stage 0 (GPU 0) alone.
  const ExecutionResult only = RunWith(
      *setup, Resolve(*setup, EqualPipelineCluster(), "jitter { seed: 7 distribution: NORMAL spread: 0.1 gpus: 0 }"));
  for (int id : setup->dag->stage_compute_order()[1]) {
    CHECK(only.node_finish[id] - only.node_start[id] == clean.node_finish[id] - clean.node_start[id]);
  }
}

// One stage, 4 microbatches of 1F1B: an A100 group (peak made 250 TFLOP/s, GPU 0) computing 1 sample of each
// microbatch beside a V100 group (125 TFLOP/s, GPU 2) computing 2, one layer of 100 GFLOP a sample: the A100's
// forward takes fa = 0.4 ms, the V100's fv = 1.6 ms (backward twice), so the A100 has 1.2 ms of slack a forward.
const v1::Cluster& MixedStageCluster() {
  static const v1::Cluster cluster = [] {
    v1::Cluster c = TwoIslandCluster(1, 2, 10, 0);
    c.mutable_gpu_types(0)->set_peak_tflops_fp16(250);
    return c;
  }();
  return cluster;
}

std::unique_ptr<ExecutionSetup> MixedStage() {
  v1::Plan plan = MakePlan({{"fast", 0, 0, 1, 1, 1, 1.0, 2.0, 1}}, 4, v1::ONE_F_ONE_B, 1000, 3);
  plan.mutable_stages(0)->clear_measured_forward_ms();
  plan.mutable_stages(0)->clear_measured_backward_ms();
  SetReplicaGroups(*plan.mutable_stages(0), {{"fast", 0, 1, 1, 1, 1}, {"slow", 0, 1, 1, 1, 2}});
  return MakeSetup(MakeInputs(MixedStageCluster(), plan), NetworkMode::kMaxMinFair);
}

TEST_CASE("faults: a straggler in a mixed stage's faster replica group delays it only past the slowest group's end",
          "[faults][replicas]") {
  const v1::Cluster& cluster = MixedStageCluster();
  const auto setup = MixedStage();
  const Time fa = 400 * kMicrosecond, fv = 1600 * kMicrosecond;
  REQUIRE(setup->virtual_stages[0].replica_groups[0].cost.forward_time == fa);
  REQUIRE(setup->virtual_stages[0].replica_groups[1].cost.forward_time == fv);
  const ExecutionResult clean = MakeRun(*setup);
  REQUIRE(clean.pipeline_end == 4 * 3 * fv);

  // The A100 at half speed (0.8 ms a forward) still ends before the V100: nothing moves, nothing is
  // credited (the stage's task used to run the V100's work at the A100's speed: 4 x 3 x 2 fv).
  const FaultSet half = Resolve(*setup, cluster, "faults { gpu: 0 kind: SLOW factor: 2 }");
  const ExecutionResult a100_half = RunWith(*setup, half);
  CHECK(a100_half.pipeline_end == clean.pipeline_end);
  CHECK(a100_half.iteration_time == clean.iteration_time);
  CHECK(a100_half.faults.effects[0].tasks_slowed == 0);
  CHECK(a100_half.faults.effects[0].task_delay == 0);
  // At a fifth of its speed (2 ms a forward) the A100 is the slowest: every pass is 5 fa, 4 x 3 x 5 fa in all,
  // and each of the 8 passes is credited its delay past the V100's, 4 x 3 x (5 fa - fv).
  const FaultSet fifth = Resolve(*setup, cluster, "faults { gpu: 0 kind: SLOW factor: 5 }");
  const ExecutionResult a100_fifth = RunWith(*setup, fifth);
  CHECK(a100_fifth.pipeline_end == 4 * 3 * 5 * fa);
  CHECK(a100_fifth.faults.effects[0].task_delay >= 4 * 3 * (5 * fa - fv));
  // The V100 at half speed delays every pass by its own length: 4 x 3 x 2 fv.
  const FaultSet v100_half = Resolve(*setup, cluster, "faults { gpu: 2 kind: SLOW factor: 2 }");
  CHECK(RunWith(*setup, v100_half).pipeline_end == 4 * 3 * 2 * fv);
}

TEST_CASE("faults: a mixed stage's replica groups are busy and idle as the faulted run ran them",
          "[faults][replicas]") {
  // The stage above: 4 microbatches, each a forward and a backward (3 f in all) on both groups.
  const v1::Cluster& cluster = MixedStageCluster();
  const auto setup = MixedStage();
  const Time fa = 400 * kMicrosecond, fv = 1600 * kMicrosecond;
  const int64_t passes = 4 * 3;
  const auto groups = [&](const ExecutionResult& r) {
    const v1::Report report = hetsim::traces::BuildReport(*setup, r);
    REQUIRE(report.stages(0).replica_groups_size() == 2);
    return report.stages(0);
  };
  const ExecutionResult clean = MakeRun(*setup);
  CHECK(hetsim::traces::GroupIdle(*setup, clean, 0, 0) == passes * (fv - fa));
  CHECK(hetsim::traces::GroupIdle(*setup, clean, 0, 1) == 0);
  // The V100 at half speed: the A100's idle time grows by exactly the V100's extra time, 4 x 3 x fv, and its
  // busy time stays its own work (it used to read the nominal wait, the V100's delay counted as A100 work).
  const ExecutionResult v100_half = RunWith(*setup, Resolve(*setup, cluster, "faults { gpu: 2 kind: SLOW factor: 2 }"));
  REQUIRE(v100_half.pipeline_end == passes * 2 * fv);
  CHECK(hetsim::traces::GroupIdle(*setup, v100_half, 0, 0) - hetsim::traces::GroupIdle(*setup, clean, 0, 0) ==
        passes * fv);
  CHECK(hetsim::traces::GroupIdle(*setup, v100_half, 0, 1) == 0);
  const v1::StageReport slow = groups(v100_half);
  CHECK(slow.replica_groups(0).idle_ms() == Approx(TimeToMilliseconds(passes * (2 * fv - fa))));
  CHECK(slow.replica_groups(0).compute_busy_ms() == Approx(TimeToMilliseconds(passes * fa)));
  CHECK(slow.replica_groups(1).compute_busy_ms() == Approx(TimeToMilliseconds(passes * 2 * fv)));
  // The A100 at half speed, still inside its slack: its busy time doubles, its idle time shrinks by as much.
  const ExecutionResult a100_half = RunWith(*setup, Resolve(*setup, cluster, "faults { gpu: 0 kind: SLOW factor: 2 }"));
  CHECK(hetsim::traces::GroupIdle(*setup, a100_half, 0, 0) == passes * (fv - 2 * fa));
  CHECK(groups(a100_half).replica_groups(0).compute_busy_ms() == Approx(TimeToMilliseconds(passes * 2 * fa)));
  // eta's loads and the trace's slices read the same: the A100's slice of a pass ends where its own part did.
  const pipeline::IterationFigures figures = hetsim::traces::IterationFiguresOf(*setup, v100_half);
  CHECK(figures.stages[0].replica_groups[0].busy == passes * fa);
  std::vector<bool> traced(setup->topology->num_gpus(), true);
  const std::string trace = hetsim::traces::ChromeTraceJson(*setup, v100_half, traced, {});
  CHECK_THAT(trace, Catch::Contains(absl::StrFormat(R"("name":"F0 s0","cat":"forward","ph":"X","ts":0,"dur":%g,)",
                                                    TimeToMicroseconds(fa))));
  CHECK_THAT(trace, Catch::Contains(absl::StrFormat(R"("wait_ms":%g)", TimeToMilliseconds(2 * fv - fa))));
}

TEST_CASE("faults: report fields, text table and trace instants", "[faults]") {
  const auto setup = EqualPipeline(8);
  const FaultSet faults = Resolve(*setup, EqualPipelineCluster(), R"pb(
    faults { gpu: 3 kind: SLOW factor: 2 }
    faults { gpu: 0 kind: FAIL at_ms: 20 }
    faults { gpu: 1 kind: FAIL at_ms: 30 }
    jitter { seed: 5 distribution: UNIFORM spread: 0.1 })pb");
  const ExecutionResult r = RunWith(*setup, faults, true);
  v1::Report report = hetsim::traces::BuildReport(*setup, r);
  hetsim::traces::AddFaultsToReport(*setup, r, faults, &report);
  REQUIRE(report.faults_size() == 4);  // three faults and the jitter
  CHECK(report.faults(0).fault() == "gpu: 3 kind: SLOW factor: 2");
  CHECK(report.faults(0).description() == "GPU 3 (fast/node3/gpu0) compute x2 from 0 ms");
  CHECK_THAT(report.faults(0).effect(), Catch::Contains("compute tasks of stage 3 took"));
  CHECK(report.faults(1).effect() == "stopped the iteration at 20.000 ms");
  CHECK_THAT(report.faults(2).effect(), Catch::StartsWith("none:"));
  CHECK(report.faults(1).gpus_affected() == 1);
  CHECK(report.faults(1).links_affected() > 0);  // a failed GPU takes its links
  CHECK_THAT(report.faults(3).fault(), Catch::StartsWith("jitter {"));
  CHECK(report.failed());
  CHECK(report.failed_at_ms() == 20);
  CHECK(report.iteration_time_ms() == 20);
  CHECK(report.samples_per_s() == 0);
  CHECK_FALSE(report.lost().empty());
  for (const v1::StageReport& s : report.stages()) {
    CHECK(s.grad_sync_ms() >= 0);
    CHECK(s.idle_ms() >= 0);
    CHECK(s.compute_busy_ms() <= 20);
  }
  const std::string table = hetsim::traces::FormatFaultTable(report);
  CHECK_THAT(table, Catch::Contains("ITERATION FAILED at 20.000 ms"));

  std::vector<bool> traced(setup->topology->num_gpus(), true);
  const std::string trace = hetsim::traces::ChromeTraceJson(*setup, r, traced, {});
  CHECK_THAT(trace, Catch::Contains(R"("name":"fault 0 starts","cat":"fault","ph":"i","s":"g","ts":0,)"));
  CHECK_THAT(trace, Catch::Contains(R"("name":"fault 1 fails","cat":"fault","ph":"i","s":"g","ts":20000,)"));
  CHECK_THAT(trace, Catch::Contains(R"("name":"iteration failed")"));
  CHECK(trace.find("\"ts\":-") == std::string::npos);
  CHECK(trace.find("\"dur\":-") == std::string::npos);
  CHECK(trace.find("fault 2") == std::string::npos);  // after the failure: never happened
}

}  // namespace hetsim::testing
