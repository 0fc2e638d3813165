// The Chrome trace read back with a real JSON parser (protobuf's JSON into google.protobuf.Struct,
// doubles as every viewer parses them): its traceEvents, process and thread names, compute events
// named like "F12 s3" with their args, flow arrows bound to their slices, the memory and link counter
// tracks; and, on the bundled examples, what viewers need: X slices that nest on every thread, slices
// that touch in picoseconds touching once parsed, longer-first order at equal start, one counter track
// per link. tests/viewers/ loads the same traces into speedscope and the DevTools trace engine.
#include <catch2/catch.hpp>

#include <map>
#include <random>
#include <regex>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "tests/base/time_io.h"
#include "tests/sim/executor/executor_test_util.h"
#include "traces/chrome_trace.h"
#include "traces/trace_events.h"

namespace hetsim::testing {
namespace {

using google::protobuf::Struct;
using google::protobuf::Value;

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
  std::unique_ptr<hetsim::executor::ExecutionSetup> setup;
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
  hetsim::executor::ExecutorOptions options;
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
    if (Str(e, "name") == "process_name")
      process_names[ThreadOf(e).first] = Str(Field(e, "args").struct_value(), "name");
    if (Str(e, "name") == "thread_name") thread_names[ThreadOf(e)] = Str(Field(e, "args").struct_value(), "name");
  }
  // Both nodes (named with island and GPU type) and the network.
  std::set<std::string> names;
  for (const auto& [pid, name] : process_names) names.insert(name);
  CHECK(names == std::set<std::string>{"fast node 0 (A100-80GB)", "fast node 1 (A100-80GB)", "network"});
  // A compute, send and recv thread per GPU (2 GPUs per node); DP 1: no gradient synchronisation;
  // stage 1's sends (gradients) and receives (activations) never overlap another of their kind.
  std::map<std::string, int> per_track;
  const std::regex thread_name(R"(GPU ([01]) (compute|send|recv|grad sync)( #\d+)?, global (\d+))");
  for (const auto& [thread, name] : thread_names) {
    std::smatch m;
    REQUIRE(std::regex_match(name, m, thread_name));
    if (m[3].length() == 0) ++per_track[m[2]];
  }
  CHECK(per_track == std::map<std::string, int>{{"compute", 4}, {"recv", 4}, {"send", 4}});

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
    const std::string name = Str(e, "name");
    // Transfers share their direction's category; compute events are the ones named F/B.
    if ((cat != "forward" && cat != "backward") || name.rfind("send ", 0) == 0 || name.rfind("recv ", 0) == 0) continue;
    std::smatch m;
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

TEST_CASE("chrome trace: flow arrows go from each send to the compute it feeds", "[traces][trace]") {
  const Traced t = TraceOfSmallRun();
  std::map<double, const Struct*> starts, finishes;
  for (const Struct& e : t.events) {
    if (Str(e, "ph") == "s") REQUIRE(starts.emplace(Num(e, "id"), &e).second);
    if (Str(e, "ph") == "f") REQUIRE(finishes.emplace(Num(e, "id"), &e).second);
  }
  // 4 microbatches x (activations + gradients) x 2 flows (one per TP rank), every end traced.
  CHECK(starts.size() == 16);
  REQUIRE(finishes.size() == starts.size());
  const std::regex arrow_name(R"(C([FB])(\d+) s(\d)>s(\d))");
  for (const auto& [id, s] : starts) {
    INFO("arrow " << id);
    REQUIRE(finishes.count(id) == 1);
    const Struct& f = *finishes.at(id);
    const std::string name = Str(*s, "name");
    CHECK(Str(f, "name") == name);
    CHECK(Str(f, "bp") == "e");
    std::smatch m;
    REQUIRE(std::regex_match(name, m, arrow_name));
    // The arrow leaves the send (same ts, thread, category) and lands on the start of the consumer:
    // F(i) on stage 1 for an activation, B(i) on stage 0 for a gradient.
    const Struct* send = nullptr;
    const Struct* consumer = nullptr;
    for (const Struct& e : t.events) {
      if (Str(e, "ph") != "X") continue;
      if (ThreadOf(e) == ThreadOf(*s) && Num(e, "ts") == Num(*s, "ts") && Str(e, "cat") == Str(*s, "cat")) send = &e;
      if (ThreadOf(e) == ThreadOf(f) && Num(e, "ts") == Num(f, "ts") && Str(e, "cat") == Str(f, "cat")) consumer = &e;
    }
    REQUIRE(send != nullptr);
    REQUIRE(consumer != nullptr);
    CHECK(Str(*send, "name") == "send " + name);
    CHECK(Str(*consumer, "name") == absl::StrCat(m[1].str(), m[2].str(), " s", m[4].str()));
    CHECK(Str(*send, "cat") == (m[1] == "F" ? "forward" : "backward"));
    CHECK(Num(f, "ts") >= Num(*send, "ts") + Num(*send, "dur"));  // the consumer waits for the data
    CHECK(ThreadOf(*s).first != ThreadOf(f).first);               // stage 0 and 1 are on different nodes
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
    for (GpuId g : st.layout.TensorGroup(0)) CHECK((*traced)[g.value()]);
  }
  hetsim::traces::TraceSelection replica3;
  replica3.replica = 3;
  auto third = hetsim::traces::SelectTracedGpus(*setup, replica3);
  REQUIRE(third.ok());
  CHECK((*third)[setup->stages[0].layout.Gpu(3, 0).value()]);
  CHECK_FALSE((*third)[setup->stages[0].layout.Gpu(0, 0).value()]);
}

}  // namespace

namespace trace_rules {

// Parses `json` as a viewer does: every number a double.
std::vector<Struct> ParseEvents(const std::string& json) {
  Struct root;
  const auto status = google::protobuf::util::JsonStringToMessage(json, &root);
  INFO(status.ToString());
  REQUIRE(status.ok());
  std::vector<Struct> events;
  for (const Value& v : Field(root, "traceEvents").list_value().values()) events.push_back(v.struct_value());
  return events;
}

std::string TraceOfExample(const std::string& plan, const std::string& cluster) {
  auto in = hetsim::proto::LoadPlanInputs(HETSIM_SOURCE_DIR "/examples/plan-" + plan + ".pbtxt",
                                          HETSIM_SOURCE_DIR "/examples/cluster-" + cluster + ".pbtxt");
  REQUIRE(in.ok());
  const auto setup = MakeSetup(*in, NetworkMode::kMaxMinFair);
  auto traced = hetsim::traces::SelectTracedGpus(*setup, {});
  REQUIRE(traced.ok());
  hetsim::executor::ExecutorOptions options;
  options.record_flows = true;
  options.sampled_links = hetsim::traces::TraceLinks(*setup, *traced);
  options.link_sample_period = hetsim::traces::TraceSamplePeriod(*setup);
  const auto run = MakeRun(*setup, options);
  return hetsim::traces::ChromeTraceJson(*setup, run, *traced, options.sampled_links);
}

}  // namespace trace_rules

TEST_CASE("chrome trace: the bundled examples draw right in every viewer", "[traces][trace][examples]") {
  const auto [plan, cluster] = GENERATE(table<std::string, std::string>(
      {{"512gpu", "512gpu"}, {"hapt-case", "hapt-case"}, {"megatron-39b", "a100-512"}}));
  INFO("plan-" << plan);
  const std::vector<Struct> events = trace_rules::ParseEvents(trace_rules::TraceOfExample(plan, cluster));

  // X slices per thread in file order: sorted by start, longer first at equal start, and each one
  // either inside the one before or at/after its end (doubles as parsed: touching slices still touch).
  struct Open {
    double ts, end;
  };
  std::map<Thread, std::vector<Open>> stacks;
  std::map<Thread, std::pair<double, double>> last;  // (ts, dur) of the previous slice
  int slices = 0, touching = 0;
  for (const Struct& e : events) {
    if (Str(e, "ph") != "X") continue;
    ++slices;
    const Thread thread = ThreadOf(e);
    const double ts = Num(e, "ts"), dur = Num(e, "dur"), end = ts + dur;
    if (auto it = last.find(thread); it != last.end()) {
      INFO(Str(e, "name") << " at " << ts);
      REQUIRE(ts >= it->second.first);
      if (ts == it->second.first) REQUIRE(dur <= it->second.second);
    }
    last[thread] = {ts, dur};
    auto& stack = stacks[thread];
    while (!stack.empty() && stack.back().end <= ts) {
      if (stack.back().end == ts) ++touching;
      stack.pop_back();
    }
    INFO(Str(e, "name") << " [" << ts << ", " << end << ") on pid " << thread.first << " tid " << thread.second);
    REQUIRE((stack.empty() || end <= stack.back().end));  // nests in the enclosing slice
    stack.push_back({ts, end});
  }
  CHECK(slices > 100);
  CHECK(touching > 0);  // back-to-back compute: the check above saw them touch, not overlap

  // Flow arrows: start and end each bound to a slice with the same ts, pid, tid and category (the
  // DevTools rule; the enclosing slice for catapult and Perfetto), the end strictly later.
  std::set<std::tuple<double, int, int, std::string>> slice_starts;
  for (const Struct& e : events) {
    if (Str(e, "ph") == "X") slice_starts.insert({Num(e, "ts"), ThreadOf(e).first, ThreadOf(e).second, Str(e, "cat")});
  }
  std::map<double, double> start_ts;
  int bound = 0;
  for (const Struct& e : events) {
    const std::string ph = Str(e, "ph");
    if (ph != "s" && ph != "f") continue;
    INFO(ph << " " << Str(e, "name"));
    CHECK(slice_starts.count({Num(e, "ts"), ThreadOf(e).first, ThreadOf(e).second, Str(e, "cat")}) == 1);
    if (ph == "s") start_ts[Num(e, "id")] = Num(e, "ts");
    if (ph == "f") {
      REQUIRE(start_ts.count(Num(e, "id")) == 1);
      CHECK(Num(e, "ts") > start_ts[Num(e, "id")]);
      ++bound;
    }
  }
  CHECK(bound == static_cast<int>(start_ts.size()));
  CHECK(bound > 0);

  // Counters: one track per (process, name), in time order; the links between the islands'
  // gateways each have their own track.
  std::map<std::pair<int, std::string>, double> counter_last;
  std::set<std::string> gateway_links;
  for (const Struct& e : events) {
    if (Str(e, "ph") != "C") continue;
    const std::pair<int, std::string> track{ThreadOf(e).first, Str(e, "name")};
    auto [it, fresh] = counter_last.emplace(track, Num(e, "ts"));
    INFO(track.second);
    if (!fresh) CHECK(Num(e, "ts") > it->second);  // one sample per time: never backwards, never twice
    it->second = Num(e, "ts");
    if (track.second.find("gateway") != std::string::npos) gateway_links.insert(track.second);
  }
  if (plan == "512gpu") CHECK(gateway_links.size() == 8);  // 4 parallel links, both ways
}

TEST_CASE("trace timestamps: exact binary fractions, so sums of printed values stay exact", "[traces][trace]") {
  using hetsim::traces::FormatTicks;
  using hetsim::traces::TraceTicks;
  CHECK(FormatTicks(0) == "0");
  CHECK(FormatTicks(1536) == "1.5");
  CHECK(FormatTicks(1) == "0.0009765625");
  CHECK(FormatTicks(-1025) == "-1.0009765625");
  CHECK(TraceTicks(1'000'000_ps) == 1024);  // 1 us
  CHECK(TraceTicks(488_ps) == 0);           // below half a tick (488.28 ps) rounds down
  CHECK(TraceTicks(489_ps) == 1);
  // Seeded property: for a <= b <= c picoseconds, start + duration printed and parsed back give the
  // printed end, bit for bit (what 0.1 + 0.2 != 0.3 breaks with decimal microseconds).
  std::mt19937_64 rng(17);
  std::uniform_int_distribution<int64_t> time(0, int64_t{20} * 1'000'000'000'000);  // up to 20 s
  for (int i = 0; i < 20000; ++i) {
    int64_t a = time(rng), b = time(rng);
    if (a > b) std::swap(a, b);
    const int64_t ta = TraceTicks(PicosecondsToTime(a)), tb = TraceTicks(PicosecondsToTime(b));
    const double ts = std::stod(FormatTicks(ta)), dur = std::stod(FormatTicks(tb - ta));
    REQUIRE(ts + dur == std::stod(FormatTicks(tb)));
    REQUIRE(ta <= tb);
  }
}

TEST_CASE("trace lanes: overlapping intervals go to separate lanes, touching ones share", "[traces][trace]") {
  using hetsim::traces::AssignLanes;
  // [0,10) [10,20) touch; [5,15) overlaps both; [0,20) and [0,5) start together (longer first).
  CHECK(AssignLanes({{0, 10}, {10, 20}, {5, 15}}) == std::vector<int>{0, 0, 1});
  CHECK(AssignLanes({{0, 5}, {0, 20}, {20, 30}}) == std::vector<int>{1, 0, 0});
  CHECK(AssignLanes({}).empty());
}

}  // namespace hetsim::testing
