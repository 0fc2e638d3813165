// The pipelines family's expert layout per GPU type (planner/expert_layouts_internal.h, issue 39): which layouts
// a type tries, which holders nest, the search's order and bound on a price given in closed form, and on the
// planner's own price a case where each type's own EP wins, its plan simulated as `validate` simulates it.
#include <catch2/catch.hpp>

#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/time.h"
#include "base/units.h"
#include "planner/expert_layouts_internal.h"
#include "planner/pipelines.h"
#include "proto/inputs.h"
#include "proto/io.h"
#include "proto/resolve.h"
#include "proto/resolve_cluster.h"
#include "proto/validate_cluster.h"
#include "service/driver/plan_messages.h"
#include "service/driver/simulate.h"
#include "sim/workload/model_cost.h"

namespace hetsim::planner {
namespace {

using Layout = std::pair<int, int>;

workload::ModelCost MoeCaseCost() {
  // 8 experts of FFN 8192 (tests/planner_data/moe-hapt-case.pbtxt).
  absl::StatusOr<v1::Model> model =
      proto::LoadAs<v1::Model>(HETSIM_SOURCE_DIR "/tests/planner_data/moe-hapt-case.pbtxt");
  REQUIRE(model.ok());
  return workload::ModelCost::Create(proto::ResolveModel(*model, "moe"));
}

TEST_CASE("pipelines experts: a type tries ETP 1 at each EP, then ETP up to its node at the largest EP",
          "[planner][pipelines][moe]") {
  const workload::ModelCost cost = MoeCaseCost();
  CHECK(ExpertLayoutsOfType(cost, 8) == std::vector<Layout>{{1, 1}, {2, 1}, {4, 1}, {8, 1}, {8, 2}, {8, 4}, {8, 8}});
  CHECK(ExpertLayoutsOfType(cost, 2) == std::vector<Layout>{{1, 1}, {2, 1}, {4, 1}, {8, 1}, {8, 2}});
  CHECK(ExpertLayoutsOfType(cost, 1) == std::vector<Layout>{{1, 1}, {2, 1}, {4, 1}, {8, 1}});
}

TEST_CASE("pipelines experts: holders nest when every EP and ETP divides the finest's", "[planner][pipelines][moe]") {
  CHECK(ExpertLayoutsNest({{4, 1}, {2, 1}, {1, 1}}));
  CHECK(ExpertLayoutsNest({{2, 1}, {8, 2}}));  // the finest need not come first
  CHECK(ExpertLayoutsNest({{8, 2}, {8, 1}, {1, 1}}));
  // Splits of one size that do not nest (hetsim check: plan_pl_moe_etp_nest), either first.
  CHECK_FALSE(ExpertLayoutsNest({{2, 1}, {1, 2}}));
  CHECK_FALSE(ExpertLayoutsNest({{1, 2}, {2, 1}}));
  // A coarser ETP the finest does not carry (hetsim check: plan_pl_moe_ep_differs's form).
  CHECK_FALSE(ExpertLayoutsNest({{4, 1}, {1, 2}}));
}

// A price in closed form: the iteration is the sum of each type's milliseconds at its layout (none: that type
// has no plan there); every call recorded.
struct SumPrice {
  std::map<std::string, std::map<Layout, double>> ms;
  std::vector<TypeExpertLayouts> calls;
  std::optional<PipelinesCandidate> operator()(const TypeExpertLayouts& layouts) {
    calls.push_back(layouts);
    double total = 0;
    for (const auto& [type, layout] : layouts) {
      const auto at = ms.at(type).find(layout);
      if (at == ms.at(type).end()) return std::nullopt;
      total += at->second;
    }
    PipelinesCandidate c;
    c.iteration = MillisecondsToTime(total);
    return c;
  }
};

TEST_CASE("pipelines experts: each type's own layout, from the best one for all, one type at a time",
          "[planner][pipelines][moe]") {
  const workload::ModelCost cost = MoeCaseCost();
  // "b" has no plan at EP 1 (its GPUs cannot hold every expert); "a" is fastest at EP 2, "b" at EP 8 x ETP 2.
  SumPrice price;
  price.ms["a"] = {{{1, 1}, 10}, {{2, 1}, 8}, {{4, 1}, 9}, {{8, 1}, 12}, {{8, 2}, 20}, {{8, 4}, 20}, {{8, 8}, 20}};
  price.ms["b"] = {{{2, 1}, 10}, {{4, 1}, 6}, {{8, 1}, 5}, {{8, 2}, 4}, {{8, 4}, 4.5}, {{8, 8}, 3}};
  const std::optional<PipelinesCandidate> best =
      SearchExpertLayouts(cost, {{"a", 8}, {"b", 8}}, [&](const TypeExpertLayouts& l) { return price(l); });
  REQUIRE(best);
  // One layout for both: EP 1 has no plan, EP 2 18 ms, EP 4 15 ms, EP 8 17 ms (ends step 1 at EP 4). Then "a"
  // alone: EP 1 16, EP 2 14 (kept), EP 4 15, EP 8 18, EP 8 x ETP 2 26 (ends its ETPs); then "b" alone beside
  // "a" at EP 2: EP 1 none, EP 2 18, EP 8 13 (kept), EP 8 x ETP 2 12 (kept), x ETP 4 12.5 (ends its ETPs, so
  // ETP 8's 11 ms is never priced: the search is greedy and bounded).
  CHECK(best->expert_layouts == TypeExpertLayouts{{"a", {2, 1}}, {"b", {8, 2}}});
  CHECK(best->iteration == MillisecondsToTime(12));
  CHECK(best->expert_why ==
        "experts per GPU type: a at EP 2 x ETP 1, b at EP 8 x ETP 2 (15.000 ms at EP 4 x ETP 1 on every stage)");
  CHECK(price.calls.size() == 14);  // 4 + 5 + 5, within (1 + log2 8) + 2 x (1 + log2 8 + log2 8) = 18
  for (const TypeExpertLayouts& l : price.calls) CHECK(l.at("b") != Layout{8, 8});
}

TEST_CASE("pipelines experts: beyond the EPs tried for every type, a type's EP grows only while it prices faster",
          "[planner][pipelines][moe]") {
  const workload::ModelCost cost = MoeCaseCost();
  // Both types slower at EP 2 than at EP 1 (16 against 18 ms together): step 1 stops at EP 2. Each type alone
  // then prices EP 2 (planned in step 1: 17 ms) and EP 4, the first EP step 1 did not plan: 18 ms, slower, so
  // its EPs stop there and neither type reaches EP 8 (1 ms) nor an ETP at it.
  SumPrice price;
  for (const char* type : {"a", "b"}) {
    price.ms[type] = {{{1, 1}, 8}, {{2, 1}, 9}, {{4, 1}, 10}, {{8, 1}, 1}, {{8, 2}, 1}, {{8, 4}, 1}, {{8, 8}, 1}};
  }
  const std::optional<PipelinesCandidate> best =
      SearchExpertLayouts(cost, {{"a", 8}, {"b", 8}}, [&](const TypeExpertLayouts& l) { return price(l); });
  REQUIRE(best);
  CHECK(best->expert_layouts == TypeExpertLayouts{{"a", {1, 1}}, {"b", {1, 1}}});
  CHECK(best->iteration == MillisecondsToTime(16));
  CHECK(best->expert_why == "EP 1 x ETP 1 on every stage, 18.000 ms at EP 2");
  CHECK(price.calls.size() == 2 + 2 + 2);
  for (const TypeExpertLayouts& l : price.calls) {
    CHECK(l.at("a").first <= 4);
    CHECK(l.at("b").first <= 4);
  }
}

TEST_CASE("pipelines experts: a dense model is priced once without a layout", "[planner][pipelines]") {
  absl::StatusOr<v1::Model> model = proto::LoadAs<v1::Model>(HETSIM_SOURCE_DIR "/tests/planner_data/gpt-1.3b.pbtxt");
  REQUIRE(model.ok());
  const workload::ModelCost cost = workload::ModelCost::Create(proto::ResolveModel(*model, "gpt"));
  SumPrice price;
  price.ms["a"] = {};
  const std::optional<PipelinesCandidate> best =
      SearchExpertLayouts(cost, {{"a", 8}, {"b", 8}}, [&](const TypeExpertLayouts& l) { return price(l); });
  REQUIRE(best);
  REQUIRE(price.calls.size() == 1);
  CHECK(price.calls.front().empty());
  CHECK(best->expert_why.empty());
}

// The family on `cluster_file` (128 samples of one unless `global_batch`) for the 8-expert GPT, each choice
// of layouts priced by PlanPipelinesOfTypes, its type plans kept; and a plan of it written and simulated.
struct FamilyOnCluster {
  v1::Model model_message;
  v1::Cluster cluster_message;
  std::optional<workload::ModelCost> cost;
  std::optional<spec::ClusterSpec> cluster;
  std::unique_ptr<ClusterModel> cluster_model;
  TypePlans plans;
  uint64_t global_batch = 128;

  FamilyOnCluster(const std::string& cluster_file, uint64_t batch, uint64_t expert_ffn = 0) : global_batch(batch) {
    absl::StatusOr<v1::Model> m = proto::LoadAs<v1::Model>(HETSIM_SOURCE_DIR "/tests/planner_data/moe-hapt-case.pbtxt");
    REQUIRE(m.ok());
    model_message = *m;
    if (expert_ffn > 0) model_message.mutable_transformer()->set_expert_ffn_hidden_size(expert_ffn);
    absl::StatusOr<v1::Cluster> c = proto::LoadCluster(cluster_file);
    REQUIRE(c.ok());
    cluster_message = *c;
    cost = workload::ModelCost::Create(proto::ResolveModel(model_message, "moe"));
    absl::StatusOr<spec::ClusterSpec> resolved = proto::ResolveCluster(cluster_message, "");
    REQUIRE(resolved.ok());
    cluster = *resolved;
    absl::StatusOr<std::unique_ptr<ClusterModel>> cm = ClusterModel::Create(*cluster, cost->dtype());
    REQUIRE(cm.ok());
    cluster_model = *std::move(cm);
  }
  std::optional<PipelinesCandidate> Price(const TypeExpertLayouts& layouts) {
    const PipelinesContext ctx{.model = &*cost,
                               .cluster = &*cluster,
                               .cluster_model = cluster_model.get(),
                               .options = {},
                               .global_batch_size = global_batch,
                               .point = {.micro_batch_size = 1},
                               .epsilon = spec::kDefaultH1f1bEpsilon,
                               .threads = 1,
                               .profiles = nullptr,
                               .expert_layouts = layouts,
                               .type_plans = &plans};
    return PlanPipelinesOfTypes(ctx);
  }
  // `c` written as `hetsim plan` writes it, checked and simulated: its iteration.
  Time Simulated(const PipelinesCandidate& c) {
    spec::PlanSpec shape;
    shape.name = "family";
    shape.global_batch_size = global_batch;
    shape.schedule = spec::ScheduleKind::kH1F1B;
    absl::StatusOr<spec::PlanSpec> plan = WritePipelinesPlan(c, shape);
    REQUIRE(plan.ok());
    PlanOutcome outcome;
    outcome.plan = *plan;
    outcome.model = proto::ResolveModel(model_message, "moe");
    proto::PlanInputs inputs;
    inputs.cluster = cluster_message;
    inputs.model = model_message;
    inputs.plan = driver::PlanMessageOf(*plan, {.model = model_message, .cluster = cluster_message}, outcome, true);
    const absl::Status valid = proto::ValidatePlanInputs(inputs);
    INFO(valid.message());
    REQUIRE(valid.ok());
    absl::StatusOr<driver::Simulation> sim = driver::SimulatePlan(inputs);
    REQUIRE(sim.ok());
    return sim->pipeline_sync.iteration_time;
  }
};

TEST_CASE("pipelines experts: A100s at EP 2 beside RTX 4090s at EP 4 beat one EP for both, as priced and as run",
          "[planner][pipelines][moe]") {
  // The 8-expert GPT with experts twice as wide (FFN 16384) on 8 A100-80GB beside 8 RTX 4090 (24 GiB), each
  // type on its own 8 x 400 Gb/s network, one 50 Gb/s link between them, 64 samples of one. The types pull
  // apart: beside RTX 4090s at EP 4 the A100s price faster at EP 2 than at EP 4 (fewer all-to-all partners,
  // the memory to hold half the experts), and beside A100s at EP 2 the RTX 4090s faster at EP 4 than at EP 2
  // (a quarter of the experts on a quarter of the memory). So one EP for both makes one type run at the other's.
  FamilyOnCluster f(HETSIM_SOURCE_DIR "/tests/planner_data/cluster-a100-rtx4090-ethernet.pbtxt", 64, 16384);
  const std::optional<PipelinesCandidate> best = SearchExpertLayouts(
      *f.cost, {{"a100", 8}, {"rtx4090", 8}}, [&](const TypeExpertLayouts& l) { return f.Price(l); });
  REQUIRE(best);
  INFO(best->expert_why);
  CHECK(best->expert_layouts == TypeExpertLayouts{{"a100", {2, 1}}, {"rtx4090", {4, 1}}});
  CHECK_THAT(best->expert_why,
             Catch::StartsWith("experts per GPU type: a100 at EP 2 x ETP 1, rtx4090 at EP 4 x ETP 1 ("));
  CHECK(f.plans.hits > 0);  // each type's DP ran once per layout of its own
  // The written plan (holders at EP 2 and EP 4, which nest) checks and simulates within 1% of its price, and
  // faster than every layout for both types, each priced and simulated the same way (measured: 3897.3 ms
  // predicted, 3910.0 simulated; the best one EP, EP 2, 3918.0 and 3929.6).
  const Time simulated = f.Simulated(*best);
  INFO("predicted " << TimeToMilliseconds(best->iteration) << " ms, simulated " << TimeToMilliseconds(simulated)
                    << " ms");
  CHECK(std::abs(TimeToSeconds(best->iteration) / TimeToSeconds(simulated) - 1) < 0.01);
  for (int ep : {1, 2, 4, 8}) {
    const std::optional<PipelinesCandidate> one = f.Price({{"a100", {ep, 1}}, {"rtx4090", {ep, 1}}});
    if (!one) continue;
    const Time one_simulated = f.Simulated(*one);
    INFO("EP " << ep << " for both: predicted " << TimeToMilliseconds(one->iteration) << " ms, simulated "
               << TimeToMilliseconds(one_simulated) << " ms");
    CHECK(best->iteration < one->iteration);
    CHECK(simulated < one_simulated);
  }
}

TEST_CASE("pipelines experts: on the mixed cloud the family's MoE plans price within 5% of their simulation",
          "[planner][pipelines][moe]") {
  // Session 42: the mixed cloud (examples/cluster-mixed-cloud.pbtxt: A100 and L40S nodes, one 100 Gb/s NIC a
  // node, one flat network), 128 samples of one. Every layer range is an A100 GPU and an L40S GPU reducing
  // about 570 MB each way, 7 or 8 ranges through each node's NIC (C = 10 GB/s): about 8 x 570 MB / C = 0.46 s
  // after the backwards, as simulated. The islands' crossing was priced as one link of C that all 15 ranges
  // shared (twice that), and the family's price was 37-47% slow at every layout (measured: EP 1 for both
  // 1335.3 ms against 909.8 simulated; A100 EP 2 beside L40S EP 1 1333.0 against 933.8). Session 42: 948.6
  // (+4.3%) and 928.2 (-0.6%), EP 1's first range reducing its experts as a double tree over 4 GPUs priced as one
  // flow a NIC. Session 43: the NIC shared per flow (SharedLink), the tree's 2 flows of 2/3 of a ring's bytes
  // against each ring's 1 (measured: 911.5, +0.2%; 929.7, -0.4%).
  FamilyOnCluster f(HETSIM_SOURCE_DIR "/examples/cluster-mixed-cloud.pbtxt", 128);
  std::map<std::pair<int, int>, Time> simulated;
  for (const auto& [a100, l40s] : std::vector<std::pair<int, int>>{{1, 1}, {2, 1}}) {
    const std::optional<PipelinesCandidate> c = f.Price({{"a100", {a100, 1}}, {"l40s", {l40s, 1}}});
    REQUIRE(c);
    simulated[{a100, l40s}] = f.Simulated(*c);
    INFO("A100 EP " << a100 << ", L40S EP " << l40s << ": predicted " << TimeToMilliseconds(c->iteration)
                    << " ms, simulated " << TimeToMilliseconds(simulated[{a100, l40s}]) << " ms");
    CHECK(std::abs(TimeToSeconds(c->iteration) / TimeToSeconds(simulated[{a100, l40s}]) - 1) < 0.05);
  }
  // The family's choice of a layout per type runs no slower than EP 1 for both (session 42 chose A100 EP 2 beside
  // L40S EP 1, 2.6% slower as simulated, because EP 1 priced 4.3% slow).
  const std::optional<PipelinesCandidate> best =
      SearchExpertLayouts(*f.cost, {{"a100", 8}, {"l40s", 8}}, [&](const TypeExpertLayouts& l) { return f.Price(l); });
  REQUIRE(best);
  const Time best_simulated = f.Simulated(*best);
  INFO(best->expert_why << ": predicted " << TimeToMilliseconds(best->iteration) << " ms, simulated "
                        << TimeToMilliseconds(best_simulated) << " ms");
  CHECK(best_simulated <= simulated.at({1, 1}));
  CHECK(best_simulated < simulated.at({2, 1}));
}

}  // namespace
}  // namespace hetsim::planner
