// `hetsim check`'s summary of a plan of pipelines under ZeRO (proto/summary.h): what each layer range
// shards and gathers, from the plan's one zero_stage.
#include <catch2/catch.hpp>

#include <string>

#include "google/protobuf/text_format.h"
#include "proto/inputs.h"
#include "proto/summary.h"

namespace {

// Two pipelines of the HAPT case's 6 layers (3 + 3 on the A100s, 6 on the V100s), every stage at `zero`.
hetsim::proto::PlanInputs PipelinesAtZero(int zero) {
  hetsim::proto::PlanInputs in;
  const std::string stage = " zero_stage: " + std::to_string(zero) + " }";
  REQUIRE(google::protobuf::TextFormat::ParseFromString(
      "name: \"pipelines\" global_batch_size: 32 micro_batch_size: 2 schedule: ONE_F_ONE_B "
      "pipelines { name: \"a100\" batch_share: 16 "
      "  stages { num_layers: 3 mesh { island: \"a100\" node_count: 1 gpus_per_node: 2 } tensor_parallel: 2" +
          stage +
          "  stages { first_layer: 3 num_layers: 3 mesh { island: \"a100\" first_node: 1 node_count: 1 gpus_per_node: "
          "2 } tensor_parallel: 2" +
          stage +
          "} pipelines { name: \"v100\" batch_share: 16 "
          "  stages { num_layers: 6 mesh { island: \"v100\" node_count: 1 gpus_per_node: 2 } tensor_parallel: 2" +
          stage + "}",
      &in.plan));
  in.plan_path = "p.pbtxt";
  in.microbatches = 16;
  return in;
}

TEST_CASE("check's summary of a plan of pipelines says what each layer range shards under ZeRO", "[summary]") {
  CHECK(hetsim::proto::SummarizePlan(PipelinesAtZero(0)).find("per layer range") == std::string::npos);
  const std::string three = hetsim::proto::SummarizePlan(PipelinesAtZero(3));
  CHECK(three.find("  ZeRO-3 per layer range: parameters, gradients and optimizer states shard over every GPU that "
                   "holds the range; each pass gathers its layers' parameters over them") != std::string::npos);
  const std::string two = hetsim::proto::SummarizePlan(PipelinesAtZero(2));
  CHECK(two.find("  ZeRO-2 per layer range: optimizer states and gradients shard over every GPU that holds the "
                 "range; the gradients reduce-scatter, the parameters all-gather after the steps") !=
        std::string::npos);
  const std::string one = hetsim::proto::SummarizePlan(PipelinesAtZero(1));
  CHECK(one.find("  ZeRO-1 per layer range: optimizer states shard over") != std::string::npos);
}

}  // namespace

TEST_CASE("check's summary names a DPO reference model and where its weights live", "[summary]") {
  hetsim::proto::PlanInputs in;
  REQUIRE(google::protobuf::TextFormat::ParseFromString(
      "name: \"dpo\" global_batch_size: 16 micro_batch_size: 2 schedule: ONE_F_ONE_B "
      "stages { num_layers: 6 mesh { island: \"a100\" node_count: 1 gpus_per_node: 2 } tensor_parallel: 2 }",
      &in.plan));
  in.plan_path = "p.pbtxt";
  in.microbatches = 8;
  CHECK(hetsim::proto::SummarizePlan(in).find("DPO reference model") == std::string::npos);
  in.plan.mutable_reference_policy()->set_cpu_weight_swap(true);
  CHECK(hetsim::proto::SummarizePlan(in).find("its weights swapped in from host memory each step") !=
        std::string::npos);
  in.plan.mutable_reference_policy()->set_cpu_weight_swap(false);
  CHECK(hetsim::proto::SummarizePlan(in).find("DPO reference model: its forward once more a microbatch, its weights "
                                              "on the GPU") != std::string::npos);
}
