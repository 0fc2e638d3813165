// The planner's view of a hand-written plan (`hetsim validate`): interleaved stages priced chunk by
// chunk with the plan's sequence parallelism, against the simulation of the same plan.
#include <catch2/catch.hpp>

#include "driver/simulate.h"
#include "planner/plan_reader.h"
#include "proto/resolve.h"
#include "sim/executor/executor.h"
#include "sim/workload/model_cost.h"
#include "tests/context_parallel_util.h"
#include "tests/executor_test_util.h"
#include "tests/topology_clusters.h"

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

TEST_CASE("plan reader: an interleaved stage is the sum of its chunks, with the plan's SP", "[planner][validate]") {
  const proto::PlanInputs in = InterleavedInputs();
  auto spec = proto::ResolveModel(in.model, "model");
  REQUIRE(spec.ok());
  const sim::workload::ModelCost model = sim::workload::ModelCost::Create(*spec);
  auto cluster = ClusterModel::Create(in.cluster, model.dtype());
  REQUIRE(cluster.ok());
  Profiler profiler(model, **cluster, in.plan.micro_batch_size());
  auto pred = PredictPlan(profiler, in.plan);
  INFO(pred.status().message());
  REQUIRE(pred.ok());
  auto sim = driver::SimulatePlan(in);
  REQUIRE(sim.ok());
  const sim::executor::ExecutionSetup& setup = *sim->setup;
  REQUIRE(pred->stages.size() == 2);
  for (int i = 0; i < 2; ++i) {
    Time t = 0;
    for (int k = i; k < 4; k += 2)
      t += setup.virtual_stages[k].forward_time() + setup.virtual_stages[k].backward_time();
    int64_t peak = 0;
    for (const auto& [when, bytes] : sim::executor::MemoryTimeline(setup, sim->result, i)) peak = std::max(peak, bytes);
    INFO("stage " << i);
    // Same cost model; the planner's TP collectives are alpha-beta rings rather than routed flows.
    CHECK(TimeToSeconds(pred->stages[i].t) == Approx(TimeToSeconds(t)).epsilon(0.05));
    CHECK(static_cast<double>(pred->stages[i].peak_bytes) == Approx(static_cast<double>(peak)).epsilon(0.05));
  }
  CHECK(TimeToSeconds(pred->iteration) == Approx(TimeToSeconds(sim->result.iteration_time)).epsilon(0.10));
}

}  // namespace
}  // namespace hetsim::planner
