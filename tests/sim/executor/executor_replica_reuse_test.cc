// Reuse of replica results (sim/executor/collective_load.h): the collectives a stage's replicas run
// alone (TP all-reduces, all-gathers of scattered boundary tensors) are timed once per isomorphic
// group and mapped onto the others. The reports and traces must be byte-identical to timing every
// replica's group itself (issue 15): the 256-GPU case on a symmetric switch and on an oversubscribed
// fat tree, and the bundled 512-GPU example (A100 and H100 islands joined by a slow link).
#include <catch2/catch.hpp>

#include <string>

#include "proto/inputs.h"
#include "service/driver/build_setup.h"
#include "sim/executor/executor.h"
#include "tests/base/time_io.h"
#include "tests/sim/executor/executor_test_util.h"
#include "tests/topology/topology_clusters.h"
#include "traces/chrome_trace.h"
#include "traces/metrics.h"

namespace hetsim {
namespace {

using executor::ReplicaReuse;

struct Output {
  std::string report;
  std::string trace;
  Time tensor_collective_time = 0;
  int64_t mapped = 0;
  int64_t simulated = 0;
};

Output Run(const proto::PlanInputs& in, ReplicaReuse reuse) {
  auto setup = driver::BuildSetup(in, network::NetworkMode::kMaxMinFair, reuse);
  INFO(setup.status().message());
  REQUIRE(setup.ok());
  auto traced = traces::SelectTracedGpus(**setup, {});
  REQUIRE(traced.ok());
  executor::ExecutorOptions options;
  options.record_flows = true;
  options.sampled_links = traces::TraceLinks(**setup, *traced);
  options.link_sample_period = traces::TraceSamplePeriod(**setup);
  const auto run = testing::MakeRun(**setup, options);
  Output out;
  REQUIRE(traces::BuildReport(**setup, run).SerializeToString(&out.report));
  out.trace = traces::ChromeTraceJson(**setup, run, *traced, options.sampled_links);
  for (const auto& vs : (*setup)->virtual_stages) out.tensor_collective_time += vs.forward_collective_time;
  out.mapped = (*setup)->mapped_collective_groups;
  out.simulated = (*setup)->simulated_collective_groups;
  return out;
}

void CheckIdentical(const proto::PlanInputs& in) {
  const Output mapped = Run(in, ReplicaReuse::kMapped);
  const Output each = Run(in, ReplicaReuse::kNone);
  CHECK(mapped.tensor_collective_time > 0);  // there are replica collectives to reuse
  INFO("mapped " << mapped.mapped << " and simulated " << mapped.simulated << " groups; without reuse "
                 << each.simulated);
  CHECK(mapped.mapped > 0);  // the reuse ran...
  CHECK(each.mapped == 0);   // ...and the comparison did not use it
  CHECK(each.simulated == mapped.mapped + mapped.simulated);
  CHECK(mapped.report.size() > 0);
  CHECK(mapped.report == each.report);
  CHECK(mapped.trace == each.trace);
}

TEST_CASE("replica reuse: byte-identical report and trace on 256 GPUs on one switch", "[executor][reuse]") {
  CheckIdentical(testing::Gpt256(testing::H100Island(32)));
}

TEST_CASE("replica reuse: byte-identical report and trace on a 2:1 fat tree", "[executor][reuse]") {
  CheckIdentical(testing::Gpt256(testing::H100Island(32, v1::FAT_TREE, 8, 8, 2)));
}

// Interleaved: every chunk of a stage asks again for the same TP groups' collectives, which the timer
// answers from its mapped results; and the same with context parallelism's all-gathers.
proto::PlanInputs InterleavedGpt256(bool context_parallel) {
  proto::PlanInputs in = testing::Gpt256(testing::H100Island(32, v1::FAT_TREE, 8, 8, 2));
  in.model.mutable_transformer()->set_num_layers(14);  // 16 layers with the embedding and the head
  *in.plan.mutable_model() = in.model;
  in.plan.set_schedule(v1::INTERLEAVED_1F1B);
  in.plan.set_virtual_stages(2);
  for (int s = 0; s < 2; ++s) {
    in.plan.mutable_stages(s)->set_first_layer(8 * s);
    in.plan.mutable_stages(s)->set_num_layers(8);
    if (context_parallel) in.plan.mutable_stages(s)->set_data_parallel(8);
  }
  if (context_parallel) {
    in.plan.set_context_parallel(2);
    in.plan.set_cp_comm_type(v1::CP_COMM_ALL_GATHER);
  }
  in.layer_count = 16;
  REQUIRE(proto::ValidatePlanInputs(in).ok());
  return in;
}

TEST_CASE("replica reuse: byte-identical report and trace under interleaving, with and without CP",
          "[executor][reuse]") {
  CheckIdentical(InterleavedGpt256(false));
  CheckIdentical(InterleavedGpt256(true));
}

TEST_CASE("replica reuse: byte-identical report and trace on the 512-GPU heterogeneous example", "[executor][reuse]") {
  auto in = proto::LoadPlanInputs(HETSIM_SOURCE_DIR "/examples/plan-512gpu.pbtxt",
                                  HETSIM_SOURCE_DIR "/examples/cluster-512gpu.pbtxt");
  INFO(in.status().message());
  REQUIRE(in.ok());
  CheckIdentical(*in);
}

}  // namespace
}  // namespace hetsim
