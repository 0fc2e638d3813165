// Chakra execution traces: the stream format, the exporter's nodes against the DAG they come from,
// the replay against closed forms (compute, one flow, one collective alone), the round trip against
// the executor, the repairs' warnings and the re-timing of COMP nodes.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "proto/chakra_groups.h"
#include "proto/chakra_stream.h"
#include "proto/gpu_presets.h"
#include "proto/inputs.h"
#include "proto/io.h"
#include "service/chakra/attributes_internal.h"
#include "service/chakra/export.h"
#include "service/chakra/export_command.h"
#include "service/chakra/replay.h"
#include "service/chakra/trace.h"
#include "service/driver/build_setup.h"
#include "service/driver/simulate.h"
#include "sim/collectives/simulate.h"
#include "sim/executor/layer_range_sync.h"
#include "sim/workload/gpu_compute.h"
#include "tests/base/spec/spec_test_util.h"
#include "tests/base/time_io.h"
#include "tests/service/driver/build_topology.h"
#include "tests/sim/executor/executor_test_util.h"
#include "topology/routing.h"

namespace hetsim {
namespace {

using ChakraProtoMsg::Node;
using testing::MakeInputs;
using testing::MakePlan;
using testing::MakeRun;
using testing::MakeSetup;
using testing::TwoIslandCluster;

Node Comp(uint64_t id, uint64_t micros, std::vector<uint64_t> deps = {}) {
  Node n;
  n.set_id(id);
  n.set_name(absl::StrCat("comp", id));
  n.set_type(ChakraProtoMsg::COMP_NODE);
  n.set_duration_micros(micros);
  for (uint64_t d : deps) n.add_data_deps(d);
  return n;
}

Node Comm(uint64_t id, ChakraProtoMsg::NodeType type, std::vector<uint64_t> deps, int src, int dst, int64_t bytes) {
  Node n;
  n.set_id(id);
  n.set_type(type);
  for (uint64_t d : deps) n.add_ctrl_deps(d);
  n.add_attr()->CopyFrom(chakra::Int32Attr(chakra::kCommSrc, src));
  n.add_attr()->CopyFrom(chakra::Int32Attr(chakra::kCommDst, dst));
  n.add_attr()->CopyFrom(chakra::Int64Attr(chakra::kCommSize, bytes));
  n.add_attr()->CopyFrom(chakra::Int32Attr(chakra::kCommTag, 3));
  return n;
}

Node Coll(uint64_t id, std::vector<uint64_t> deps, CollectiveOp op, int64_t bytes, const std::string& pg) {
  Node n;
  n.set_id(id);
  n.set_type(ChakraProtoMsg::COMM_COLL_NODE);
  for (uint64_t d : deps) n.add_data_deps(d);
  n.add_attr()->CopyFrom(chakra::Int64Attr(chakra::kCommType, chakra::CommTypeOf(op)));
  n.add_attr()->CopyFrom(chakra::Int64Attr(chakra::kCommSize, bytes));
  if (!pg.empty()) n.add_attr()->CopyFrom(chakra::StringAttr(chakra::kPgName, pg));
  return n;
}

proto::ChakraStream Stream(std::vector<Node> nodes, const std::string& version = "0.0.4") {
  proto::ChakraStream s;
  s.metadata.set_version(version);
  s.nodes = std::move(nodes);
  return s;
}

// Converts in-memory rank streams as LoadChakraDir would (without files).
chakra::ChakraWorkload Workload(const std::vector<proto::ChakraStream>& ranks,
                                std::vector<proto::ChakraCommGroup> groups = {}) {
  chakra::ChakraWorkload w;
  w.groups = std::move(groups);
  for (size_t r = 0; r < ranks.size(); ++r) {
    auto t = chakra::ConvertRank(ranks[r], absl::StrCat("t.", r, ".et"), static_cast<int>(r),
                                 static_cast<int>(ranks.size()), &w.groups, &w.warnings);
    INFO(t.status().message());
    REQUIRE(t.ok());
    w.ranks.push_back(*std::move(t));
  }
  const absl::Status s = chakra::CheckMatching(w);
  INFO(s.message());
  REQUIRE(s.ok());
  return w;
}

chakra::ReplayResult Replay(const chakra::ChakraWorkload& w, const topology::Topology& topo,
                            const chakra::ReplayOptions& options = {}) {
  auto r = chakra::ReplayChakra(w, topo, options);
  INFO(r.status().message());
  REQUIRE(r.ok());
  return *std::move(r);
}

topology::Topology Topo(v1::Cluster c) {
  REQUIRE(proto::ApplyGpuPresets(&c, "c.pbtxt").ok());
  auto t = hetsim::testing::BuildTopology(c);
  REQUIRE(t.ok());
  return *std::move(t);
}

std::string TempDir(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / absl::StrCat("hetsim_chakra_test_", name);
  std::filesystem::remove_all(dir);
  return dir.string();
}

TEST_CASE("chakra stream: delimited messages read back, truncation and garbage are errors", "[chakra]") {
  proto::ChakraStream s = Stream({Comp(1, 5), Comp(2, 7, {1})});
  s.metadata.add_attr()->CopyFrom(chakra::StringAttr("dtype", "BF16"));
  const std::string bytes = proto::SerializeChakraStream(s);
  // Each message is preceded by its size as one varint byte here (all are < 128 bytes).
  CHECK(static_cast<size_t>(bytes[0]) == s.metadata.ByteSizeLong());
  auto back = proto::ParseChakraStream(bytes, "t.0.et");
  REQUIRE(back.ok());
  CHECK(back->metadata.SerializeAsString() == s.metadata.SerializeAsString());
  REQUIRE(back->nodes.size() == 2);
  CHECK(back->nodes[1].duration_micros() == 7);
  CHECK(back->nodes[1].data_deps(0) == 1);
  auto cut = proto::ParseChakraStream(bytes.substr(0, bytes.size() - 2), "t.0.et");
  REQUIRE(!cut.ok());
  CHECK(cut.status().message().find("t.0.et: message 2 at byte") != std::string::npos);
  CHECK(cut.status().message().find("truncated") != std::string::npos);
  CHECK(!proto::ParseChakraStream("", "e.et").ok());
  CHECK(!proto::ParseChakraStream(std::string("\x03\xff\xff\xff", 4), "g.et").ok());
}

TEST_CASE("chakra comm groups: JSON read back in numeric order, bad values named", "[chakra]") {
  const std::vector<proto::ChakraCommGroup> groups = {{"2", {4, 5}}, {"10", {0, 1, 2}}};
  const std::string json = proto::ChakraCommGroupsJson(groups);
  auto back = proto::ParseChakraCommGroups(json, "g.json");
  REQUIRE(back.ok());
  REQUIRE(back->size() == 2);
  CHECK((*back)[0].name == "2");
  CHECK((*back)[1].ranks == std::vector<int64_t>{0, 1, 2});
  auto bad = proto::ParseChakraCommGroups(R"({"1": [0, 0]})", "g.json");
  REQUIRE(!bad.ok());
  CHECK(bad.status().message() == "g.json: \"1\"[1]: rank 0 listed twice");
  CHECK(!proto::ParseChakraCommGroups(R"([1, 2])", "g.json").ok());
  CHECK(!proto::ParseChakraCommGroups(R"({"1": [1.5]})", "g.json").ok());
}

TEST_CASE("chakra replay: compute then one flow then compute is the sum of the three", "[chakra]") {
  // Ideal cluster, 1 us on every link: the flow takes its route's latency plus bytes / bottleneck.
  const v1::Cluster cluster = TwoIslandCluster(1, 2, 100, 1000);
  const topology::Topology topo = Topo(cluster);
  const int64_t bytes = 8 << 20;
  // GPU 0 and 2 are in different islands (fast island first: GPUs 0-1 fast, 2-3 slow).
  const auto w =
      Workload({Stream({Comp(1, 100), Comm(2, ChakraProtoMsg::COMM_SEND_NODE, {1}, 0, 2, bytes)}), Stream({}),
                Stream({Comm(1, ChakraProtoMsg::COMM_RECV_NODE, {}, 0, 2, bytes), Comp(2, 50, {1})})});
  const chakra::ReplayResult r = Replay(w, topo);
  topology::Router router(topo);
  auto route = router.GpuRoute(GpuId(0), GpuId(2), 3);  // the flow key is the tag
  REQUIRE(route.ok());
  const double flow_s = static_cast<double>(bytes) / router.BottleneckBytesPerSecond(**route);
  const Time expected = 100 * kMicrosecond + router.Latency(**route) + SecondsToTime(flow_s) + 50 * kMicrosecond;
  CHECK(AbsTime(r.iteration_time - expected) <= 2_ps);  // picoseconds of rounding
  CHECK(r.node_finish[2][0] == r.node_finish[0][1]);    // the recv ends when the send's last byte arrives
  CHECK(r.compute_busy[0] == 100 * kMicrosecond);
}

TEST_CASE("chakra replay: a collective takes what the collective alone takes on hetsim's network", "[chakra]") {
  const v1::Cluster cluster = TwoIslandCluster(2, 2, 100, 1000);
  const topology::Topology topo = Topo(cluster);
  const int64_t bytes = 64 << 20;
  std::vector<proto::ChakraStream> ranks;
  for (int r = 0; r < 4; ++r) {
    // Rank r computes r x 10 us first: the collective starts when the last member (rank 3) arrives.
    ranks.push_back(Stream({Comp(1, 10 * r), Coll(2, {1}, CollectiveOp::kAllReduce, bytes, "1")}));
  }
  const auto w = Workload(ranks, {{"1", {0, 1, 2, 3}}});
  const chakra::ReplayResult r = Replay(w, topo);
  topology::Router router(topo);
  collectives::CollectiveRequest request;
  request.op = CollectiveOp::kAllReduce;
  request.gpus = GpuIds({0, 1, 2, 3});
  request.bytes = bytes;
  auto alone = collectives::SimulateCollective(topo, router, request);
  REQUIRE(alone.ok());
  CHECK(r.iteration_time == 30 * kMicrosecond + alone->time);
  CHECK(r.collectives == 1);
  for (int k = 0; k < 4; ++k) CHECK(r.rank_end[k] == r.iteration_time);
}

// Two stages of 2 GPUs with DP 2, the fast island's first node then the slow one's, 4 microbatches.
v1::Plan TwoStageDpPlan() {
  return MakePlan({{"fast", 0, 0, 2, 1, 2, 1.0, 2.0, 1}, {"slow", 0, 0, 2, 1, 2, 1.5, 3.0, 1}}, 4, v1::ONE_F_ONE_B,
                  1 << 20, 2);
}

TEST_CASE("chakra export: each rank holds its stage's passes with the DAG's durations, sends match recvs", "[chakra]") {
  // Two stages of 2 GPUs (DP 2): boundaries of 2 flows each, a gradient all-reduce per stage.
  const v1::Cluster cluster = TwoIslandCluster(1, 2, 100, 1000);
  const v1::Plan plan = TwoStageDpPlan();
  const auto in = MakeInputs(cluster, plan);
  const auto setup = MakeSetup(in, network::NetworkMode::kMaxMinFair);
  const chakra::ChakraExport out = chakra::ExportChakra(*setup);
  REQUIRE(out.ranks.size() == 4);
  REQUIRE(out.comm_groups.size() == 2);
  CHECK(out.comm_groups[0].ranks == std::vector<int64_t>{0, 1});
  CHECK(out.comm_groups[1].ranks == std::vector<int64_t>{2, 3});
  for (int r = 0; r < 4; ++r) {
    int comp = 0, send = 0, recv = 0, coll = 0;
    for (const Node& n : out.ranks[r].nodes) {
      comp += n.type() == ChakraProtoMsg::COMP_NODE;
      send += n.type() == ChakraProtoMsg::COMM_SEND_NODE;
      recv += n.type() == ChakraProtoMsg::COMM_RECV_NODE;
      coll += n.type() == ChakraProtoMsg::COMM_COLL_NODE;
    }
    // 4 microbatches: 4 forwards + 4 backwards + the optimizer step; one send or recv per microbatch
    // and direction (each GPU of a DP-2 stage exchanges with its peer replica), one all-reduce.
    CHECK(comp == 9);
    CHECK(send == 4);
    CHECK(recv == 4);
    CHECK(coll == 1);
    CHECK(out.ranks[r].metadata.version() == "0.0.4");
  }
  // Forward of stage 0 on rank 0: the measured 1 ms; backward of stage 1 on rank 2: 3 ms.
  CHECK(out.ranks[0].nodes[0].duration_micros() == 1000);
  const auto b = std::find_if(out.ranks[2].nodes.begin(), out.ranks[2].nodes.end(),
                              [](const Node& n) { return n.name().rfind("B ", 0) == 0; });
  REQUIRE(b != out.ranks[2].nodes.end());
  CHECK(b->duration_micros() == 3000);
  CHECK(chakra::RoundToMicros(1499999_ps) == 1);
  CHECK(chakra::RoundToMicros(1500000_ps) == 2);
}

// Export, write, read back and replay; the iteration time matches `hetsim run`'s (driver::SimulatePlan).
void CheckRoundTrip(const proto::PlanInputs& in, const std::string& name, double tolerance) {
  auto sim = driver::SimulatePlan(in, {});
  INFO(sim.status().message());
  REQUIRE(sim.ok());
  const auto& setup = sim->setup;
  const executor::ExecutionResult& run = sim->result;
  const std::string dir = TempDir(name);
  REQUIRE(chakra::WriteChakraExport(chakra::ExportChakra(*setup), dir, "t").ok());
  auto w = chakra::LoadChakraDir(dir, setup->topology->num_gpus());
  INFO(w.status().message());
  REQUIRE(w.ok());
  CHECK(w->warnings.empty());
  const chakra::ReplayResult r = Replay(*w, *setup->topology);
  INFO("executor " << TimeToMilliseconds(run.iteration_time) << " ms, replay " << TimeToMilliseconds(r.iteration_time)
                   << " ms");
  CHECK(std::abs(TimeToPicosecondsDouble(r.iteration_time - run.iteration_time)) <=
        tolerance * TimeToPicosecondsDouble(run.iteration_time));
  std::filesystem::remove_all(dir);
}

TEST_CASE("chakra round trip: whole-microsecond passes replay to the executor's time", "[chakra]") {
  const v1::Cluster cluster = TwoIslandCluster(1, 2, 100, 1000);
  for (v1::Schedule schedule : {v1::GPIPE, v1::ONE_F_ONE_B}) {
    const v1::Plan plan =
        MakePlan({{"fast", 0, 0, 2, 1, 2, 1.0, 2.0, 1}, {"slow", 0, 0, 2, 2, 1, 1.5, 3.0, 1}}, 6, schedule, 1 << 20, 2);
    // Only the optimizer step is not a whole number of microseconds: at most 0.5 us off per stage.
    const auto in = MakeInputs(cluster, plan);
    const auto setup = MakeSetup(in, network::NetworkMode::kMaxMinFair);
    const Time run = MakeRun(*setup).iteration_time;
    const auto out = chakra::ExportChakra(*setup);
    std::vector<proto::ChakraStream> ranks = out.ranks;
    const auto w = Workload(ranks, out.comm_groups);
    CHECK(AbsTime(Replay(w, *setup->topology).iteration_time - run) <= kMicrosecond);
  }
}

TEST_CASE("chakra round trip: the bundled HAPT case study within 1%", "[chakra]") {
  auto in = proto::LoadPlanInputs(HETSIM_SOURCE_DIR "/examples/plan-hapt-case.pbtxt",
                                  HETSIM_SOURCE_DIR "/examples/cluster-hapt-case.pbtxt");
  REQUIRE(in.ok());
  CheckRoundTrip(*in, "hapt", 0.01);
}

TEST_CASE("chakra round trip: the mixed A100 + L40S replicas example within 1%", "[chakra][replicas]") {
  // Each rank holds its own replica group's passes; a coarse (TP 4) GPU joins every finest-shard
  // communicator of its stage; the waits for the slowest group come back from the dependencies.
  auto in = proto::LoadPlanInputs(HETSIM_SOURCE_DIR "/examples/plan-mixed-replicas.pbtxt",
                                  HETSIM_SOURCE_DIR "/examples/cluster-mixed-cloud.pbtxt");
  REQUIRE(in.ok());
  CheckRoundTrip(*in, "mixed", 0.01);
}

TEST_CASE("chakra export: a plan of pipelines reduces its gradients per layer range, and replays as it runs",
          "[chakra][pipelines]") {
  // The lab example: four RTX 4090 pipelines of 4 one-GPU stages and two A6000 pipelines of 2 stages
  // at TP 2 (24 GPUs); their cuts make 4 layer ranges, each reduced over 6 GPUs in 2 shards (the
  // finest TP), so 8 communicators.
  auto in = proto::LoadPlanInputs(HETSIM_SOURCE_DIR "/examples/plan-lab-pipelines.pbtxt",
                                  HETSIM_SOURCE_DIR "/examples/cluster-lab-pcie.pbtxt");
  REQUIRE(in.ok());
  std::vector<std::unique_ptr<executor::ExecutionSetup>> owned;
  std::vector<const executor::ExecutionSetup*> setups;
  for (int p = 0; p < in->plan.pipelines_size(); ++p) {
    auto setup = driver::BuildPipelineSetup(*in, p, network::NetworkMode::kMaxMinFair);
    REQUIRE(setup.ok());
    setups.push_back(setup->get());
    owned.push_back(*std::move(setup));
  }
  const chakra::ChakraExport out = chakra::ExportChakraPipelines(setups);
  REQUIRE(out.ranks.size() == 24);
  REQUIRE(out.comm_groups.size() == 8);
  for (const proto::ChakraCommGroup& g : out.comm_groups) CHECK(g.ranks.size() == 6);
  for (int r = 0; r < 24; ++r) {
    INFO("rank " << r);
    std::vector<uint64_t> collectives;
    const Node* step = nullptr;
    for (const Node& n : out.ranks[r].nodes) {
      if (n.name() == "optimizer step") step = &n;
      if (n.type() != ChakraProtoMsg::COMM_COLL_NODE) continue;
      collectives.push_back(n.id());
      // On a communicator that holds the rank.
      for (const auto& a : n.attr()) {
        if (a.name() != chakra::kPgName) continue;
        const std::vector<int64_t>& ranks = out.comm_groups[std::stoi(a.string_val()) - 1].ranks;
        CHECK(std::find(ranks.begin(), ranks.end(), r) != ranks.end());
      }
    }
    // Every GPU holds at least one range; its optimizer step waits for each of its ranges' all-reduces.
    CHECK_FALSE(collectives.empty());
    REQUIRE(step != nullptr);
    for (uint64_t c : collectives) {
      CHECK(std::find(step->data_deps().begin(), step->data_deps().end(), c) != step->data_deps().end());
    }
  }
  // Read back and replayed: `hetsim run`'s iteration, but for the passes' microsecond rounding, which
  // shifts when the ranges' all-reduces meet the pipelines' transfers on the RTX 4090 nodes' slow SHM
  // connections (1.9 GB/s: 2282.44 ms run, 2282.55 ms replayed, 5e-5).
  auto sim = driver::SimulatePlan(*in, {});
  REQUIRE(sim.ok());
  const std::string dir = TempDir("pipelines");
  REQUIRE(chakra::WriteChakraExport(out, dir, "t").ok());
  auto w = chakra::LoadChakraDir(dir, 24);
  INFO(w.status().message());
  REQUIRE(w.ok());
  CHECK(w->warnings.empty());
  const Time replay = Replay(*w, *setups.front()->topology).iteration_time;
  const Time run = sim->pipeline_sync.iteration_time;
  INFO("run " << TimeToMilliseconds(run) << " ms, replay " << TimeToMilliseconds(replay) << " ms");
  CHECK(std::abs(TimeToPicosecondsDouble(replay - run)) <= 1e-4 * TimeToPicosecondsDouble(run));
  std::filesystem::remove_all(dir);
}

TEST_CASE("chakra export: a plan of pipelines' parameter gathers at the start open each rank's trace",
          "[chakra][pipelines][zero]") {
  // The lab pipelines under ZeRO-1 with overlap_param_gather: each range's all-gather is a COMM_COLL
  // node without dependencies on every GPU of its shard groups (comm_size: its parameters over the
  // group, each rank's input), each stage's first forward depends on its GPU's gathers, and none follows
  // the steps. Read back and replayed, it is `hetsim run`'s iteration.
  auto in = proto::LoadPlanInputs(HETSIM_SOURCE_DIR "/tests/planner_data/plan-lab-pipelines-zero1-gather.pbtxt",
                                  HETSIM_SOURCE_DIR "/examples/cluster-lab-pcie.pbtxt");
  REQUIRE(in.ok());
  auto out = chakra::ExportPlanInputs(*in, "plan");
  INFO(out.status().message());
  REQUIRE(out.ok());
  REQUIRE(out->ranks.size() == 24);
  const auto attr = [](const Node& n, absl::string_view name) {
    const auto it = std::find_if(n.attr().begin(), n.attr().end(), [&](const auto& a) { return a.name() == name; });
    REQUIRE(it != n.attr().end());
    return *it;
  };
  for (int r = 0; r < 24; ++r) {
    INFO("rank " << r);
    const auto& nodes = out->ranks[r].nodes;
    std::vector<uint64_t> gathers;
    for (const Node& n : nodes) {
      if (n.name().rfind("param all-gather", 0) != 0) continue;
      gathers.push_back(n.id());
      CHECK(n.data_deps().empty());
      CHECK(n.ctrl_deps().empty());
      CHECK(attr(n, chakra::kCommType).int64_val() == ChakraProtoMsg::ALL_GATHER);
    }
    // Every GPU holds a range, and its gathers come first, its first forward after all of them.
    REQUIRE_FALSE(gathers.empty());
    CHECK(gathers.back() == gathers.size() - 1);
    const auto first =
        std::find_if(nodes.begin(), nodes.end(), [](const Node& n) { return n.name().rfind("F mb0 vs", 0) == 0; });
    REQUIRE(first != nodes.end());
    for (uint64_t g : gathers) {
      CHECK(std::find(first->data_deps().begin(), first->data_deps().end(), g) != first->data_deps().end());
    }
  }
  auto sim = driver::SimulatePlan(*in, {});
  REQUIRE(sim.ok());
  // comm_size: the range's parameters gathered over its shard group, over the group's size.
  const executor::LayerRangeGroup& range = sim->pipeline_sync.groups.front();
  const Node& gather = out->ranks[range.groups.front().front().value()].nodes.front();
  CHECK(attr(gather, chakra::kCommSize).int64_val() ==
        chakra::CommSizeOf(CollectiveOp::kAllGather, range.param_bytes, static_cast<int>(range.groups.front().size())));
  const std::string dir = TempDir("pipelines-gathers");
  REQUIRE(chakra::WriteChakraExport(*out, dir, "t").ok());
  auto w = chakra::LoadChakraDir(dir, 24);
  INFO(w.status().message());
  REQUIRE(w.ok());
  CHECK(w->warnings.empty());
  const Time replay = Replay(*w, *sim->setup->topology).iteration_time;
  const Time run = sim->pipeline_sync.iteration_time;
  INFO("run " << TimeToMilliseconds(run) << " ms, replay " << TimeToMilliseconds(replay) << " ms");
  CHECK(std::abs(TimeToPicosecondsDouble(replay - run)) <= 1e-4 * TimeToPicosecondsDouble(run));
  std::filesystem::remove_all(dir);
}

// An MoE plan of pipelines exported (ExportPlanInputs), written, read back and replayed: the iteration
// `hetsim run` simulates (its pipeline_sync), within `tolerance`; the run's first layer range returned.
executor::LayerRangeGroup CheckPipelinesRoundTrip(const proto::PlanInputs& in, const std::string& name,
                                                  chakra::ChakraExport& out, double tolerance) {
  auto exported = chakra::ExportPlanInputs(in, "plan");
  INFO(name << ": " << exported.status().message());
  REQUIRE(exported.ok());
  out = *std::move(exported);
  auto sim = driver::SimulatePlan(in, {});
  INFO(sim.status().message());
  REQUIRE(sim.ok());
  const std::string dir = TempDir(name);
  REQUIRE(chakra::WriteChakraExport(out, dir, "t").ok());
  auto w = chakra::LoadChakraDir(dir, static_cast<int>(out.ranks.size()));
  INFO(w.status().message());
  REQUIRE(w.ok());
  CHECK(w->warnings.empty());
  const Time replay = Replay(*w, *sim->setup->topology).iteration_time;
  const Time run = sim->pipeline_sync.iteration_time;
  INFO(name << ": run " << TimeToMilliseconds(run) << " ms, replay " << TimeToMilliseconds(replay) << " ms");
  CHECK(std::abs(TimeToPicosecondsDouble(replay - run)) <= tolerance * TimeToPicosecondsDouble(run));
  std::filesystem::remove_all(dir);
  REQUIRE_FALSE(sim->pipeline_sync.groups.empty());
  return sim->pipeline_sync.groups.front();
}

TEST_CASE("chakra export: an MoE plan of pipelines reduces each expert shard over its copies, and replays as it runs",
          "[chakra][pipelines][experts]") {
  // An A100 pipeline of DP 4 at EP 2 (two copies of the 4 experts) beside a V100 pipeline of DP 2 at EP 2
  // (one copy), one range of every layer: the experts reduce per shard e of EP 2 over A100 e, A100 2 + e and
  // V100 e (ExpertShardGroup), 2 communicators of 3 GPUs, each GPU's after its dense reduction, and its
  // optimizer step waits for both (refused until session 41: bad input plan_pl_moe_export).
  auto in = proto::LoadPlanInputs(HETSIM_SOURCE_DIR "/tests/planner_data/plan-pipelines-moe.pbtxt",
                                  HETSIM_SOURCE_DIR "/examples/cluster-hapt-case.pbtxt");
  REQUIRE(in.ok());
  chakra::ChakraExport out;
  const executor::LayerRangeGroup range = CheckPipelinesRoundTrip(*in, "pipelines-moe", out, 1e-4);
  REQUIRE(range.expert_groups.size() == 2);
  const auto attr = [](const Node& n, absl::string_view name) {
    const auto it = std::find_if(n.attr().begin(), n.attr().end(), [&](const auto& a) { return a.name() == name; });
    REQUIRE(it != n.attr().end());
    return *it;
  };
  for (const std::vector<GpuId>& group : range.expert_groups) {
    REQUIRE(group.size() == 3);
    // The group is a communicator of its own.
    std::vector<int64_t> ranks;
    for (const GpuId g : group) ranks.push_back(g.value());
    const auto comm = std::find_if(out.comm_groups.begin(), out.comm_groups.end(),
                                   [&](const proto::ChakraCommGroup& c) { return c.ranks == ranks; });
    REQUIRE(comm != out.comm_groups.end());
    for (const GpuId g : group) {
      INFO("rank " << g.value());
      const auto& nodes = out.ranks[g.value()].nodes;
      const auto named = [&](const std::string& name) {
        const auto it = std::find_if(nodes.begin(), nodes.end(), [&](const Node& n) { return n.name() == name; });
        REQUIRE(it != nodes.end());
        return *it;
      };
      const Node dense = named("grad all-reduce layers 0-5");
      const Node experts = named("grad all-reduce layers 0-5 (experts)");
      const Node step = named("optimizer step");
      CHECK(attr(experts, chakra::kPgName).string_val() == comm->name);
      // comm_size: the experts' gradients per GPU of a shard group (an all-reduce's input).
      CHECK(attr(experts, chakra::kCommSize).int64_val() ==
            chakra::CommSizeOf(CollectiveOp::kAllReduce, range.expert_bytes, 3));
      CHECK(std::vector<uint64_t>(experts.data_deps().begin(), experts.data_deps().end()) ==
            std::vector<uint64_t>{dense.id()});
      CHECK(std::find(step.data_deps().begin(), step.data_deps().end(), experts.id()) != step.data_deps().end());
    }
  }
  // Holders at their own EP under ZeRO-1 (each V100 in 2 of the 4 shard groups), a mixed holder, and ZeRO-1's
  // gathers at the iteration's start: each replays as it runs.
  for (const char* plan : {"plan-pipelines-moe-own-ep.pbtxt", "plan-pipelines-rg-moe.pbtxt"}) {
    auto other = proto::LoadPlanInputs(absl::StrCat(HETSIM_SOURCE_DIR "/tests/planner_data/", plan),
                                       HETSIM_SOURCE_DIR "/examples/cluster-hapt-case.pbtxt");
    REQUIRE(other.ok());
    CHECK_FALSE(CheckPipelinesRoundTrip(*other, plan, out, 1e-4).expert_groups.empty());
  }
  auto early = proto::LoadPlanInputs(HETSIM_SOURCE_DIR "/tests/planner_data/plan-pipelines-moe-own-ep.pbtxt",
                                     HETSIM_SOURCE_DIR "/examples/cluster-hapt-case.pbtxt");
  REQUIRE(early.ok());
  early->plan.set_overlap_param_gather(true);
  const executor::LayerRangeGroup own = CheckPipelinesRoundTrip(*early, "pipelines-moe-early", out, 1e-4);
  REQUIRE(own.expert_groups.size() == 4);
  for (const GpuId g : own.expert_groups.front()) {
    // The experts' gather opens the trace beside the dense one, without dependencies.
    const auto& nodes = out.ranks[g.value()].nodes;
    const auto it = std::find_if(nodes.begin(), nodes.end(),
                                 [](const Node& n) { return n.name() == "param all-gather layers 0-5 (experts)"; });
    REQUIRE(it != nodes.end());
    CHECK(it->data_deps().empty());
    CHECK(attr(*it, chakra::kCommSize).int64_val() ==
          chakra::CommSizeOf(CollectiveOp::kAllGather, own.expert_param_bytes,
                             static_cast<int>(own.expert_groups.front().size())));
  }
}

TEST_CASE("chakra traces: repairs are warnings that say what was assumed", "[chakra]") {
  Node odd = Comp(1, 5);
  odd.add_attr()->CopyFrom(chakra::StringAttr("rf_id", "x"));
  Node mem;
  mem.set_id(2);
  mem.set_type(ChakraProtoMsg::MEM_LOAD_NODE);
  const auto w = Workload({Stream({odd, mem, Comp(3, 5), Coll(4, {}, CollectiveOp::kAllReduce, 1024, "")}, "0.0.3"),
                           Stream({Coll(1, {}, CollectiveOp::kAllReduce, 1024, "")})});
  auto has = [&](const std::string& text) {
    return std::any_of(w.warnings.begin(), w.warnings.end(),
                       [&](const std::string& s) { return s.find(text) != std::string::npos; });
  };
  CHECK(has("t.0.et: GlobalMetadata.version \"0.0.3\" is not 0.0.4: read with the 0.0.4 layout"));
  CHECK(has("t.0.et: attributes hetsim does not read, ignored: rf_id"));
  CHECK(has("t.0.et: MEM_LOAD_NODE nodes take no time"));
  CHECK(has("t.0.et: node 4: COMM_COLL_NODE without pg_name: assumed to run over every rank (0..1)"));
  CHECK(has("t.0.et: 2 GPU kernels no node depends on (first: node 1)"));
  REQUIRE(w.groups.size() == 1);
  CHECK(w.groups[0].ranks == std::vector<int64_t>{0, 1});
  // The loose kernels run one after the other on rank 0's GPU stream: 5 + 5 us.
  const topology::Topology topo = Topo(TwoIslandCluster(1, 2, 100, 1000));
  const chakra::ReplayResult r = Replay(w, topo);
  CHECK(r.compute_busy[0] == 10 * kMicrosecond);
  CHECK(r.node_start[0][2] == 5 * kMicrosecond);
}

TEST_CASE("chakra traces: errors name the rank file and the node", "[chakra]") {
  std::vector<proto::ChakraCommGroup> groups;
  std::vector<std::string> warnings;
  auto error = [&](const proto::ChakraStream& s) {
    auto t = chakra::ConvertRank(s, "t.0.et", 0, 2, &groups, &warnings);
    REQUIRE(!t.ok());
    return std::string(t.status().message());
  };
  CHECK(error(Stream({Comp(1, 1, {7})})) == "t.0.et: node 1: data_deps: node 7 is not in this file");
  CHECK(error(Stream({Comp(1, 1, {2}), Comp(2, 1, {1})})).find("dependency cycle: ") != std::string::npos);
  CHECK(error(Stream({Comp(1, 1), Comp(1, 1)})) == "t.0.et: node 1: a second node with this id");
  CHECK(error(Stream({Comp(1, 1)}, "3.0.0")).find("GlobalMetadata.version: \"3.0.0\"") != std::string::npos);
  CHECK(error(Stream({Comm(1, ChakraProtoMsg::COMM_SEND_NODE, {}, 0, 5, 10)})) ==
        "t.0.et: node 1: comm_dst 5 is not a rank (0..1)");
  CHECK(error(Stream({Comm(1, ChakraProtoMsg::COMM_RECV_NODE, {}, 1, 1, 10)})) ==
        "t.0.et: node 1: comm_dst 1 is not this file's rank 0");
}

TEST_CASE("chakra replay: --retime-compute times num_ops with the GPU type's kernel model", "[chakra]") {
  const v1::Cluster cluster = TwoIslandCluster(1, 2, 100, 1000);
  const topology::Topology topo = Topo(cluster);
  Node gemm = Comp(1, 999);
  gemm.add_attr()->CopyFrom(chakra::Int64Attr(chakra::kNumOps, int64_t{2} << 40));
  Node untouched = Comp(2, 7, {1});  // no num_ops, no tensor_size: keeps its recorded time
  std::vector<proto::ChakraStream> ranks(4, Stream({}));
  ranks[0] = Stream({gemm, untouched});
  ranks[2] = Stream({gemm});
  const auto w = Workload(ranks);
  chakra::ReplayOptions options;
  options.retime_compute = true;
  options.dtype = v1::FP16;
  const chakra::ReplayResult r = Replay(w, topo, options);
  // Ideal hardware: num_ops / peak, the A100's on rank 0 and the V100's on rank 2 (island "slow").
  auto seconds = [&](int island) {
    auto gpu = workload::GpuCompute::Create(topo.island(island).gpu, spec::DType::kFp16, "", true);
    REQUIRE(gpu.ok());
    return static_cast<double>(int64_t{2} << 40) / gpu->peak_flop_per_s();
  };
  CHECK(r.rank_end[0] == SecondsToTime(seconds(0)) + 7 * kMicrosecond);
  CHECK(r.rank_end[2] == SecondsToTime(seconds(1)));
  CHECK(r.rank_end[2] > r.rank_end[0]);  // the V100 is slower
}

}  // namespace
}  // namespace hetsim

namespace hetsim {
namespace {

// Gradient buckets overlapped with the last backward (of each chunk, when interleaved), the ZeRO-1
// parameter all-gather, interleaved chunks and blocking p2p: each exported shape replays to the executor's time. The
// passes are whole microseconds; bucket parts and the optimizer step are rounded (a few us in all), and per-rank traces
// let a GPU go on when its own receives are done (the executor waits for the whole boundary).
TEST_CASE("chakra round trip: buckets, ZeRO-1 gather, interleaving, blocking p2p", "[chakra]") {
  const v1::Cluster cluster = TwoIslandCluster(1, 2, 100, 1000);
  v1::Plan buckets = MakePlan({{"fast", 0, 0, 2, 1, 2, 1.0, 2.0, 2}, {"slow", 0, 0, 2, 1, 2, 1.5, 3.0, 2}}, 4,
                              v1::ONE_F_ONE_B, 1 << 20, 2);
  buckets.set_overlap_grad_reduce(true);
  buckets.set_grad_bucket_bytes(1 << 20);  // 2 M parameters x 2 bytes per stage: 4 buckets
  for (v1::Stage& s : *buckets.mutable_stages()) s.set_zero_stage(1);
  v1::Plan interleaved = MakePlan({{"fast", 0, 0, 2, 2, 1, 1.0, 2.0, 2}, {"slow", 0, 0, 2, 2, 1, 1.5, 3.0, 2}}, 4,
                                  v1::INTERLEAVED_1F1B, 1 << 20, 1, 2);
  interleaved.set_blocking_p2p(true);
  // Interleaved with buckets: each chunk's two buckets follow the chunk's own last backward.
  v1::Plan chunked = MakePlan({{"fast", 0, 0, 2, 1, 2, 1.0, 2.0, 2}, {"slow", 0, 0, 2, 1, 2, 1.5, 3.0, 2}}, 4,
                              v1::INTERLEAVED_1F1B, 1 << 20, 2, 2);
  chunked.set_overlap_grad_reduce(true);
  chunked.set_grad_bucket_bytes(1 << 20);
  for (v1::Stage& s : *chunked.mutable_stages()) s.set_zero_stage(1);
  // The same with the parameter gathers at the start (Plan.overlap_param_gather), one per chunk.
  v1::Plan early = chunked;
  early.set_overlap_param_gather(true);
  for (const v1::Plan& plan : {buckets, interleaved, chunked, early}) {
    const auto in = MakeInputs(cluster, plan);
    const auto setup = MakeSetup(in, network::NetworkMode::kMaxMinFair);
    const Time run = MakeRun(*setup).iteration_time;
    const auto out = chakra::ExportChakra(*setup);
    int collectives = 0;
    for (const Node& n : out.ranks[0].nodes) collectives += n.type() == ChakraProtoMsg::COMM_COLL_NODE;
    // Rank 0: 4 reduce-scatter buckets and the all-gather with ZeRO-1 (one per chunk when it opens
    // the iteration); none without DP.
    CHECK(collectives == (plan.overlap_grad_reduce() ? (plan.overlap_param_gather() ? 6 : 5) : 0));
    const auto w = Workload(out.ranks, out.comm_groups);
    const Time replay = Replay(w, *setup->topology).iteration_time;
    INFO(plan.schedule() << ": executor " << run << " ps, replay " << replay << " ps");
    CHECK(std::abs(TimeToPicosecondsDouble(replay - run)) <= 0.002 * TimeToPicosecondsDouble(run));
  }
}

// ASTRA-sim's microbenchmark traces (examples/workload/microbenchmarks/*/4npus_1MB): one COMM_COLL
// node per rank, no pg_name, comm_size 1 MiB, the nodes as its generator scripts write them
// (tests/chakra/astra_microbenchmarks.py checks the bytes against its files).
std::vector<proto::ChakraStream> AstraMicrobenchmark(ChakraProtoMsg::CollectiveCommType type, const std::string& name) {
  std::vector<proto::ChakraStream> ranks;
  for (int npu = 0; npu < 4; ++npu) {
    Node n;
    n.set_id(npu);
    n.set_name(name + "_4npus_1MB");
    n.set_type(ChakraProtoMsg::COMM_COLL_NODE);
    n.add_attr()->CopyFrom(chakra::BoolAttr(chakra::kIsCpuOp, false));
    n.add_attr()->CopyFrom(chakra::Int64Attr(chakra::kCommType, type));
    n.add_attr()->CopyFrom(chakra::Int64Attr(chakra::kCommSize, 1 << 20));
    ranks.push_back(Stream({n}));
  }
  return ranks;
}

TEST_CASE("chakra comm_size: each rank's input, as ASTRA-sim reads it (an all-gather's n times smaller)", "[chakra]") {
  const v1::Cluster cluster = TwoIslandCluster(2, 2, 100, 1000);
  const topology::Topology topo = Topo(cluster);
  topology::Router router(topo);
  // ASTRA-sim's Ring: an all-gather of comm_size S sends S per step and ends with 4 S; a
  // reduce-scatter of S sends S / 4 per step. hetsim's bytes (nccl-tests): the output, the input.
  const struct {
    ChakraProtoMsg::CollectiveCommType type;
    std::string name;
    CollectiveOp op;
    int64_t hetsim_bytes;
  } cases[] = {{ChakraProtoMsg::ALL_GATHER, "all_gather", CollectiveOp::kAllGather, 4 << 20},
               {ChakraProtoMsg::REDUCE_SCATTER, "reduce_scatter", CollectiveOp::kReduceScatter, 1 << 20}};
  for (const auto& c : cases) {
    const auto w = Workload(AstraMicrobenchmark(c.type, c.name));
    CHECK(w.ranks[0].nodes[0].comm_bytes == c.hetsim_bytes);
    collectives::CollectiveRequest request;
    request.op = c.op;
    request.gpus = GpuIds({0, 1, 2, 3});
    request.bytes = c.hetsim_bytes;
    auto alone = collectives::SimulateCollective(topo, router, request);
    REQUIRE(alone.ok());
    CHECK(Replay(w, topo).iteration_time == alone->time);
  }
  CHECK(chakra::CommSizeOf(CollectiveOp::kAllGather, 4 << 20, 4) == 1 << 20);
  CHECK(chakra::CommSizeOf(CollectiveOp::kAllGather, 10, 4) == 3);  // rounded to the nearest byte
  CHECK(chakra::CommSizeOf(CollectiveOp::kReduceScatter, 4 << 20, 4) == 4 << 20);
  CHECK(chakra::CollectiveBytesOf(CollectiveOp::kAllGather, int64_t{1} << 40, 1 << 12, int64_t{1} << 50) ==
        std::nullopt);

  // The export writes a ZeRO-1 parameter all-gather's comm_size as its gathered bytes over the group.
  v1::Plan plan = TwoStageDpPlan();
  for (v1::Stage& s : *plan.mutable_stages()) s.set_zero_stage(1);
  const auto in = MakeInputs(TwoIslandCluster(1, 2, 100, 1000), plan);
  const auto setup = MakeSetup(in, network::NetworkMode::kMaxMinFair);
  const chakra::ChakraExport out = chakra::ExportChakra(*setup);
  REQUIRE(setup->stages[0].param_gather);
  const int64_t gathered = setup->stages[0].param_gather->BytesOf(false);
  const auto gather = std::find_if(out.ranks[0].nodes.begin(), out.ranks[0].nodes.end(),
                                   [](const Node& n) { return n.name() == "param all-gather"; });
  REQUIRE(gather != out.ranks[0].nodes.end());
  const auto size = std::find_if(gather->attr().begin(), gather->attr().end(),
                                 [](const auto& a) { return a.name() == chakra::kCommSize; });
  REQUIRE(size != gather->attr().end());
  CHECK(size->int64_val() == (gathered + 1) / 2);
  // Read back, it is the executor's all-gather again.
  const auto w = Workload(out.ranks, out.comm_groups);
  const auto back = std::find_if(w.ranks[0].nodes.begin(), w.ranks[0].nodes.end(),
                                 [](const chakra::TraceNode& n) { return n.name == "param all-gather"; });
  REQUIRE(back != w.ranks[0].nodes.end());
  CHECK(std::abs(back->comm_bytes - gathered) <= 1);
}

TEST_CASE("chakra export: a pass after a transfer its GPU takes no part in waits for the transfer", "[chakra]") {
  // Two stages of 2 GPUs (DP 2): every boundary transfer reaches both GPUs of the next stage. Drop the
  // forward flows to GPU 3: its forwards still follow the whole transfer, as the executor runs them,
  // through a message of no bytes from GPU 2 (the stage's first GPU the transfer reaches) after its
  // receive; before, GPU 3's forwards depended on nothing of the transfer and started at once.
  const v1::Cluster cluster = TwoIslandCluster(1, 2, 100, 1000);
  const auto in = MakeInputs(cluster, TwoStageDpPlan());
  auto setup = MakeSetup(in, network::NetworkMode::kMaxMinFair);
  std::vector<executor::BoundaryFlow>& flows = setup->boundaries[0].forward_flows;
  std::erase_if(flows, [](const executor::BoundaryFlow& f) { return f.dst.value() == 3; });
  REQUIRE(flows.size() == 1);
  const chakra::ChakraExport out = chakra::ExportChakra(*setup);
  const auto find = [&](int rank, const std::string& name) -> const Node* {
    for (const Node& n : out.ranks[rank].nodes) {
      if (n.name() == name) return &n;
    }
    return nullptr;
  };
  const Node* forward = find(3, "F mb0 vs1");
  REQUIRE(forward != nullptr);
  REQUIRE(forward->data_deps_size() == 1);
  const Node& done = out.ranks[3].nodes[forward->data_deps(0)];
  CHECK(done.type() == ChakraProtoMsg::COMM_RECV_NODE);
  CHECK(done.name() == "CF mb0 vs0 done recv");
  const Node* relay = find(2, "CF mb0 vs0 done send");
  REQUIRE(relay != nullptr);
  const Node* received = find(2, "CF mb0 vs0 recv");
  REQUIRE(received != nullptr);
  CHECK(std::vector<uint64_t>(relay->ctrl_deps().begin(), relay->ctrl_deps().end()) ==
        std::vector<uint64_t>{received->id()});
  // The replay runs it without repairs; every microbatch's forward on GPU 3 has its relay.
  const auto w = Workload(out.ranks, out.comm_groups);
  CHECK(w.warnings.empty());
  for (int i = 0; i < 4; ++i) CHECK(find(3, absl::StrFormat("CF mb%d vs0 done recv", i)) != nullptr);
}

TEST_CASE("chakra export: a GPU the plan leaves idle gets one COMP node of no time, for ASTRA-sim", "[chakra]") {
  // Two fast nodes and one slow: the plan uses fast node 0 and the slow node, fast node 1 (GPUs 2, 3)
  // is idle.
  const v1::Cluster cluster = TwoIslandCluster(2, 2, 100, 1000);
  const v1::Plan plan = TwoStageDpPlan();
  const auto in = MakeInputs(cluster, plan);
  const auto setup = MakeSetup(in, network::NetworkMode::kMaxMinFair);
  const chakra::ChakraExport out = chakra::ExportChakra(*setup);
  REQUIRE(out.ranks.size() == 6);
  for (int r : {2, 3}) {
    REQUIRE(out.ranks[r].nodes.size() == 1);
    const Node& idle = out.ranks[r].nodes[0];
    CHECK(idle.type() == ChakraProtoMsg::COMP_NODE);
    CHECK(idle.duration_micros() == 0);
    CHECK(idle.data_deps().empty());
    CHECK(idle.ctrl_deps().empty());
  }
  CHECK(out.ranks[0].nodes.size() > 1);
  // hetsim replays it as before: the idle ranks end at once, the iteration is the executor's.
  const auto w = Workload(out.ranks, out.comm_groups);
  CHECK(w.warnings.empty());
  const chakra::ReplayResult r = Replay(w, *setup->topology);
  CHECK(r.rank_end[2] == 0);
  const Time run = MakeRun(*setup).iteration_time;
  CHECK(std::abs(TimeToPicosecondsDouble(r.iteration_time - run)) <= 0.002 * TimeToPicosecondsDouble(run));
}

TEST_CASE("chakra traces from PyTorch: missing control dependencies and host-side collectives are skipped",
          "[chakra]") {
  // As Chakra's converter writes them: a host op with ctrl_deps on the (left out) thread node 3, the
  // host side of a broadcast (c10d::broadcast_, on the CPU, no comm_size) and its GPU kernel.
  Node host = Comp(10, 5);
  host.add_ctrl_deps(3);
  Node c10d;
  c10d.set_id(11);
  c10d.set_name("c10d::broadcast_(0)");
  c10d.set_type(ChakraProtoMsg::COMM_COLL_NODE);
  c10d.add_ctrl_deps(3);
  c10d.add_ctrl_deps(11);  // a node after itself, as in Chakra's own feeder test trace
  c10d.add_data_deps(10);
  c10d.add_attr()->CopyFrom(chakra::BoolAttr(chakra::kIsCpuOp, true));
  Node kernel = Coll(12, {11}, CollectiveOp::kBroadcast, 4096, "");
  kernel.add_attr()->CopyFrom(chakra::BoolAttr(chakra::kIsCpuOp, false));
  const auto w = Workload({Stream({host, c10d, kernel})});
  const chakra::RankTrace& t = w.ranks[0];
  CHECK(t.skipped_ctrl_deps == 2);
  CHECK(t.skipped_self_ctrl_deps == 1);
  CHECK(t.skipped_cpu_comm_ops == 1);
  CHECK(t.nodes[1].type == chakra::TraceNodeType::kNoOp);
  CHECK(t.nodes[2].type == chakra::TraceNodeType::kCollective);
  CHECK(t.nodes[1].deps == std::vector<int32_t>{0});
  auto has = [&](const std::string& text) {
    return std::any_of(w.warnings.begin(), w.warnings.end(),
                       [&](const std::string& s) { return s.find(text) != std::string::npos; });
  };
  CHECK(has("t.0.et: 2 control dependencies on nodes not in this file and 1 on the node itself: ignored"));
  CHECK(has("t.0.et: 1 CPU-side communication nodes without comm_size"));
  // A host op ordered after the GPU kernel it launches (which data-depends on it), as the converter
  // writes it: the control dependencies close a cycle, so all of them go.
  Node launch = Comp(1, 5);
  launch.add_ctrl_deps(2);
  Node launched = Comp(2, 7, {1});
  Node next = Comp(3, 1, {2});
  next.add_ctrl_deps(1);
  const auto looped = Workload({Stream({launch, launched, next})});
  CHECK(looped.ranks[0].skipped_cyclic_ctrl_deps == 2);
  CHECK(looped.ranks[0].nodes[0].deps.empty());
  CHECK(looped.ranks[0].nodes[2].deps == std::vector<int32_t>{1});
  CHECK(Replay(looped, Topo(TwoIslandCluster(1, 2, 100, 1000))).iteration_time == 13 * kMicrosecond);
  // pg_name "0" (PyTorch's default process group) is ASTRA-sim's default group of every rank, unless the
  // groups file names a group "0".
  const auto pg0 = Workload({Stream({Coll(1, {}, CollectiveOp::kAllReduce, 64, "0")}),
                             Stream({Coll(1, {}, CollectiveOp::kAllReduce, 64, "0")})});
  CHECK(pg0.groups.back().name == "(all ranks)");
  CHECK(pg0.ranks[1].nodes[0].group == static_cast<int32_t>(pg0.groups.size()) - 1);
  const auto named0 =
      Workload({Stream({Coll(1, {}, CollectiveOp::kAllReduce, 64, "0")}), Stream({}), Stream({})}, {{"0", {0}}});
  CHECK(named0.ranks[0].nodes[0].group == 0);
  // A cycle of data dependencies stays an error (bad input chakra_cycle), and so does a data dependency
  // on a missing node: Chakra's feeder would wait for either forever.
  Node lost = Comp(1, 5, {99});
  std::vector<proto::ChakraCommGroup> groups;
  std::vector<std::string> warnings;
  CHECK(!chakra::ConvertRank(Stream({lost}), "t.0.et", 0, 1, &groups, &warnings).ok());
}

TEST_CASE("chakra traces: a rank of host operations without durations says it times nothing", "[chakra]") {
  // What chakra_converter writes when chakra_trace_link linked no GPU kernel (facebookresearch/param's
  // et_replay/tests/inputs resnet_et.json with resnet_kineto.json, whose Kineto events carry no "Record
  // function id"): CPU compute nodes with no duration_micros.
  Node thread = Comp(1, 0);
  thread.add_attr()->CopyFrom(chakra::BoolAttr(chakra::kIsCpuOp, true));
  Node step = Comp(3, 0, {1});
  step.add_attr()->CopyFrom(chakra::BoolAttr(chakra::kIsCpuOp, true));
  const auto w = Workload({Stream({thread, step}), Stream({Comp(1, 4)})});
  auto has = [&](const std::string& text) {
    return std::any_of(w.warnings.begin(), w.warnings.end(),
                       [&](const std::string& s) { return s.find(text) != std::string::npos; });
  };
  CHECK(has("t.0.et: none of its 2 compute nodes has a duration"));
  CHECK(has("link the host and device traces of one run"));
  CHECK(!has("t.1.et: none of its"));  // a timed rank says nothing
  // A node that --retime-compute can time (num_ops) or a collective is work: no warning.
  Node counted = Comp(1, 0);
  counted.add_attr()->CopyFrom(chakra::Int64Attr(chakra::kNumOps, 1000000000));
  counted.add_attr()->CopyFrom(chakra::BoolAttr(chakra::kIsCpuOp, true));
  const auto retimable = Workload({Stream({counted})});
  CHECK(retimable.warnings.empty());
  Node host = Comp(1, 0);
  host.add_attr()->CopyFrom(chakra::BoolAttr(chakra::kIsCpuOp, true));
  const auto talking = Workload({Stream({host, Coll(2, {1}, CollectiveOp::kAllReduce, 64, "")})});
  CHECK(std::none_of(talking.warnings.begin(), talking.warnings.end(),
                     [](const std::string& s) { return s.find("none of its") != std::string::npos; }));
  // hetsim's own trace of an idle GPU (one GPU node of no time) says nothing.
  CHECK(Workload({Stream({Comp(1, 0)})}).warnings.empty());
}

TEST_CASE("chakra traces: JSON is named as JSON, with how to get a protobuf trace", "[chakra]") {
  const auto message = [](const std::string& bytes) {
    return std::string(proto::ParseChakraStream(bytes, "t.0.et").status().message());
  };
  CHECK(message("{\n  \"workload_graph\": []\n}").find("t.0.et: a Chakra workload graph in JSON") == 0);
  CHECK(message(" {\"schema\": \"1.0.2-chakra.0.0.4\", \"nodes\": []}").find("a PyTorch execution trace (JSON)") !=
        std::string::npos);
  CHECK(message("{\"version\": \"0.0.4\"}{\"id\": \"1\"}").find("chakra_jsonizer") != std::string::npos);
  CHECK(message("\x05\xff\xff").find("JSON") == std::string::npos);
  // A folder holding only JSON, or a JSON file given for the folder.
  const std::string dir = TempDir("json");
  std::filesystem::create_directories(dir);
  const std::string json = (std::filesystem::path(dir) / "pytorch_et_0.json").string();
  REQUIRE(proto::WriteFileAtomically(json, "{\"schema\": \"1.0.2-chakra.0.0.4\", \"nodes\": []}").ok());
  for (const std::string& path : {dir, json}) {
    const auto w = chakra::LoadChakraDir(path, 4);
    CHECK(std::string(w.status().message()).find("pytorch_et_0.json: a PyTorch execution trace") != std::string::npos);
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace hetsim
