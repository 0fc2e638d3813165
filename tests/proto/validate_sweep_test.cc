// proto/validate_sweep: structure of Sweep files, one test per rule.
#include <catch2/catch.hpp>

#include "proto/validate_sweep.h"
#include "tests/proto/validate_test_util.h"

namespace hetsim::testing {
namespace {

using proto::ResolveSweepPath;
using proto::ValidateSweep;
using v1::Sweep;

Sweep Bandwidth() { return Example<Sweep>("sweep-bandwidth"); }
Sweep AddH100() { return Example<Sweep>("sweep-add-h100"); }

}  // namespace

TEST_CASE("bundled sweeps are valid", "[validate]") {
  CHECK(ValidateSweep(Bandwidth(), "s.pbtxt").ok());
  CHECK(ValidateSweep(AddH100(), "s.pbtxt").ok());
}

TEST_CASE("sweep paths resolve to scalar fields of the schema", "[validate]") {
  CHECK((*ResolveSweepPath("cluster.islands[1].node_count"))->name() == "node_count");
  CHECK((*ResolveSweepPath("plan.stages[0].mesh.first_node"))->name() == "first_node");
  CHECK((*ResolveSweepPath("model.transformer.hidden_size"))->name() == "hidden_size");
  CHECK(*ResolveSweepPath("planner") == nullptr);
  CHECK_THAT(std::string(ResolveSweepPath("cluster.islands.node_count").status().message()),
             Catch::Contains("islands is a list, give an [index]"));
  CHECK_THAT(std::string(ResolveSweepPath("plan.schedule[0]").status().message()),
             Catch::Contains("schedule is not a list"));
  CHECK_THAT(std::string(ResolveSweepPath("plan.stages[x].num_layers").status().message()),
             Catch::Contains("bad index"));
  CHECK_THAT(std::string(ResolveSweepPath("plan.stages[0].mesh").status().message()),
             Catch::Contains("mesh is a message"));
  CHECK_THAT(std::string(ResolveSweepPath("plan.schedule.x").status().message()),
             Catch::Contains("schedule is not a message"));
  CHECK_THAT(std::string(ResolveSweepPath("cluster.islandz[0].node_count").status().message()),
             Catch::Contains("Cluster has no field \"islandz\""));
  CHECK_THAT(std::string(ResolveSweepPath("report.mfu").status().message()),
             Catch::Contains("must start with cluster., model. or plan."));
}

TEST_CASE("sweep: base inputs are required", "[validate]") {
  Sweep s = AddH100();
  s.clear_cluster_path();
  s.clear_model_path();
  s.clear_planner();
  const auto st = ValidateSweep(s, "s.pbtxt");
  CHECK_PROBLEM(st, "s.pbtxt: cluster_path: required");
  CHECK_PROBLEM(st, "s.pbtxt: model_path: required when plan_path is empty");
  CHECK_PROBLEM(st, "s.pbtxt: planner: required when plan_path is empty");
}

TEST_CASE("sweep: a plan or a planner but not both, planners are known", "[validate]") {
  Sweep s = Bandwidth();
  s.set_planner("hapt");
  CHECK_PROBLEM(ValidateSweep(s, "s.pbtxt"), "s.pbtxt: planner: set together with plan_path");
  s = AddH100();
  s.set_planner("pipedream");
  CHECK_PROBLEM(ValidateSweep(s, "s.pbtxt"), "s.pbtxt: planner: \"pipedream\" is not a planner");
  s = Bandwidth();
  auto* a = s.add_axes();
  a->set_path("planner");
  a->add_values("hapt");
  CHECK_PROBLEM(ValidateSweep(s, "s.pbtxt"), "s.pbtxt: axes: a \"planner\" axis needs plan_path to be empty");
}

TEST_CASE("sweep: axes are required, each with a resolvable path", "[validate]") {
  Sweep s = Bandwidth();
  s.clear_axes();
  CHECK_PROBLEM(ValidateSweep(s, "s.pbtxt"), "s.pbtxt: axes: required: at least one axis");
  s = Bandwidth();
  s.mutable_axes(1)->set_path("plan.scheduel");
  CHECK_PROBLEM(ValidateSweep(s, "s.pbtxt"),
                "s.pbtxt: axes[1].path: \"plan.scheduel\": Plan has no field \"scheduel\"");
}

TEST_CASE("sweep: values or a range, not both, not neither", "[validate]") {
  Sweep s = Bandwidth();
  s.mutable_axes(0)->add_values("5");
  CHECK_PROBLEM(ValidateSweep(s, "s.pbtxt"), "s.pbtxt: axes[0].values: set together with a range");
  s = Bandwidth();
  s.mutable_axes(1)->clear_values();
  CHECK_PROBLEM(ValidateSweep(s, "s.pbtxt"), "s.pbtxt: axes[1].values: required: a list of values or a range");
}

TEST_CASE("sweep: values suit the field's type", "[validate]") {
  Sweep s = Bandwidth();
  s.mutable_axes(1)->add_values("H_2F2B");
  CHECK_PROBLEM(ValidateSweep(s, "s.pbtxt"), "s.pbtxt: axes[1].values[3]: \"H_2F2B\" is not a value of Schedule");
  auto* a = s.add_axes();
  a->set_path("cluster.islands[0].node_count");
  a->add_values("-2");
  a->add_values("3.5");
  CHECK_PROBLEM(ValidateSweep(s, "s.pbtxt"), "s.pbtxt: axes[2].values[0]: \"-2\" is not a non-negative integer");
  CHECK_PROBLEM(ValidateSweep(s, "s.pbtxt"), "s.pbtxt: axes[2].values[1]: \"3.5\" is not a non-negative integer");
}

TEST_CASE("sweep: ranges are numeric, increasing, with a positive step", "[validate]") {
  Sweep s = Bandwidth();
  s.mutable_axes(0)->set_step(-1);
  CHECK_PROBLEM(ValidateSweep(s, "s.pbtxt"), "s.pbtxt: axes[0].step: -1, but a range needs step > 0");
  s = Bandwidth();
  s.mutable_axes(0)->set_to(1);
  CHECK_PROBLEM(ValidateSweep(s, "s.pbtxt"), "s.pbtxt: axes[0].to: 1 is less than from 3");
  s = AddH100();
  s.mutable_axes(0)->set_step(0.5);
  CHECK_PROBLEM(ValidateSweep(s, "s.pbtxt"),
                "s.pbtxt: axes[0].step: \"cluster.islands[1].node_count\" is an integer field");
  s = Bandwidth();
  s.mutable_axes(0)->set_step(1e-9);
  CHECK_PROBLEM(ValidateSweep(s, "s.pbtxt"), "s.pbtxt: axes[0].step: the range has more than 1e+07 points");
  s = Bandwidth();
  s.mutable_axes(1)->clear_values();
  s.mutable_axes(1)->set_from(1);
  s.mutable_axes(1)->set_to(2);
  s.mutable_axes(1)->set_step(1);
  CHECK_PROBLEM(ValidateSweep(s, "s.pbtxt"), "s.pbtxt: axes[1].from: a range needs a numeric field");
}

TEST_CASE("sweep: an axis path appears once", "[validate]") {
  Sweep s = Bandwidth();
  *s.add_axes() = s.axes(1);
  CHECK_PROBLEM(ValidateSweep(s, "s.pbtxt"), "s.pbtxt: axes[2].path: \"plan.schedule\" is already swept by axes[1]");
}

TEST_CASE("sweep: the filter compares axes", "[validate]") {
  Sweep s = Bandwidth();
  s.set_filter("cluster.inter_island_links[0].bandwidth_gbps >= 4 && plan.schedule != GPIPE");
  CHECK(ValidateSweep(s, "s.pbtxt").ok());
  s.set_filter("plan.global_batch_size > 4");
  CHECK_PROBLEM(
      ValidateSweep(s, "s.pbtxt"),
      "s.pbtxt: filter: term \"plan.global_batch_size > 4\": \"plan.global_batch_size\" is not the path of an axis");
  s.set_filter("plan.schedule");
  CHECK_PROBLEM(ValidateSweep(s, "s.pbtxt"), "s.pbtxt: filter: term \"plan.schedule\" has no comparison");
}

}  // namespace hetsim::testing
