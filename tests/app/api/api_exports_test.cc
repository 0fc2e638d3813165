// The exports as calls of the API's table (app/api/api.h): each is a row the Python package binds, and
// gives what its service gives; refusals are the service's InvalidArgument.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "app/api/api.h"
#include "proto/inputs.h"
#include "service/interop/megatron_export.h"
#include "service/interop/nemo_export.h"

namespace hetsim::api {
namespace {

const std::string kApiSource = HETSIM_SOURCE_DIR;

Input PathInput(const std::string& name, const std::string& path) {
  return {.name = name, .path = path, .bytes = {}, .is_path = true, .message_type = {}};
}

// `name`'s defaults with plan and cluster set to the bundled example files.
std::vector<Value> PlanAndCluster(const Call& call, const std::string& plan, const std::string& cluster) {
  std::vector<Value> values = DefaultArguments(call);
  values[0] = PathInput("plan", kApiSource + "/examples/" + plan);
  values[1] = PathInput("cluster", kApiSource + "/examples/" + cluster);
  return values;
}

}  // namespace

TEST_CASE("api: every export is a call of the table taking plan and cluster and returning text", "[api]") {
  for (const char* name :
       {"export_megatron", "export_deepspeed", "export_torchtitan", "export_nemo", "export_chakra"}) {
    INFO(name);
    const Call* call = FindCall(name);
    REQUIRE(call != nullptr);
    CHECK(call->result.empty());
    REQUIRE(call->params.size() >= 2);
    CHECK(call->params[0].name == "plan");
    CHECK(call->params[0].kind == Kind::kInput);
    CHECK(call->params[1].name == "cluster");
  }
  CHECK(FindCall("export_nemo")->params.back().kind == Kind::kOptionalInput);  // model, as --model
}

TEST_CASE("api: export_nemo and export_megatron give their services' text, export_deepspeed the command's", "[api]") {
  const std::string plan = kApiSource + "/examples/plan-megatron-39b.pbtxt";
  const std::string cluster = kApiSource + "/examples/cluster-a100-512.pbtxt";
  absl::StatusOr<proto::PlanInputs> in = proto::LoadPlanInputs(plan, cluster);
  REQUIRE(in.ok());
  const Call& nemo = *FindCall("export_nemo");
  absl::StatusOr<std::string> yaml =
      Invoke(nemo, PlanAndCluster(nemo, "plan-megatron-39b.pbtxt", "cluster-a100-512.pbtxt"));
  REQUIRE(yaml.ok());
  absl::StatusOr<interop::NemoExport> direct = interop::ExportNemo(*in);
  REQUIRE(direct.ok());
  CHECK(*yaml == direct->yaml);
  const Call& megatron = *FindCall("export_megatron");
  absl::StatusOr<std::string> line =
      Invoke(megatron, PlanAndCluster(megatron, "plan-megatron-39b.pbtxt", "cluster-a100-512.pbtxt"));
  REQUIRE(line.ok());
  CHECK(*line == interop::ExportMegatron(*in)->launch_line);
  const Call& deepspeed = *FindCall("export_deepspeed");
  absl::StatusOr<std::string> printed =
      Invoke(deepspeed, PlanAndCluster(deepspeed, "plan-megatron-39b.pbtxt", "cluster-a100-512.pbtxt"));
  REQUIRE(printed.ok());
  CHECK_THAT(*printed, Catch::StartsWith("ds_config.json:\n{"));
  CHECK_THAT(*printed, Catch::Contains("--deepspeed --deepspeed_config ds_config.json"));
}

TEST_CASE("api: the exports' refusals are their services' InvalidArgument", "[api]") {
  const Call& torchtitan = *FindCall("export_torchtitan");
  absl::StatusOr<std::string> refused =
      Invoke(torchtitan, PlanAndCluster(torchtitan, "plan-megatron-39b.pbtxt", "cluster-a100-512.pbtxt"));
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(refused.status().message()), Catch::Contains("not one of torchtitan's llama flavors"));
  const Call& nemo = *FindCall("export_nemo");
  std::vector<Value> values = PlanAndCluster(nemo, "plan-llama3-405b.pbtxt", "cluster-16k-h100.pbtxt");
  values.back() = PathInput("model", kApiSource + "/examples/model-gpt39b.pbtxt");
  refused = Invoke(nemo, values);
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(std::string(refused.status().message()),
             Catch::Contains("model: the plan names its model (--model is for a plan without one)"));
  values = PlanAndCluster(nemo, "plan-lab-pipelines.pbtxt", "cluster-lab-pcie.pbtxt");
  refused = Invoke(nemo, values);
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(std::string(refused.status().message()), Catch::Contains("export nemo takes a plan of one pipeline"));
}

}  // namespace hetsim::api
