// The execution DAG and its longest path against closed forms (exact integer picoseconds):
// fill-and-drain of GPipe/1F1B, HAPT Lemma 1 and 2, and how much communication each schedule hides.
#include <catch2/catch.hpp>

#include <algorithm>
#include <tuple>
#include <vector>

#include "sim/pipeline/dag.h"
#include "sim/pipeline/schedule.h"
#include "tests/base/time_io.h"

namespace {

using hetsim::Time;
using namespace hetsim::pipeline;

PipelineSchedule Build(hetsim::spec::ScheduleKind kind, int stages, int m, std::vector<int> warmup = {},
                       int chunks = 1) {
  ScheduleSpec spec;
  spec.kind = kind;
  spec.num_stages = stages;
  spec.num_microbatches = m;
  spec.virtual_stages = chunks;
  spec.warmup_forwards = std::move(warmup);
  auto s = BuildSchedule(spec, "test");
  REQUIRE(s.ok());
  return *s;
}

UniformCosts Equal(int virtual_stages, Time f, Time b, Time c) {
  UniformCosts costs;
  costs.forward.assign(virtual_stages, f);
  costs.backward.assign(virtual_stages, b);
  costs.comm_forward.assign(virtual_stages - 1, c);
  costs.comm_backward.assign(virtual_stages - 1, c);
  return costs;
}

struct Run {
  PipelineDag dag;
  std::vector<Time> durations;
  LongestPath path;
};

Run Analyze(const PipelineSchedule& schedule, const UniformCosts& costs) {
  PipelineDag dag(schedule);
  std::vector<Time> d = NodeDurations(dag, costs);
  LongestPath path = AnalyzeLongestPath(dag, d);
  return {std::move(dag), std::move(d), std::move(path)};
}

// Steady-state spacing of stage 1's forwards K apart, well inside the steady phase.
void CheckKBlock(const Run& run, int K, Time expected) {
  const int m = run.dag.num_microbatches();
  for (int i = m / 4; i + K < 3 * m / 4; ++i) {
    const Time gap =
        run.path.earliest_start[run.dag.Forward(i + K, 0)] - run.path.earliest_start[run.dag.Forward(i, 0)];
    INFO("microbatch " << i);
    REQUIRE(gap == expected);
  }
}

// True when every stage runs the middle of its steady phase back to back (no bubble once the
// start-up transient has passed and before the drain).
bool SteadyPhaseHasNoBubble(const Run& run) {
  const auto& orders = run.dag.stage_compute_order();
  const int m = run.dag.num_microbatches();
  for (int s = 0; s < run.dag.num_stages(); ++s) {
    const int warmup = run.dag.schedule().warmup_forwards[s];
    const auto& order = orders[s];
    // Steady phase: from the first backward (index warmup) to the last forward (2m - warmup - 1).
    for (int j = std::max(warmup, m / 2); j + 1 < std::min(2 * m - warmup, 3 * m / 2); ++j) {
      const NodeId u = order[j], v = order[j + 1];
      if (run.path.earliest_start[v] != run.path.earliest_start[u] + run.durations[u]) return false;
    }
  }
  return true;
}

}  // namespace

TEST_CASE("DAG shape: node ids, edge kinds, topological order", "[pipeline][dag]") {
  const PipelineSchedule s = Build(hetsim::spec::ScheduleKind::kOneFOneB, 3, 4);
  PipelineDag dag(s);
  const int m = 4, K = 3;
  CHECK(dag.num_nodes() == 2 * m * K + 2 * m * (K - 1) + 1);
  CHECK(dag.node(dag.Forward(2, 1)).kind == NodeKind::kForward);
  CHECK(dag.node(dag.Forward(2, 1)).microbatch == 2);
  CHECK(dag.node(dag.CommForward(3, 1)).stage == 1);
  CHECK(dag.node(dag.CommForward(3, 1)).peer_stage == 2);
  CHECK(dag.node(dag.CommBackward(3, 1)).stage == 2);
  CHECK(dag.node(dag.CommBackward(3, 1)).peer_stage == 1);
  // E_dep and E_comm around CF(1, 0).
  auto succ = dag.successors(dag.CommForward(1, 0));
  CHECK(std::find(succ.begin(), succ.end(), dag.Forward(1, 1)) != succ.end());
  CHECK(std::find(succ.begin(), succ.end(), dag.CommForward(2, 0)) != succ.end());
  auto pred = dag.predecessors(dag.Backward(0, 0));
  CHECK(std::find(pred.begin(), pred.end(), dag.CommBackward(0, 0)) != pred.end());
  CHECK(std::find(pred.begin(), pred.end(), dag.Forward(2, 0)) != pred.end());  // E_comp
  // Every edge goes forward in the topological order; the sink comes last.
  const auto& order = dag.topological_order();
  REQUIRE(static_cast<int>(order.size()) == dag.num_nodes());
  CHECK(order.back() == dag.sink());
  std::vector<int> position(dag.num_nodes());
  for (int j = 0; j < dag.num_nodes(); ++j) position[order[j]] = j;
  int edges = 0;
  for (NodeId u = 0; u < dag.num_nodes(); ++u) {
    for (NodeId v : dag.successors(u)) {
      CHECK(position[u] < position[v]);
      ++edges;
    }
  }
  CHECK(edges == dag.num_edges());
}

TEST_CASE("equal stages, free communication: (m+S-1)(f+b) and bubble (S-1)/(m+S-1)", "[pipeline][dag]") {
  const Time f = 3'000'001_ps, b = 6'999'999_ps;
  for (auto kind : {hetsim::spec::ScheduleKind::kGpipe, hetsim::spec::ScheduleKind::kOneFOneB}) {
    for (int S : {1, 2, 3, 4, 8}) {
      for (int m : {1, 2, 5, 16, 33}) {
        const Run run = Analyze(Build(kind, S, m), Equal(S, f, b, 0));
        INFO("schedule " << static_cast<int>(kind) << " S=" << S << " m=" << m);
        CHECK(run.path.iteration_time == (m + S - 1) * (f + b));
        CHECK(BubbleRatio(run.dag, run.durations, run.path.iteration_time) ==
              Approx(static_cast<double>(S - 1) / (m + S - 1)).epsilon(1e-12));
      }
    }
  }
}

TEST_CASE("critical path is a chain of binding edges from F(0,0) to the sink", "[pipeline][dag]") {
  const Run run = Analyze(Build(hetsim::spec::ScheduleKind::kOneFOneB, 4, 12), Equal(4, 5_ps, 11_ps, 3_ps));
  const auto& cp = run.path.critical_path;
  REQUIRE(cp.size() >= 2);
  CHECK(cp.front() == run.dag.Forward(0, 0));
  CHECK(cp.back() == run.dag.sink());
  Time sum = 0;
  for (size_t j = 0; j + 1 < cp.size(); ++j) {
    const auto succ = run.dag.successors(cp[j]);
    CHECK(std::find(succ.begin(), succ.end(), cp[j + 1]) != succ.end());
    CHECK(run.path.earliest_start[cp[j + 1]] == run.path.earliest_start[cp[j]] + run.durations[cp[j]]);
    sum += run.durations[cp[j]];
  }
  CHECK(sum == run.path.iteration_time);
}

TEST_CASE("HAPT Lemma 1 and 2: two stages, K launched forwards", "[pipeline][dag][hapt]") {
  const Time f = 4'000_ps, b = 8'000_ps;  // ps
  for (int K : {2, 3, 4, 5}) {
    for (Time c = 0; c <= f + b; c += 1'000_ps) {
      const Run run = Analyze(Build(hetsim::spec::ScheduleKind::kOneFOneB, 2, 64, {K, 1}), Equal(2, f, b, c));
      INFO("K=" << K << " c=" << c);
      // Lemma 1: s(B_i,1) - s(F_i,1) = max{K f + (K-1) b, 2f + b + 2c}.
      for (int i = 16; i < 48; ++i) {
        REQUIRE(run.path.earliest_start[run.dag.Backward(i, 0)] - run.path.earliest_start[run.dag.Forward(i, 0)] ==
                std::max(K * f + (K - 1) * b, 2 * f + b + 2 * c));
      }
      // Lemma 2 (Eq. 7): a K-block lasts max{K(f+b), 2(f+b+c)}.
      CheckKBlock(run, K, std::max(K * (f + b), 2 * (f + b + c)));
    }
  }
}

TEST_CASE("Eager-1F1B hides communication only up to (f+b)/2, H-1F1B up to f+b", "[pipeline][dag][hapt]") {
  const Time f = 4'000_ps, b = 8'000_ps, t = f + b;
  for (Time c = 0; c <= t; c += 500_ps) {
    INFO("c=" << c);
    const Run eager = Analyze(Build(hetsim::spec::ScheduleKind::kEager1F1B, 2, 64), Equal(2, f, b, c));
    CHECK(SteadyPhaseHasNoBubble(eager) == (c <= t / 2));
    CheckKBlock(eager, 3, std::max(3 * t, 2 * (t + c)));

    ScheduleSpec spec;
    spec.kind = hetsim::spec::ScheduleKind::kH1F1B;
    spec.num_stages = 2;
    spec.num_microbatches = 64;
    spec.h1f1b = {{c}, t, 0.1};
    auto h = BuildSchedule(spec, "test");
    REQUIRE(h.ok());
    const Run run = Analyze(*h, Equal(2, f, b, c));
    // Above epsilon * t_max every transfer is hidden; below it H-1F1B deliberately launches only one
    // extra forward and accepts a steady-state stall of at most 2c per two microbatches.
    if (c > t / 10 || c == 0) {
      CHECK(SteadyPhaseHasNoBubble(run));
    } else {
      CheckKBlock(run, 2, 2 * (t + c));
    }
  }
}

TEST_CASE("H-1F1B keeps every stage's steady phase bubble-free on uneven links", "[pipeline][dag][hapt]") {
  const Time f = 5'000_ps, b = 10'000_ps, t = f + b;
  const std::vector<std::vector<Time>> links = {
      {t, 0, 0}, {t / 2 + 1_ps, t / 4, 0}, {0, t, t / 3}, {t, t, t}, {2'000_ps, 7'600_ps, 15'000_ps}};
  for (const auto& comm : links) {
    ScheduleSpec spec;
    spec.kind = hetsim::spec::ScheduleKind::kH1F1B;
    spec.num_stages = 4;
    spec.num_microbatches = 48;
    spec.h1f1b = {comm, t, 0.1};
    auto h = BuildSchedule(spec, "test");
    REQUIRE(h.ok());
    UniformCosts costs = Equal(4, f, b, 0);
    costs.comm_forward = comm;
    costs.comm_backward = comm;
    const Run run = Analyze(*h, costs);
    INFO("c = " << comm[0] << ", " << comm[1] << ", " << comm[2]);
    CHECK(SteadyPhaseHasNoBubble(run));
    // 1F1B on the same links stalls whenever a transfer is not free.
    const Run classic = Analyze(Build(hetsim::spec::ScheduleKind::kOneFOneB, 4, 48), costs);
    CHECK_FALSE(SteadyPhaseHasNoBubble(classic));
    CHECK(run.path.iteration_time < classic.path.iteration_time);
  }
}

TEST_CASE("interleaved 1F1B shrinks the fill-and-drain by the number of chunks", "[pipeline][dag]") {
  // Each of v chunks costs f/v and b/v: iteration = m (f+b) + (S-1)(f+b)/v.
  const Time f = 6'000_ps, b = 12'000_ps;
  for (int S : {2, 4}) {
    for (int v : {1, 2, 3}) {
      for (int m : {S, 2 * S, 4 * S}) {
        const Run run =
            Analyze(Build(hetsim::spec::ScheduleKind::kInterleaved1F1B, S, m, {}, v), Equal(S * v, f / v, b / v, 0));
        INFO("S=" << S << " v=" << v << " m=" << m);
        CHECK(run.path.iteration_time == m * (f + b) + (S - 1) * (f + b) / v);
      }
    }
  }
}

// DeepSpeed's TrainSchedule (Plan.p2p_rendezvous): on two stages the pair's program is one chain
// F0 | CF0 | F0' B0' | CF1 CB0 | B0 F1' | ... in which every microbatch's activation and gradient
// transfer sit between the two stages' passes, so each costs its full time: (m+1)(f+b) + 2mc. Without
// the rendezvous, one transfer of the fill stays exposed and the steady phase hides the rest behind the
// other stage's passes (less than 2mc).
TEST_CASE("DeepSpeed's step rendezvous: two stages pay both transfers of every microbatch", "[pipeline][dag]") {
  for (const auto& [f, b, c] :
       {std::tuple{3_ps, 7_ps, 1_ps}, {7_ps, 3_ps, 2_ps}, {5_ps, 11_ps, 3_ps}, {4_ps, 9_ps, 20_ps}}) {
    for (int m : {1, 2, 3, 9}) {
      PipelineSchedule schedule = Build(hetsim::spec::ScheduleKind::kOneFOneB, 2, m);
      const Time free_running = Analyze(schedule, Equal(2, f, b, c)).path.iteration_time;
      schedule.p2p_rendezvous = true;
      const Run run = Analyze(schedule, Equal(2, f, b, c));
      INFO("f=" << f << " b=" << b << " c=" << c << " m=" << m);
      CHECK(run.path.iteration_time == (m + 1) * (f + b) + 2 * m * c);
      if (m > 1) CHECK(free_running < run.path.iteration_time);
    }
  }
}

// Its edges follow the steps: the passes keep ONE_F_ONE_B's order, every edge goes forward in a
// topological order (no cycle for any depth), and a transfer waits for its receiver's previous pass.
TEST_CASE("DeepSpeed's step rendezvous keeps 1F1B's order and waits for the receiver", "[pipeline][dag]") {
  for (int S : {2, 3, 4, 8}) {
    for (int m : {1, 2, 5, 16}) {
      PipelineSchedule schedule = Build(hetsim::spec::ScheduleKind::kOneFOneB, S, m);
      const PipelineDag free_running(schedule);
      schedule.p2p_rendezvous = true;
      const PipelineDag dag(schedule);
      INFO("S=" << S << " m=" << m);
      CHECK(dag.stage_compute_order() == free_running.stage_compute_order());
      REQUIRE(static_cast<int>(dag.topological_order().size()) == dag.num_nodes());
      // Stage 1 receives microbatch i's activation in step 2i + 1, right after its step 2i: the backward
      // of microbatch i - S + 1 when it has one (the steady phase), else (the warm-up) its send of
      // microbatch i - 1's activation onwards, or that forward itself when it is the last stage.
      for (int i = 1; i < m; ++i) {
        const int j = i - S + 1;
        const NodeId previous = j >= 0 ? dag.Backward(j, 1) : S > 2 ? dag.CommForward(i - 1, 1) : dag.Forward(i - 1, 1);
        const auto pred = dag.predecessors(dag.CommForward(i, 0));
        CHECK(std::find(pred.begin(), pred.end(), previous) != pred.end());
      }
    }
  }
}
