// The Chrome trace read back with a real JSON parser (protobuf's JSON into google.protobuf.Struct):
// its traceEvents, process and thread names, compute events named like "F12 s3" with their args,
// send -> receive flow arrows that pair up, and the memory and link counter tracks.
#include <catch2/catch.hpp>

#include <map>
#include <regex>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "tests/executor_test_util.h"
#include "traces/chrome_trace.h"

namespace {

using google::protobuf::Struct;
using google::protobuf::Value;
using hetsim::sim::NetworkMode;
using hetsim::testing::MakeInputs;
using hetsim::testing::MakePlan;
using hetsim::testing::MakeRun;
using hetsim::testing::MakeSetup;
using hetsim::testing::TwoIslandCluster;
namespace v1 = hetsim::v1;

const Value& Field(const Struct& s, const std::string& name) {
  static const Value kNull;
  auto it = s.fields().find(name);
  return it == s.fields().end() ? kNull : it->second;
}
std::string Str(const Struct& s, const std::string& name) { return Field(s, name).string_value(); }
double Num(const Struct& s, const std::string& name) { return Field(s, name).number_value(); }
using Thread = std::pair<int, int>;  // pid, tid
Thread ThreadOf(const Struct& e) { return {static_cast<int>(Num(e, "pid")), static_cast<int>(Num(e, "tid"))}; }

struct Traced {
  std::unique_ptr<hetsim::sim::executor::ExecutionSetup> setup;
  std::vector<Struct> events;
};

// Two stages of TP 2 on two nodes of the fast island, 4 microbatches of 1F1B, 1 MB activations.
Traced TraceOfSmallRun() {
  const v1::Cluster cluster = TwoIslandCluster(2, 2, 10, 1000);
  const v1::Plan plan = MakePlan({{"fast", 0, 0, 2, 2, 1, 1.0, 2.0, 2}, {"fast", 1, 0, 2, 2, 1, 1.0, 2.0, 1}}, 4,
                                 v1::ONE_F_ONE_B, 1000000);
  Traced t;
  t.setup = MakeSetup(MakeInputs(cluster, plan), NetworkMode::kMaxMinFair);
  auto traced = hetsim::traces::SelectTracedGpus(*t.setup, {});
  REQUIRE(traced.ok());
  hetsim::sim::executor::ExecutorOptions options;
  options.record_flows = true;
  options.sampled_links = hetsim::traces::TraceLinks(*t.setup, *traced);
  options.link_sample_period = hetsim::traces::TraceSamplePeriod(*t.setup);
  const auto run = MakeRun(*t.setup, options);
  const std::string json = hetsim::traces::ChromeTraceJson(*t.setup, run, *traced, options.sampled_links);

  Struct root;
  const auto status = google::protobuf::util::JsonStringToMessage(json, &root);
  INFO(status.ToString());
  REQUIRE(status.ok());
  CHECK(Str(root, "displayTimeUnit") == "ms");
  REQUIRE(Field(root, "traceEvents").has_list_value());
  for (const Value& v : Field(root, "traceEvents").list_value().values()) {
    REQUIRE(v.has_struct_value());
    t.events.push_back(v.struct_value());
  }
  return t;
}

TEST_CASE("chrome trace: processes, threads and compute events named like F12 s3", "[traces][trace]") {
  const Traced t = TraceOfSmallRun();
  std::map<int, std::string> process_names;
  std::map<Thread, std::string> thread_names;
  for (const Struct& e : t.events) {
    if (Str(e, "ph") != "M") continue;
    if (Str(e, "name") == "process_name") process_names[ThreadOf(e).first] = Str(Field(e, "args").struct_value(), "name");
    if (Str(e, "name") == "thread_name") thread_names[ThreadOf(e)] = Str(Field(e, "args").struct_value(), "name");
  }
  // Both nodes (named with island and GPU type) and the network.
  std::set<std::string> names;
  for (const auto& [pid, name] : process_names) names.insert(name);
  CHECK(names == std::set<std::string>{"fast node 0 (A100-80GB)", "fast node 1 (A100-80GB)", "network"});
  // A compute and a comm thread per GPU: 2 GPUs per node.
  CHECK(thread_names.size() == 8);

  const std::regex compute_name(R"(([FB])(\d+) s(\d+))");
  std::map<std::string, int> per_kind;
  for (const Struct& e : t.events) {
    if (Str(e, "ph") != "X") continue;
    INFO("event " << Str(e, "name"));
    // Every complete event sits on a named thread of a named process, with a non-negative span.
    REQUIRE(thread_names.count(ThreadOf(e)) == 1);
    REQUIRE(process_names.count(ThreadOf(e).first) == 1);
    CHECK(Num(e, "dur") >= 0);
    const std::string cat = Str(e, "cat");
    if (cat != "forward" && cat != "backward") continue;
    std::smatch m;
    const std::string name = Str(e, "name");
    REQUIRE(std::regex_match(name, m, compute_name));
    CHECK((m[1] == "F") == (cat == "forward"));
    CHECK_THAT(thread_names.at(ThreadOf(e)), Catch::Contains("compute"));
    const Struct& args = Field(e, "args").struct_value();
    CHECK(Num(args, "microbatch") == std::stod(m[2]));
    CHECK(Num(args, "stage") == std::stod(m[3]));
    // Stage 0 runs layers 0-1, stage 1 layer 2; 100 GFLOP per layer and sample forward, twice that
    // backward, split over TP 2.
    const int stage = std::stoi(m[3]);
    CHECK(Str(args, "layers") == (stage == 0 ? "0-1" : "2-2"));
    const double layers = stage == 0 ? 2 : 1;
    CHECK(Num(args, "gflop") == Approx(layers * 100 * (cat == "forward" ? 1 : 2) / 2));
    ++per_kind[cat];
  }
  // 4 microbatches x 2 stages x 2 GPUs per stage, each way.
  CHECK(per_kind["forward"] == 16);
  CHECK(per_kind["backward"] == 16);
}

TEST_CASE("chrome trace: flow arrows pair each send with its receive", "[traces][trace]") {
  const Traced t = TraceOfSmallRun();
  std::map<std::tuple<std::string, Thread, double>, int> sends, recvs;  // (name, thread, ts)
  for (const Struct& e : t.events) {
    if (Str(e, "ph") != "X" || Str(e, "cat") != "transfer") continue;
    const std::string name = Str(e, "name");
    if (name.rfind("send ", 0) == 0) ++sends[{name.substr(5), ThreadOf(e), Num(e, "ts")}];
    if (name.rfind("recv ", 0) == 0) ++recvs[{name.substr(5), ThreadOf(e), Num(e, "ts")}];
  }
  std::map<double, const Struct*> starts, finishes;
  for (const Struct& e : t.events) {
    if (Str(e, "ph") == "s") REQUIRE(starts.emplace(Num(e, "id"), &e).second);
    if (Str(e, "ph") == "f") REQUIRE(finishes.emplace(Num(e, "id"), &e).second);
  }
  // 4 microbatches x (activations + gradients) x 2 flows (one per TP rank), every end traced.
  CHECK(starts.size() == 16);
  REQUIRE(finishes.size() == starts.size());
  for (const auto& [id, s] : starts) {
    INFO("arrow " << id);
    REQUIRE(finishes.count(id) == 1);
    const Struct& f = *finishes.at(id);
    const std::string name = Str(*s, "name");
    CHECK(Str(f, "name") == name);
    CHECK(std::regex_match(name, std::regex(R"(C[FB]\d+ s\d+>s\d+)")));
    // The arrow leaves a send on the source GPU's comm thread and lands on the receive.
    CHECK(sends.count({name, ThreadOf(*s), Num(*s, "ts")}) == 1);
    CHECK(recvs.count({name, ThreadOf(f), Num(f, "ts")}) == 1);
    CHECK(ThreadOf(*s).first != ThreadOf(f).first);  // stage 0 and 1 are on different nodes
  }
}

TEST_CASE("chrome trace: memory and link utilisation counters", "[traces][trace]") {
  const Traced t = TraceOfSmallRun();
  std::set<std::string> memory_tracks, link_tracks;
  for (const Struct& e : t.events) {
    if (Str(e, "ph") != "C") continue;
    const std::string name = Str(e, "name");
    const Struct& args = Field(e, "args").struct_value();
    if (name.rfind("memory GPU ", 0) == 0) {
      memory_tracks.insert(name + " pid " + std::to_string(ThreadOf(e).first));
      CHECK(Num(args, "GiB") >= 0);
    } else {
      REQUIRE(name.rfind("link ", 0) == 0);
      link_tracks.insert(name);
      CHECK(Num(args, "busy %") >= 0);
      CHECK(Num(args, "busy %") <= 100);
    }
  }
  CHECK(memory_tracks.size() == 4);  // one per traced GPU
  // Each traced GPU's links to and from its NIC (4 x 2), and the inter-island Ethernet link between
  // the two gateways, both ways (sampled even when idle).
  CHECK(link_tracks.size() == 10);
}

TEST_CASE("chrome trace: plans above 64 GPUs trace data-parallel replica 0 by default", "[traces][trace]") {
  auto in = hetsim::proto::LoadPlanInputs(HETSIM_SOURCE_DIR "/examples/plan-512gpu.pbtxt",
                                          HETSIM_SOURCE_DIR "/examples/cluster-512gpu.pbtxt");
  REQUIRE(in.ok());
  const auto setup = MakeSetup(*in, NetworkMode::kContentionFree);
  auto traced = hetsim::traces::SelectTracedGpus(*setup, {});
  REQUIRE(traced.ok());
  int count = 0;
  for (bool b : *traced) count += b;
  CHECK(count == 64);  // 8 stages x the 8 TP ranks of replica 0
  for (const auto& st : setup->stages) {
    for (int g : st.layout.TensorGroup(0)) CHECK((*traced)[g]);
  }
  hetsim::traces::TraceSelection replica3;
  replica3.replica = 3;
  auto third = hetsim::traces::SelectTracedGpus(*setup, replica3);
  REQUIRE(third.ok());
  CHECK((*third)[setup->stages[0].layout.Gpu(3, 0)]);
  CHECK_FALSE((*third)[setup->stages[0].layout.Gpu(0, 0)]);
}

}  // namespace
