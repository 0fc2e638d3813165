// Schedules: warm-up counts (HAPT Sec. 2.3.2 case study, Eq. 2), operation orders, deadlock
// detection and the activations each stage holds at its peak.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "proto/resolve.h"
#include "sim/pipeline/schedule.h"
#include "tests/base/time_io.h"

namespace {

using hetsim::Time;
using namespace hetsim::pipeline;

ScheduleSpec Spec(hetsim::spec::ScheduleKind kind, int stages, int microbatches) {
  ScheduleSpec spec;
  spec.kind = kind;
  spec.num_stages = stages;
  spec.num_microbatches = microbatches;
  return spec;
}

std::vector<int> Warmup(const ScheduleSpec& spec) {
  auto n = WarmupForwards(spec, "plan.pbtxt");
  REQUIRE(n.ok());
  return *n;
}

std::string Render(const std::vector<PipelineOp>& ops) {
  std::string out;
  for (const PipelineOp& op : ops) {
    if (!out.empty()) out += ' ';
    out += op.kind == OpKind::kForward ? 'F' : 'B';
    out += std::to_string(op.microbatch);
    if (op.chunk > 0) out += "." + std::to_string(op.chunk);
  }
  return out;
}

}  // namespace

TEST_CASE("HAPT case study warm-up counts: 1F1B {3,2,1}, Eager-1F1B {5,3,1}, H-1F1B {5,2,1}", "[pipeline][schedule]") {
  CHECK(Warmup(Spec(hetsim::spec::ScheduleKind::kOneFOneB, 3, 128)) == std::vector<int>{3, 2, 1});
  CHECK(Warmup(Spec(hetsim::spec::ScheduleKind::kEager1F1B, 3, 128)) == std::vector<int>{5, 3, 1});
  // Stage 1 -> 2 crosses the 5 Gbps Ethernet (c between t_max/2 and t_max), 2 -> 3 InfiniBand.
  ScheduleSpec h = Spec(hetsim::spec::ScheduleKind::kH1F1B, 3, 128);
  const Time t_max = 110'000'000_ps;
  h.h1f1b = {{70'000'000_ps, 2'000'000_ps}, t_max, 0.1};
  CHECK(Warmup(h) == std::vector<int>{5, 2, 1});
  CHECK(Warmup(Spec(hetsim::spec::ScheduleKind::kGpipe, 3, 128)) == std::vector<int>{128, 128, 128});
}

TEST_CASE("H-1F1B delta follows Eq. 2 at its boundaries, c = 0 launches one more", "[pipeline][schedule]") {
  const Time t = 1000_ps;
  CHECK(H1F1BDelta(0, t, 0.1) == 1);
  CHECK(H1F1BDelta(100_ps, t, 0.1) == 1);  // c == eps * t_max
  CHECK(H1F1BDelta(101_ps, t, 0.1) == 2);
  CHECK(H1F1BDelta(500_ps, t, 0.1) == 2);  // c == t_max / 2
  CHECK(H1F1BDelta(501_ps, t, 0.1) == 3);
  CHECK(H1F1BDelta(1000_ps, t, 0.1) == 3);
  CHECK(H1F1BDelta(5000_ps, t, 0.1) == 3);  // beyond t_max: the most H-1F1B launches

  // N_S = 1, N_i = N_{i+1} + delta_i, on four stages; epsilon 0 in the plan means 0.1.
  ScheduleSpec h = Spec(hetsim::spec::ScheduleKind::kH1F1B, 4, 64);
  h.h1f1b = {{Time(), 300_ps, 900_ps}, t, 0.0};
  CHECK(Warmup(h) == std::vector<int>{7, 6, 4, 1});
}

TEST_CASE("warm-up counts are capped at the microbatches and explicit counts override", "[pipeline][schedule]") {
  CHECK(Warmup(Spec(hetsim::spec::ScheduleKind::kOneFOneB, 4, 2)) == std::vector<int>{2, 2, 2, 1});
  CHECK(Warmup(Spec(hetsim::spec::ScheduleKind::kEager1F1B, 4, 4)) == std::vector<int>{4, 4, 3, 1});
  ScheduleSpec spec = Spec(hetsim::spec::ScheduleKind::kOneFOneB, 3, 8);
  spec.warmup_forwards = {6, 0, 0};
  CHECK(Warmup(spec) == std::vector<int>{6, 2, 1});
  spec.warmup_forwards = {9, 0, 0};
  auto bad = WarmupForwards(spec, "plan.pbtxt");
  REQUIRE_FALSE(bad.ok());
  CHECK(std::string(bad.status().message()) ==
        "plan.pbtxt: stages[0].warmup_forwards: 9 is outside [1, 8] (forwards the stage runs)");
}

TEST_CASE("operation orders: warm-up, one backward one forward, drain", "[pipeline][schedule]") {
  auto s = BuildSchedule(Spec(hetsim::spec::ScheduleKind::kOneFOneB, 3, 5), "plan.pbtxt");
  REQUIRE(s.ok());
  CHECK(Render(s->ops[0]) == "F0 F1 F2 B0 F3 B1 F4 B2 B3 B4");
  CHECK(Render(s->ops[1]) == "F0 F1 B0 F2 B1 F3 B2 F4 B3 B4");
  CHECK(Render(s->ops[2]) == "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4");
  auto g = BuildSchedule(Spec(hetsim::spec::ScheduleKind::kGpipe, 2, 3), "plan.pbtxt");
  REQUIRE(g.ok());
  CHECK(Render(g->ops[0]) == "F0 F1 F2 B0 B1 B2");
  CHECK(Render(g->ops[1]) == "F0 F1 F2 B0 B1 B2");
}

TEST_CASE("interleaved 1F1B follows Megatron's chunk order", "[pipeline][schedule]") {
  ScheduleSpec spec = Spec(hetsim::spec::ScheduleKind::kInterleaved1F1B, 2, 4);
  spec.virtual_stages = 2;
  auto s = BuildSchedule(spec, "plan.pbtxt");
  REQUIRE(s.ok());
  // Megatron warm-up (S - r - 1) * 2 + (v - 1) * S, plus the first steady forward.
  CHECK(s->warmup_forwards == std::vector<int>{5, 3});
  CHECK(Render(s->ops[0]) == "F0 F1 F0.1 F1.1 F2 B0.1 F3 B1.1 F2.1 B0 F3.1 B1 B2.1 B3.1 B2 B3");
  CHECK(Render(s->ops[1]) == "F0 F1 F0.1 B0.1 F1.1 B1.1 F2 B0 F3 B1 F2.1 B2.1 F3.1 B3.1 B2 B3");

  spec.num_microbatches = 5;
  auto bad = BuildSchedule(spec, "plan.pbtxt");
  REQUIRE_FALSE(bad.ok());
  CHECK(std::string(bad.status().message()).find("multiple of the number of stages (2)") != std::string::npos);
}

TEST_CASE("warm-up counts that deadlock are rejected with the stage", "[pipeline][schedule]") {
  ScheduleSpec spec = Spec(hetsim::spec::ScheduleKind::kOneFOneB, 3, 8);
  spec.warmup_forwards = {1, 3, 1};
  auto s = BuildSchedule(spec, "plan.pbtxt");
  REQUIRE_FALSE(s.ok());
  CHECK(std::string(s.status().message()).find("plan.pbtxt: stages[0].warmup_forwards: the schedule deadlocks") == 0);
  // H-1F1B needs one communication cost per boundary.
  ScheduleSpec h = Spec(hetsim::spec::ScheduleKind::kH1F1B, 3, 8);
  CHECK_FALSE(BuildSchedule(h, "plan.pbtxt").ok());
}

TEST_CASE("GPipe holds m microbatches at its peak, 1F1B at most S-i+1 on stage i", "[pipeline][schedule][memory]") {
  for (int stages : {1, 2, 4, 8}) {
    for (int m : {1, 3, 8, 32}) {
      auto g = BuildSchedule(Spec(hetsim::spec::ScheduleKind::kGpipe, stages, m), "p");
      REQUIRE(g.ok());
      for (int peak : PeakInFlight(*g)) CHECK(peak == m);
      auto o = BuildSchedule(Spec(hetsim::spec::ScheduleKind::kOneFOneB, stages, m), "p");
      REQUIRE(o.ok());
      const std::vector<int> peaks = PeakInFlight(*o);
      for (int s = 0; s < stages; ++s) CHECK(peaks[s] == std::min(stages - s, m));
      auto e = BuildSchedule(Spec(hetsim::spec::ScheduleKind::kEager1F1B, stages, m), "p");
      REQUIRE(e.ok());
      const std::vector<int> eager = PeakInFlight(*e);
      for (int s = 0; s < stages; ++s) CHECK(eager[s] == std::min(2 * (stages - 1 - s) + 1, m));
    }
  }
}

TEST_CASE("a plan's schedule spec and interleaved virtual-stage layers", "[pipeline][schedule]") {
  hetsim::v1::Plan plan;
  plan.set_global_batch_size(256);
  plan.set_micro_batch_size(4);
  plan.set_schedule(hetsim::v1::H_1F1B);
  for (int s = 0; s < 3; ++s) plan.add_stages()->set_warmup_forwards(0);
  const hetsim::spec::PlanSpec resolved = hetsim::proto::ResolvePlan(plan, "plan.pbtxt");
  const ScheduleSpec spec = ScheduleSpecFromPlan(resolved, {600_ps, Time()}, 1000_ps);
  CHECK(spec.num_microbatches == 64);
  CHECK(spec.num_stages == 3);
  CHECK(spec.virtual_stages == 1);
  CHECK(spec.h1f1b.epsilon == hetsim::spec::kDefaultH1f1bEpsilon);
  CHECK(Warmup(spec) == std::vector<int>{5, 2, 1});

  // Two stages of 5 and 4 layers, two chunks each: virtual stages 0..3 take the model in order.
  const std::vector<LayerRange> r = VirtualStageLayers({5, 4}, 2);
  REQUIRE(r.size() == 4);
  CHECK(r[0].first_layer == 0);  // stage 0, chunk 0: 3 layers
  CHECK(r[0].num_layers == 3);
  CHECK(r[1].first_layer == 3);  // stage 1, chunk 0: 2 layers
  CHECK(r[1].num_layers == 2);
  CHECK(r[2].first_layer == 5);  // stage 0, chunk 1: 2 layers
  CHECK(r[2].num_layers == 2);
  CHECK(r[3].first_layer == 7);  // stage 1, chunk 1: 2 layers
  CHECK(r[3].num_layers == 2);
  // Megatron's split with the embedding and the head counted as layers: 3 stages of 4 layers (the
  // embedding and 3 blocks, 4 blocks, 3 blocks and the head), 2 chunks of 2 layers each.
  const std::vector<LayerRange> edges = VirtualStageLayers({4, 4, 4}, 2, {.embedding = 1, .head = 1});
  REQUIRE(edges.size() == 6);
  for (int k = 0; k < 6; ++k) {
    CHECK(edges[k].first_layer == 2 * k);
    CHECK(edges[k].num_layers == 2);
  }
  const std::vector<LayerRange> plain = VirtualStageLayers({5, 4}, 1);
  CHECK(plain[1].first_layer == 5);
  CHECK(plain[1].num_layers == 4);
}

TEST_CASE("a pipeline whose DAG would not fit int32 node ids is rejected", "[pipeline][schedule]") {
  auto s = BuildSchedule(Spec(hetsim::spec::ScheduleKind::kOneFOneB, 1024, 1 << 20), "plan.pbtxt");
  REQUIRE_FALSE(s.ok());
  CHECK(std::string(s.status().message()) ==
        "plan.pbtxt: 1048576 microbatches x 1024 stages is too large a pipeline (over 2^30 DAG nodes)");
}
