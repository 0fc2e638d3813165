// driver::SimulatePlan, the one entry point that simulates a plan: each option does what the chain
// written out by hand (setup, execute, report) does with the same option, and nothing else.
#include <chrono>
#include <string>

#include <catch2/catch.hpp>

#include "google/protobuf/text_format.h"

#include "proto/inputs.h"
#include "service/driver/build_setup.h"
#include "service/driver/simulate.h"
#include "sim/executor/executor.h"
#include "sim/executor/run_limit.h"
#include "sim/executor/setup.h"
#include "traces/chrome_trace.h"
#include "traces/metrics.h"

namespace hetsim::driver {
namespace {

proto::PlanInputs HaptCase() {
  const std::string examples = std::string(HETSIM_SOURCE_DIR) + "/examples/";
  absl::StatusOr<proto::PlanInputs> in =
      proto::LoadPlanInputs(examples + "plan-hapt-case.pbtxt", examples + "cluster-hapt-case.pbtxt");
  INFO(in.status().message());
  REQUIRE(in.ok());
  return *std::move(in);
}

// Options with one field set (designated initializers warn about the fields left out).
template <typename Set>
SimulateOptions With(Set set) {
  SimulateOptions options;
  set(options);
  return options;
}

// The chain as every caller wrote it before the driver existed.
std::string ReportByHand(const proto::PlanInputs& in, network::NetworkMode mode) {
  auto setup = driver::BuildSetup(in, mode);
  REQUIRE(setup.ok());
  auto result = executor::Execute(**setup, {});
  REQUIRE(result.ok());
  return traces::BuildReport(**setup, *result).SerializeAsString();
}

TEST_CASE("driver: the report is the hand-written chain's in both network modes", "[driver]") {
  const proto::PlanInputs in = HaptCase();
  for (network::NetworkMode mode : {network::NetworkMode::kMaxMinFair, network::NetworkMode::kContentionFree}) {
    absl::StatusOr<Simulation> sim = SimulatePlan(in, With([&](SimulateOptions& o) { o.network_mode = mode; }));
    REQUIRE(sim.ok());
    CHECK(sim->report.SerializeAsString() == ReportByHand(in, mode));
    CHECK(sim->setup->network_mode == mode);
    CHECK(sim->report.wall_time_s() == 0);  // no wall clock given: left out
    CHECK(sim->trace_json.empty());
    CHECK(sim->faults.empty());
    CHECK(sim->setup_wall_s >= 0);
  }
  absl::StatusOr<hetsim::v1::Report> report = SimulateReport(in);
  REQUIRE(report.ok());
  CHECK(report->SerializeAsString() == ReportByHand(in, network::NetworkMode::kMaxMinFair));
}

TEST_CASE("driver: ideal sets Cluster.ideal for the run only as a cluster file's ideal: true would", "[driver]") {
  const proto::PlanInputs in = HaptCase();
  REQUIRE_FALSE(in.cluster.ideal());
  absl::StatusOr<Simulation> ideal = SimulatePlan(in, With([&](SimulateOptions& o) { o.ideal = true; }));
  REQUIRE(ideal.ok());
  CHECK(ideal->inputs.cluster.ideal());
  CHECK(ideal->setup->spec.cluster.ideal);
  proto::PlanInputs by_file = in;
  by_file.cluster.set_ideal(true);
  CHECK(ideal->report.SerializeAsString() == ReportByHand(by_file, network::NetworkMode::kMaxMinFair));
  // Line rate and no protocol latency: never slower than the NCCL-achieved default.
  CHECK(ideal->report.iteration_time_ms() <= SimulateReport(in)->iteration_time_ms());
}

TEST_CASE("driver: faults are resolved and reported, limits stop the run", "[driver]") {
  const proto::PlanInputs in = HaptCase();
  SimulateOptions options;
  hetsim::v1::Fault* slow = options.faults.add_faults();
  slow->set_gpu(0);
  slow->set_kind(hetsim::v1::SLOW);
  slow->set_factor(2);
  options.fault_sources = driver::SourcesOf(options.faults, "faults.pbtxt");
  absl::StatusOr<Simulation> sim = SimulatePlan(in, options);
  REQUIRE(sim.ok());
  CHECK_FALSE(sim->faults.empty());
  REQUIRE(sim->report.faults_size() == 1);
  // GPU 0 computes at half speed for the whole iteration: the iteration is longer.
  CHECK(sim->report.iteration_time_ms() > SimulateReport(in)->iteration_time_ms());

  const uint64_t events = SimulatePlan(in)->result.events;
  absl::StatusOr<Simulation> cut = SimulatePlan(in, With([&](SimulateOptions& o) { o.max_events = events - 1; }));
  REQUIRE_FALSE(cut.ok());
  CHECK(executor::IsRunLimit(cut.status()));
  CHECK(SimulatePlan(in, With([&](SimulateOptions& o) { o.max_events = events; })).ok());
}

TEST_CASE("driver: a trace is recorded only when asked for and for the GPUs selected", "[driver]") {
  const proto::PlanInputs in = HaptCase();
  absl::StatusOr<Simulation> sim =
      SimulatePlan(in, With([](SimulateOptions& o) { o.trace = traces::TraceSelection{}; }));
  REQUIRE(sim.ok());
  CHECK_FALSE(sim->trace_json.empty());
  CHECK(sim->trace_json.front() == '{');
  CHECK(static_cast<int>(sim->traced_gpus.size()) >= sim->setup->num_gpus());
  // Tracing records more (link samples are events of their own) but changes nothing simulated.
  hetsim::v1::Report traced = sim->report, plain;
  REQUIRE(plain.ParseFromString(ReportByHand(in, network::NetworkMode::kMaxMinFair)));
  CHECK(traced.events_processed() > plain.events_processed());
  traced.clear_events_processed();
  plain.clear_events_processed();
  CHECK(traced.SerializeAsString() == plain.SerializeAsString());

  traces::TraceSelection beyond;
  beyond.replica = 1000;
  absl::StatusOr<Simulation> bad = SimulatePlan(in, With([&](SimulateOptions& o) { o.trace = beyond; }));
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(bad.status().message()), Catch::Contains("--trace-replica"));
}

TEST_CASE("driver: a wall clock start puts the wall time in the report", "[driver]") {
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<Simulation> sim =
      SimulatePlan(HaptCase(), With([&](SimulateOptions& o) { o.wall_clock_start = start; }));
  REQUIRE(sim.ok());
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(sim->report.wall_time_s() > 0);
  CHECK(sim->report.wall_time_s() <= elapsed);
}

TEST_CASE("driver: a plan's pipelines share one topology and router, and the first run carries the links' counters",
          "[driver][pipelines]") {
  // Two pipelines with tensor parallelism (collectives in closed form load their stages' links) and a
  // data-parallel stage each, on the 512-GPU cluster's h100 island.
  constexpr char kPlan[] = R"pb(
    name: "two-pipelines"
    model {
      name: "gpt-1.3b"
      dtype: BF16
      transformer {
        num_layers: 24
        hidden_size: 2048
        num_attention_heads: 16
        seq_length: 2048
        vocab_size: 51200
        granularity: BLOCK
        tied_embeddings: true
      }
    }
    global_batch_size: 64
    micro_batch_size: 2
    schedule: ONE_F_ONE_B
    tied_embedding_grad_sync: true
    pipelines {
      name: "a"
      batch_share: 32
      stages {
        num_layers: 13
        tensor_parallel: 2
        data_parallel: 2
        mesh { island: "h100" node_count: 1 gpus_per_node: 4 }
      }
      stages {
        first_layer: 13
        num_layers: 13
        tensor_parallel: 4
        mesh { island: "h100" first_node: 1 node_count: 1 gpus_per_node: 4 }
      }
    }
    pipelines {
      name: "b"
      batch_share: 32
      stages {
        num_layers: 13
        tensor_parallel: 4
        mesh { island: "h100" first_node: 2 node_count: 1 gpus_per_node: 4 }
      }
      stages {
        first_layer: 13
        num_layers: 13
        tensor_parallel: 2
        data_parallel: 2
        mesh { island: "h100" first_node: 3 node_count: 1 gpus_per_node: 4 }
      }
    }
  )pb";
  hetsim::v1::Plan plan;
  REQUIRE(google::protobuf::TextFormat::ParseFromString(kPlan, &plan));
  proto::Source source;
  source.bytes = plan.SerializeAsString();
  source.name = "two-pipelines";
  const std::string examples = std::string(HETSIM_SOURCE_DIR) + "/examples/";
  absl::StatusOr<proto::PlanInputs> in =
      proto::LoadPlanInputs(source, proto::Source::File(examples + "cluster-512gpu.pbtxt"));
  INFO(in.status().message());
  REQUIRE(in.ok());
  absl::StatusOr<Simulation> sim = SimulatePlan(*in);
  INFO(sim.status().message());
  REQUIRE(sim.ok());
  REQUIRE(sim->pipelines.size() == 2);
  const executor::ExecutionSetup& first = *sim->pipelines[0].setup;
  const executor::ExecutionSetup& second = *sim->pipelines[1].setup;
  CHECK(first.topology.get() == second.topology.get());  // built once
  CHECK(first.router.get() == second.router.get());
  CHECK(sim->pipelines[0].result.link_counters.size() == first.topology->links().size());
  CHECK(sim->pipelines[1].result.link_counters.empty());  // the network's are the first run's
  // The second pipeline's link classes, from the links its collectives load alone, are what the
  // cluster's every link (the others at zero) gives.
  executor::ExecutionResult dense = sim->pipelines[1].result;
  dense.link_counters.assign(first.topology->links().size(), network::LinkCounters{});
  const hetsim::v1::Report sparse_report = traces::BuildReport(second, sim->pipelines[1].result);
  const hetsim::v1::Report dense_report = traces::BuildReport(second, dense);
  REQUIRE(sparse_report.links_size() == dense_report.links_size());
  double loaded_bytes = 0;
  for (int c = 0; c < sparse_report.links_size(); ++c) {
    CHECK(sparse_report.links(c).SerializeAsString() == dense_report.links(c).SerializeAsString());
    loaded_bytes += sparse_report.links(c).bytes();
  }
  CHECK(loaded_bytes > 0);  // its tensor-parallel collectives were counted
}

}  // namespace
}  // namespace hetsim::driver

TEST_CASE("boundaries: a transfer both ends wait on counts once, so the hidden share is in [0, 1]", "[metrics]") {
  // Megatron's GPT 39.1B on 512 A100, 1F1B and interleaved: with batched, blocking p2p the sender's
  // next operation and the receiver both wait on one transfer. Before, both waits were charged to the
  // boundary (1F1B read 4.8% hidden, interleaving down to -49%).
  const std::string examples = std::string(HETSIM_SOURCE_DIR) + "/examples/";
  for (int virtual_stages : {1, 2}) {
    absl::StatusOr<hetsim::proto::PlanInputs> in =
        hetsim::proto::LoadPlanInputs(examples + "plan-megatron-39b.pbtxt", examples + "cluster-a100-512.pbtxt");
    REQUIRE(in.ok());
    if (virtual_stages > 1) {
      in->plan.set_schedule(hetsim::v1::INTERLEAVED_1F1B);
      in->plan.set_virtual_stages(virtual_stages);
    }
    absl::StatusOr<hetsim::v1::Report> report = hetsim::driver::SimulateReport(*in);
    REQUIRE(report.ok());
    REQUIRE(report->boundaries_size() == 2 * virtual_stages - 1);
    for (const hetsim::v1::BoundaryReport& b : report->boundaries()) {
      CHECK(b.overlap_ratio() >= 0);
      CHECK(b.overlap_ratio() <= 1);
    }
  }
}
