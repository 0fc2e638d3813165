// Re-planning after failures: the surviving cluster on hand cases (a GPU takes its node, a bundle or
// its last cable disconnects an island, the largest connected part is kept), the profile cache (a
// second planning run prices nothing and plans the same), and a re-plan of the HAPT case after a
// node failure (valid on the survivors, slower than fault-free but > 0, deterministic); hetsim run's
// --replan step (service/driver/run_replan.h) filling Report.replan.
#include <string>

#include <catch2/catch.hpp>

#include "absl/strings/str_join.h"
#include "planner/planner.h"
#include "planner/profile_cache.h"
#include "proto/inputs.h"
#include "proto/plan_message.h"
#include "proto/validate_plan.h"
#include "service/driver/replan.h"
#include "service/driver/run_replan.h"
#include "service/driver/surviving_cluster.h"
#include "tests/service/sweep/sweep_test_util.h"
#include "tests/sim/executor/executor_test_util.h"

namespace hetsim::testing {
namespace {

using driver::BuildSurvivingCluster;
using driver::FailedTargets;

// Island "fast" of 3 nodes then island "slow" of 1 node, 2 GPUs per node: GPUs 0-5 fast, 6-7 slow.
v1::Cluster ThreeAndOne(uint32_t ethernet_links = 1) {
  v1::Cluster c = TwoIslandCluster(3, 2, 10, 1000);
  c.mutable_inter_island_links(0)->set_count(ethernet_links);
  return c;
}

driver::SurvivingCluster Survive(const v1::Cluster& c, const FailedTargets& f) {
  absl::StatusOr<driver::SurvivingCluster> s = BuildSurvivingCluster(c, f);
  INFO(s.status().message());
  REQUIRE(s.ok());
  return *std::move(s);
}

std::string Islands(const v1::Cluster& c) {
  std::vector<std::string> parts;
  for (const v1::Island& i : c.islands()) parts.push_back(absl::StrCat(i.name(), ":", i.node_count()));
  return absl::StrJoin(parts, ",");
}

TEST_CASE("replan: a failed GPU takes its whole node out", "[replan]") {
  FailedTargets f;
  f.gpus = {3};  // fast/node1/gpu1
  const driver::SurvivingCluster s = Survive(ThreeAndOne(), f);
  CHECK(Islands(s.cluster) == "fast:2,slow:1");
  CHECK(s.num_gpus == 6);
  REQUIRE(s.removed.size() == 1);
  CHECK(s.removed[0] == "node fast/node1 (GPU 3 failed)");
  CHECK(s.cluster.inter_island_links_size() == 1);

  f.gpus = {2, 3};  // the same node twice: removed once
  f.nodes.push_back(v1::NodeRef());
  f.nodes.back().set_island("fast");
  f.nodes.back().set_node(2);
  const driver::SurvivingCluster two = Survive(ThreeAndOne(), f);
  CHECK(Islands(two.cluster) == "fast:1,slow:1");
  CHECK(two.removed.size() == 2);
}

TEST_CASE("replan: a failed node empties its island, which leaves with its links", "[replan]") {
  FailedTargets f;
  f.nodes.push_back(v1::NodeRef());
  f.nodes.back().set_island("slow");
  f.nodes.back().set_node(0);
  const driver::SurvivingCluster s = Survive(ThreeAndOne(), f);
  CHECK(Islands(s.cluster) == "fast:3");
  CHECK(s.cluster.inter_island_links_size() == 0);
  CHECK(s.num_gpus == 6);
}

TEST_CASE("replan: failed inter-island links reduce the count, then disconnect, the largest part stays", "[replan]") {
  FailedTargets cable;
  cable.links = {"fast/gateway0->slow/gateway0"};
  const driver::SurvivingCluster one_left = Survive(ThreeAndOne(2), cable);
  CHECK(Islands(one_left.cluster) == "fast:3,slow:1");
  REQUIRE(one_left.cluster.inter_island_links_size() == 1);
  CHECK(one_left.cluster.inter_island_links(0).count() == 1);
  CHECK(one_left.removed[0] == "one link of inter-island link 0 (slow-fast) failed: 1 left");

  cable.links.push_back("slow/gateway0->fast/gateway0");  // the other cable: none left
  const driver::SurvivingCluster cut = Survive(ThreeAndOne(2), cable);
  CHECK(Islands(cut.cluster) == "fast:3");
  CHECK(cut.removed.back() == "island slow (2 GPUs left) dropped: cut off from the largest connected part");

  FailedTargets bundle;
  bundle.inter_island_links = {0};
  CHECK(Islands(Survive(ThreeAndOne(), bundle).cluster) == "fast:3");

  // Two nodes of fast fail as well: slow (2 GPUs) ties with fast (2 GPUs); the first island wins.
  bundle.gpus = {0, 2};
  CHECK(Islands(Survive(ThreeAndOne(), bundle).cluster) == "fast:1");

  FailedTargets ethernet;
  ethernet.link_classes = {"ETHERNET"};
  CHECK(Islands(Survive(ThreeAndOne(), ethernet).cluster) == "fast:3");
}

TEST_CASE("replan: links of a node cordon it, the single gateway link isolates its island", "[replan]") {
  FailedTargets nic;
  nic.links = {"fast/node0/gpu1->fast/node0/nic0"};
  CHECK(Islands(Survive(ThreeAndOne(), nic).cluster) == "fast:2,slow:1");

  FailedTargets gateway;
  gateway.links = {"slow/switch0->slow/gateway0"};
  const driver::SurvivingCluster s = Survive(ThreeAndOne(), gateway);
  CHECK(Islands(s.cluster) == "fast:3");
  CHECK(s.removed[0] == "island slow cut off from the other islands (link slow/switch0->slow/gateway0 failed)");
}

TEST_CASE("replan: unknown targets are refused by name, and nothing left is an error", "[replan]") {
  FailedTargets f;
  f.gpus = {8};
  absl::StatusOr<driver::SurvivingCluster> s = BuildSurvivingCluster(ThreeAndOne(), f);
  CHECK(s.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(s.status().message()), Catch::Contains("failed gpu 8: no such GPU (the cluster has 8)"));

  FailedTargets link;
  link.links = {"fast/node0/gpu0->slow/node0/gpu0"};
  CHECK_THAT(std::string(BuildSurvivingCluster(ThreeAndOne(), link).status().message()),
             Catch::Contains("no such link"));
  FailedTargets cls;
  cls.link_classes = {"CARRIER_PIGEON"};
  CHECK(BuildSurvivingCluster(ThreeAndOne(), cls).status().code() == absl::StatusCode::kInvalidArgument);

  FailedTargets nvlink;
  nvlink.link_classes = {"NVLINK"};  // every node's NVSwitch: nothing survives
  CHECK(BuildSurvivingCluster(ThreeAndOne(), nvlink).status().code() == absl::StatusCode::kFailedPrecondition);
}

TEST_CASE("replan: FAIL faults become failed targets, other kinds do not", "[replan]") {
  v1::Faults faults;
  v1::Fault* slow = faults.add_faults();
  slow->set_kind(v1::SLOW);
  slow->set_gpu(1);
  v1::Fault* gpu = faults.add_faults();
  gpu->set_kind(v1::FAIL);
  gpu->set_gpu(5);
  v1::Fault* link = faults.add_faults();
  link->set_kind(v1::FAIL);
  link->set_inter_island_link(0);
  const FailedTargets f = driver::FailedTargetsOf(faults);
  CHECK(f.gpus == std::vector<uint32_t>{5});
  CHECK(f.inter_island_links == std::vector<uint32_t>{0});
  CHECK(f.nodes.empty());
}

proto::PlanInputs HaptCase() {
  const std::string examples = std::string(HETSIM_SOURCE_DIR) + "/examples/";
  absl::StatusOr<proto::PlanInputs> in =
      proto::LoadPlanInputs(examples + "plan-hapt-case.pbtxt", examples + "cluster-hapt-case.pbtxt");
  REQUIRE(in.ok());
  return *std::move(in);
}

TEST_CASE("replan: the profile cache answers a second planning run without pricing, same plan", "[replan]") {
  const proto::PlanInputs in = HaptCase();
  absl::StatusOr<planner::PlanRequest> resolved = driver::ReplanPlanRequest(in, planner::PlannerKind::kHapt, 2);
  REQUIRE(resolved.ok());
  planner::PlanRequest request = *resolved;
  absl::StatusOr<planner::PlanOutcome> plain = planner::MakePlan(request);
  REQUIRE(plain.ok());
  planner::ProfileCache cache;
  request.profile_cache = &cache;
  absl::StatusOr<planner::PlanOutcome> first = planner::MakePlan(request);
  REQUIRE(first.ok());
  CHECK(first->profile.cache_hits == 0);
  CHECK(cache.stats().entries == first->profile.stage_mesh_pairs);
  absl::StatusOr<planner::PlanOutcome> second = planner::MakePlan(request);
  REQUIRE(second.ok());
  CHECK(second->profile.stage_mesh_pairs == 0);
  CHECK(second->profile.cost_model_calls == 0);
  CHECK(second->profile.cache_hits == first->profile.stage_mesh_pairs);
  const std::string plain_plan = proto::PlanMessage(plain->plan).SerializeAsString();
  CHECK(proto::PlanMessage(first->plan).SerializeAsString() == plain_plan);
  CHECK(proto::PlanMessage(second->plan).SerializeAsString() == plain_plan);

  // Another model empties the cache rather than answering with the wrong profiles.
  proto::PlanInputs other_inputs = in;
  other_inputs.model.mutable_transformer()->set_hidden_size(1024);
  absl::StatusOr<planner::PlanRequest> other = driver::ReplanPlanRequest(other_inputs, planner::PlannerKind::kHapt, 2);
  REQUIRE(other.ok());
  other->profile_cache = &cache;
  absl::StatusOr<planner::PlanOutcome> third = planner::MakePlan(*other);
  REQUIRE(third.ok());
  CHECK(third->profile.cache_hits == 0);
  CHECK(cache.stats().rebinds == 1);
}

TEST_CASE("replan: the HAPT case after a node failure plans on the survivors, slower but running", "[replan]") {
  const proto::PlanInputs in = HaptCase();
  planner::ProfileCache cache;
  REQUIRE(driver::PrimeProfileCache(in, planner::PlannerKind::kHapt, 2, &cache).ok());
  driver::ReplanRequest request;
  request.original = in;
  request.threads = 2;
  request.cache = &cache;
  request.record_wall_time = false;
  request.failed.gpus = {1};  // a100/node0/gpu1: node a100/node0 goes
  absl::StatusOr<driver::ReplanOutcome> out = driver::Replan(request);
  INFO(out.status().message());
  REQUIRE(out.ok());

  CHECK(Islands(out->surviving.cluster) == "a100:1,v100:1");
  CHECK(out->summary.num_gpus() == 4);
  CHECK(out->summary.planner() == "hapt");
  int64_t used = 0;
  for (const v1::Stage& s : out->replanned.plan.stages()) used += proto::MeshGpuCount(s.mesh());
  CHECK(used <= 4);
  proto::PlanInputs again = out->replanned;
  CHECK(proto::ValidatePlanInputs(again).ok());
  CHECK(proto::ValidatePlan(out->replanned.plan, out->surviving.cluster, out->replanned.model, "replanned").ok());

  CHECK(out->summary.samples_per_s() > 0);
  CHECK(out->summary.throughput_ratio() > 0);
  CHECK(out->summary.throughput_ratio() < 1);
  CHECK(out->summary.throughput_ratio() == Approx(out->report.samples_per_s() / out->fault_free_samples_per_s));
  CHECK(out->summary.replan_wall_s() == 0);  // record_wall_time false
  CHECK(out->profile.cache_hits > 0);
  CHECK_THAT(out->summary.plan_summary(), Catch::StartsWith("H-1F1B, mbs "));

  // Deterministic, and the same without the cache.
  request.cache = nullptr;
  absl::StatusOr<driver::ReplanOutcome> cold = driver::Replan(request);
  REQUIRE(cold.ok());
  CHECK(cold->replanned.plan.SerializeAsString() == out->replanned.plan.SerializeAsString());
  CHECK(cold->summary.SerializeAsString() == out->summary.SerializeAsString());
  CHECK(cold->profile.cache_hits == 0);
}

TEST_CASE("replan: the re-planned plan keeps the running plan's framework switches", "[replan]") {
  proto::PlanInputs in = HaptCase();
  in.plan.set_overlap_grad_reduce(true);
  in.plan.set_grad_bucket_bytes(64 << 20);
  in.plan.set_tp_comm_overlap(true);
  in.plan.set_tp_comm_overlap_aggregate(true);
  in.plan.mutable_tp_comm_overlap_config()->set_fc2_fprop_sm_margin(4);
  in.plan.set_blocking_p2p(true);
  // The planner prices the re-plan with the running plan's TP overlap settings.
  const absl::StatusOr<planner::PlanRequest> priced = driver::ReplanPlanRequest(in, planner::PlannerKind::kHapt, 2);
  REQUIRE(priced.ok());
  CHECK(priced->tp_comm_overlap_aggregate);
  CHECK(priced->tp_comm_overlap_config.fc2_fprop_sm_margin == 4);
  driver::ReplanRequest request;
  request.original = in;
  request.threads = 2;
  request.record_wall_time = false;
  request.failed.gpus = {1};
  absl::StatusOr<driver::ReplanOutcome> out = driver::Replan(request);
  INFO(out.status().message());
  REQUIRE(out.ok());
  const v1::Plan& p = out->replanned.plan;
  CHECK(p.overlap_grad_reduce());
  CHECK(p.grad_bucket_bytes() == 64u << 20);
  CHECK(p.tp_comm_overlap());
  CHECK(p.tp_comm_overlap_aggregate());
  CHECK(p.tp_comm_overlap_config().fc2_fprop_sm_margin() == 4);
  CHECK(p.blocking_p2p());
  CHECK_FALSE(p.zero3_prefetch());
}

// The running plan with what the re-plan decides cleared: what every re-plan of it must carry.
std::string CarriedFields(v1::Plan plan) {
  for (const char* name : {"name", "model", "model_path", "micro_batch_size", "schedule", "h1f1b_epsilon",
                           "virtual_stages", "stages", "prediction", "context_parallel", "cp_comm_type",
                           "virtual_stage_layers", "pipelines", "overlap_param_gather", "p2p_rendezvous"}) {
    plan.GetReflection()->ClearField(&plan, v1::Plan::descriptor()->FindFieldByName(name));
  }
  return plan.SerializeAsString();
}

TEST_CASE("replan: every plan-wide field the re-plan does not decide is the running plan's", "[replan]") {
  proto::PlanInputs in = HaptCase();
  in.plan.set_schedule(v1::ONE_F_ONE_B);
  in.plan.set_p2p_rendezvous(true);
  in.plan.set_fp32_logits_cross_entropy(true);
  in.plan.set_pipeline_sends_attention_mask(true);
  in.plan.set_boundary_grads_whole(true);
  in.plan.set_deepspeed_fp16_optimizer(true);
  in.plan.set_tied_embedding_grad_sync(true);
  in.plan.set_synchronized_tp_collectives(true);
  REQUIRE(proto::ValidatePlanInputs(in).ok());
  // The planner prices the re-plan with every cost-model switch of the running plan.
  const absl::StatusOr<planner::PlanRequest> priced = driver::ReplanPlanRequest(in, planner::PlannerKind::kHapt, 2);
  REQUIRE(priced.ok());
  CHECK(priced->fp32_logits_cross_entropy);
  CHECK(priced->deepspeed_fp16_optimizer);
  CHECK(priced->synchronized_tp_collectives);

  driver::ReplanRequest request;
  request.original = in;
  request.threads = 2;
  request.record_wall_time = false;
  request.failed.gpus = {1};
  for (const planner::PlannerKind kind : {planner::PlannerKind::kMegatron, planner::PlannerKind::kHapt}) {
    request.planner = kind;
    absl::StatusOr<driver::ReplanOutcome> out = driver::Replan(request);
    INFO(planner::PlannerName(kind) << ": " << out.status().message());
    REQUIRE(out.ok());
    const v1::Plan& p = out->replanned.plan;
    CHECK(CarriedFields(p) == CarriedFields(in.plan));
    CHECK(p.fp32_logits_cross_entropy());
    CHECK(p.synchronized_tp_collectives());
    CHECK_FALSE(p.has_prediction());
    // DeepSpeed's rendezvous stays while the re-plan's schedule is its 1F1B: Megatron's planner's is.
    bool implicit_warmups = true;
    for (const v1::Stage& s : p.stages()) implicit_warmups = implicit_warmups && s.warmup_forwards() == 0;
    CHECK(p.p2p_rendezvous() == (p.schedule() == v1::ONE_F_ONE_B && implicit_warmups && p.pipelines_size() == 0));
    if (kind == planner::PlannerKind::kMegatron) CHECK(p.p2p_rendezvous());
  }
}

TEST_CASE("run --replan: a failed node's re-plan lands in the report", "[replan][cli]") {
  const proto::PlanInputs in = HaptCase();
  v1::Faults faults;
  v1::Fault* f = faults.add_faults();
  f->set_kind(v1::FAIL);
  f->mutable_node()->set_island("a100");
  f->mutable_node()->set_node(1);
  f->set_at_ms(100);
  driver::RunReplanOptions options;
  options.record_wall_time = false;
  v1::Report report;
  const absl::Status s = driver::AddReplan(in, faults, options, &report);
  INFO(s.message());
  REQUIRE(s.ok());
  CHECK(report.replan().planner() == "hapt");
  CHECK(report.replan().num_gpus() == 4);
  CHECK(report.replan().throughput_ratio() > 0);
  CHECK(report.replan().throughput_ratio() < 1);
  CHECK(report.replan().replan_wall_s() == 0);
  const std::string text = driver::FormatReplan(report.replan());
  CHECK_THAT(text, Catch::StartsWith("re-planned (hapt) on the 4 GPUs left: H-1F1B, mbs ") &&
                       Catch::Contains("% of the fault-free throughput"));

  v1::Report again;
  REQUIRE(driver::AddReplan(in, faults, options, &again).ok());
  CHECK(again.SerializeAsString() == report.SerializeAsString());

  options.planner = "megatron";
  v1::Report megatron;
  REQUIRE(driver::AddReplan(in, faults, options, &megatron).ok());
  CHECK(megatron.replan().planner() == "megatron");
}

TEST_CASE("run --replan: refused without a FAIL fault or with an unknown planner", "[replan][cli]") {
  const proto::PlanInputs in = HaptCase();
  v1::Faults faults;
  v1::Fault* slow = faults.add_faults();
  slow->set_kind(v1::SLOW);
  slow->set_gpu(0);
  slow->set_factor(2);
  v1::Report report;
  absl::Status s = driver::AddReplan(in, faults, {}, &report);
  CHECK(s.code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(s.message()), Catch::Contains("no FAIL fault"));

  slow->set_kind(v1::FAIL);
  driver::RunReplanOptions options;
  options.planner = "oracle";
  s = driver::AddReplan(in, faults, options, &report);
  CHECK(s.code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(s.message()), Catch::Contains("--replan: --planner: \"oracle\""));
  CHECK_FALSE(report.has_replan());
}

TEST_CASE("run --replan: the command re-plans after --fault and writes Report.replan", "[replan][cli]") {
  const std::string dir = SweepFolder("replan");
  const std::string run = absl::StrCat("run ", dir, "/plan-hapt-case.pbtxt --cluster ", dir,
                                       "/cluster-hapt-case.pbtxt --fault 'gpu: 1 kind: FAIL at_ms: 100' ");
  REQUIRE(Hetsim(dir, absl::StrCat(run, "--replan --no-wall-time --report ", dir, "/a.json")).exit_code == 0);
  CHECK_THAT(ReadFile(dir + "/stdout.txt"), Catch::Contains("re-planned (hapt) on the 4 GPUs left: H-1F1B"));
  REQUIRE(Hetsim(dir, absl::StrCat(run, "--replan hapt --no-wall-time -q --report ", dir, "/b.json")).exit_code == 0);
  const std::string a = ReadFile(dir + "/a.json");
  CHECK(a == ReadFile(dir + "/b.json"));  // deterministic, and PLANNER given or not
  CHECK_THAT(a, Catch::Contains("\"replan\": {") && Catch::Contains("\"planner\": \"hapt\"") &&
                    Catch::Contains("\"num_gpus\": 4") && !Catch::Contains("replan_wall_s"));
  REQUIRE(Hetsim(dir, absl::StrCat(run, "--replan=megatron -q --report ", dir, "/m.json")).exit_code == 0);
  CHECK_THAT(ReadFile(dir + "/m.json"), Catch::Contains("\"planner\": \"megatron\""));

  const Ran none = Hetsim(dir, absl::StrCat("run ", dir, "/plan-hapt-case.pbtxt --cluster ", dir,
                                            "/cluster-hapt-case.pbtxt --replan --report ", dir, "/never.json"));
  CHECK(none.exit_code == 2);
  CHECK_THAT(none.err, Catch::Contains("--replan: no FAIL fault"));
  CHECK_FALSE(std::filesystem::exists(dir + "/never.json"));
}

}  // namespace
}  // namespace hetsim::testing
