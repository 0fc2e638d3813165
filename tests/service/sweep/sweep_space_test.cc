// Sweep points: axis paths bound to the base inputs, values parsed as text-format scalars, the
// cartesian product and its order, the filter, shards, and axes rejected before anything runs.
#include <string>

#include <catch2/catch.hpp>

#include "proto/validate_sweep.h"
#include "service/sweep/space.h"
#include "tests/service/sweep/sweep_test_util.h"

namespace hetsim::testing {
namespace {

using sweep::SweepSpace;

struct Loaded {
  sweep::SweepBase base;
  absl::StatusOr<SweepSpace> space;
};

Loaded Load(const std::string& dir, const std::string& text) {
  const std::string path = WriteFile(dir, "sweep.pbtxt", text);
  absl::StatusOr<hetsim::v1::Sweep> sweep = proto::LoadAs<hetsim::v1::Sweep>(path);
  REQUIRE(sweep.ok());
  absl::StatusOr<sweep::SweepBase> base = sweep::LoadSweepBase(*sweep, path);
  REQUIRE(base.ok());
  Loaded l{*base, absl::InvalidArgumentError("")};
  l.space = SweepSpace::Create(*sweep, path, l.base);
  return l;
}

std::string Texts(const SweepSpace& space, int64_t point) {
  std::string s;
  for (const sweep::AxisValue* v : space.Values(point)) s += v->text + " ";
  return s;
}

TEST_CASE("sweep points are the product of the axes, first axis slowest", "[sweep]") {
  const std::string dir = SweepFolder("space");
  Loaded l = Load(dir, kBandwidthScheduleSweep);
  REQUIRE(l.space.ok());
  const SweepSpace& space = *l.space;
  REQUIRE(space.size() == 24);
  CHECK(Texts(space, 0) == "3 ONE_F_ONE_B ");
  CHECK(Texts(space, 1) == "3 EAGER_1F1B ");
  CHECK(Texts(space, 3) == "4 ONE_F_ONE_B ");
  CHECK(Texts(space, 23) == "10 H_1F1B ");

  sweep::SweepBase in = l.base;
  space.Apply(5, &in);  // bandwidth 4, H-1F1B
  CHECK(in.cluster.inter_island_links(0).bandwidth_gbps() == 4);
  CHECK(in.plan.schedule() == hetsim::v1::H_1F1B);
  CHECK(l.base.cluster.inter_island_links(0).bandwidth_gbps() == 5);  // the base is untouched
}

TEST_CASE("sweep values are canonical text-format scalars", "[sweep]") {
  const std::string dir = SweepFolder("space");
  Loaded l = Load(dir, R"pb(
    cluster_path: "cluster-hapt-case.pbtxt"
    plan_path: "plan-hapt-case.pbtxt"
    axes {
      path: "cluster.inter_island_links[0].latency_ns"
      values: [ "1000", "0x10" ]
    }
    axes {
      path: "plan.schedule"
      values: [ "2", "GPIPE" ]
    }
    axes { path: "cluster.inter_island_links[0].bandwidth_gbps" from: 0.1 to: 0.5 step: 0.1 }
    axes {
      path: "plan.overlap_grad_reduce"
      values: [ "true", "f" ]
    }
    axes {
      path: "plan.stages[0].mesh.island"
      values: [ "v100" ]
    }
  )pb");
  REQUIRE(l.space.ok());
  CHECK(Texts(*l.space, 0) == "1000 ONE_F_ONE_B 0.1 true v100 ");
  const int64_t last = l.space->size() - 1;
  CHECK(last + 1 == 2 * 2 * 5 * 2);
  CHECK(Texts(*l.space, last) == "16 GPIPE 0.5 false v100 ");
  CHECK(Texts(*l.space, 4) == "1000 ONE_F_ONE_B 0.3 true v100 ");  // not 0.30000000000000004
}

TEST_CASE("integer ranges step through whole numbers", "[sweep]") {
  const std::string dir = SweepFolder("space");
  Loaded l = Load(dir, R"pb(
    cluster_path: "cluster-512gpu.pbtxt"
    model_path: "model-gpt39b.pbtxt"
    planner: "hapt"
    axes { path: "cluster.islands[1].node_count" from: 4 to: 32 step: 4 }
  )pb");
  REQUIRE(l.space.ok());
  REQUIRE(l.space->size() == 8);
  CHECK(Texts(*l.space, 0) == "4 ");
  CHECK(Texts(*l.space, 7) == "32 ");
}

TEST_CASE("the sweep filter keeps the points whose axis values pass every term", "[sweep]") {
  const std::string dir = SweepFolder("space");
  Loaded l = Load(dir, absl::StrCat(kBandwidthScheduleSweep, R"pb(
                    filter: "plan.schedule != EAGER_1F1B && cluster.inter_island_links[0].bandwidth_gbps <= 5.0"
                  )pb"));
  REQUIRE(l.space.ok());
  REQUIRE(l.space->size() == 6);
  CHECK(Texts(*l.space, 0) == "3 ONE_F_ONE_B ");
  CHECK(Texts(*l.space, 1) == "3 H_1F1B ");
  CHECK(Texts(*l.space, 5) == "5 H_1F1B ");

  // Enums order by their number in the schema: GPIPE < ONE_F_ONE_B < EAGER_1F1B < H_1F1B.
  Loaded ordered = Load(dir, absl::StrCat(kBandwidthScheduleSweep, R"pb(filter: "plan.schedule > ONE_F_ONE_B")pb"));
  REQUIRE(ordered.space.ok());
  CHECK(ordered.space->size() == 16);
}

// The message of the error for an axis `path` (values `values`), from validation or binding.
std::string AxisError(const std::string& dir, const std::string& axis, const std::string& filter = "") {
  const std::string text =
      absl::StrCat(R"pb(cluster_path: "cluster-hapt-case.pbtxt" plan_path: "plan-hapt-case.pbtxt")pb", "axes { ", axis,
                   " } ", filter);
  const std::string path = WriteFile(dir, "bad.pbtxt", text);
  FakeEvaluator fake;
  absl::StatusOr<sweep::SweepOutcome> run = sweep::RunSweep(Job(path, dir + "/bad.csv"), fake);
  REQUIRE_FALSE(run.ok());
  CHECK(run.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(fake.calls() == 0);  // rejected before any point ran
  CHECK_FALSE(std::filesystem::exists(dir + "/bad.csv"));
  return std::string(run.status().message());
}

TEST_CASE("bad sweep axes are rejected before anything runs, naming the field", "[sweep]") {
  const std::string dir = SweepFolder("space");
  using Catch::Contains;
  CHECK_THAT(AxisError(dir, R"(path: "cluster.islands[5].node_count" values: "2")"),
             Contains("bad.pbtxt: axes[0].path: cluster.islands[5]:") && Contains("has 2 islands (indices 0..1)"));
  CHECK_THAT(AxisError(dir, R"(path: "cluster.islands[0].nodes" values: "2")"),
             Contains("bad.pbtxt: axes[0].path:") && Contains("Island has no field \"nodes\""));
  CHECK_THAT(AxisError(dir, R"(path: "cluster.inter_island_links.bandwidth_gbps" values: "2")"),
             Contains("axes[0].path:") && Contains("is a list, give an [index]"));
  CHECK_THAT(AxisError(dir, R"(path: "plan.model.layer_list.seq_length" values: "2")"),
             Contains("axes[0].path: model.layer_list:") && Contains("sets transformer, not layer_list"));
  CHECK_THAT(AxisError(dir, R"(path: "plan.stages[3].num_layers" values: "2")"),
             Contains("axes[0].path: plan.stages[3]:") && Contains("has 3 stages"));
  CHECK_THAT(AxisError(dir, R"(path: "plan.schedule" values: ["H_1F1B", "FAST"])"),
             Contains("bad.pbtxt: axes[0].values[1]: \"FAST\" is not a value of Schedule"));
  CHECK_THAT(AxisError(dir, R"(path: "cluster.islands[0].node_count" values: ["2", "2.5"])"),
             Contains("axes[0].values[1]: \"2.5\""));
  CHECK_THAT(AxisError(dir, R"(path: "cluster.islands[0].node_count" values: ["2", "2"])"),
             Contains("axes[0].values[1]: 2 appears twice"));
  CHECK_THAT(AxisError(dir, R"(path: "plan.model_path" values: "m.pbtxt")"), Contains("cannot be swept"));
  CHECK_THAT(AxisError(dir, R"(path: "topology.nodes" values: "2")"),
             Contains("must start with cluster., model. or plan."));
  CHECK_THAT(AxisError(dir, R"(path: "plan.schedule" values: "H_1F1B")", R"(filter: "plan.micro_batch_size > 2")"),
             Contains("bad.pbtxt: filter:") && Contains("not the path of an axis"));
}

TEST_CASE("shards are disjoint round-robin slices covering every point", "[sweep]") {
  absl::StatusOr<sweep::Shard> s = sweep::ParseShard("1/3");
  REQUIRE(s.ok());
  CHECK(sweep::ShardPoints(8, *s) == std::vector<int64_t>{1, 4, 7});
  CHECK(sweep::ShardPoints(8, sweep::Shard{}) == std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7});
  CHECK(sweep::ShardPoints(2, sweep::Shard{2, 3}).empty());
  for (const char* bad : {"3/3", "-1/3", "1/0", "1", "a/b", "1/2/3"}) {
    INFO(bad);
    CHECK(sweep::ParseShard(bad).status().code() == absl::StatusCode::kInvalidArgument);
  }
}

}  // namespace
}  // namespace hetsim::testing
