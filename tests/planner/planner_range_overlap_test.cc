// The planner's price of a plan of pipelines' layer ranges as the simulator runs them since session 34
// (issue 39): buckets (grad_bucket_bytes), overlapped reduction (overlap_grad_reduce) and the ZeRO-1/2
// parameter gathers at the iteration's start (overlap_param_gather). Closed forms on the prediction's
// own stage times, and the simulation of the same plans.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "planner/plan_reader.h"
#include "proto/resolve.h"
#include "service/driver/simulate.h"
#include "sim/executor/executor.h"
#include "sim/executor/layer_range_sync.h"
#include "sim/workload/model_cost.h"
#include "tests/base/time_io.h"
#include "tests/planner/planner_test_util.h"
#include "tests/sim/executor/executor_test_util.h"

namespace hetsim::planner {
namespace {

// One pipeline's stages: (first GPU, layers) each, on one GPU of the fast island's node.
struct Split {
  std::string name;
  uint64_t share = 0;
  std::vector<std::pair<int, int>> stages;
};

// A model of `layers` layers (1e6 FP16 parameters, 100 GFLOP per sample each; testing::MakePlan) run
// by `splits`, 1F1B at micro-batch 1, every stage at `zero`, on the fast island's 4 GPUs (NVSwitch).
proto::PlanInputs PipelinesInputs(int layers, const std::vector<Split>& splits, int zero = 0) {
  v1::Plan plan = testing::MakePlan({{.island = "fast", .layers = layers}}, 1, v1::ONE_F_ONE_B, 0);
  plan.clear_stages();
  uint64_t total = 0;
  for (const Split& sp : splits) {
    v1::Pipeline* pl = plan.add_pipelines();
    pl->set_name(sp.name);
    pl->set_batch_share(sp.share);
    total += sp.share;
    int first = 0;
    for (const auto& [gpu, n] : sp.stages) {
      v1::Stage* st = pl->add_stages();
      st->set_first_layer(first);
      st->set_num_layers(n);
      first += n;
      st->mutable_mesh()->set_island("fast");
      st->mutable_mesh()->set_node_count(1);
      st->mutable_mesh()->set_first_gpu(gpu);
      st->mutable_mesh()->set_gpus_per_node(1);
      st->set_zero_stage(zero);
    }
  }
  plan.set_global_batch_size(total);
  return testing::MakeInputs(testing::TwoIslandCluster(1, 4, 10, 0), plan);
}

struct RangesPriced {
  Prediction prediction;
  LayerRangesPrice ranges;
};

// `validate`'s prediction of `in` and its ranges' price.
RangesPriced PriceOf(const proto::PlanInputs& in) {
  const workload::ModelCost model = workload::ModelCost::Create(proto::ResolveModel(in.model, "model"));
  auto cluster = testing::ClusterModelOf(in.cluster, model.dtype());
  REQUIRE(cluster.ok());
  RangesPriced out;
  absl::StatusOr<Prediction> p =
      PredictPipelinesPlan(model, **cluster, proto::ResolvePlan(in.plan, "plan"), &out.ranges);
  INFO(p.status().message());
  REQUIRE(p.ok());
  out.prediction = *std::move(p);
  return out;
}

driver::Simulation SimulationOf(const proto::PlanInputs& in) {
  auto sim = driver::SimulatePlan(in);
  INFO(sim.status().message());
  REQUIRE(sim.ok());
  return *std::move(sim);
}

double SecondsOf(Time t) { return TimeToSeconds(t); }

// "one" holds the 4 layers on GPU 0 (1 microbatch), "two" cuts them 1 + 3 (GPUs 2, 3; 2 microbatches),
// as in tests/sim/executor/executor_pipelines_test.cc ("A range's buckets each start ...").
proto::PlanInputs OneAndTwo(bool overlap, uint64_t bucket_bytes) {
  proto::PlanInputs in = PipelinesInputs(4, {{"one", 1, {{0, 4}}}, {"two", 2, {{2, 1}, {3, 3}}}});
  in.plan.set_overlap_grad_reduce(overlap);
  in.plan.set_grad_bucket_bytes(bucket_bytes);
  return in;
}

TEST_CASE("range overlap: a range's buckets start where the last holder's backward is done with them",
          "[planner][validate][pipelines]") {
  // Range 1-3 holds 6e6 bytes, three buckets of 2e6, one per layer from layer 3 down. "two"'s stage 1
  // runs its last backward (3 layers, 2f each) from 13f to 19f: it is done with bucket k at 13f + 2f (k
  // + 1), later than "one" (done with them by 10f); each bucket's ring (about 7 us on NVSwitch) ends
  // before the next is ready. Range 0 waits for "two"'s stage 0's last backward (19f to 21f).
  const RangesPriced p = PriceOf(OneAndTwo(true, 2000000));
  const StagePrediction& last = p.prediction.stages[2];  // "one"'s stage, then "two"'s 0 and 1
  const Time f = p.prediction.stages[1].forward;
  // f is rounded to the picosecond: multiples of it within a few picoseconds.
  const auto about = [f](int k) { return Approx(SecondsOf(k * f)).epsilon(1e-8); };
  REQUIRE(SecondsOf(last.forward) == about(3));
  REQUIRE(SecondsOf(last.backward) == about(6));
  CHECK(SecondsOf(last.last_backward_end) == about(19));
  REQUIRE(p.ranges.range_times.size() == 2);
  const LayerRangesPrice::Range& r = p.ranges.range_times[1];
  CHECK(r.first_layer == 1);
  CHECK(r.end_layer == 4);
  REQUIRE(r.bucket_start.size() == 3);
  const Time begin = last.last_backward_end - last.backward;
  for (int k = 0; k < 3; ++k) {
    INFO("bucket " << k);
    CHECK(r.bucket_start[k] == begin + last.backward * (3 * (k + 1)) / 9);  // the simulator's ReadyAt
    CHECK(SecondsOf(r.bucket_start[k]) == about(15 + 2 * k));
    CHECK(r.bucket_end[k] < r.bucket_start[k] + f);
  }
  CHECK(SecondsOf(p.ranges.range_times[0].bucket_start.at(0)) == about(21));
  // The simulator starts them at the same times.
  const driver::Simulation sim = SimulationOf(OneAndTwo(true, 2000000));
  const auto& g = sim.pipeline_sync.groups[1];
  REQUIRE(g.bucket_start.size() == 3);
  for (int k = 0; k < 3; ++k) {
    INFO("bucket " << k);
    CHECK(SecondsOf(r.bucket_start[k]) == Approx(SecondsOf(g.bucket_start[k])).epsilon(1e-9));
    CHECK(SecondsOf(r.bucket_end[k]) == Approx(SecondsOf(g.bucket_finish[k])).epsilon(1e-3));
  }
  CHECK(SecondsOf(p.prediction.iteration) == Approx(SecondsOf(sim.result.iteration_time)).epsilon(1e-4));
}

TEST_CASE("range overlap: without the overlap the buckets run one after another from the last backward's end",
          "[planner][validate][pipelines]") {
  // Every bucket ready at 19f: bucket k starts when bucket k - 1 ends, each a third of the range's ring,
  // latencies and all; the three end where the one all-reduce of the range would, latencies apart (none
  // here: the ideal cluster). One bucket of the whole range, or none asked, is that all-reduce.
  const RangesPriced whole = PriceOf(OneAndTwo(false, 0));
  const RangesPriced p = PriceOf(OneAndTwo(false, 2000000));
  const Time f = p.prediction.stages[1].forward;
  const LayerRangesPrice::Range& r = p.ranges.range_times[1];
  const LayerRangesPrice::Range& w = whole.ranges.range_times[1];
  REQUIRE(r.bucket_start.size() == 3);
  REQUIRE(w.bucket_start.size() == 1);
  CHECK(r.bucket_start[0] == p.prediction.stages[2].last_backward_end);
  CHECK(SecondsOf(r.bucket_start[0]) == Approx(SecondsOf(19 * f)).epsilon(1e-8));
  CHECK(r.bucket_start[1] == r.bucket_end[0]);
  CHECK(r.bucket_start[2] == r.bucket_end[1]);
  CHECK(SecondsOf(r.bucket_end[0] - r.bucket_start[0]) == Approx(SecondsOf(w.bucket_end[0] - w.bucket_start[0]) / 3));
  CHECK(SecondsOf(r.bucket_end[2]) == Approx(SecondsOf(w.bucket_end[0])).epsilon(1e-9));
  const RangesPriced big = PriceOf(OneAndTwo(false, 6000000));
  CHECK(big.ranges.range_times[1].bucket_end == w.bucket_end);
  CHECK(big.prediction.iteration == whole.prediction.iteration);
  // As simulated, bucket by bucket.
  const driver::Simulation sim = SimulationOf(OneAndTwo(false, 2000000));
  const auto& g = sim.pipeline_sync.groups[1];
  REQUIRE(g.bucket_start.size() == 3);
  for (int k = 0; k < 3; ++k) CHECK(SecondsOf(r.bucket_end[k]) == Approx(SecondsOf(g.bucket_finish[k])).epsilon(1e-3));
}

TEST_CASE("range overlap: with overlap_param_gather the first stage's gathers are exposed, the others hidden",
          "[planner][validate][pipelines][zero]") {
  // Two identical pipelines (p0 on GPUs 0 and 2, p1 on 1 and 3), one layer a stage, every stage at
  // ZeRO 1 or 2: each range (a stage's layer) all-gathers its 2e6 bytes of FP16 parameters over its two
  // holders at the start, (2 - 1) / 2 x 2e6 B / 300 GB/s (NVSwitch; no latency), side by side on their
  // own links. Stage 0's first forward waits for all of it; stage 1's starts after stage 0's forward and
  // the gather is long done. The DAG shifts by the first gather; after the backward each range only
  // reduce-scatters and the stage ends at its step: the iteration is the one with the gathers after the
  // steps, as the simulation finds too (tests/sim/executor/executor_pipelines_test.cc).
  const double gather_s = 0.5 * 2e6 / 300e9;
  for (const int zero : {1, 2}) {
    INFO("zero_stage " << zero);
    proto::PlanInputs in = PipelinesInputs(2, {{"p0", 4, {{0, 1}, {2, 1}}}, {"p1", 4, {{1, 1}, {3, 1}}}}, zero);
    const RangesPriced after = PriceOf(in);
    in.plan.set_overlap_param_gather(true);
    const RangesPriced early = PriceOf(in);
    REQUIRE(early.prediction.stages.size() == 4);
    for (const size_t first : {size_t{0}, size_t{2}}) {
      const StagePrediction& s0 = early.prediction.stages[first];
      const StagePrediction& s1 = early.prediction.stages[first + 1];
      CHECK(SecondsOf(s0.gather_wait) == Approx(gather_s).epsilon(1e-6));
      CHECK(s1.gather_wait == 0);
      // The report's grad_sync counts the wait (EarlyGatherWait): stage 0's term grows by it.
      CHECK(SecondsOf(s0.grad_sync - s0.gather_wait) < SecondsOf(after.prediction.stages[first].grad_sync));
    }
    CHECK(SecondsOf(early.prediction.pipelines[0].pipeline - after.prediction.pipelines[0].pipeline) ==
          Approx(gather_s).epsilon(1e-6));
    CHECK(SecondsOf(early.prediction.iteration) == Approx(SecondsOf(after.prediction.iteration)).epsilon(1e-9));
    const driver::Simulation sim = SimulationOf(in);
    CHECK(SecondsOf(early.prediction.iteration) == Approx(SecondsOf(sim.result.iteration_time)).epsilon(1e-4));
    const auto& run = sim.pipelines[0];
    CHECK(SecondsOf(executor::EarlyGatherWait(*run.setup, run.result, 0)) ==
          Approx(SecondsOf(early.prediction.stages[0].gather_wait)).epsilon(1e-3));
  }
}

TEST_CASE("range overlap: a gather longer than the stages before it shows on the stage too",
          "[planner][validate][pipelines][zero]") {
  // The two pipelines above with layer 1 of 1e9 parameters: its range gathers (2 - 1) / 2 x 2e9 B at
  // 300 GB/s, 3.33 ms, while stage 0's first forward (0.4 ms) starts after its own range's 3.3 us.
  // Stage 1's first microbatch arrives when that forward and its boundary have run: it waits the rest
  // of its gather, as the simulator's EarlyGatherWait measures it.
  proto::PlanInputs in = PipelinesInputs(2, {{"p0", 4, {{0, 1}, {2, 1}}}, {"p1", 4, {{1, 1}, {3, 1}}}}, 1);
  in.plan.mutable_model()->mutable_layer_list()->mutable_layers(1)->set_param_count(1000000000);
  in.model = in.plan.model();
  in.plan.set_overlap_param_gather(true);
  const RangesPriced p = PriceOf(in);
  REQUIRE(p.prediction.stages.size() == 4);
  const double small_s = 0.5 * 2e6 / 300e9, large_s = 0.5 * 2e9 / 300e9;
  const StagePrediction& s0 = p.prediction.stages[0];
  const StagePrediction& s1 = p.prediction.stages[1];
  CHECK(SecondsOf(s0.gather_wait) == Approx(small_s).epsilon(1e-6));
  const double arrives_s = small_s + SecondsOf(s0.forward + s0.comm);
  REQUIRE(arrives_s < large_s);
  CHECK(SecondsOf(s1.gather_wait) == Approx(large_s - arrives_s).epsilon(1e-6));
  const driver::Simulation sim = SimulationOf(in);
  CHECK(SecondsOf(p.prediction.iteration) == Approx(SecondsOf(sim.result.iteration_time)).epsilon(1e-3));
  for (int s = 0; s < 2; ++s) {
    INFO("stage " << s);
    CHECK(SecondsOf(executor::EarlyGatherWait(*sim.pipelines[0].setup, sim.pipelines[0].result, s)) ==
          Approx(SecondsOf(p.prediction.stages[s].gather_wait)).epsilon(1e-3));
  }
}

}  // namespace
}  // namespace hetsim::planner
