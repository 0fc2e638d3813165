// The HAPT search against brute force, and the profiler's extrapolation against direct pricing.
#include <algorithm>
#include <functional>
#include <random>

#include <catch2/catch.hpp>

#include "planner/hapt_search_internal.h"
#include "planner/layers_internal.h"
#include "planner/profile.h"
#include "sim/pipeline/schedule.h"
#include "sim/workload/model_cost.h"
#include "tests/base/spec/spec_test_util.h"
#include "tests/base/time_io.h"
#include "tests/planner/planner_test_util.h"
#include "tests/proto/model_shapes.h"

namespace hetsim::planner {
namespace {

constexpr Time kInf = kTimeMax;

// Every island-contiguous pipeline over the layers (each island filled), every shape; the fastest
// configuration that holds the stage's launch count (independent of the configuration) per stage.
Time BruteForce(Profiler& prof, const std::vector<LayerGroup>& layers, int64_t B, Time t_max,
                const SearchOptions& opt) {
  const ClusterModel& cl = prof.cluster();
  const int L = static_cast<int>(layers.size());
  const int I = cl.num_islands();
  struct St {
    int k, i, island, shape;
  };
  std::vector<St> stack;
  Time best = kInf;
  auto evaluate = [&] {
    const int S = static_cast<int>(stack.size());
    std::vector<Time> comm(S, 0);
    for (int s = 0; s + 1 < S; ++s) {
      const LayerGroup& g = layers[stack[s].i];
      comm[s] = opt.communication_aware
                    ? cl.BoundaryTime(stack[s].island, stack[s + 1].island, prof.BoundaryBytes(g.first + g.count - 1),
                                      prof.shapes()[stack[s].island][stack[s].shape])
                    : 0;
      if (comm[s] > t_max) return;
    }
    Time sum = 0;
    int launches = 0;
    for (int s = S - 1; s >= 0; --s) {
      const int delta = s == S - 1                                   ? 1
                        : opt.schedule == spec::ScheduleKind::kH1F1B ? pipeline::H1F1BDelta(comm[s], t_max, opt.epsilon)
                        : opt.schedule == spec::ScheduleKind::kEager1F1B ? 2
                                                                         : 1;
      launches = static_cast<int>(std::min<int64_t>(B, launches + delta));
      const int first = layers[stack[s].k].first;
      const int count = layers[stack[s].i].first + layers[stack[s].i].count - first;
      const std::vector<StageOption>& opts = prof.Options(stack[s].island, stack[s].shape, first, count);
      const StageOption* pick = nullptr;
      for (const StageOption& o : opts) {
        if (o.max_in_flight >= launches) {
          pick = &o;
          break;
        }
      }
      if (!pick || pick->total() > t_max) return;
      sum += pick->total() + 2 * comm[s];
    }
    best = std::min(best, sum);
  };
  std::function<void(int, int, int, int)> rec = [&](int pos, int cur, int used, int done) {
    if (pos == L) {
      if (cur >= 0 && used == cl.island(cur).gpus() && (done | (1 << cur)) == (1 << I) - 1) evaluate();
      return;
    }
    for (int j = 0; j < I; ++j) {
      const bool same = j == cur;
      if (!same && ((done >> j) & 1)) continue;
      if (!same && cur >= 0 && used != cl.island(cur).gpus()) continue;
      const int base = same ? used : 0;
      for (int s = 0; s < static_cast<int>(prof.shapes()[j].size()); ++s) {
        if (base + prof.shapes()[j][s].gpus() > cl.island(j).gpus()) continue;
        for (int i = pos; i < L; ++i) {
          stack.push_back({pos, i, j, s});
          rec(i + 1, j, base + prof.shapes()[j][s].gpus(), same || cur < 0 ? done : done | (1 << cur));
          stack.pop_back();
        }
      }
    }
  };
  rec(0, -1, 0, 0);
  return best;
}

struct Instance {
  v1::Model model;
  v1::Cluster cluster;
};

TEST_CASE("HAPT DP equals brute force on random small instances", "[planner][planner-search]") {
  for (int seed = 1; seed <= 12; ++seed) {
    std::mt19937 rng(seed);
    const int layers = 4 + seed % 3;
    Instance in{testing::RandomLayerListModel(rng, layers), testing::RandomTwoIslandCluster(rng)};
    auto cost = hetsim::testing::ModelCostOf(in.model, "model");
    REQUIRE(cost.ok());
    auto cluster = testing::ClusterModelOf(in.cluster, cost->dtype());
    REQUIRE(cluster.ok());
    const int64_t B = 8;
    for (spec::ScheduleKind schedule : {spec::ScheduleKind::kH1F1B, spec::ScheduleKind::kEager1F1B}) {
      Profiler prof(*cost, **cluster, 2);
      std::vector<LayerGroup> groups = BuildPlannerLayers(*cost, 0, LayerConstruction::kStructural);
      SearchOptions opt;
      opt.schedule = schedule;
      opt.communication_aware = schedule == spec::ScheduleKind::kH1F1B;
      opt.bidirectional_pruning = seed % 2 == 0;  // both paths must find the optimum
      HaptSearch search(prof, groups, B, opt);
      const SearchResult r = search.Run();
      Time expected = kInf;
      for (Time t : search.candidates()) {
        const Time f = BruteForce(prof, groups, B, t, opt);
        if (f != kInf) expected = std::min(expected, f + (B - 1) * t);
      }
      INFO("seed " << seed << " schedule " << static_cast<int>(schedule));
      REQUIRE(r.stats.pareto_overflow == 0);
      REQUIRE(r.feasible == (expected != kInf));
      if (r.feasible) {
        CHECK(r.search_value == expected);
        // The plan's own Eq. 13 value (its real t_max and c_i) never exceeds what the search charged it;
        // without communication awareness the search charged no c_i at all.
        if (opt.communication_aware) CHECK(r.objective <= r.search_value);
      }
    }
  }
}

TEST_CASE("Bidirectional pruning and thread count never change the result", "[planner][planner-search]") {
  for (int seed = 20; seed < 26; ++seed) {
    std::mt19937 rng(seed);
    Instance in{testing::RandomLayerListModel(rng, 6), testing::RandomTwoIslandCluster(rng)};
    auto cost = hetsim::testing::ModelCostOf(in.model, "model");
    REQUIRE(cost.ok());
    auto cluster = testing::ClusterModelOf(in.cluster, cost->dtype());
    REQUIRE(cluster.ok());
    std::vector<SearchResult> results;
    for (auto [pruning, threads] : {std::pair{false, 1}, std::pair{true, 1}, std::pair{true, 2}, std::pair{true, 3}}) {
      Profiler prof(*cost, **cluster, 2);
      SearchOptions opt;
      opt.bidirectional_pruning = pruning;
      opt.threads = threads;
      opt.batch = 3;
      HaptSearch search(prof, BuildPlannerLayers(*cost, 0, LayerConstruction::kStructural), 16, opt);
      results.push_back(search.Run());
    }
    for (const SearchResult& r : results) {
      REQUIRE(r.feasible == results[0].feasible);
      CHECK(r.search_value == results[0].search_value);
      REQUIRE(r.stages.size() == results[0].stages.size());
      for (size_t s = 0; s < r.stages.size(); ++s) {
        CHECK(r.stages[s].first_layer == results[0].stages[s].first_layer);
        CHECK(r.stages[s].island == results[0].stages[s].island);
      }
    }
    // Pruning evaluates fewer candidates than the exhaustive run.
    CHECK(results[1].stats.candidates_evaluated <= results[0].stats.candidates_evaluated);
  }
}

v1::Model Gpt(int blocks, v1::LayerGranularity granularity) {
  v1::Model m;
  m.set_name("gpt");
  m.set_dtype(v1::BF16);
  auto* t =
      hetsim::testing::SetTransformer(m, {.layers = blocks, .hidden = 1024, .heads = 16, .seq = 512, .vocab = 32000});
  t->set_tied_embeddings(true);
  t->set_granularity(granularity);
  return m;
}

TEST_CASE("Profiler extrapolation of repeated layers equals walking every layer", "[planner][planner-profile]") {
  std::mt19937 rng(7);
  v1::Cluster cluster = testing::RandomTwoIslandCluster(rng);
  for (v1::LayerGranularity g : {v1::BLOCK, v1::SUBLAYER}) {
    // With Plan.tp_backward_overlap too: its hidden time adds up layer by layer.
    const bool async = g == v1::SUBLAYER;
    const v1::Model model = Gpt(24, g);
    auto cost = hetsim::testing::ModelCostOf(model, "model");
    REQUIRE(cost.ok());
    auto cm = testing::ClusterModelOf(cluster, cost->dtype());
    REQUIRE(cm.ok());
    ProfilerOptions walk;
    walk.extrapolate = false;
    walk.tp_backward_overlap = async;
    ProfilerOptions extrapolate;
    extrapolate.tp_backward_overlap = async;
    Profiler fast(*cost, **cm, 4, extrapolate), slow(*cost, **cm, 4, walk);
    std::uniform_int_distribution<int> first(0, cost->num_layers() - 1);
    for (int trial = 0; trial < 60; ++trial) {
      const int a = first(rng);
      const int count = std::uniform_int_distribution<int>(1, cost->num_layers() - a)(rng);
      for (int island = 0; island < 2; ++island) {
        for (int s = 0; s < static_cast<int>(fast.shapes()[island].size()); ++s) {
          const auto& x = fast.Options(island, s, a, count);
          const auto& y = slow.Options(island, s, a, count);
          INFO("range " << a << "+" << count << " island " << island << " shape " << s);
          REQUIRE(x.size() == y.size());
          for (size_t o = 0; o < x.size(); ++o) {
            CHECK(AbsTime(x[o].forward - y[o].forward) <= 64_ps);  // picoseconds of rounding
            CHECK(AbsTime(x[o].backward - y[o].backward) <= 64_ps);
            CHECK(std::abs(x[o].state_bytes - y[o].state_bytes) <= 64);
            CHECK(std::abs(x[o].activation_bytes - y[o].activation_bytes) <= 64);
            CHECK(x[o].config.tensor_parallel == y[o].config.tensor_parallel);
          }
        }
      }
    }
    // Dedup: ranges with the same layer multiset share one signature.
    CHECK(fast.SignatureOf(3, 5) == fast.SignatureOf(7, 5));  // same repeated layers, same phase
    CHECK(fast.SignatureOf(0, 5) != fast.SignatureOf(1, 5));  // embedding included or not
  }
}

TEST_CASE("Structural layer construction keeps embedding and head apart and refines to SUBLAYER",
          "[planner][planner-profile]") {
  const v1::Model block = Gpt(12, v1::BLOCK);
  auto cost = hetsim::testing::ModelCostOf(block, "model");
  REQUIRE(cost.ok());
  const auto groups = BuildPlannerLayers(*cost, 5, LayerConstruction::kStructural);
  REQUIRE(groups.size() == 5);
  CHECK(groups.front().count == 1);
  CHECK(groups.back().count == 1);
  CHECK(groups[1].count == 4);
  CHECK(groups[3].count == 4);
  const spec::ModelSpec block_spec = proto::ResolveModel(block, "model");
  CHECK(RefineGranularity(block_spec, 20).transformer->granularity == spec::Granularity::kSublayer);
  CHECK(RefineGranularity(block_spec, 8).transformer->granularity == spec::Granularity::kBlock);
  const auto balanced = BuildPlannerLayers(*cost, 4, LayerConstruction::kBalanced);
  REQUIRE(balanced.size() == 4);
  int covered = 0;
  for (const LayerGroup& g : balanced) covered += g.count;
  CHECK(covered == cost->num_layers());
}

}  // namespace
}  // namespace hetsim::planner
