// Data-parallel pipelines of different shapes (Plan.pipelines): each pipeline its own stages, GPUs and
// batch share; gradients all-reduced per layer range over the GPUs that hold it. Against closed forms
// on ideal clusters (compute = FLOPs / peak, links at their rate, no latency).
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "google/protobuf/text_format.h"
#include "proto/pipeline_plans.h"
#include "service/driver/resolve_faults.h"
#include "sim/executor/layer_range_sync.h"
#include "tests/base/time_io.h"
#include "tests/sim/executor/executor_test_util.h"
#include "traces/chrome_trace.h"
#include "traces/html/run_html.h"
#include "traces/text_report.h"

namespace {

using hetsim::Time;
using hetsim::network::NetworkMode;
using hetsim::testing::MakeInputs;
using hetsim::testing::MakePlan;
using hetsim::testing::MakeSimulation;
using hetsim::testing::TwoIslandCluster;
namespace v1 = hetsim::v1;

constexpr double kPipeFastTflops = 250;  // the "fast" island's A100 at exactly twice the V100's FP16
constexpr double kPipeSlowTflops = 125;
constexpr double kPipeLayerGflop = 100;  // forward GFLOP per sample of every layer (MakePlan)
constexpr double kNvswitchGbps = 2400;   // the fast island's GPU links (TwoIslandCluster)

// `gpus` GPUs on one node per island, the fast GPU type at kPipeFastTflops.
v1::Cluster PipelineCluster(int gpus) {
  v1::Cluster c = TwoIslandCluster(1, gpus, 10, 0);
  c.mutable_gpu_types(0)->set_peak_tflops_fp16(kPipeFastTflops);
  return c;
}

struct PipeStage {
  std::string island;
  int first_gpu = 0;
  int gpus = 1;
  int tp = 1;
  int layers = 1;
};

struct Pipe {
  std::string name;
  uint64_t share = 0;
  uint64_t micro = 0;
  std::vector<PipeStage> stages;
};

// A model of `layers` layers (1e6 FP16 parameters and 100 GFLOP per sample each, modelled compute)
// run by `pipes`, 1F1B; `output_bytes` per sample cross each stage boundary.
v1::Plan PipelinesPlan(int layers, const std::vector<Pipe>& pipes, uint64_t output_bytes = 0) {
  std::vector<hetsim::testing::StageSpec> one(1);
  one[0].island = "fast";
  one[0].layers = layers;
  v1::Plan plan = MakePlan(one, 1, v1::ONE_F_ONE_B, output_bytes);
  plan.clear_stages();
  uint64_t total = 0;
  for (const Pipe& p : pipes) {
    v1::Pipeline* pl = plan.add_pipelines();
    pl->set_name(p.name);
    pl->set_batch_share(p.share);
    pl->set_micro_batch_size(p.micro);
    total += p.share;
    uint32_t first = 0;
    for (const PipeStage& s : p.stages) {
      v1::Stage* st = pl->add_stages();
      st->set_first_layer(first);
      st->set_num_layers(s.layers);
      first += s.layers;
      st->mutable_mesh()->set_island(s.island);
      st->mutable_mesh()->set_node_count(1);
      st->mutable_mesh()->set_first_gpu(s.first_gpu);
      st->mutable_mesh()->set_gpus_per_node(s.gpus);
      st->set_tensor_parallel(s.tp);
    }
  }
  plan.set_global_batch_size(total);
  return plan;
}

// One sample's forward of one layer on a GPU of `tflops`.
Time PipeForward(uint64_t samples, double tflops) {
  return hetsim::SecondsToTime(kPipeLayerGflop * 1e9 * static_cast<double>(samples) / (tflops * 1e12));
}

// The plain plan the two identical pipelines of the first test make: 2 stages of DP 2 on GPUs 0-1 and 2-3.
v1::Plan TwoReplicaPlan(uint64_t output_bytes) {
  v1::Plan plan = MakePlan({{"fast", 0, 0, 2, 1, 2, 1, 2, 1}, {"fast", 0, 2, 2, 1, 2, 1, 2, 1}}, 4, v1::ONE_F_ONE_B,
                           output_bytes, 2);
  for (v1::Stage& st : *plan.mutable_stages()) {
    st.clear_measured_forward_ms();
    st.clear_measured_backward_ms();
  }
  return plan;
}

// The pipelines' iteration `pl` is the DP plan's `dp`: stage by stage, range by range, in the report.
void CheckSameIteration(const hetsim::driver::Simulation& dp, const hetsim::driver::Simulation& pl) {
  REQUIRE(pl.pipelines.size() == 2);
  CHECK(pl.result.iteration_time == dp.result.iteration_time);
  CHECK(pl.pipeline_sync.iteration_time == dp.result.iteration_time);
  for (int p = 0; p < 2; ++p) {
    CHECK(pl.pipelines[p].result.last_backward_end == dp.result.last_backward_end);
    CHECK(pl.pipelines[p].result.stage_end == dp.result.stage_end);
  }
  // The ranges are the stages; each reduces over the stage's two replicas, as the DP plan's groups.
  const auto& groups = pl.pipeline_sync.groups;
  REQUIRE(groups.size() == 2);
  CHECK(groups[0].groups == std::vector<std::vector<hetsim::GpuId>>{dp.setup->stages[0].layout.DataGroup(0)});
  CHECK(groups[1].groups == std::vector<std::vector<hetsim::GpuId>>{dp.setup->stages[1].layout.DataGroup(0)});
  CHECK(groups[0].bytes == dp.setup->stages[0].grad_buckets[0].bytes);
  CHECK(pl.report.iteration_time_ms() == dp.report.iteration_time_ms());
  CHECK(pl.report.samples_per_s() == Approx(dp.report.samples_per_s()).epsilon(1e-12));
  CHECK(pl.report.mfu() == Approx(dp.report.mfu()).epsilon(1e-12));
}

TEST_CASE("Two identical pipelines run exactly as the plan of data_parallel 2", "[executor][pipelines]") {
  // Replica r of the DP plan is pipeline r: GPUs r and 2 + r, a microbatch of 1 each of the DP plan's 2.
  const v1::Cluster cluster = PipelineCluster(4);
  // Under max-min fairness with boundary bytes, the last stage's gradient all-reduce meets stage 0's
  // last backward transfer on GPU 2's and 3's links, in the DP plan and, the ranges running on the
  // pipelines' network as soon as their holders are done, in the pipelines too.
  for (const auto& [mode, bytes] :
       {std::pair{NetworkMode::kContentionFree, uint64_t{1} << 20}, std::pair{NetworkMode::kMaxMinFair, uint64_t{0}},
        std::pair{NetworkMode::kMaxMinFair, uint64_t{1} << 20}}) {
    INFO("boundary bytes per sample " << bytes << ", contention-free " << (mode == NetworkMode::kContentionFree));
    hetsim::driver::SimulateOptions options;
    options.network_mode = mode;
    const auto dp = MakeSimulation(MakeInputs(cluster, TwoReplicaPlan(bytes)), options);
    const auto pl = MakeSimulation(
        MakeInputs(cluster,
                   PipelinesPlan(
                       2, {{"p0", 4, 1, {{"fast", 0}, {"fast", 2}}}, {"p1", 4, 1, {{"fast", 1}, {"fast", 3}}}}, bytes)),
        options);
    CheckSameIteration(dp, pl);
  }
}

// Every stage of `plan` (its stages or its pipelines' stages) at ZeRO stage `zero`.
v1::Plan WithZero(v1::Plan plan, int zero) {
  for (v1::Stage& st : *plan.mutable_stages()) st.set_zero_stage(zero);
  for (v1::Pipeline& pl : *plan.mutable_pipelines()) {
    for (v1::Stage& st : *pl.mutable_stages()) st.set_zero_stage(zero);
  }
  return plan;
}

TEST_CASE("Two identical pipelines under ZeRO-1 and 2 run exactly as the plan of data_parallel 2",
          "[executor][pipelines][zero]") {
  // The distributed optimizer per range: the reduce-scatter over the range's holders, the step over
  // each GPU's shard (1/2 of the states), the parameters' all-gather; the DP plan's stage does the same
  // over its two replicas. Same rings, same shards, same memory.
  const v1::Cluster cluster = PipelineCluster(4);
  for (const int zero : {1, 2}) {
    for (const uint64_t bytes : {uint64_t{0}, uint64_t{1} << 20}) {
      INFO("zero_stage " << zero << ", boundary bytes per sample " << bytes);
      hetsim::driver::SimulateOptions options;
      options.network_mode = NetworkMode::kMaxMinFair;
      const auto dp = MakeSimulation(MakeInputs(cluster, WithZero(TwoReplicaPlan(bytes), zero)), options);
      const auto pl =
          MakeSimulation(MakeInputs(cluster, WithZero(PipelinesPlan(2,
                                                                    {{"p0", 4, 1, {{"fast", 0}, {"fast", 2}}},
                                                                     {"p1", 4, 1, {{"fast", 1}, {"fast", 3}}}},
                                                                    bytes),
                                                      zero)),
                         options);
      CheckSameIteration(dp, pl);
      for (int p = 0; p < 2; ++p) {
        for (int s = 0; s < 2; ++s) {
          const auto& mine = pl.pipelines[p].setup->stages[s];
          const auto& theirs = dp.setup->stages[s];
          CHECK(mine.cost.memory.ModelStateBytes() == theirs.cost.memory.ModelStateBytes());
          CHECK(mine.cost.optimizer_shard.ModelStateBytes() == theirs.cost.optimizer_shard.ModelStateBytes());
          CHECK(mine.optimizer_time == theirs.optimizer_time);
        }
      }
      for (const auto& g : pl.pipeline_sync.groups) {
        CHECK(g.zero_stage == zero);
        CHECK(g.gather_start >= g.finish);
        CHECK(g.gather_finish > g.gather_start);
      }
    }
  }
}

TEST_CASE("Under ZeRO-1/2 a range reduce-scatters, steps 1/n of its states and all-gathers over its n holders",
          "[executor][pipelines][zero]") {
  // Three single-stage pipelines of one layer (1e6 FP16 parameters) on GPUs 0-2 of NVSwitch: one range
  // over n = 3 GPUs. A ring reduce-scatter of the B = 2 MB of gradients moves (n - 1) / n x B through each
  // GPU's link, and the all-gather of the 2 MB of parameters as much; each GPU keeps 1/n of the 12 bytes
  // per parameter of Adam's states (ZeRO-2: and of the gradients) and steps that shard.
  const double bandwidth = kNvswitchGbps * 1e9 / 8;
  const double b = 2e6;
  for (const int zero : {1, 2}) {
    INFO("zero_stage " << zero);
    const v1::Plan plan = WithZero(
        PipelinesPlan(1, {{"a", 2, 1, {{"fast", 0}}}, {"b", 2, 1, {{"fast", 1}}}, {"c", 2, 1, {{"fast", 2}}}}), zero);
    const auto sim = MakeSimulation(MakeInputs(PipelineCluster(4), plan));
    const auto& g = sim.pipeline_sync.groups;
    REQUIRE(g.size() == 1);
    CHECK(g[0].groups == hetsim::GpuGroups({{0, 1, 2}}));
    CHECK(g[0].bytes == 2000000);
    CHECK(g[0].param_bytes == 2000000);
    CHECK(hetsim::TimeToSeconds(g[0].finish - g[0].start) == Approx(2.0 / 3 * b / bandwidth).epsilon(1e-6));
    CHECK(hetsim::TimeToSeconds(g[0].gather_finish - g[0].gather_start) ==
          Approx(2.0 / 3 * b / bandwidth).epsilon(1e-6));
    for (int p = 0; p < 3; ++p) {
      const auto& stage = sim.pipelines[p].setup->stages[0];
      CHECK(stage.cost.memory.param_bytes == 2000000);
      CHECK(stage.cost.memory.grad_bytes == (zero == 2 ? 666667 : 2000000));
      CHECK(stage.cost.memory.optimizer_bytes == 4000000);
      CHECK(stage.cost.optimizer_shard.optimizer_bytes == 4000000);
      CHECK(stage.cost.optimizer_shard.param_bytes == 666667);
      // Every holder steps at once after the reduce-scatter; the gather follows the last step and the
      // stage ends with it.
      CHECK(g[0].gather_start == g[0].finish + stage.optimizer_time);
      CHECK(sim.pipelines[p].result.stage_end[0] == g[0].gather_finish);
    }
    CHECK(sim.pipeline_sync.iteration_time == g[0].gather_finish);
  }
}

// The shared-link case: each island one node of 2 GPUs, joined by one 10 Gb/s link that every boundary
// flow crosses; the DP 2 plan of two stages ("fast", then "slow") and the same as two pipelines, 1 MiB
// per sample across each boundary, passes timed by the cost model, both simulated under `options`.
struct SharedLinkRuns {
  hetsim::driver::Simulation dp, pipelines;
};
SharedLinkRuns RunSharedLink(const hetsim::driver::SimulateOptions& options) {
  const v1::Cluster cluster = TwoIslandCluster(1, 2, 10, 0);
  const uint64_t bytes = uint64_t{1} << 20;
  v1::Plan dp_plan =
      MakePlan({{"fast", 0, 0, 2, 1, 2, 1, 2, 1}, {"slow", 0, 0, 2, 1, 2, 1, 2, 1}}, 4, v1::ONE_F_ONE_B, bytes, 2);
  for (v1::Stage& st : *dp_plan.mutable_stages()) {
    st.clear_measured_forward_ms();
    st.clear_measured_backward_ms();
  }
  const v1::Plan pipelines =
      PipelinesPlan(2, {{"p0", 4, 1, {{"fast", 0}, {"slow", 0}}}, {"p1", 4, 1, {{"fast", 1}, {"slow", 1}}}}, bytes);
  return {MakeSimulation(MakeInputs(cluster, dp_plan), options),
          MakeSimulation(MakeInputs(cluster, pipelines), options)};
}

TEST_CASE("Two pipelines whose boundaries cross one shared link run as the DP 2 plan on it", "[executor][pipelines]") {
  // Each island one node of 2 GPUs, joined by one 10 Gb/s link: every boundary flow, of either pipeline
  // (and of either replica of the DP plan), crosses it. The pipelines run on one network, so their
  // flows share the link as the DP plan's replicas do: 1 MiB per sample takes 2 x 0.84 ms while both
  // cross, not 0.84 ms each as on networks of their own.
  hetsim::driver::SimulateOptions options;
  options.network_mode = NetworkMode::kMaxMinFair;
  const SharedLinkRuns runs = RunSharedLink(options);
  const hetsim::driver::Simulation& pl = runs.pipelines;
  CheckSameIteration(runs.dp, pl);
  // The shared network's flows and link bytes are counted once, with the first pipeline.
  CHECK(pl.pipelines[1].result.flows == 0);
  CHECK(pl.pipelines[0].result.flows > 0);
}

TEST_CASE("A layer range's all-reduce shares the link it crosses with the other pipeline's last transfer",
          "[executor][pipelines]") {
  // Two mirrored pipelines across the one 10 Gb/s link between the islands (GPUs of equal speed):
  // "ab" runs layer 0 on fast GPU 0 and layer 1 on slow GPU 2, "ba" layer 0 on slow GPU 3 and layer 1
  // on fast GPU 1; one microbatch each. Both stages 1 end their backward at t0; then each pipeline's
  // backward transfer (Y = 1 MB, "ba"'s from GPU 1 to 3, "ab"'s from 2 to 0) starts beside the ring
  // all-reduce of layer 1 over GPUs {2, 1} (2 MB of gradients: 2 steps of Y each way). On each
  // direction of the link a transfer and a ring step share 10 Gb/s until both end at t0 + 2 Y / R;
  // the second step runs alone: 3 Y / R in all, not the 2 Y / R of the ring alone. Layer 0's ring
  // starts once the stages 0, delayed by their transfers (2 Y / R instead of Y / R), have run their
  // backward, and runs alone.
  v1::Cluster cluster = TwoIslandCluster(1, 2, 10, 0);
  cluster.mutable_gpu_types(0)->set_peak_tflops_fp16(kPipeSlowTflops);
  const uint64_t y = 1000000;
  const v1::Plan plan =
      PipelinesPlan(2, {{"ab", 1, 1, {{"fast", 0}, {"slow", 0}}}, {"ba", 1, 1, {{"slow", 1}, {"fast", 1}}}}, y);
  const double rate = 10e9 / 8;
  const double y_s = static_cast<double>(y) / rate;
  const Time f = PipeForward(1, kPipeSlowTflops);
  for (const NetworkMode mode : {NetworkMode::kMaxMinFair, NetworkMode::kContentionFree}) {
    const bool shared = mode == NetworkMode::kMaxMinFair;
    INFO("max-min fair " << shared);
    hetsim::driver::SimulateOptions options;
    options.network_mode = mode;
    const auto sim = MakeSimulation(MakeInputs(cluster, plan), options);
    const auto& g = sim.pipeline_sync.groups;
    REQUIRE(g.size() == 2);
    CHECK(g[1].groups == hetsim::GpuGroups({{2, 1}}));
    CHECK(g[0].groups == hetsim::GpuGroups({{0, 3}}));
    // t0: forward, forward transfer (the two run opposite ways), forward, backward.
    const double t0 = hetsim::TimeToSeconds(f + f + 2 * f) + y_s;
    CHECK(hetsim::TimeToSeconds(g[1].start) == Approx(t0).epsilon(1e-9));
    CHECK(hetsim::TimeToSeconds(g[1].finish - g[1].start) == Approx((shared ? 3 : 2) * y_s).epsilon(1e-6));
    const double transfer = (shared ? 2 : 1) * y_s;
    CHECK(hetsim::TimeToSeconds(g[0].start) == Approx(t0 + transfer + hetsim::TimeToSeconds(2 * f)).epsilon(1e-9));
    CHECK(hetsim::TimeToSeconds(g[0].finish - g[0].start) == Approx(2 * y_s).epsilon(1e-6));
    // Each stage steps its optimizer after its own range: stage 1 before stage 0.
    for (int p = 0; p < 2; ++p) CHECK(sim.pipeline_sync.grad_sync_end[p][1] == g[1].finish);
  }
}

TEST_CASE("With overlapped reduction a range is ready where the last backward is done with its layers",
          "[executor][pipelines]") {
  // Pipeline "one" holds both layers on GPU 0, "two" one layer per GPU (2, 3); one microbatch each.
  // "one"'s backward of 2 x 2f runs layer 1 first: layer 1's range is ready halfway through it, at
  // 2f + 2f, when "two"'s stage 1 has also run its backward (f + f + 2f); layer 0's at its end, 6f.
  v1::Plan plan = PipelinesPlan(2, {{"one", 1, 1, {{"fast", 0, 1, 1, 2}}}, {"two", 1, 1, {{"fast", 2}, {"fast", 3}}}});
  plan.set_overlap_grad_reduce(true);
  const auto sim = MakeSimulation(MakeInputs(PipelineCluster(4), plan));
  const auto& g = sim.pipeline_sync.groups;
  REQUIRE(g.size() == 2);
  const Time f = PipeForward(1, kPipeFastTflops);
  CHECK(g[1].start == 4 * f);
  CHECK(g[0].start == 6 * f);
  plan.set_overlap_grad_reduce(false);
  const auto late = MakeSimulation(MakeInputs(PipelineCluster(4), plan));
  CHECK(late.pipeline_sync.groups[1].start == 6 * f);
}

// `text` as the options' faults.
hetsim::driver::SimulateOptions WithFaults(hetsim::driver::SimulateOptions options, const std::string& text) {
  REQUIRE(google::protobuf::TextFormat::ParseFromString(text, &options.faults));
  options.fault_sources = hetsim::driver::SourcesOf(options.faults, "test-faults.pbtxt");
  return options;
}

TEST_CASE("A slowed link under both pipelines slows them as it slows the DP 2 plan", "[executor][pipelines][faults]") {
  // The shared-link case above with its one inter-island link at half its rate: the faults apply once,
  // to the one network both pipelines (and their ranges) run on, as to the DP plan's.
  hetsim::driver::SimulateOptions plain;
  plain.network_mode = NetworkMode::kMaxMinFair;
  const SharedLinkRuns runs = RunSharedLink(WithFaults(plain, "faults { inter_island_link: 0 kind: SLOW factor: 2 }"));
  const hetsim::driver::Simulation& pl = runs.pipelines;
  CheckSameIteration(runs.dp, pl);
  CHECK(pl.result.iteration_time > RunSharedLink(plain).dp.result.iteration_time);
  REQUIRE(pl.report.faults_size() == 1);
  CHECK(pl.report.faults(0).effect() == runs.dp.report.faults(0).effect());

  // The trace draws the one fault runtime's transitions once, not once per pipeline.
  hetsim::driver::SimulateOptions traced = WithFaults(plain, "faults { inter_island_link: 0 kind: SLOW factor: 2 }");
  traced.trace = hetsim::traces::TraceSelection{};
  const hetsim::driver::Simulation with_trace = RunSharedLink(traced).pipelines;
  REQUIRE_FALSE(with_trace.pipeline_sync.faults.events.empty());
  size_t markers = 0;
  for (size_t at = with_trace.trace_json.find(R"("cat":"fault")"); at != std::string::npos;
       at = with_trace.trace_json.find(R"("cat":"fault")", at + 1)) {
    ++markers;
  }
  CHECK(markers == with_trace.pipeline_sync.faults.events.size());
}

TEST_CASE("The shared run owns the fault transitions of a plan of pipelines, once", "[executor][pipelines][faults]") {
  // The slowed shared link above: the one fault runtime's transitions and effects are the shared run's
  // (PipelinesSyncResult::faults); each pipeline's result says only whether a failure stopped it.
  hetsim::driver::SimulateOptions plain;
  plain.network_mode = NetworkMode::kMaxMinFair;
  const SharedLinkRuns runs = RunSharedLink(WithFaults(plain, "faults { inter_island_link: 0 kind: SLOW factor: 2 }"));
  const hetsim::driver::Simulation& pl = runs.pipelines;
  REQUIRE(pl.pipelines.size() == 2);
  const hetsim::faults::FaultOutcome& shared = pl.pipeline_sync.faults;
  // The DP plan's one run saw the same transitions and effects.
  REQUIRE(shared.events.size() == runs.dp.result.faults.events.size());
  for (size_t i = 0; i < shared.events.size(); ++i) {
    CHECK(shared.events[i].at == runs.dp.result.faults.events[i].at);
    CHECK(shared.events[i].what == runs.dp.result.faults.events[i].what);
  }
  REQUIRE(shared.effects.size() == 1);
  CHECK(shared.effects[0].started);
  for (const auto& p : pl.pipelines) {
    CHECK(p.result.faults.events.empty());
    CHECK(p.result.faults.effects.empty());
    CHECK_FALSE(p.result.faults.failed);
  }
  // The report's fault part reads the shared outcome: the DP plan's effect.
  REQUIRE(pl.report.faults_size() == 1);
  CHECK(pl.report.faults(0).effect() == runs.dp.report.faults(0).effect());
}

TEST_CASE("A straggler slows only the pipeline whose GPU it is", "[executor][pipelines][faults]") {
  // The two pipelines of equal time (15 f) above; GPU 3, stage 1 of "slow" (stage 3 of the plan, as the
  // fault's effect names it), at half speed: "slow"'s 1F1B is then bound by that stage, f + 4 x (2f + 4f) + 2f = 27 f;
  // "fast" keeps its 15 f.
  const v1::Plan plan =
      PipelinesPlan(2, {{"fast", 8, 2, {{"fast", 0}, {"fast", 1}}}, {"slow", 4, 1, {{"slow", 0}, {"slow", 1}}}});
  const auto sim =
      MakeSimulation(MakeInputs(PipelineCluster(2), plan), WithFaults({}, "faults { gpu: 3 kind: SLOW factor: 2 }"));
  const Time f = PipeForward(1, kPipeSlowTflops);
  REQUIRE(sim.pipelines.size() == 2);
  CHECK(sim.pipelines[0].result.pipeline_end == 15 * f);
  CHECK(sim.pipelines[1].result.pipeline_end == 27 * f);
  REQUIRE(sim.report.faults_size() == 1);
  // Its 4 forwards and 4 backwards (4 x 3f of work, as long again) and its optimizer step (likewise).
  const Time step = sim.pipelines[1].setup->stages[1].optimizer_time;
  CHECK_THAT(sim.report.faults(0).effect(),
             Catch::StartsWith(absl::StrFormat("9 compute tasks of stage 3 took %.3f ms longer",
                                               hetsim::TimeToMilliseconds(12 * f + step))));
}

TEST_CASE("A failed GPU stops every pipeline at the failure", "[executor][pipelines][faults]") {
  const v1::Plan plan =
      PipelinesPlan(2, {{"fast", 8, 2, {{"fast", 0}, {"fast", 1}}}, {"slow", 4, 1, {{"slow", 0}, {"slow", 1}}}});
  const auto sim =
      MakeSimulation(MakeInputs(PipelineCluster(2), plan), WithFaults({}, "faults { gpu: 2 kind: FAIL at_ms: 5 }"));
  const Time at = hetsim::SecondsToTime(5e-3);
  for (const auto& p : sim.pipelines) {
    CHECK(p.result.faults.failed);
    CHECK(p.result.iteration_time == at);
  }
  CHECK(sim.report.failed());
  CHECK(sim.report.failed_at_ms() == Approx(5));
  CHECK(sim.report.iteration_time_ms() == Approx(5));
  CHECK(sim.report.samples_per_s() == 0);
  CHECK_THAT(sim.report.lost(), Catch::StartsWith("pipeline fast: ") && Catch::Contains("; pipeline slow: "));
  // No range was reduced: the stages were still in their pipelines.
  for (const auto& g : sim.pipeline_sync.groups) CHECK(g.finish == -1_ps);
}

TEST_CASE("A trace with --trace-gpus shows in each pipeline the listed GPUs it uses", "[executor][pipelines]") {
  const v1::Cluster cluster = PipelineCluster(4);
  const v1::Plan plan =
      PipelinesPlan(2, {{"p0", 4, 1, {{"fast", 0}, {"fast", 2}}}, {"p1", 4, 1, {{"fast", 1}, {"fast", 3}}}});
  hetsim::driver::SimulateOptions options;
  options.trace = hetsim::traces::TraceSelection{.replica = std::nullopt, .gpus = hetsim::GpuIds({0, 3})};
  const auto pl = MakeSimulation(MakeInputs(cluster, plan), options);
  REQUIRE(pl.pipelines.size() == 2);
  CHECK(pl.pipelines[0].traced_gpus == std::vector<bool>{true, false, false, false, false, false, false, false});
  CHECK(pl.pipelines[1].traced_gpus == std::vector<bool>{false, false, false, true, false, false, false, false});
  CHECK_FALSE(pl.trace_json.empty());
}

TEST_CASE("A pipeline of half the batch share on GPUs of half the speed finishes with the other",
          "[executor][pipelines]") {
  // Pipeline "fast": 2 stages of A100s, microbatches of 2; "slow": 2 stages of V100s (half the peak),
  // microbatches of 1: both run 4 microbatches of passes f = 1 sample on a V100.
  const v1::Plan plan =
      PipelinesPlan(2, {{"fast", 8, 2, {{"fast", 0}, {"fast", 1}}}, {"slow", 4, 1, {{"slow", 0}, {"slow", 1}}}});
  const auto sim = MakeSimulation(MakeInputs(PipelineCluster(2), plan));
  const Time f = PipeForward(1, kPipeSlowTflops);
  REQUIRE(PipeForward(2, kPipeFastTflops) == f);
  // 1F1B with free boundaries: (microbatches + stages - 1) x (f + 2f) until stage 0's last backward.
  for (const auto& p : sim.pipelines) {
    CHECK(p.result.pipeline_end == (4 + 2 - 1) * 3 * f);
    CHECK(p.result.last_backward_end[0] == (4 + 2 - 1) * 3 * f);
  }
  CHECK(sim.report.pipelines(0).pipeline_ms() == sim.report.pipelines(1).pipeline_ms());
  // The iteration ends with the slower of the two after its ranges' all-reduces and its step.
  Time last = 0;
  for (const auto& p : sim.pipelines) last = std::max(last, p.result.iteration_time);
  CHECK(sim.pipeline_sync.iteration_time == last);
  CHECK(sim.report.iteration_time_ms() == Approx(hetsim::TimeToMilliseconds(last)).epsilon(1e-12));
  // Throughput: 12 samples of the whole batch per iteration.
  CHECK(sim.report.samples_per_s() == Approx(12 / hetsim::TimeToSeconds(last)).epsilon(1e-9));
}

TEST_CASE("A layer range's all-reduce takes the ring's alpha-beta time over the GPUs that hold it",
          "[executor][pipelines]") {
  // Ring all-reduce of B bytes over n GPUs on NVSwitch (every GPU its own link each way):
  // 2 (n - 1) steps of B / n, no latency: 2 (n - 1) / n x B / bandwidth (each step ending on a whole
  // picosecond, hence the relative 1e-6).
  const double bandwidth = kNvswitchGbps * 1e9 / 8;
  const double layer_bytes = 1e6 * 2;  // a layer's 1e6 FP16 gradients
  SECTION("three single-stage pipelines: one range over three GPUs") {
    const v1::Plan plan =
        PipelinesPlan(1, {{"a", 2, 1, {{"fast", 0}}}, {"b", 2, 1, {{"fast", 1}}}, {"c", 2, 1, {{"fast", 2}}}});
    const auto sim = MakeSimulation(MakeInputs(PipelineCluster(4), plan));
    const auto& g = sim.pipeline_sync.groups;
    REQUIRE(g.size() == 1);
    CHECK(g[0].groups == hetsim::GpuGroups({{0, 1, 2}}));
    CHECK(g[0].bytes == 2000000);
    CHECK(hetsim::TimeToSeconds(g[0].finish - g[0].start) ==
          Approx(2.0 * 2 / 3 * layer_bytes / bandwidth).epsilon(1e-6));
    CHECK(sim.report.gradient_groups(0).holders_size() == 3);
  }
  SECTION("different cuts: one pipeline of one stage, one of two; the ranges share the one-stage GPU") {
    // Pipeline "one" holds both layers on GPU 0 and ends last (2 layers x 4 microbatches x 3f); both
    // ranges start then, each a ring of 2 GPUs through GPU 0's links: together 2 B / bandwidth.
    const v1::Plan plan =
        PipelinesPlan(2, {{"one", 4, 1, {{"fast", 0, 1, 1, 2}}}, {"two", 4, 1, {{"fast", 2}, {"fast", 3}}}});
    const auto sim = MakeSimulation(MakeInputs(PipelineCluster(4), plan));
    const auto& g = sim.pipeline_sync.groups;
    REQUIRE(g.size() == 2);
    CHECK(g[0].groups == hetsim::GpuGroups({{0, 2}}));
    CHECK(g[1].groups == hetsim::GpuGroups({{0, 3}}));
    const Time f = PipeForward(1, kPipeFastTflops);
    CHECK(g[0].start == 4 * 3 * 2 * f);
    CHECK(g[1].start == 4 * 3 * 2 * f);
    const double both = 2 * layer_bytes / bandwidth;
    CHECK(hetsim::TimeToSeconds(g[0].finish - g[0].start) == Approx(both).epsilon(1e-6));
    CHECK(hetsim::TimeToSeconds(g[1].finish - g[1].start) == Approx(both).epsilon(1e-6));
    // Pipeline "one"'s stage steps its optimizer after both ranges, "two"'s stages each after its own.
    CHECK(sim.pipeline_sync.grad_sync_end[0][0] == std::max(g[0].finish, g[1].finish));
    CHECK(sim.pipeline_sync.grad_sync_end[1][1] == g[1].finish);
    CHECK(sim.report.gradient_groups(1).holders(1) == "two stage 1");
  }
  SECTION("TP 2 beside TP 1: a shard group per TP rank, the TP 1 GPU in both with half the bytes each") {
    const v1::Plan plan = PipelinesPlan(1, {{"tp2", 2, 1, {{"fast", 0, 2, 2}}}, {"tp1", 2, 1, {{"fast", 2}}}});
    const auto sim = MakeSimulation(MakeInputs(PipelineCluster(4), plan));
    const auto& g = sim.pipeline_sync.groups;
    REQUIRE(g.size() == 1);
    CHECK(g[0].shards == 2);
    CHECK(g[0].groups == hetsim::GpuGroups({{0, 2}, {1, 2}}));
    CHECK(g[0].bytes == 1000000);
    // GPU 2 sends B / 2 of each of the two rings through its one link: B / bandwidth.
    CHECK(hetsim::TimeToSeconds(g[0].finish - g[0].start) == Approx(layer_bytes / bandwidth).epsilon(1e-6));
  }
}

TEST_CASE("The report names each pipeline, its stages and the layer ranges' groups", "[executor][pipelines]") {
  const v1::Plan plan =
      PipelinesPlan(2, {{"fast", 8, 2, {{"fast", 0}, {"fast", 1}}}, {"slow", 4, 1, {{"slow", 0, 2, 2, 2}}}});
  const auto sim = MakeSimulation(MakeInputs(PipelineCluster(2), plan));
  const v1::Report& r = sim.report;
  REQUIRE(r.pipelines_size() == 2);
  CHECK(r.pipelines(0).name() == "fast");
  CHECK(r.pipelines(1).batch_share() == 4);
  CHECK(r.num_stages() == 3);
  CHECK(r.num_gpus() == 4);
  REQUIRE(r.stages_size() == 3);
  CHECK(r.stages(2).pipeline() == "slow");
  CHECK(r.stages(2).index() == 2);
  CHECK(r.gradient_groups_size() == 2);
  CHECK(r.gradient_groups(0).holders(0) == "fast stage 0");
  CHECK(r.gradient_groups(0).holders(1) == "slow stage 0");
  const std::string text = hetsim::traces::FormatReportTable(r);
  CHECK(text.find("pipeline slow") != std::string::npos);
  CHECK(text.find("layers 1-1") != std::string::npos);
}

TEST_CASE("A pipeline's plan is the plan's settings with its stages, share and micro-batch size", "[pipelines]") {
  v1::Plan plan = PipelinesPlan(2, {{"a", 8, 2, {{"fast", 0}, {"fast", 1}}}, {"b", 4, 0, {{"slow", 0, 2, 2, 2}}}});
  plan.set_micro_batch_size(4);
  const v1::Plan b = hetsim::proto::PipelinePlan(plan, 1);
  CHECK(b.pipelines_size() == 0);
  CHECK(b.stages_size() == 1);
  CHECK(b.global_batch_size() == 4);
  CHECK(b.micro_batch_size() == 4);  // 0: the plan's
  CHECK(hetsim::proto::PipelinePlan(plan, 0).micro_batch_size() == 2);
}

// The lab example's model and cluster with two pipelines whose runs end far apart: "fast", eight RTX
// 4090 stages (each a small optimizer step), and "slow", one RTX A6000 holding every layer (the whole
// model's optimizer step, about 30 ms).
v1::Plan LabPipelinesEndingApart() {
  v1::Plan plan;
  REQUIRE(google::protobuf::TextFormat::ParseFromString(R"pb(
                                                          name: "ending-apart"
                                                          global_batch_size: 16
                                                          micro_batch_size: 1
                                                          schedule: ONE_F_ONE_B
                                                          pipelines { name: "fast" batch_share: 8 }
                                                          pipelines {
                                                            name: "slow"
                                                            batch_share: 8
                                                            stages {
                                                              num_layers: 26
                                                              mesh { island: "a6000" node_count: 1 gpus_per_node: 1 }
                                                            }
                                                          })pb",
                                                        &plan));
  const int layers[] = {4, 3, 3, 3, 3, 3, 3, 4};
  int first = 0;
  for (int s = 0; s < 8; ++s) {
    v1::Stage* st = plan.mutable_pipelines(0)->add_stages();
    st->set_first_layer(first);
    st->set_num_layers(layers[s]);
    first += layers[s];
    st->mutable_mesh()->set_island("rtx4090");
    st->mutable_mesh()->set_node_count(1);
    st->mutable_mesh()->set_first_gpu(s);
    st->mutable_mesh()->set_gpus_per_node(1);
  }
  return plan;
}

TEST_CASE("The link chart's samples of a plan of pipelines cover the whole shared run", "[executor][pipelines]") {
  // The first pipeline samples the network every pipeline shares; its own stages end well before the
  // last pipeline's optimizer step, and the samples go on until that one has ended.
  absl::StatusOr<hetsim::proto::PlanInputs> inputs = hetsim::proto::LoadPlanInputs(
      HETSIM_SOURCE_DIR "/examples/plan-lab-pipelines.pbtxt", HETSIM_SOURCE_DIR "/examples/cluster-lab-pcie.pbtxt");
  REQUIRE(inputs.ok());
  const v1::Model model = inputs->plan.model();
  inputs->plan = LabPipelinesEndingApart();
  *inputs->plan.mutable_model() = model;
  hetsim::driver::SimulateOptions options;
  options.sample_all_links = true;
  const auto sim = MakeSimulation(*inputs, options);
  REQUIRE(sim.pipelines.size() == 2);
  const Time first_end = sim.pipelines.front().result.iteration_time;
  const Time end = sim.pipeline_sync.iteration_time;
  const std::vector<Time>& samples = sim.result.sample_times;
  REQUIRE(samples.size() > 2);
  const Time period = samples[1] - samples[0];
  INFO("first pipeline's end " << hetsim::TimeToMilliseconds(first_end) << " ms, last "
                               << hetsim::TimeToMilliseconds(end) << " ms, sample period "
                               << hetsim::TimeToMilliseconds(period) << " ms");
  REQUIRE(end - first_end > 2 * period);
  CHECK(samples.back() >= end);
  // One period apart to the end: the last sample is the first at or after the last pipeline's end.
  CHECK(samples[samples.size() - 2] < end);
}

}  // namespace

namespace {

constexpr uint64_t kTiedVocab = 32000;
constexpr uint64_t kTiedHidden = 1024;

// `pipes` (each stage's `layers` out of 4: the embedding, 2 blocks, the head) running a 2-block FP16
// transformer whose head shares the embedding's V x h matrix, with or without the tied sync.
v1::Plan TiedPipelinesPlan(const std::vector<Pipe>& pipes, bool tied_sync) {
  v1::Plan plan = PipelinesPlan(4, pipes);
  v1::Model* m = plan.mutable_model();
  m->Clear();
  m->set_name("tied");
  m->set_dtype(v1::FP16);
  v1::Transformer* t = m->mutable_transformer();
  t->set_num_layers(2);
  t->set_hidden_size(kTiedHidden);
  t->set_num_attention_heads(16);
  t->set_seq_length(1024);
  t->set_vocab_size(kTiedVocab);
  t->set_tied_embeddings(true);
  plan.set_tied_embedding_grad_sync(tied_sync);
  return plan;
}

}  // namespace

TEST_CASE("With the tied sync, 1-stage pipelines reduce the tied matrix apart: the same bytes, the same end",
          "[executor][pipelines][tied]") {
  // Three 1-stage pipelines: every GPU holds one copy of the matrix. Without the sync their one range
  // carries it; with it the range carries the rest and the tied group the V h FP16 gradients, over the
  // same three GPUs, started at once: on NVSwitch the two rings share every GPU's links and end when
  // one ring of their sum would (2 (n - 1) / n x B / bandwidth, no latency).
  const std::vector<Pipe> pipes = {
      {"a", 2, 1, {{"fast", 0, 1, 1, 4}}}, {"b", 2, 1, {{"fast", 1, 1, 1, 4}}}, {"c", 2, 1, {{"fast", 2, 1, 1, 4}}}};
  const auto without = MakeSimulation(MakeInputs(PipelineCluster(4), TiedPipelinesPlan(pipes, false)));
  const auto with = MakeSimulation(MakeInputs(PipelineCluster(4), TiedPipelinesPlan(pipes, true)));
  const auto& w = without.pipeline_sync.groups;
  const auto& g = with.pipeline_sync.groups;
  REQUIRE(w.size() == 1);
  REQUIRE(g.size() == 2);
  CHECK_FALSE(g[0].tied);
  CHECK(g[1].tied);
  CHECK(g[1].groups == hetsim::GpuGroups({{0, 1, 2}}));
  CHECK(g[1].bytes == static_cast<int64_t>(kTiedVocab * kTiedHidden * 2));
  CHECK(g[0].bytes + g[1].bytes == w[0].bytes);
  CHECK(g[0].start == w[0].start);
  CHECK(g[1].start == w[0].start);
  const double bandwidth = kNvswitchGbps * 1e9 / 8;
  CHECK(hetsim::TimeToSeconds(w[0].finish - w[0].start) ==
        Approx(2.0 * 2 / 3 * static_cast<double>(w[0].bytes) / bandwidth).epsilon(1e-6));
  CHECK(hetsim::TimeToSeconds(std::max(g[0].finish, g[1].finish) - g[0].start) ==
        Approx(hetsim::TimeToSeconds(w[0].finish - w[0].start)).epsilon(1e-4));
}

TEST_CASE("With grad_reduce_in_fp32, the tied matrix reduces in FP32 in a BF16 run and in FP16 in an FP16 one",
          "[executor][pipelines][tied]") {
  // As one pipeline's tied all-reduce (setup.cc, AddTiedEmbeddingSync): DeepSpeed's pipeline engine
  // all-reduces the FP16 weight's own gradient; Megatron's BF16 main gradients are FP32.
  const std::vector<Pipe> pipes = {{"a", 2, 1, {{"fast", 0, 1, 1, 4}}}, {"b", 2, 1, {{"fast", 1, 1, 1, 4}}}};
  v1::Plan fp16 = TiedPipelinesPlan(pipes, true);
  fp16.set_grad_reduce_in_fp32(true);
  v1::Plan bf16 = fp16;
  bf16.mutable_model()->set_dtype(v1::BF16);
  const auto half = MakeSimulation(MakeInputs(PipelineCluster(4), fp16));
  const auto brain = MakeSimulation(MakeInputs(PipelineCluster(4), bf16));
  REQUIRE(half.pipeline_sync.groups.size() == 2);
  REQUIRE(brain.pipeline_sync.groups.size() == 2);
  CHECK(half.pipeline_sync.groups[1].tied);
  CHECK(half.pipeline_sync.groups[1].bytes == static_cast<int64_t>(kTiedVocab * kTiedHidden * 2));
  CHECK(brain.pipeline_sync.groups[1].bytes == static_cast<int64_t>(kTiedVocab * kTiedHidden * 4));
}

TEST_CASE("With the tied sync, the tied matrix all-reduces over every pipeline's first and last stage",
          "[executor][pipelines][tied]") {
  // Pipeline "one" holds the 4 layers on GPU 0; "two" cuts them 2 + 2 on GPUs 2 and 3, its stage 1
  // holding the head's copy of the matrix. The ranges (layers 0-1 over GPUs 0 and 2, 2-3 over 0 and 3)
  // lose the matrix; the tied group carries it over GPUs 0, 2 and 3 (GPU 0 once), once all three have
  // run their last backward; each stage steps once its ranges and, holding a copy, the tied group are done.
  const std::vector<Pipe> pipes = {{"one", 4, 1, {{"fast", 0, 1, 1, 4}}},
                                   {"two", 4, 1, {{"fast", 2, 1, 1, 2}, {"fast", 3, 1, 1, 2}}}};
  const auto without = MakeSimulation(MakeInputs(PipelineCluster(4), TiedPipelinesPlan(pipes, false)));
  const auto with = MakeSimulation(MakeInputs(PipelineCluster(4), TiedPipelinesPlan(pipes, true)));
  const auto& w = without.pipeline_sync.groups;
  const auto& g = with.pipeline_sync.groups;
  REQUIRE(w.size() == 2);
  REQUIRE(g.size() == 3);
  const int64_t matrix = static_cast<int64_t>(kTiedVocab * kTiedHidden * 2);
  CHECK(g[0].groups == hetsim::GpuGroups({{0, 2}}));
  CHECK(g[1].groups == hetsim::GpuGroups({{0, 3}}));
  CHECK(g[2].groups == hetsim::GpuGroups({{0, 2, 3}}));
  CHECK(g[0].bytes == w[0].bytes - matrix);
  CHECK(g[1].bytes == w[1].bytes - matrix);
  CHECK(g[2].bytes == matrix);
  REQUIRE(g[2].holders.size() == 3);
  CHECK((g[2].holders[0].pipeline == 0 && g[2].holders[0].stage == 0));
  CHECK((g[2].holders[2].pipeline == 1 && g[2].holders[2].stage == 1));
  const auto& one = with.pipelines[0].result.last_backward_end;
  const auto& two = with.pipelines[1].result.last_backward_end;
  CHECK(g[2].start == std::max({one[0], two[0], two[1]}));
  const auto& end = with.pipeline_sync.grad_sync_end;
  CHECK(end[0][0] == std::max({g[0].finish, g[1].finish, g[2].finish}));
  CHECK(end[1][0] == std::max(g[0].finish, g[2].finish));
  CHECK(end[1][1] == std::max(g[1].finish, g[2].finish));
  // The pipelines' own tied all-reduce (a pipeline's first with its last stage) is the group's.
  CHECK(with.pipelines[1].setup->stages[0].tied_grad_sync_time == 0);
  REQUIRE(with.report.gradient_groups_size() == 3);
  CHECK(with.report.gradient_groups(2).tied_embedding());
  CHECK_FALSE(with.report.gradient_groups(0).tied_embedding());
  CHECK_THAT(hetsim::traces::FormatReportTable(with.report), Catch::Contains("tied embedding"));
}

TEST_CASE("Under ZeRO-1/2 with the tied sync the matrix shards over its copies, each range over its holders",
          "[executor][pipelines][tied][zero]") {
  // The pipelines of the test above at ZeRO-1 and 2: the tied group (GPUs 0, 2, 3) reduce-scatters the
  // V h FP16 gradients, every copy steps a third of the matrix's states, and the group all-gathers the
  // matrix once the last copy has stepped; the ranges do the same without it over their two holders.
  // Between them the four stages hold Adam's 12 bytes per parameter of the model once: the layers'
  // states, each shard with one holder.
  const std::vector<Pipe> pipes = {{"one", 4, 1, {{"fast", 0, 1, 1, 4}}},
                                   {"two", 4, 1, {{"fast", 2, 1, 1, 2}, {"fast", 3, 1, 1, 2}}}};
  const auto plain = MakeSimulation(MakeInputs(PipelineCluster(4), TiedPipelinesPlan(pipes, true)));
  const int64_t matrix = static_cast<int64_t>(kTiedVocab * kTiedHidden * 2);
  for (const int zero : {1, 2}) {
    INFO("zero_stage " << zero);
    const auto sim = MakeSimulation(MakeInputs(PipelineCluster(4), WithZero(TiedPipelinesPlan(pipes, true), zero)));
    const auto& g = sim.pipeline_sync.groups;
    REQUIRE(g.size() == 3);
    REQUIRE(g[2].tied);
    for (const auto& group : g) {
      CHECK(group.zero_stage == zero);
      CHECK(group.param_bytes == group.bytes);  // FP16 gradients, FP16 parameters
      CHECK(group.gather_start >= group.finish);
      CHECK(group.gather_finish > group.gather_start);
    }
    CHECK(g[2].bytes == matrix);
    CHECK(g[0].bytes == plain.pipeline_sync.groups[0].bytes);  // without the matrix, as the ZeRO-free ranges
    CHECK(g[1].bytes == plain.pipeline_sync.groups[1].bytes);
    // Parameters (FP16, 2 bytes each) per range and of the matrix.
    const double p01 = static_cast<double>(g[0].bytes) / 2;
    const double p23 = static_cast<double>(g[1].bytes) / 2;
    const double t = static_cast<double>(matrix) / 2;
    const auto& one = sim.pipelines[0].setup->stages[0].cost;
    const auto& first = sim.pipelines[1].setup->stages[0].cost;
    const auto& last = sim.pipelines[1].setup->stages[1].cost;
    CHECK(static_cast<double>(one.memory.optimizer_bytes) == Approx(12 * (p01 / 2 + p23 / 2 + t / 3)).epsilon(1e-6));
    CHECK(static_cast<double>(first.memory.optimizer_bytes) == Approx(12 * (p01 / 2 + t / 3)).epsilon(1e-6));
    CHECK(static_cast<double>(last.memory.optimizer_bytes) == Approx(12 * (p23 / 2 + t / 3)).epsilon(1e-6));
    CHECK(static_cast<double>(one.memory.optimizer_bytes + first.memory.optimizer_bytes +
                              last.memory.optimizer_bytes) == Approx(12 * (p01 + p23 + t)).epsilon(1e-6));
    // Every GPU keeps its copy's parameters whole (ZeRO-1/2), and steps its shards.
    CHECK(static_cast<double>(one.memory.param_bytes) == Approx(2 * (p01 + p23 + t)).epsilon(1e-6));
    CHECK(static_cast<double>(first.optimizer_shard.param_bytes) == Approx(2 * (p01 / 2 + t / 3)).epsilon(1e-6));
    CHECK(static_cast<double>(last.memory.grad_bytes) ==
          Approx(zero == 2 ? 2 * (p23 / 2 + t / 3) : 2 * (p23 + t)).epsilon(1e-6));
    // Each stage ends once its ranges and the matrix are gathered.
    const auto& end = sim.pipeline_sync.stage_end;
    CHECK(end[0][0] == std::max({g[0].gather_finish, g[1].gather_finish, g[2].gather_finish}));
    CHECK(end[1][0] == std::max(g[0].gather_finish, g[2].gather_finish));
    CHECK(end[1][1] == std::max(g[1].gather_finish, g[2].gather_finish));
  }
}

TEST_CASE("Under ZeRO with the tied sync, 1-stage pipelines reduce-scatter what one ring of the sum would",
          "[executor][pipelines][tied][zero]") {
  // Three 1-stage pipelines on NVSwitch (GPUs 0-2): the range without the matrix and the tied group start
  // at once over the same three GPUs and share every GPU's link, so both reduce-scatters end when one of
  // their sum would, (n - 1) / n x B / bandwidth, as the one range of the plan without the sync; and the
  // three stages end together, as without the sync.
  const std::vector<Pipe> pipes = {
      {"a", 2, 1, {{"fast", 0, 1, 1, 4}}}, {"b", 2, 1, {{"fast", 1, 1, 1, 4}}}, {"c", 2, 1, {{"fast", 2, 1, 1, 4}}}};
  const double bandwidth = kNvswitchGbps * 1e9 / 8;
  for (const int zero : {1, 2}) {
    INFO("zero_stage " << zero);
    const auto without =
        MakeSimulation(MakeInputs(PipelineCluster(4), WithZero(TiedPipelinesPlan(pipes, false), zero)));
    const auto with = MakeSimulation(MakeInputs(PipelineCluster(4), WithZero(TiedPipelinesPlan(pipes, true), zero)));
    const auto& w = without.pipeline_sync.groups;
    const auto& g = with.pipeline_sync.groups;
    REQUIRE(w.size() == 1);
    REQUIRE(g.size() == 2);
    CHECK(g[0].bytes + g[1].bytes == w[0].bytes);
    CHECK(g[0].start == w[0].start);
    CHECK(hetsim::TimeToSeconds(w[0].finish - w[0].start) ==
          Approx(2.0 / 3 * static_cast<double>(w[0].bytes) / bandwidth).epsilon(1e-6));
    CHECK(hetsim::TimeToSeconds(std::max(g[0].finish, g[1].finish) - g[0].start) ==
          Approx(hetsim::TimeToSeconds(w[0].finish - w[0].start)).epsilon(1e-4));
    for (int p = 0; p < 3; ++p) {
      const auto& mine = with.pipelines[p].setup->stages[0];
      const auto& theirs = without.pipelines[p].setup->stages[0];
      CHECK(static_cast<double>(mine.cost.memory.ModelStateBytes()) ==
            Approx(static_cast<double>(theirs.cost.memory.ModelStateBytes())).epsilon(1e-6));
      CHECK(with.pipelines[p].result.stage_end[0] ==
            std::max(with.pipeline_sync.groups[0].gather_finish, with.pipeline_sync.groups[1].gather_finish));
    }
  }
}

TEST_CASE("A range's buckets each start when the last holder's backward is done with their layers",
          "[executor][pipelines]") {
  // "one" holds the 4 layers on GPU 0, one microbatch: its backward of 4 x 2f runs from 4f to 12f,
  // layer 3 first. "two" cuts them 1 + 3 (GPUs 2, 3), two microbatches in 1F1B: its stage 1 runs
  // F0 [f, 4f], B0 [4f, 10f], F1 [10f, 13f], B1 [13f, 19f]; its stage 0 B1 [19f, 21f]. Range 1-3 holds
  // 6e6 bytes, three buckets of 2e6 (grad_bucket_bytes), one per layer from layer 3 down: "one" is done
  // with them at 6f, 8f, 10f, "two" at 15f, 17f, 19f, the later, and each bucket's ring (about 7 us on
  // NVSwitch) ends long before the next is ready. Range 0 (one bucket) waits for "two"'s stage 0: 21f.
  v1::Plan plan = PipelinesPlan(
      4, {{"one", 1, 1, {{"fast", 0, 1, 1, 4}}}, {"two", 2, 1, {{"fast", 2, 1, 1, 1}, {"fast", 3, 1, 1, 3}}}});
  plan.set_overlap_grad_reduce(true);
  const Time f = PipeForward(1, kPipeFastTflops);
  const auto whole = MakeSimulation(MakeInputs(PipelineCluster(4), plan));
  REQUIRE(whole.pipeline_sync.groups.size() == 2);
  CHECK(whole.pipeline_sync.groups[1].start == 19 * f);  // one bucket: once layer 1 is done
  CHECK(whole.pipeline_sync.groups[0].start == 21 * f);
  plan.set_grad_bucket_bytes(2000000);
  const auto sim = MakeSimulation(MakeInputs(PipelineCluster(4), plan));
  const auto& g = sim.pipeline_sync.groups;
  REQUIRE(g.size() == 2);
  CHECK(hetsim::executor::RangeBuckets(g[1]) == std::vector<int64_t>{2000000, 2000000, 2000000});
  CHECK(g[1].bucket_start == std::vector<Time>{15 * f, 17 * f, 19 * f});
  CHECK(g[1].start == 15 * f);
  CHECK(g[1].finish == g[1].bucket_finish[2]);
  // The last bucket moves a third of the range's bytes from the same start: the range ends sooner.
  CHECK(g[1].finish < whole.pipeline_sync.groups[1].finish);
  CHECK(g[0].bucket_start == std::vector<Time>{21 * f});
  CHECK(g[0].finish == whole.pipeline_sync.groups[0].finish);
  // Without the overlap every bucket is ready at the last backward's end and they run one after another.
  plan.set_overlap_grad_reduce(false);
  const auto late = MakeSimulation(MakeInputs(PipelineCluster(4), plan));
  const auto& l = late.pipeline_sync.groups[1];
  CHECK(l.bucket_start[0] == 19 * f);
  CHECK(l.bucket_start[1] == l.bucket_finish[0]);
  CHECK(l.bucket_start[2] == l.bucket_finish[1]);
  // A bucket size of the whole range or more (or none) is today's one all-reduce per range.
  plan.set_grad_bucket_bytes(0);
  const auto none = MakeSimulation(MakeInputs(PipelineCluster(4), plan));
  plan.set_grad_bucket_bytes(6000000);
  const auto big = MakeSimulation(MakeInputs(PipelineCluster(4), plan));
  CHECK(big.pipeline_sync.iteration_time == none.pipeline_sync.iteration_time);
  CHECK(big.pipeline_sync.groups[1].finish == none.pipeline_sync.groups[1].finish);
  CHECK(none.pipeline_sync.groups[1].start == 19 * f);
}

TEST_CASE("Under ZeRO-1/2 with overlap_param_gather the ranges gather at the start, as the DP 2 plan does",
          "[executor][pipelines][zero]") {
  // Plan.overlap_param_gather: the step before's all-gathers run at the iteration's start and each
  // stage's first forward waits for its own (the DP plan's per stage, here per range: the ranges are the
  // stages); the stage ends at its step. Same rings, same waits, same ends as the DP 2 plan.
  const v1::Cluster cluster = PipelineCluster(4);
  for (const int zero : {1, 2}) {
    INFO("zero_stage " << zero);
    hetsim::driver::SimulateOptions options;
    options.network_mode = NetworkMode::kMaxMinFair;
    v1::Plan dp_plan = WithZero(TwoReplicaPlan(0), zero);
    dp_plan.set_overlap_param_gather(true);
    v1::Plan pl_plan = WithZero(
        PipelinesPlan(2, {{"p0", 4, 1, {{"fast", 0}, {"fast", 2}}}, {"p1", 4, 1, {{"fast", 1}, {"fast", 3}}}}), zero);
    pl_plan.set_overlap_param_gather(true);
    const auto dp = MakeSimulation(MakeInputs(cluster, dp_plan), options);
    const auto pl = MakeSimulation(MakeInputs(cluster, pl_plan), options);
    CheckSameIteration(dp, pl);
    pl_plan.set_overlap_param_gather(false);
    const auto after = MakeSimulation(MakeInputs(cluster, pl_plan), options);
    const auto& g = pl.pipeline_sync.groups;
    REQUIRE(g.size() == 2);
    for (int r = 0; r < 2; ++r) {
      CHECK(g[r].gather_at_start);
      CHECK(g[r].gather_start == 0);
      // The same ring as after the step, from the start.
      const auto& late = after.pipeline_sync.groups[r];
      CHECK(g[r].gather_finish == late.gather_finish - late.gather_start);
      for (int p = 0; p < 2; ++p) {
        const auto& run = pl.pipelines[p];
        // Stage r's first forward waits for its range's gather; the stage ends at its step.
        const Time first = run.result.node_start[run.setup->dag->Forward(0, r)];
        if (r == 0) CHECK(first == g[0].gather_finish);
        CHECK(first >= g[r].gather_finish);
        CHECK(run.result.stage_end[r] == run.result.grad_sync_end[r] + run.setup->stages[r].optimizer_time);
        CHECK(hetsim::executor::EarlyGatherWait(*run.setup, run.result, r) ==
              hetsim::executor::EarlyGatherWait(*dp.setup, dp.result, r));
      }
    }
    // Stage 0's gather is exposed either way, before its first forward instead of after its step, and
    // stage 1's hides behind stage 0's forward, which shifts it as much: the same ends.
    CHECK(pl.pipeline_sync.iteration_time == after.pipeline_sync.iteration_time);
    CHECK(pl.pipelines[0].result.stage_end == after.pipelines[0].result.stage_end);
  }
}

// ZeRO-3 (FSDP) in a plan of pipelines: a range's parameters shard over its holders, every pass gathers its
// layers over the range's shard groups, the gradients reduce-scatter, nothing gathers after the step.
TEST_CASE("Two identical pipelines under ZeRO-3 run exactly as the plan of data_parallel 2",
          "[executor][pipelines][zero]") {
  // The DP plan's stage gathers each layer over its two replicas before every pass; the pipelines' range
  // is the same two GPUs: same gathers, same passes, same reduce-scatter, same shards.
  const v1::Cluster cluster = PipelineCluster(4);
  for (const bool prefetch : {false, true}) {
    for (const uint64_t bytes : {uint64_t{0}, uint64_t{1} << 20}) {
      INFO("zero3_prefetch " << prefetch << ", boundary bytes per sample " << bytes);
      hetsim::driver::SimulateOptions options;
      options.network_mode = NetworkMode::kMaxMinFair;
      v1::Plan dp_plan = WithZero(TwoReplicaPlan(bytes), 3);
      dp_plan.set_zero3_prefetch(prefetch);
      v1::Plan pl_plan = WithZero(
          PipelinesPlan(2, {{"p0", 4, 1, {{"fast", 0}, {"fast", 2}}}, {"p1", 4, 1, {{"fast", 1}, {"fast", 3}}}}, bytes),
          3);
      pl_plan.set_zero3_prefetch(prefetch);
      const auto dp = MakeSimulation(MakeInputs(cluster, dp_plan), options);
      const auto pl = MakeSimulation(MakeInputs(cluster, pl_plan), options);
      CheckSameIteration(dp, pl);
      for (int p = 0; p < 2; ++p) {
        for (int s = 0; s < 2; ++s) {
          const auto& mine = pl.pipelines[p].setup->stages[s];
          const auto& theirs = dp.setup->stages[s];
          CHECK(mine.cost.memory.param_bytes == theirs.cost.memory.param_bytes);
          CHECK(mine.cost.memory.ModelStateBytes() == theirs.cost.memory.ModelStateBytes());
          CHECK(mine.optimizer_time == theirs.optimizer_time);
          const auto& vs = pl.pipelines[p].setup->virtual_stages[s];
          CHECK(vs.forward_gather_exposed_time > 0);
          CHECK(vs.forward_gather_exposed_time == dp.setup->virtual_stages[s].forward_gather_exposed_time);
          CHECK(vs.backward_gather_exposed_time == dp.setup->virtual_stages[s].backward_gather_exposed_time);
        }
      }
      for (const auto& g : pl.pipeline_sync.groups) {
        CHECK(g.zero_stage == 3);
        CHECK(g.gather_start == hetsim::kNoTime);  // no gather after the step: the passes gather
      }
    }
  }
}

TEST_CASE("Under ZeRO-3 every pass gathers its layer over the range's n holders, at their own micro-batch sizes",
          "[executor][pipelines][zero]") {
  // Three single-stage pipelines of one layer (1e6 FP16 parameters) on GPUs 0-2 of NVSwitch, 2
  // microbatches each (of 1, 2 and 1 samples): one range over n = 3 GPUs. Each forward and each backward
  // gathers the B = 2 MB of parameters: a ring all-gather moves (n - 1) / n x B through each GPU's link,
  // G = 2/3 x B / bandwidth; the gradients reduce-scatter as long. Each GPU keeps 1/n of the 16 bytes per
  // parameter (weights, gradients, Adam's 12).
  const double bandwidth = kNvswitchGbps * 1e9 / 8;
  const double b = 2e6;
  const v1::Plan plan = WithZero(
      PipelinesPlan(1, {{"a", 2, 1, {{"fast", 0}}}, {"b", 4, 2, {{"fast", 1}}}, {"c", 2, 1, {{"fast", 2}}}}), 3);
  const auto sim = MakeSimulation(MakeInputs(PipelineCluster(4), plan));
  const auto& g = sim.pipeline_sync.groups;
  REQUIRE(g.size() == 1);
  CHECK(g[0].groups == hetsim::GpuGroups({{0, 1, 2}}));
  CHECK(g[0].param_bytes == 2000000);
  const double gather = 2.0 / 3 * b / bandwidth;
  CHECK(hetsim::TimeToSeconds(g[0].finish - g[0].start) == Approx(gather).epsilon(1e-6));
  CHECK(g[0].gather_start == hetsim::kNoTime);
  const Time f = PipeForward(1, kPipeFastTflops);
  for (int p = 0; p < 3; ++p) {
    INFO("pipeline " << p);
    const auto& setup = *sim.pipelines[p].setup;
    const Time G = setup.virtual_stages[0].forward_gather_exposed_time;
    CHECK(hetsim::TimeToSeconds(G) == Approx(gather).epsilon(1e-6));
    CHECK(setup.virtual_stages[0].backward_gather_exposed_time == G);
    // 1F1B on one stage: F0 B0 F1 B1, each pass its compute (f a sample forward, 2f backward) and G. Each
    // pass's gather is one collective over the three (gather_calls.h): every call starts with "b"'s, the
    // slowest's, so every pipeline's passes start with "b"'s and the last backward starts at "b"'s B1.
    const int64_t samples = p == 1 ? 2 : 1;
    const Time b1 = 2 * f + G + 4 * f + G + 2 * f + G;  // "b"'s F0, B0, F1
    CHECK(sim.pipelines[p].result.last_backward_end[0] == b1 + 2 * samples * f + G);
    CHECK(sim.pipelines[p].result.gather_call_wait[0] == (p == 1 ? 0 : 4 * f));
    const auto& stage = setup.stages[0];
    CHECK(stage.cost.memory.param_bytes == 666667);
    CHECK(stage.cost.memory.grad_bytes == 666667);
    CHECK(stage.cost.memory.optimizer_bytes == 4000000);
    // The reduce-scatter starts at the slowest holder's last backward; each steps after it and ends.
    CHECK(sim.pipelines[p].result.stage_end[0] == g[0].finish + stage.optimizer_time);
  }
  CHECK(g[0].start == sim.pipelines[1].result.last_backward_end[0]);
  CHECK(sim.report.gradient_groups(0).zero_stage() == 3);
  CHECK(sim.report.gradient_groups(0).param_bytes_per_gpu() == 2000000);
  CHECK(sim.report.gradient_groups(0).param_gather_start_ms() == 0);  // no gather after the step
}

TEST_CASE("Under ZeRO-3 with different cuts a stage gathers each layer over its own range's holders",
          "[executor][pipelines][zero]") {
  // Pipeline "one" holds both layers on GPU 0, "two" layer 0 on GPU 2 and layer 1 on GPU 3: ranges
  // {0, 2} and {0, 3}. GPU 0 gathers each layer over its pair, G = 1/2 x B / bandwidth each, 2 G a pass
  // (with zero3_prefetch the second layer's gather hides behind the first's compute: G); GPUs 2 and 3
  // gather their one layer, G. GPU 0 keeps half of both layers' 16 bytes per parameter, GPUs 2 and 3
  // half of one's.
  const double bandwidth = kNvswitchGbps * 1e9 / 8;
  const double gather = 0.5 * 2e6 / bandwidth;
  for (const bool prefetch : {false, true}) {
    INFO("zero3_prefetch " << prefetch);
    v1::Plan plan = WithZero(
        PipelinesPlan(2, {{"one", 4, 1, {{"fast", 0, 1, 1, 2}}}, {"two", 4, 1, {{"fast", 2}, {"fast", 3}}}}), 3);
    plan.set_zero3_prefetch(prefetch);
    const auto sim = MakeSimulation(MakeInputs(PipelineCluster(4), plan));
    const auto& g = sim.pipeline_sync.groups;
    REQUIRE(g.size() == 2);
    CHECK(g[0].groups == hetsim::GpuGroups({{0, 2}}));
    CHECK(g[1].groups == hetsim::GpuGroups({{0, 3}}));
    const auto& one = *sim.pipelines[0].setup;
    const double one_exposed = prefetch ? gather : 2 * gather;
    CHECK(hetsim::TimeToSeconds(one.virtual_stages[0].forward_gather_exposed_time) ==
          Approx(one_exposed).epsilon(1e-6));
    CHECK(hetsim::TimeToSeconds(one.virtual_stages[0].backward_gather_exposed_time) ==
          Approx(one_exposed).epsilon(1e-6));
    for (int s = 0; s < 2; ++s) {
      const auto& two = *sim.pipelines[1].setup;
      CHECK(hetsim::TimeToSeconds(two.virtual_stages[s].forward_gather_exposed_time) == Approx(gather).epsilon(1e-6));
      CHECK(two.stages[s].cost.memory.ModelStateBytes() == 8000000);
    }
    CHECK(one.stages[0].cost.memory.param_bytes == 2000000);
    CHECK(one.stages[0].cost.memory.ModelStateBytes() == 16000000);
  }
}

TEST_CASE("One pipeline of a mixed stage runs exactly as the plan of that stage", "[executor][pipelines][replicas]") {
  // An A100 replica of 2 samples beside a V100 replica of 1 (half its peak) per microbatch of 3, 4
  // microbatches: as a plan of one stage and as a plan of one pipeline, the range being the stage.
  const v1::Cluster cluster = PipelineCluster(4);
  const std::vector<hetsim::testing::ReplicaGroupSpec> groups = {{"fast", 0, 1, 1, 1, 2}, {"slow", 0, 1, 1, 1, 1}};
  v1::Plan plain = PipelinesPlan(1, {{"mix", 12, 3, {{"fast", 0}}}});
  *plain.add_stages() = plain.pipelines(0).stages(0);
  plain.clear_pipelines();
  plain.set_micro_batch_size(3);
  hetsim::testing::SetReplicaGroups(*plain.mutable_stages(0), groups);
  v1::Plan pipelines = PipelinesPlan(1, {{"mix", 12, 3, {{"fast", 0}}}});
  hetsim::testing::SetReplicaGroups(*pipelines.mutable_pipelines(0)->mutable_stages(0), groups);
  const auto one = MakeSimulation(MakeInputs(cluster, plain));
  const auto pl = MakeSimulation(MakeInputs(cluster, pipelines));
  REQUIRE(pl.pipelines.size() == 1);
  CHECK(pl.pipeline_sync.iteration_time == one.result.iteration_time);
  CHECK(pl.pipelines[0].result.last_backward_end == one.result.last_backward_end);
  CHECK(pl.pipelines[0].result.stage_end == one.result.stage_end);
  const auto& g = pl.pipeline_sync.groups;
  REQUIRE(g.size() == 1);
  CHECK(g[0].groups == std::vector<std::vector<hetsim::GpuId>>{one.setup->stages[0].layout.DataGroup(0)});
  CHECK(g[0].groups == hetsim::GpuGroups({{0, 4}}));
  CHECK(g[0].bytes == one.setup->stages[0].grad_buckets[0].bytes);
  // Shares proportional to speed: the groups finish every pass together, as in the plain plan.
  CHECK(pl.pipelines[0].setup->virtual_stages[0].forward_wait_time == 0);
  CHECK(pl.pipelines[0].setup->virtual_stages[0].forward_time() == PipeForward(2, kPipeFastTflops));
}

TEST_CASE("A mixed stage's replicas join its layer range's shard groups at their own TP",
          "[executor][pipelines][replicas]") {
  // Pipeline "mix": one stage of an A100 TP-2 replica (GPUs 0-1, 2 samples) and a V100 replica (GPU 4,
  // 1 sample); pipeline "plain": GPU 2 at 2 samples. Finest TP 2: shard 0 is GPU 0 (rank 0 of 2), GPU 4
  // (TP 1: every shard) and GPU 2; shard 1 GPU 1, 4 and 2; each carries half the layer's gradients.
  // Every pass of either pipeline takes 2 samples' forward on an A100 (the TP-2 replica: 2 samples at
  // twice the GPUs), so both end together.
  v1::Plan plan = PipelinesPlan(1, {{"mix", 12, 3, {{"fast", 0}}}, {"plain", 8, 2, {{"fast", 2}}}});
  hetsim::testing::SetReplicaGroups(*plan.mutable_pipelines(0)->mutable_stages(0),
                                    {{"fast", 0, 2, 2, 1, 2}, {"slow", 0, 1, 1, 1, 1}});
  const auto sim = MakeSimulation(MakeInputs(PipelineCluster(4), plan));
  const auto& g = sim.pipeline_sync.groups;
  REQUIRE(g.size() == 1);
  CHECK(g[0].shards == 2);
  CHECK(g[0].groups == hetsim::GpuGroups({{0, 4, 2}, {1, 4, 2}}));
  CHECK(g[0].bytes == 1000000);
  CHECK(sim.pipelines[1].result.last_backward_end[0] == 4 * 3 * PipeForward(2, kPipeFastTflops));
  CHECK(sim.report.gradient_groups(0).holders(0) == "mix stage 0");
}

TEST_CASE("Under ZeRO-3 pipelines of different microbatch counts: the short one joins the rest, the range waits",
          "[executor][pipelines][zero]") {
  // Two 1-stage pipelines of one layer (1e6 FP16 parameters) on GPUs 0 and 1 of NVSwitch, m1 = 4 and
  // m2 = 2 microbatches of one sample: one range over n = 2 GPUs. Every pass gathers the B = 2 MB in
  // G = 1/2 x B / bandwidth; "short" runs its 2 microbatches and then joins the 4 gathers of "long"'s last
  // 2 (collectives match per call) without computing. The range reduce-scatters (as long as a gather)
  // from the last holder's last backward, 4 (3 f + 2 G), and both step after it: the iteration is
  // m1 (3 f + 2 G) + G + step, each GPU keeping half of the 16 bytes per parameter.
  const double bandwidth = kNvswitchGbps * 1e9 / 8;
  const double gather = 0.5 * 2e6 / bandwidth;
  const v1::Plan plan = WithZero(PipelinesPlan(1, {{"long", 4, 1, {{"fast", 0}}}, {"short", 2, 1, {{"fast", 1}}}}), 3);
  const auto sim = MakeSimulation(MakeInputs(PipelineCluster(4), plan));
  const auto& g = sim.pipeline_sync.groups;
  REQUIRE(g.size() == 1);
  CHECK(g[0].groups == hetsim::GpuGroups({{0, 1}}));
  const Time f = PipeForward(1, kPipeFastTflops);
  const Time G = sim.pipelines[0].setup->virtual_stages[0].forward_gather_exposed_time;
  CHECK(hetsim::TimeToSeconds(G) == Approx(gather).epsilon(1e-6));
  CHECK(sim.pipelines[1].setup->virtual_stages[0].forward_gather_exposed_time == G);
  CHECK(sim.pipelines[0].result.last_backward_end[0] == 4 * (3 * f + 2 * G));
  CHECK(sim.pipelines[1].result.last_backward_end[0] == 2 * (3 * f + 2 * G));
  CHECK(g[0].start == 4 * (3 * f + 2 * G));
  CHECK(hetsim::TimeToSeconds(g[0].finish - g[0].start) == Approx(gather).epsilon(1e-6));
  for (int p = 0; p < 2; ++p) {
    const auto& stage = sim.pipelines[p].setup->stages[0];
    CHECK(stage.cost.memory.param_bytes == 1000000);
    CHECK(stage.cost.memory.ModelStateBytes() == 8000000);
    CHECK(sim.pipelines[p].result.stage_end[0] == g[0].finish + stage.optimizer_time);
  }
  CHECK(sim.pipeline_sync.iteration_time ==
        4 * (3 * f + 2 * G) + (g[0].finish - g[0].start) + sim.pipelines[0].setup->stages[0].optimizer_time);
}

TEST_CASE("Under ZeRO-3 a pipeline faster per microbatch waits at each gather call for the slower holder's",
          "[executor][pipelines][zero]") {
  // "long": m1 = 4 microbatches of 1 sample on GPU 0; "short": m2 = 2 microbatches of 2 samples on GPU 1,
  // each pass twice as long in compute; one range over both, every pass's gather G one collective over the
  // two, matched per call (gather_calls.h). Each call starts when the later holder makes it:
  //   call 0 (F0) at 0; 1 (B0) at short's F0 end 2f + G; 2 (F1) at 6f + 2G; 3 (B1) at 8f + 3G;
  // short's B1 ends at 12f + 4G and it joins the rest, so long's F2 (ready at 10f + 4G) starts there too.
  // Long's last backward ends at m2 (6f + 2G) + (m1 - m2)(3f + 2G) = 18f + 8G (12f + 8G if every holder
  // joined each gather at once), after waiting f + 2f + f + 2f = 6f; the iteration is 18f + 8G + G + step.
  const v1::Plan plan = WithZero(PipelinesPlan(1, {{"long", 4, 1, {{"fast", 0}}}, {"short", 4, 2, {{"fast", 1}}}}), 3);
  const auto sim = MakeSimulation(MakeInputs(PipelineCluster(4), plan));
  const auto& g = sim.pipeline_sync.groups;
  REQUIRE(g.size() == 1);
  CHECK(g[0].groups == hetsim::GpuGroups({{0, 1}}));
  const Time f = PipeForward(1, kPipeFastTflops);
  const Time G = sim.pipelines[0].setup->virtual_stages[0].forward_gather_exposed_time;
  CHECK(hetsim::TimeToSeconds(G) == Approx(0.5 * 2e6 / (kNvswitchGbps * 1e9 / 8)).epsilon(1e-6));
  CHECK(sim.pipelines[1].setup->virtual_stages[0].forward_gather_exposed_time == G);
  const auto& long_run = sim.pipelines[0].result;
  const auto& short_run = sim.pipelines[1].result;
  CHECK(short_run.last_backward_end[0] == 12 * f + 4 * G);
  CHECK(short_run.gather_call_wait[0] == 0);
  CHECK(long_run.last_backward_end[0] == 18 * f + 8 * G);
  CHECK(long_run.gather_call_wait[0] == 6 * f);
  CHECK(g[0].start == 18 * f + 8 * G);
  CHECK(sim.pipeline_sync.iteration_time ==
        18 * f + 8 * G + (g[0].finish - g[0].start) + sim.pipelines[0].setup->stages[0].optimizer_time);
  // Every pass of long starts where its call's later holder made it: B0, F1, B1 with short's, F2 at its join.
  const auto& dag = *sim.pipelines[0].setup->dag;
  CHECK(long_run.node_start[dag.Backward(0, 0)] == 2 * f + G);
  CHECK(long_run.node_start[dag.Forward(1, 0)] == 6 * f + 2 * G);
  CHECK(long_run.node_start[dag.Backward(1, 0)] == 8 * f + 3 * G);
  CHECK(long_run.node_start[dag.Forward(2, 0)] == 12 * f + 4 * G);
  // The report shows the waits per stage: the field, the text line, the HTML page's column.
  REQUIRE(sim.report.stages_size() == 2);
  CHECK(sim.report.stages(0).gather_call_wait_ms() == hetsim::TimeToMilliseconds(6 * f));
  CHECK(sim.report.stages(1).gather_call_wait_ms() == 0);
  CHECK_THAT(
      hetsim::traces::FormatReportTable(sim.report),
      Catch::Contains(absl::StrFormat("ZeRO-3 gather calls (waiting for the ranges' other holders): stage 0 +%.1f ms\n",
                                      hetsim::TimeToMilliseconds(6 * f))));
  const std::string html = hetsim::traces::html::RunReportHtml({.report = &sim.report});
  CHECK_THAT(html, Catch::Contains("gather call wait ms"));
}

TEST_CASE("Under ZeRO-3 a stage holding two ranges waits at the second range's first layer, not at its start",
          "[executor][pipelines][zero]") {
  // "one": 2 microbatches of 1 sample on GPU 0, both layers; "two": 1 microbatch of 2 samples, layer 0 on
  // GPU 2 and layer 1 on GPU 3. Ranges {0, 2} (layer 0) and {0, 3} (layer 1), each layer's gather G. One's
  // forward is layer 0 (G + f) then layer 1 (G + f), its backward layer 1 (G + 2f) then layer 0 (G + 2f);
  // two's stages F = 2f + G, B = 4f + G. A pass calls both ranges' gathers when ready and waits for each at
  // its first layer:
  //   one's F0 starts at 0 (layer 0's call 0 with two's stage 0 at 0) and reaches layer 1 at f + G, whose
  //   call 0 starts at 2f + G (two's stage 1 ready): it ends at 2f + G + f + G = 3f + 2G (f held);
  //   one's B0, ready at 3f + 2G, starts with layer 1's call 1 at 4f + 2G (two's stage 1's B0 ready) and
  //   reaches layer 0 at 2f + G after it, whose call 1 starts at 8f + 3G (two's stage 0's B0 ready): it
  //   ends at 8f + 3G + 2f + G = 10f + 4G (2f held);
  //   two's stage 0 ends at 12f + 4G and joins the rest; one's F1, ready at 10f + 4G, starts there and
  //   ends at 14f + 6G, its B1 at 18f + 8G. One waited f + f + 2f + 2f = 6f, two nothing.
  // A held pass is recorded as starting that much later (F0 at f, B0 at 6f + 2G), as the planner prices it.
  // (With every pass waiting for all its calls at its start, as until session 38: 18f + 10G.)
  const v1::Plan plan =
      WithZero(PipelinesPlan(2, {{"one", 2, 1, {{"fast", 0, 1, 1, 2}}}, {"two", 2, 2, {{"fast", 2}, {"fast", 3}}}}), 3);
  const auto sim = MakeSimulation(MakeInputs(PipelineCluster(4), plan));
  const auto& g = sim.pipeline_sync.groups;
  REQUIRE(g.size() == 2);
  const Time f = PipeForward(1, kPipeFastTflops);
  const Time G = sim.pipelines[1].setup->virtual_stages[0].forward_gather_exposed_time;
  CHECK(hetsim::TimeToSeconds(G) == Approx(0.5 * 2e6 / (kNvswitchGbps * 1e9 / 8)).epsilon(1e-6));
  CHECK(sim.pipelines[0].setup->virtual_stages[0].forward_gather_exposed_time == 2 * G);
  const auto& one = sim.pipelines[0].result;
  const auto& two = sim.pipelines[1].result;
  const auto& dag = *sim.pipelines[0].setup->dag;
  CHECK(one.node_start[dag.Forward(0, 0)] == f);
  CHECK(one.node_finish[dag.Forward(0, 0)] == 3 * f + 2 * G);
  CHECK(one.node_start[dag.Backward(0, 0)] == 6 * f + 2 * G);
  CHECK(one.node_finish[dag.Backward(0, 0)] == 10 * f + 4 * G);
  CHECK(one.node_start[dag.Forward(1, 0)] == 12 * f + 4 * G);
  CHECK(one.last_backward_end[0] == 18 * f + 8 * G);
  CHECK(one.gather_call_wait[0] == 6 * f);
  CHECK(two.last_backward_end[0] == 12 * f + 4 * G);
  CHECK(two.last_backward_end[1] == 8 * f + 3 * G);
  CHECK(two.gather_call_wait[0] == 0);
  CHECK(two.gather_call_wait[1] == 0);
}

TEST_CASE("Under ZeRO-3 with the tied sync each copy gathers the tied matrix over every copy",
          "[executor][pipelines][tied][zero]") {
  // The tied pipelines at ZeRO-3: "one" holds the 4 layers on GPU 0, "two" cuts them 2 + 2 on GPUs 2
  // and 3 (2 and 1 microbatches: the counts differ). The ranges, without the matrix, gather over {0, 2}
  // and {0, 3} (G = 1/2 x bytes / bandwidth), the matrix over its three copies {0, 2, 3} (2/3 x V h x 2
  // bytes / bandwidth), with the embedding on GPUs 0 and 2 and with the head on GPU 3, once a pass. Each
  // GPU keeps its shards of everything it holds (16 bytes per parameter over the group's size).
  const std::vector<Pipe> pipes = {{"one", 2, 1, {{"fast", 0, 1, 1, 4}}},
                                   {"two", 1, 1, {{"fast", 2, 1, 1, 2}, {"fast", 3, 1, 1, 2}}}};
  const double bandwidth = kNvswitchGbps * 1e9 / 8;
  const auto sim = MakeSimulation(MakeInputs(PipelineCluster(4), WithZero(TiedPipelinesPlan(pipes, true), 3)));
  const auto& g = sim.pipeline_sync.groups;
  REQUIRE(g.size() == 3);
  REQUIRE(g[2].tied);
  const auto matrix = static_cast<int64_t>(kTiedVocab * kTiedHidden * 2);
  CHECK(g[2].param_bytes == matrix);
  CHECK(g[2].groups == hetsim::GpuGroups({{0, 2, 3}}));
  const double tied = 2.0 / 3 * static_cast<double>(matrix) / bandwidth;
  const double r0 = 0.5 * static_cast<double>(g[0].param_bytes) / bandwidth;
  const double r1 = 0.5 * static_cast<double>(g[1].param_bytes) / bandwidth;
  const auto exposed = [&](int p, int s) {
    const auto& vs = sim.pipelines[p].setup->virtual_stages[s];
    CHECK(vs.backward_gather_exposed_time == vs.forward_gather_exposed_time);
    return hetsim::TimeToSeconds(vs.forward_gather_exposed_time);
  };
  CHECK(exposed(0, 0) == Approx(r0 + r1 + tied).epsilon(1e-4));
  CHECK(exposed(1, 0) == Approx(r0 + tied).epsilon(1e-4));
  CHECK(exposed(1, 1) == Approx(r1 + tied).epsilon(1e-4));
  const double p01 = static_cast<double>(g[0].param_bytes) / 2;
  const double p23 = static_cast<double>(g[1].param_bytes) / 2;
  const double t = static_cast<double>(matrix) / 2;
  const auto& one = sim.pipelines[0].setup->stages[0].cost.memory;
  const auto& first = sim.pipelines[1].setup->stages[0].cost.memory;
  const auto& last = sim.pipelines[1].setup->stages[1].cost.memory;
  CHECK(static_cast<double>(one.ModelStateBytes()) == Approx(16 * (p01 / 2 + p23 / 2 + t / 3)).epsilon(1e-6));
  CHECK(static_cast<double>(first.ModelStateBytes()) == Approx(16 * (p01 / 2 + t / 3)).epsilon(1e-6));
  CHECK(static_cast<double>(last.param_bytes) == Approx(2 * (p23 / 2 + t / 3)).epsilon(1e-6));
  // The matrix reduce-scatters once its last copy's backward has reached the head (the tied sync), and
  // each copy steps after all its groups.
  for (const auto& group : g) CHECK(group.gather_start == hetsim::kNoTime);
  const auto& end = sim.pipeline_sync.stage_end;
  CHECK(end[1][1] == std::max(g[1].finish, g[2].finish) + sim.pipelines[1].setup->stages[1].optimizer_time);
}

TEST_CASE("Under ZeRO a mixed stage's groups shard its range over every replica, each at its own TP",
          "[executor][pipelines][replicas][zero]") {
  // The plan of the test above at ZeRO-1, 2 and 3: the range of one layer (P = 1e6 FP16 parameters) shards
  // over its n = 3 replicas (the A100 TP-2 replica, the V100 and GPU 2). A GPU of the TP-2 replica holds
  // P / 2 and keeps 1/3 of that; the V100 and GPU 2 hold P and keep 1/3 of it (Adam's 12 bytes per
  // parameter, ZeRO-2 the gradients' 2 too, ZeRO-3 the weights' 2 too). The V100 is in both shard groups
  // and reduce-scatters its whole 2 MB of gradients, (n - 1) / n of it through the 10 Gb/s link to the
  // A100 island: 2/3 x 2 MB / 1.25 GB/s; under ZeRO-1/2 its parameters all-gather back as long.
  const double p = 1e6;
  const double ethernet = 10e9 / 8;
  for (const int zero : {1, 2, 3}) {
    INFO("zero_stage " << zero);
    v1::Plan plan = PipelinesPlan(1, {{"mix", 12, 3, {{"fast", 0}}}, {"plain", 8, 2, {{"fast", 2}}}});
    hetsim::testing::SetReplicaGroups(*plan.mutable_pipelines(0)->mutable_stages(0),
                                      {{"fast", 0, 2, 2, 1, 2}, {"slow", 0, 1, 1, 1, 1}});
    const auto sim = MakeSimulation(MakeInputs(PipelineCluster(4), WithZero(plan, zero)));
    const auto& g = sim.pipeline_sync.groups;
    REQUIRE(g.size() == 1);
    CHECK(g[0].groups == hetsim::GpuGroups({{0, 4, 2}, {1, 4, 2}}));
    const auto& mix = sim.pipelines[0].setup->stages[0];
    REQUIRE(mix.replica_groups.size() == 2);
    const auto states = [&](double held) {
      const double weights = zero == 3 ? 2 * held / 3 : 2 * held;
      const double grads = zero >= 2 ? 2 * held / 3 : 2 * held;
      return weights + grads + 12 * held / 3;
    };
    CHECK(static_cast<double>(mix.replica_groups[0].cost.memory.ModelStateBytes()) ==
          Approx(states(p / 2)).epsilon(1e-6));
    CHECK(static_cast<double>(mix.replica_groups[1].cost.memory.ModelStateBytes()) == Approx(states(p)).epsilon(1e-6));
    CHECK(static_cast<double>(sim.pipelines[1].setup->stages[0].cost.memory.ModelStateBytes()) ==
          Approx(states(p)).epsilon(1e-6));
    // Each group steps its own shard on its own GPU: the V100's third of P at its bandwidth, the A100's
    // sixth at its; the stage waits for the longer.
    CHECK(mix.replica_groups[1].optimizer_time > mix.replica_groups[0].optimizer_time);
    CHECK(mix.optimizer_time == mix.replica_groups[1].optimizer_time);
    CHECK(hetsim::TimeToSeconds(g[0].finish - g[0].start) == Approx(2.0 / 3 * 2 * p / ethernet).epsilon(1e-3));
    if (zero < 3) {
      CHECK(hetsim::TimeToSeconds(g[0].gather_finish - g[0].gather_start) ==
            Approx(2.0 / 3 * 2 * p / ethernet).epsilon(1e-3));
    }
    CHECK(sim.pipeline_sync.stage_end[0][0] >= g[0].finish + mix.optimizer_time);
  }
}

TEST_CASE("Under ZeRO a mixed stage's small GPU fits where its states unsharded do not, its group alone",
          "[executor][pipelines][replicas][zero]") {
  // The plan above with the V100 made 10 MiB: without ZeRO it holds the layer's 16 bytes per parameter
  // (15.3 MiB) and is out of memory, its group line and the report say so and the A100 group's does not;
  // at ZeRO-3 over the range's 3 replicas it keeps 5.1 MiB of states and fits.
  v1::Cluster cluster = PipelineCluster(4);
  cluster.mutable_gpu_types(1)->set_hbm_gib(10.0 / 1024);
  for (const int zero : {0, 3}) {
    INFO("zero_stage " << zero);
    v1::Plan plan = PipelinesPlan(1, {{"mix", 12, 3, {{"fast", 0}}}, {"plain", 8, 2, {{"fast", 2}}}});
    hetsim::testing::SetReplicaGroups(*plan.mutable_pipelines(0)->mutable_stages(0),
                                      {{"fast", 0, 2, 2, 1, 2}, {"slow", 0, 1, 1, 1, 1}});
    const auto sim = MakeSimulation(MakeInputs(cluster, WithZero(plan, zero)));
    const auto& v100 = sim.pipelines[0].setup->stages[0].replica_groups[1];
    CHECK(static_cast<double>(v100.cost.memory.ModelStateBytes()) == Approx(zero == 3 ? 16e6 / 3 : 16e6));
    REQUIRE(sim.report.stages_size() == 2);
    const auto& lines = sim.report.stages(0).replica_groups();
    REQUIRE(lines.size() == 2);
    CHECK_FALSE(lines[0].oom());
    CHECK(lines[1].oom() == (zero == 0));
    CHECK(sim.report.oom() == (zero == 0));
    CHECK(lines[1].peak_memory_gib() * hetsim::kGiB >= static_cast<double>(v100.cost.memory.ModelStateBytes()));
  }
}
