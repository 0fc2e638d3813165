// The planner's view of a hand-written plan (`hetsim validate`): interleaved stages priced chunk by
// chunk with the plan's sequence parallelism, against the simulation of the same plan.
#include <catch2/catch.hpp>

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "planner/plan_reader.h"
#include "proto/resolve.h"
#include "service/driver/simulate.h"
#include "sim/executor/executor.h"
#include "sim/workload/model_cost.h"
#include "tests/base/time_io.h"
#include "tests/planner/planner_test_util.h"
#include "tests/sim/executor/context_parallel_util.h"
#include "tests/sim/executor/executor_test_util.h"
#include "tests/topology/topology_clusters.h"

namespace hetsim::planner {
namespace {

// 2 stages of TP 8 with sequence parallelism on two H100 nodes, 2 chunks each (8 blocks: each chunk
// 2 blocks, the embedding in front of the first, the head behind the last).
proto::PlanInputs InterleavedInputs() {
  v1::Cluster cluster = testing::H100Island(2, v1::SINGLE_SWITCH, 8);
  cluster.mutable_gpu_types(0)->set_preset("H100-SXM");
  v1::Plan plan;
  plan.set_name("interleaved");
  *plan.mutable_model() = testing::GqaModel(8, 2048);
  plan.set_global_batch_size(8);
  plan.set_micro_batch_size(1);
  plan.set_schedule(v1::INTERLEAVED_1F1B);
  plan.set_virtual_stages(2);
  for (int s = 0; s < 2; ++s) {
    v1::Stage* st = plan.add_stages();
    st->set_first_layer(s == 0 ? 0 : 5);
    st->set_num_layers(5);
    st->mutable_mesh()->set_island("a");
    st->mutable_mesh()->set_first_node(s);
    st->mutable_mesh()->set_node_count(1);
    st->mutable_mesh()->set_gpus_per_node(8);
    st->set_tensor_parallel(8);
    st->set_sequence_parallel(true);
  }
  return testing::MakeInputs(cluster, plan);
}

struct StageFigures {
  std::vector<Time> predicted_t, simulated_t;
  std::vector<int64_t> predicted_peak, simulated_peak;
  Time predicted_iteration = 0, simulated_iteration = 0;
};

// `hetsim validate`'s two sides of `in`: the plan reader's prediction and the simulation, per stage.
StageFigures BothSides(const proto::PlanInputs& in) {
  const workload::ModelCost model = workload::ModelCost::Create(proto::ResolveModel(in.model, "model"));
  auto cluster = testing::ClusterModelOf(in.cluster, model.dtype());
  REQUIRE(cluster.ok());
  const spec::PlanSpec plan = proto::ResolvePlan(in.plan, "plan");
  Profiler profiler = PlanProfiler(model, **cluster, plan);
  auto pred = PredictPlan(profiler, plan);
  INFO(pred.status().message());
  REQUIRE(pred.ok());
  auto sim = driver::SimulatePlan(in);
  REQUIRE(sim.ok());
  const executor::ExecutionSetup& setup = *sim->setup;
  const int S = setup.num_stages();
  REQUIRE(pred->stages.size() == static_cast<size_t>(S));
  StageFigures f;
  for (int i = 0; i < S; ++i) {
    Time t = 0;
    for (size_t k = i; k < setup.virtual_stages.size(); k += S) {
      t += setup.virtual_stages[k].forward_time() + setup.virtual_stages[k].backward_time();
    }
    int64_t peak = 0;
    for (const auto& [when, bytes] : executor::MemoryTimeline(setup, sim->result, i)) peak = std::max(peak, bytes);
    f.predicted_t.push_back(pred->stages[i].t);
    f.simulated_t.push_back(t);
    f.predicted_peak.push_back(pred->stages[i].peak_bytes);
    f.simulated_peak.push_back(peak);
  }
  f.predicted_iteration = pred->iteration;
  f.simulated_iteration = sim->result.iteration_time;
  return f;
}

TEST_CASE("plan reader: an interleaved stage is the sum of its chunks, with the plan's SP and TP overlap",
          "[planner][validate]") {
  proto::PlanInputs in = InterleavedInputs();
  const StageFigures plain = BothSides(in);
  in.plan.set_tp_comm_overlap(true);
  const StageFigures overlapped = BothSides(in);
  for (int i = 0; i < 2; ++i) {
    INFO("stage " << i);
    // Same cost model; the planner's TP collectives are alpha-beta rings rather than routed flows.
    CHECK(TimeToSeconds(plain.predicted_t[i]) == Approx(TimeToSeconds(plain.simulated_t[i])).epsilon(0.05));
    CHECK(static_cast<double>(plain.predicted_peak[i]) ==
          Approx(static_cast<double>(plain.simulated_peak[i])).epsilon(0.05));
    // The overlap hides the same time on both sides: the TP collectives (alpha-beta on the planner's
    // side, within 2% of the routed flows here), up to the compute.
    const double hidden_predicted = TimeToSeconds(plain.predicted_t[i] - overlapped.predicted_t[i]);
    const double hidden_simulated = TimeToSeconds(plain.simulated_t[i] - overlapped.simulated_t[i]);
    CHECK(hidden_simulated > 0);
    CHECK(hidden_predicted == Approx(hidden_simulated).epsilon(0.02));
  }
  CHECK(TimeToSeconds(plain.predicted_iteration) == Approx(TimeToSeconds(plain.simulated_iteration)).epsilon(0.10));
}

TEST_CASE("plan reader: PyTorch's async TP hides on both sides what the simulation hides", "[planner][validate]") {
  proto::PlanInputs in = InterleavedInputs();
  const StageFigures plain = BothSides(in);
  in.plan.set_tp_comm_overlap(true);
  const StageFigures te = BothSides(in);
  in.plan.set_pytorch_async_tp(true);
  const StageFigures async_tp = BothSides(in);
  for (int i = 0; i < 2; ++i) {
    INFO("stage " << i);
    const double hidden_predicted = TimeToSeconds(plain.predicted_t[i] - async_tp.predicted_t[i]);
    const double hidden_simulated = TimeToSeconds(plain.simulated_t[i] - async_tp.simulated_t[i]);
    CHECK(hidden_simulated > 0);
    CHECK(hidden_predicted == Approx(hidden_simulated).epsilon(0.02));
    // Async TP leaves the backward's collectives in order, which Transformer Engine's overlap hides: the
    // planner used to price async TP as Transformer Engine's overlap.
    CHECK(async_tp.predicted_t[i] > te.predicted_t[i]);
    CHECK(async_tp.simulated_t[i] > te.simulated_t[i]);
  }
}

TEST_CASE("plan reader: explicit chunk sizes share the stage's time and memory as laid out", "[planner][validate]") {
  proto::PlanInputs in = InterleavedInputs();
  const StageFigures equal = BothSides(in);
  // The same chunks written out (the embedding and 2 blocks, 2 blocks | 2 blocks, 2 blocks and the head)
  // predict the same; a skewed layout (1 + 4 | 4 + 1) keeps the stage totals and moves the pipeline.
  for (uint32_t layers : {3, 2, 2, 3}) in.plan.add_virtual_stage_layers(layers);
  const StageFigures written = BothSides(in);
  CHECK(written.predicted_iteration == equal.predicted_iteration);
  CHECK(written.simulated_iteration == equal.simulated_iteration);
  in.plan.clear_virtual_stage_layers();
  for (uint32_t layers : {1, 4, 4, 1}) in.plan.add_virtual_stage_layers(layers);
  const StageFigures skewed = BothSides(in);
  CHECK(skewed.simulated_iteration != equal.simulated_iteration);
  // Before the prediction read the sizes it cut every stage into equal chunks, 20-25% off here.
  CHECK(TimeToSeconds(skewed.predicted_iteration) == Approx(TimeToSeconds(skewed.simulated_iteration)).epsilon(0.10));
  for (int i = 0; i < 2; ++i) {
    INFO("stage " << i);
    CHECK(static_cast<double>(skewed.predicted_peak[i]) ==
          Approx(static_cast<double>(skewed.simulated_peak[i])).epsilon(0.10));
  }
}

TEST_CASE("plan reader: the asynchronous TP backward hides what the simulation hides", "[planner][validate][tp]") {
  proto::PlanInputs in = InterleavedInputs();
  const StageFigures plain = BothSides(in);
  in.plan.set_tp_backward_overlap(true);
  const StageFigures async = BothSides(in);
  for (int i = 0; i < 2; ++i) {
    INFO("stage " << i);
    // The reduce-scatters of the backward (sequence parallelism), under the column-parallel weight
    // gradients: alpha-beta rings on the planner's side, routed flows in the simulation.
    const double hidden_predicted = TimeToSeconds(plain.predicted_t[i] - async.predicted_t[i]);
    const double hidden_simulated = TimeToSeconds(plain.simulated_t[i] - async.simulated_t[i]);
    CHECK(hidden_simulated > 0);
    CHECK(hidden_predicted == Approx(hidden_simulated).epsilon(0.02));
  }
}

// Plan.grad_reduce_in_fp32 as the planner prices it: 4-byte gradient buffers, and the data-parallel
// sync as the all-reduce it is priced as. ZeRO-1 reduce-scatters the 4-byte gradients and gathers the
// 2-byte weights: an all-reduce of 3 bytes a parameter; without ZeRO an all-reduce of 4.
TEST_CASE("plan reader: FP32 gradients in the memory and the sync the planner prices", "[planner][validate]") {
  proto::PlanInputs in = InterleavedInputs();
  const workload::ModelCost model = workload::ModelCost::Create(proto::ResolveModel(in.model, "model"));
  auto cluster = testing::ClusterModelOf(in.cluster, model.dtype());
  REQUIRE(cluster.ok());
  in.plan.set_micro_batch_size(8);  // a sample per data-parallel replica
  Profiler plain = PlanProfiler(model, **cluster, proto::ResolvePlan(in.plan, "plan"));
  in.plan.set_grad_reduce_in_fp32(true);
  Profiler fp32 = PlanProfiler(model, **cluster, proto::ResolvePlan(in.plan, "plan"));
  for (const int zero : {0, 1}) {
    INFO("ZeRO " << zero);
    const IntraStageConfig cfg{.tensor_parallel = 1, .data_parallel = 8, .zero_stage = zero};
    const auto a = plain.PriceDirect(0, {1, 8}, cfg, 0, 5);
    const auto b = fp32.PriceDirect(0, {1, 8}, cfg, 0, 5);
    REQUIRE(a.has_value());
    REQUIRE(b.has_value());
    const double params = static_cast<double>(a->grad_sync_bytes) / 2;  // BF16: 2 bytes a parameter
    CHECK(static_cast<double>(b->grad_sync_bytes) == Approx((zero == 0 ? 4 : 3) * params).epsilon(1e-9));
    CHECK(static_cast<double>(b->state_bytes - a->state_bytes) == Approx(2 * params).epsilon(1e-9));
    CHECK(b->grad_sync > a->grad_sync);
  }
}

// Every cost switch of a read plan reaches the planner's pricing (spec::CostSwitches): PyTorch's eager
// kernels and Megatron-LM v1's unfused kernels make the planner's forward dearer, as they make the
// simulator's, and by the same amount.
TEST_CASE("plan reader: the plan's kernel switches priced as the simulator runs them", "[planner][validate]") {
  for (const auto set : {&v1::Plan::set_eager_kernels, &v1::Plan::set_unfused_elementwise}) {
    const proto::PlanInputs fused = InterleavedInputs();
    proto::PlanInputs eager = fused;
    (eager.plan.*set)(true);
    const StageFigures a = BothSides(fused);
    const StageFigures b = BothSides(eager);
    for (size_t i = 0; i < a.predicted_t.size(); ++i) {
      INFO("stage " << i);
      const Time predicted_extra = b.predicted_t[i] - a.predicted_t[i];
      const Time simulated_extra = b.simulated_t[i] - a.simulated_t[i];
      CHECK(simulated_extra > 0);
      CHECK(TimeToSeconds(predicted_extra) == Approx(TimeToSeconds(simulated_extra)).epsilon(0.02));
    }
  }
}

using testing::TiedModel;

constexpr double kTiedMatrixFp16Bytes = 32000.0 * 1024 * 2;

// The model's prediction of `in` as `hetsim validate` makes it (a plan of pipelines or of one).
Prediction PredictionOf(const proto::PlanInputs& in) {
  const workload::ModelCost model = workload::ModelCost::Create(proto::ResolveModel(in.model, "model"));
  auto cluster = testing::ClusterModelOf(in.cluster, model.dtype());
  REQUIRE(cluster.ok());
  const spec::PlanSpec plan = proto::ResolvePlan(in.plan, "plan");
  absl::StatusOr<Prediction> pred = [&]() -> absl::StatusOr<Prediction> {
    if (!plan.pipelines.empty()) return PredictPipelinesPlan(model, **cluster, plan);
    Profiler profiler = PlanProfiler(model, **cluster, plan);
    return PredictPlan(profiler, plan);
  }();
  INFO(pred.status().message());
  REQUIRE(pred.ok());
  return *std::move(pred);
}

TEST_CASE("plan reader: the tied embedding's all-reduce between a pipeline's first and last stage is priced",
          "[planner][validate][tied]") {
  // Stage 0 on the V100 island, stage 1 on the A100 island, one GPU each, joined by one 10 Gb/s link
  // (ideal: no latency): the pair's ring moves the V h FP16 gradients once each way, V h 2 / B, after
  // the later of the two last backwards; both stages then step, as the simulator runs it.
  const auto inputs = [](bool sync) {
    v1::Plan p;
    p.set_name("tied");
    *p.mutable_model() = TiedModel();
    p.set_global_batch_size(4);
    p.set_micro_batch_size(1);
    p.set_schedule(v1::ONE_F_ONE_B);
    p.set_tied_embedding_grad_sync(sync);
    testing::AddSlowFastStages(p, 2);
    return testing::MakeInputs(testing::TwoIslandCluster(1, 1, 10, 0), p);
  };
  const Prediction without = PredictionOf(inputs(false));
  const Prediction with = PredictionOf(inputs(true));
  REQUIRE(with.stages.size() == 2);
  const Time later = std::max(with.stages[0].last_backward_end, with.stages[1].last_backward_end);
  const double expected_s = kTiedMatrixFp16Bytes / (10e9 / 8);
  Time iteration = with.pipeline;
  for (int i = 0; i < 2; ++i) {
    INFO("stage " << i);
    const Time tied =
        with.stages[i].grad_sync - without.stages[i].grad_sync - (later - with.stages[i].last_backward_end);
    CHECK(TimeToSeconds(tied) == Approx(expected_s).epsilon(1e-6));
    iteration = std::max(iteration, with.stages[i].last_backward_end + with.stages[i].grad_sync);
  }
  CHECK(with.iteration == iteration);
  CHECK(with.iteration > without.iteration);
  // The simulator's pair all-reduce on the same link.
  auto sim = driver::SimulatePlan(inputs(true));
  REQUIRE(sim.ok());
  CHECK(TimeToSeconds(sim->setup->stages[0].tied_grad_sync_time) == Approx(expected_s).epsilon(1e-6));
  CHECK(TimeToSeconds(with.iteration) == Approx(TimeToSeconds(sim->result.iteration_time)).epsilon(0.02));
}

// Three pipelines on the A100 island's NVSwitch (GPUs 0, 1 and 3; p1 cut into `stages_of_b` stages on
// GPUs 1, 2) of the tied GPT, every stage at `zero`, with or without the tied sync.
proto::PlanInputs TiedThreePipelines(bool sync, int stages_of_b, int zero = 0) {
  v1::Plan p;
  p.set_name("tied-pipelines");
  *p.mutable_model() = TiedModel();
  p.set_global_batch_size(6);
  p.set_micro_batch_size(1);
  p.set_schedule(v1::ONE_F_ONE_B);
  p.set_tied_embedding_grad_sync(sync);
  for (int k = 0; k < 3; ++k) {
    v1::Pipeline* pl = p.add_pipelines();
    pl->set_name(absl::StrCat("p", k));
    pl->set_batch_share(2);
    const int stages = k == 1 ? stages_of_b : 1;
    for (int s = 0; s < stages; ++s) {
      v1::Stage* st = pl->add_stages();
      st->set_first_layer(s * 4 / stages);
      st->set_num_layers(4 / stages);
      st->mutable_mesh()->set_island("fast");
      st->mutable_mesh()->set_node_count(1);
      st->mutable_mesh()->set_first_gpu(k == 2 ? 3 : k + s);
      st->mutable_mesh()->set_gpus_per_node(1);
      st->set_zero_stage(zero);
    }
  }
  return testing::MakeInputs(testing::TwoIslandCluster(1, 4, 10, 0), p);
}

TEST_CASE("plan reader: a plan of pipelines prices the tied matrix's ring over every first and last stage",
          "[planner][validate][tied][pipelines]") {
  // Three 1-stage pipelines on the A100 island's NVSwitch: each GPU holds one copy. With the sync the
  // ranges' ring carries the rest and the tied ring the matrix, over the same GPUs and links, ready at
  // once: sharing the links, they end where one ring of their sum ends (no latency: ideal cluster).
  const Prediction without = PredictionOf(TiedThreePipelines(false, 1));
  const Prediction with = PredictionOf(TiedThreePipelines(true, 1));
  CHECK(TimeToSeconds(with.iteration) == Approx(TimeToSeconds(without.iteration)).epsilon(1e-6));
  // Pipeline p1 cut in two (GPUs 1 and 2): its stage 1 holds the head's copy, so the tied ring spans
  // four GPUs and every stage that holds a copy waits for it. Every holder sits on the one node: the
  // rings run over its NVSwitch, as simulated (the planner priced them through the node's NIC, 200 Gb/s
  // instead of 2400, until session 32: 12.0 ms against 5.90 ms, 15.0 against 6.15 without the tied sync).
  for (const bool sync : {false, true}) {
    INFO("tied sync " << sync);
    const proto::PlanInputs cut = TiedThreePipelines(sync, 2);
    const Prediction two = PredictionOf(cut);
    REQUIRE(two.stages.size() == 4);
    auto sim = driver::SimulatePlan(cut);
    INFO(sim.status().message());
    REQUIRE(sim.ok());
    REQUIRE(sim->pipeline_sync.groups.back().tied == sync);
    if (sync) CHECK(sim->pipeline_sync.groups.back().groups.front().size() == 4);
    CHECK(TimeToSeconds(two.iteration) == Approx(TimeToSeconds(sim->result.iteration_time)).epsilon(1e-3));
    REQUIRE(two.pipelines.size() == 3);
    for (size_t p = 0; p < 3; ++p) {
      INFO("pipeline " << p);
      CHECK(TimeToSeconds(two.pipelines[p].end) ==
            Approx(TimeToSeconds(sim->pipeline_sync.pipeline_end[p])).epsilon(1e-3));
    }
  }
}

TEST_CASE("plan reader: under ZeRO-1/2 the tied matrix's states shard over its copies, as simulated",
          "[planner][validate][tied][pipelines][zero]") {
  // The small shape above with p1 cut in two (GPUs 1 and 2), every stage at ZeRO 1 or 2: the tied ring
  // reduce-scatters and all-gathers over the four copies and each keeps a quarter of the matrix's
  // states; the ranges shard the rest over their three holders. The planner prices both collectives
  // as one all-reduce of their mean, straight after the ring's readiness, the simulator the gather after
  // the last holder's step: with the steps short, the same. Every stage's peak memory is the
  // simulation's, exactly, and below the ZeRO-free plan's.
  const Prediction plain = PredictionOf(TiedThreePipelines(true, 2));
  for (const int zero : {1, 2}) {
    INFO("zero_stage " << zero);
    const proto::PlanInputs in = TiedThreePipelines(true, 2, zero);
    const Prediction pred = PredictionOf(in);
    auto sim = driver::SimulatePlan(in);
    INFO(sim.status().message());
    REQUIRE(sim.ok());
    REQUIRE(sim->pipeline_sync.groups.back().tied);
    CHECK(sim->pipeline_sync.groups.back().zero_stage == zero);
    CHECK(TimeToSeconds(pred.iteration) == Approx(TimeToSeconds(sim->result.iteration_time)).epsilon(1e-2));
    REQUIRE(pred.stages.size() == 4);
    size_t i = 0;
    for (size_t p = 0; p < 3; ++p) {
      const auto& run = sim->pipelines[p];
      for (int s = 0; s < run.setup->num_stages(); ++s, ++i) {
        INFO("pipeline " << p << " stage " << s);
        int64_t peak = 0;
        for (const auto& [when, bytes] : executor::MemoryTimeline(*run.setup, run.result, s)) {
          peak = std::max(peak, bytes);
        }
        CHECK(pred.stages[i].peak_bytes == peak);
        CHECK(pred.stages[i].peak_bytes < plain.stages[i].peak_bytes);
      }
    }
  }
}

}  // namespace
}  // namespace hetsim::planner
