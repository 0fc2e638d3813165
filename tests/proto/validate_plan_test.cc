// proto/validate_plan: one test per rule, on the bundled 512-GPU and HAPT case-study plans.
#include <catch2/catch.hpp>

#include "proto/validate_plan.h"
#include "tests/proto/validate_test_util.h"

namespace hetsim::testing {
namespace {

using v1::Model;
using v1::Plan;

Plan BigPlan() { return Example<Plan>("plan-512gpu"); }
Plan HaptPlan() { return Example<Plan>("plan-hapt-case"); }

absl::Status CheckBig(const Plan& p, const Model& m = Example<Model>("model-gpt39b")) {
  return hetsim::proto::ValidatePlan(p, ResolvedCluster("cluster-512gpu"), m, "plan.pbtxt");
}
absl::Status CheckHapt(const Plan& p) {
  return hetsim::proto::ValidatePlan(p, ResolvedCluster("cluster-hapt-case"), p.model(), "plan.pbtxt");
}

}  // namespace

TEST_CASE("bundled plans are valid", "[validate]") {
  CHECK(CheckBig(BigPlan()).ok());
  CHECK(CheckHapt(HaptPlan()).ok());
  CHECK(hetsim::proto::MicrobatchCount(BigPlan()) == 128);
  CHECK(hetsim::proto::MicrobatchCount(HaptPlan()) == 128);
}

TEST_CASE("plan: a model source is required", "[validate]") {
  Plan p = BigPlan();
  p.clear_model_path();
  CHECK_PROBLEM(CheckBig(p), "plan.pbtxt: model: required: a model or a model_path");
}

TEST_CASE("plan: batch sizes are required and the micro-batch divides the global batch", "[validate]") {
  Plan p = BigPlan();
  p.set_global_batch_size(0);
  p.set_micro_batch_size(0);
  CHECK_PROBLEM(CheckBig(p), "plan.pbtxt: global_batch_size: required");
  CHECK_PROBLEM(CheckBig(p), "plan.pbtxt: micro_batch_size: required");
  p = BigPlan();
  p.set_global_batch_size(1004);
  CHECK_PROBLEM(CheckBig(p), "plan.pbtxt: micro_batch_size: 8 does not divide global_batch_size 1004");
}

TEST_CASE("plan: at most a million microbatches", "[validate]") {
  Plan p = HaptPlan();
  p.set_global_batch_size(2'000'000);
  CHECK_PROBLEM(CheckHapt(p), "plan.pbtxt: micro_batch_size: 2000000 microbatches per iteration, more than 1000000");
}

TEST_CASE("plan: a schedule is required", "[validate]") {
  Plan p = BigPlan();
  p.clear_schedule();
  CHECK_PROBLEM(CheckBig(p), "plan.pbtxt: schedule: required (GPIPE, ONE_F_ONE_B");
}

TEST_CASE("plan: epsilon is above 0 and at most 0.5", "[validate]") {
  Plan p = BigPlan();
  p.set_h1f1b_epsilon(0.7);
  CHECK_PROBLEM(CheckBig(p), "plan.pbtxt: h1f1b_epsilon: 0.7 is outside (0, 0.5]");
  p.set_h1f1b_epsilon(-0.1);
  CHECK_PROBLEM(CheckBig(p), "plan.pbtxt: h1f1b_epsilon: -0.1 is outside (0, 0.5]");
  p.set_h1f1b_epsilon(0.5);
  CHECK(CheckBig(p).ok());
}

TEST_CASE("plan: virtual stages need the interleaved schedule and divide each stage's layers", "[validate]") {
  Plan p = BigPlan();
  p.set_virtual_stages(3);
  CHECK_PROBLEM(CheckBig(p), "plan.pbtxt: virtual_stages: 3 needs schedule INTERLEAVED_1F1B");
  p.set_schedule(hetsim::v1::INTERLEAVED_1F1B);
  CHECK_PROBLEM(CheckBig(p), "plan.pbtxt: stages[4].num_layers: 10 is not divisible by virtual_stages 3");
}

TEST_CASE("plan: stages are required", "[validate]") {
  Plan p = BigPlan();
  p.clear_stages();
  CHECK_PROBLEM(CheckBig(p), "plan.pbtxt: stages: required");
}

TEST_CASE("plan: the first stage starts at layer 0", "[validate]") {
  Plan p = BigPlan();
  p.mutable_stages(0)->set_first_layer(1);
  CHECK_PROBLEM(CheckBig(p), "plan.pbtxt: stages[0].first_layer: 1, but the first stage must start at layer 0");
}

TEST_CASE("plan: stages cover the layers once and in order", "[validate]") {
  Plan p = BigPlan();
  p.mutable_stages(2)->set_first_layer(7);  // overlaps stages[1] (3..5 ends at 6)
  CHECK_PROBLEM(CheckBig(p), "plan.pbtxt: stages[2].first_layer: 7, but stages[1] ends at layer 6");
  p = BigPlan();
  p.mutable_stages(3)->set_num_layers(0);
  CHECK_PROBLEM(CheckBig(p), "plan.pbtxt: stages[3].num_layers: required");
}

TEST_CASE("plan: stages neither run past nor stop short of the model's layers", "[validate]") {
  Plan p = BigPlan();
  p.mutable_stages(7)->set_num_layers(10);
  CHECK_PROBLEM(CheckBig(p),
                "plan.pbtxt: stages[7].num_layers: 10 layers from layer 41 end at 51, past the model's 50 layers");
  p.mutable_stages(7)->set_num_layers(8);
  CHECK_PROBLEM(CheckBig(p),
                "plan.pbtxt: stages[7].num_layers: the last stage ends at layer 49, but the model has 50 layers");
}

TEST_CASE("plan: a mesh names a known island", "[validate]") {
  Plan p = BigPlan();
  p.mutable_stages(1)->mutable_mesh()->set_island("b200");
  CHECK_PROBLEM(CheckBig(p), "plan.pbtxt: stages[1].mesh.island: unknown island \"b200\"");
  p.mutable_stages(1)->mutable_mesh()->clear_island();
  CHECK_PROBLEM(CheckBig(p), "plan.pbtxt: stages[1].mesh.island: required");
}

TEST_CASE("plan: a mesh lies inside its island", "[validate]") {
  Plan p = HaptPlan();
  p.mutable_stages(2)->mutable_mesh()->set_first_node(7);
  CHECK_PROBLEM(CheckHapt(p), "plan.pbtxt: stages[2].mesh.first_node: 7 is outside island \"a100\" (2 nodes)");
  p = HaptPlan();
  p.mutable_stages(2)->mutable_mesh()->set_node_count(2);
  CHECK_PROBLEM(CheckHapt(p),
                "plan.pbtxt: stages[2].mesh.node_count: nodes 1..2 are outside island \"a100\" (2 nodes)");
  p = HaptPlan();
  p.mutable_stages(0)->mutable_mesh()->set_first_gpu(1);
  CHECK_PROBLEM(CheckHapt(p), "plan.pbtxt: stages[0].mesh.gpus_per_node: GPUs 1..2 are outside the 2 GPUs of a node");
  p.mutable_stages(0)->mutable_mesh()->set_first_gpu(2);
  CHECK_PROBLEM(CheckHapt(p), "plan.pbtxt: stages[0].mesh.first_gpu: 2 is outside the 2 GPUs of a node");
}

TEST_CASE("plan: no GPU is in two stages", "[validate]") {
  Plan p = BigPlan();
  p.mutable_stages(5)->mutable_mesh()->set_first_node(4);
  CHECK_PROBLEM(CheckBig(p), "plan.pbtxt: stages[5].mesh: shares GPUs of island \"h100\" with stages[4]");
  // Same nodes, disjoint GPUs: fine.
  Plan h = HaptPlan();
  h.mutable_stages(2)->mutable_mesh()->set_first_node(0);
  CHECK_PROBLEM(CheckHapt(h), "stages[2].mesh: shares GPUs of island \"a100\" with stages[1]");
  h.mutable_stages(1)->mutable_mesh()->set_gpus_per_node(1);
  h.mutable_stages(1)->set_tensor_parallel(1);
  h.mutable_stages(2)->mutable_mesh()->set_first_gpu(1);
  h.mutable_stages(2)->mutable_mesh()->set_gpus_per_node(1);
  h.mutable_stages(2)->set_tensor_parallel(1);
  CHECK(CheckHapt(h).ok());
}

TEST_CASE("plan: a TP group is part of a node or whole nodes", "[validate]") {
  Plan p = BigPlan();
  p.mutable_stages(0)->mutable_mesh()->set_gpus_per_node(3);
  p.mutable_stages(0)->set_data_parallel(16);
  CHECK_PROBLEM(
      CheckBig(p),
      "plan.pbtxt: stages[0].tensor_parallel: 8 neither divides nor is a multiple of the mesh's gpus_per_node 3");
}

TEST_CASE("plan: TP x DP equals the mesh's GPU count", "[validate]") {
  Plan p = BigPlan();
  p.mutable_stages(6)->set_data_parallel(4);
  CHECK_PROBLEM(
      CheckBig(p),
      "plan.pbtxt: stages[6].data_parallel: tensor_parallel 8 x data_parallel 4 = 32, but the mesh has 64 GPUs");
}

TEST_CASE("plan: TP divides the attention and KV heads", "[validate]") {
  Plan p = HaptPlan();
  p.mutable_model()->mutable_transformer()->set_num_attention_heads(8);
  p.mutable_model()->mutable_transformer()->set_num_kv_heads(1);
  CHECK_PROBLEM(CheckHapt(p), "plan.pbtxt: stages[0].tensor_parallel: 2 does not divide num_kv_heads 1");
  Model m = Example<Model>("model-gpt39b");
  m.mutable_transformer()->set_num_attention_heads(4);
  m.mutable_transformer()->set_hidden_size(8192);
  CHECK_PROBLEM(CheckBig(BigPlan(), m),
                "plan.pbtxt: stages[0].tensor_parallel: 8 does not divide num_attention_heads 4");
}

TEST_CASE("plan: TP divides the FFN, as the cost model requires (base/spec/stage_rules.h)", "[validate]") {
  // Before the stage rules had one home only the cost model checked this, under its own message.
  Model m = Example<Model>("model-gpt39b");
  m.mutable_transformer()->set_ffn_hidden_size(8 * 1000 + 4);
  CHECK_PROBLEM(CheckBig(BigPlan(), m),
                "plan.pbtxt: stages[0].tensor_parallel: 8 does not divide ffn_hidden_size 8004");
}

TEST_CASE("plan: every stage's DP divides the micro-batch", "[validate]") {
  Plan p = BigPlan();
  p.set_micro_batch_size(4);
  CHECK_PROBLEM(CheckBig(p), "plan.pbtxt: stages[0].data_parallel: 8 does not divide micro_batch_size 4");
}

TEST_CASE("plan: expert parallelism needs experts and divides them and DP", "[validate]") {
  Plan p = BigPlan();
  p.mutable_stages(0)->set_expert_parallel(2);
  CHECK_PROBLEM(CheckBig(p), "plan.pbtxt: stages[0].expert_parallel: 2 needs a mixture-of-experts model");
  Model moe = Example<Model>("model-gpt39b");
  moe.mutable_transformer()->set_num_experts(6);
  moe.mutable_transformer()->set_moe_top_k(2);
  p.mutable_stages(0)->set_expert_parallel(4);
  CHECK_PROBLEM(CheckBig(p, moe), "plan.pbtxt: stages[0].expert_parallel: 4 does not divide num_experts 6");
  moe.mutable_transformer()->set_num_experts(16);
  p.mutable_stages(0)->set_expert_parallel(16);
  CHECK_PROBLEM(CheckBig(p, moe),
                "plan.pbtxt: stages[0].expert_parallel: 16 x expert_tensor_parallel 8 does not "
                "divide the stage's tensor_parallel x context_parallel x data_parallel 64 GPUs");
  // MoE parallel folding: one expert per GPU over TP 8 x DP 8 with expert_tensor_parallel 1; an MoE
  // model with TP 8 needs sequence parallelism on every stage (Megatron's MoE layer refuses TP without).
  moe.mutable_transformer()->set_num_experts(64);
  p.mutable_stages(0)->set_expert_parallel(64);
  p.mutable_stages(0)->set_expert_tensor_parallel(1);
  CHECK_PROBLEM(CheckBig(p, moe),
                "plan.pbtxt: stages[0].sequence_parallel: an MoE model with tensor_parallel 8 needs it");
  for (hetsim::v1::Stage& s : *p.mutable_stages()) s.set_sequence_parallel(true);
  CHECK(CheckBig(p, moe).ok());
}

TEST_CASE("plan: ZeRO stage is 0..3, sequence parallelism needs TP", "[validate]") {
  Plan p = HaptPlan();
  p.mutable_stages(1)->set_zero_stage(4);
  CHECK_PROBLEM(CheckHapt(p), "plan.pbtxt: stages[1].zero_stage: 4 is outside [0, 3]");
  p = HaptPlan();
  p.mutable_stages(1)->set_tensor_parallel(1);
  p.mutable_stages(1)->set_data_parallel(2);
  p.mutable_stages(1)->set_sequence_parallel(true);
  p.set_micro_batch_size(2);
  CHECK_PROBLEM(CheckHapt(p), "plan.pbtxt: stages[1].sequence_parallel: needs tensor_parallel > 1");
}

TEST_CASE("plan: measured times are finite and bounded", "[validate]") {
  Plan p = HaptPlan();
  p.mutable_stages(0)->set_measured_forward_ms(-1);
  p.mutable_stages(0)->set_measured_backward_ms(1e8);
  CHECK_PROBLEM(CheckHapt(p), "plan.pbtxt: stages[0].measured_forward_ms: -1 is outside [0, 1e+07]");
  CHECK_PROBLEM(CheckHapt(p), "plan.pbtxt: stages[0].measured_backward_ms: 1e+08 is outside [0, 1e+07]");
}

TEST_CASE("plan: explicit warm-up counts are all set or none, bounded and non-increasing", "[validate]") {
  Plan p = HaptPlan();
  p.mutable_stages(0)->set_warmup_forwards(3);
  CHECK_PROBLEM(CheckHapt(p), "plan.pbtxt: stages[1].warmup_forwards: 0, but other stages set theirs");
  p.mutable_stages(1)->set_warmup_forwards(4);
  p.mutable_stages(2)->set_warmup_forwards(1);
  CHECK_PROBLEM(CheckHapt(p),
                "plan.pbtxt: stages[1].warmup_forwards: 4 is more than stages[0]'s 3 (the pipeline would deadlock");
  p.mutable_stages(0)->set_warmup_forwards(500);
  p.mutable_stages(1)->set_warmup_forwards(2);
  CHECK_PROBLEM(CheckHapt(p), "plan.pbtxt: stages[0].warmup_forwards: 500 is more than the 128 microbatches");
  p.mutable_stages(0)->set_warmup_forwards(5);
  CHECK(CheckHapt(p).ok());
  p.set_schedule(hetsim::v1::GPIPE);
  CHECK_PROBLEM(CheckHapt(p), "plan.pbtxt: stages: warmup_forwards are set, but GPIPE runs every forward first");
}

TEST_CASE("plan: a stage's GPU needs a peak for the model's dtype", "[validate]") {
  Plan p = HaptPlan();
  p.mutable_model()->set_dtype(hetsim::v1::BF16);  // V100 has no BF16
  CHECK_PROBLEM(CheckHapt(p),
                "plan.pbtxt: stages[0].mesh.island: GPU type \"v100\" of island \"v100\" has no peak FLOP/s for the "
                "model's dtype BF16");
  p.mutable_stages(0)->set_measured_forward_ms(10);
  p.mutable_stages(0)->set_measured_backward_ms(20);
  CHECK(CheckHapt(p).ok());
}

TEST_CASE("plan: sizes that would overflow int64 bytes or picoseconds are rejected", "[validate]") {
  Plan p = HaptPlan();
  p.mutable_model()->mutable_transformer()->set_seq_length(10'000'000);
  p.set_micro_batch_size(1);
  CHECK_PROBLEM(CheckHapt(p), "plan.pbtxt: micro_batch_size: the activations of one block for one microbatch would be");
  p = HaptPlan();
  for (auto& s : *p.mutable_stages()) {
    s.set_measured_forward_ms(9e6);
    s.set_measured_backward_ms(9e6);
  }
  p.set_global_batch_size(1'000'000);
  CHECK_PROBLEM(CheckHapt(p), "plan.pbtxt: stages[0]: one iteration could last");
}

}  // namespace hetsim::testing
