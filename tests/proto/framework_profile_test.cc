// Plan.framework (issue 40): a framework's profile fills the behaviour fields a plan leaves off, a
// field the plan sets on wins, framework_off switches a profile's behaviour off, FRAMEWORK_UNSPECIFIED
// changes nothing; the report names the profile; the Megatron importer picks it from a line's clues.
#include <string>

#include <catch2/catch.hpp>

#include "base/spec/framework.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/util/message_differencer.h"
#include "proto/framework_profile.h"
#include "proto/inputs.h"
#include "proto/resolve.h"
#include "proto/validate_cluster.h"
#include "service/driver/simulate.h"
#include "service/interop/megatron_flags.h"
#include "service/interop/megatron_import.h"
#include "tests/proto/validate_test_util.h"
#include "traces/framework_report.h"
#include "traces/html/run_html.h"

namespace {

namespace v1 = hetsim::v1;
using hetsim::proto::ApplyFrameworkProfile;

// A 4-block model in `dtype` on one 8-GPU H100 node as `stages` stages of 8 / stages GPUs (TP 1, DP all).
hetsim::proto::PlanInputs ProfileInputs(v1::Framework framework, v1::DType dtype, int stages = 2) {
  hetsim::proto::PlanInputs in;
  in.plan_path = "plan.pbtxt";
  in.cluster_path = "cluster.pbtxt";
  REQUIRE(google::protobuf::TextFormat::ParseFromString(
      R"pb(name: "c"
           gpu_types { name: "h100" preset: "H100-SXM" }
           node_types {
             name: "n"
             gpu_type: "h100"
             gpus_per_node: 8
             intra_node_fabric: NVSWITCH
             intra_node_bandwidth_gbps: 2400
           }
           islands { name: "a" node_type: "n" node_count: 1 })pb",
      &in.cluster));
  auto* t = in.model.mutable_transformer();
  in.model.set_name("m");
  in.model.set_dtype(dtype);
  t->set_num_layers(4);
  t->set_hidden_size(1024);
  t->set_num_attention_heads(16);
  t->set_seq_length(1024);
  t->set_vocab_size(32000);
  v1::Plan& p = in.plan;
  p.set_name("p");
  *p.mutable_model() = in.model;
  p.set_global_batch_size(16);
  p.set_micro_batch_size(8 / stages);
  p.set_schedule(v1::ONE_F_ONE_B);
  p.set_framework(framework);
  const int layers = 6 / stages;  // embedding + 4 blocks + head
  for (int s = 0; s < stages; ++s) {
    v1::Stage& st = *p.add_stages();
    st.set_first_layer(s * layers);
    st.set_num_layers(layers);
    st.mutable_mesh()->set_island("a");
    st.mutable_mesh()->set_node_count(1);
    st.mutable_mesh()->set_first_gpu(s * (8 / stages));
    st.mutable_mesh()->set_gpus_per_node(8 / stages);
    st.set_data_parallel(8 / stages);
  }
  return in;
}

v1::Plan Applied(hetsim::proto::PlanInputs in) {
  const absl::Status s = hetsim::proto::ValidatePlanInputs(in);
  INFO(s.message());
  REQUIRE(s.ok());
  return in.plan;
}

}  // namespace

TEST_CASE("framework: no framework changes nothing", "[framework]") {
  const hetsim::proto::PlanInputs in = ProfileInputs(v1::FRAMEWORK_UNSPECIFIED, v1::BF16);
  CHECK(google::protobuf::util::MessageDifferencer::Equals(Applied(in), in.plan));
}

TEST_CASE("framework: check's summary names the behaviours a plan without a framework sets itself", "[framework]") {
  v1::Plan plan;
  CHECK(hetsim::proto::DescribeFramework(plan).empty());
  plan.set_zero3_lock_step(true);
  plan.set_overlap_grad_reduce(true);
  // In the profiles' order: overlap_grad_reduce is listed before zero3_lock_step.
  CHECK(hetsim::proto::DescribeFramework(plan) ==
        "  no framework; behaviours on by the plan's own fields: overlap_grad_reduce, zero3_lock_step\n");
}

TEST_CASE("framework: Megatron-LM 2021's profile blocks pipeline sends and reduces BF16 gradients in FP32",
          "[framework]") {
  const v1::Plan p = Applied(ProfileInputs(v1::MEGATRON_LM_2021, v1::BF16));
  CHECK(p.blocking_p2p());
  CHECK_FALSE(p.tp_backward_overlap());  // 2021's backward reduced synchronously
  CHECK(p.grad_reduce_in_fp32());        // Megatron's rule for BF16
  CHECK_FALSE(p.overlap_grad_reduce());
  CHECK_FALSE(p.zero3_prefetch());
  // FP16 models keep 16-bit gradient reduction: the FP32 rule is BF16's (FP8 runs are BF16 runs).
  CHECK_FALSE(Applied(ProfileInputs(v1::MEGATRON_LM_2021, v1::FP16)).grad_reduce_in_fp32());
  CHECK(Applied(ProfileInputs(v1::MEGATRON_CORE, v1::FP8)).grad_reduce_in_fp32());
  // The resolved spec carries the applied values and names the framework.
  const hetsim::spec::PlanSpec spec = hetsim::proto::ResolvePlan(p, "plan.pbtxt");
  CHECK(spec.framework == hetsim::spec::Framework::kMegatronLm2021);
  CHECK(spec.blocking_p2p);
  CHECK(spec.grad_reduce_in_fp32);
}

TEST_CASE("framework: Megatron-Core overlaps pipeline sends only in interleaved schedules", "[framework]") {
  const v1::Plan plain = Applied(ProfileInputs(v1::MEGATRON_CORE, v1::BF16));
  CHECK(plain.blocking_p2p());
  CHECK(plain.tp_backward_overlap());
  CHECK_FALSE(plain.overlap_grad_reduce());  // --overlap-grad-reduce is opt-in
  hetsim::proto::PlanInputs interleaved = ProfileInputs(v1::MEGATRON_CORE, v1::BF16, 1);
  interleaved.plan.set_schedule(v1::INTERLEAVED_1F1B);
  interleaved.plan.set_virtual_stages(2);
  interleaved.plan.mutable_stages(0)->set_num_layers(6);
  CHECK_FALSE(Applied(interleaved).blocking_p2p());
}

TEST_CASE("framework: FSDP2 reduce-scatters per block in FP32 and prefetches only where parameters are sharded",
          "[framework]") {
  hetsim::proto::PlanInputs in = ProfileInputs(v1::FSDP2_TORCHTITAN, v1::FP16, 1);
  const v1::Plan unsharded = Applied(in);
  CHECK(unsharded.overlap_grad_reduce());
  CHECK(unsharded.grad_reduce_in_fp32());   // reduce_dtype float32 whatever the parameters' type
  CHECK_FALSE(unsharded.zero3_prefetch());  // nothing to gather without ZeRO-3
  CHECK_FALSE(unsharded.blocking_p2p());
  in.plan.mutable_stages(0)->set_zero_stage(3);
  CHECK(Applied(in).zero3_prefetch());
}

TEST_CASE("framework: DeepSpeed's pipeline engine all-reduces a tied embedding across its first and last stage",
          "[framework]") {
  hetsim::proto::PlanInputs in = ProfileInputs(v1::MEGATRON_DEEPSPEED, v1::FP16);
  CHECK_FALSE(Applied(in).tied_embedding_grad_sync());  // untied: nothing to synchronise
  in.model.mutable_transformer()->set_tied_embeddings(true);
  *in.plan.mutable_model() = in.model;
  CHECK(Applied(in).tied_embedding_grad_sync());
  CHECK_FALSE(Applied(ProfileInputs(v1::MEGATRON_CORE, v1::FP16)).tied_embedding_grad_sync());
  hetsim::proto::PlanInputs one = ProfileInputs(v1::MEGATRON_DEEPSPEED, v1::FP16, 1);
  one.model.mutable_transformer()->set_tied_embeddings(true);
  *one.plan.mutable_model() = one.model;
  CHECK_FALSE(Applied(one).tied_embedding_grad_sync());  // embedding and head on one stage
  // Set by hand where it cannot act, it is refused, naming the field.
  one.plan.set_tied_embedding_grad_sync(true);
  const absl::Status s = hetsim::proto::ValidatePlanInputs(one);
  CHECK_THAT(std::string(s.message()), Catch::Contains("plan.pbtxt: tied_embedding_grad_sync: needs a model with "
                                                       "tied_embeddings on more than one stage"));
}

// ProfileInputs' model (tied) as a plan of pipelines: "cut" of two stages (GPUs 0 and 1) beside "whole",
// one stage on GPU 2; 8 samples each in micro-batches of 1.
hetsim::proto::PlanInputs TiedPipelinesInputs(int cut_stages) {
  hetsim::proto::PlanInputs in = ProfileInputs(v1::MEGATRON_DEEPSPEED, v1::FP16, 1);
  in.model.mutable_transformer()->set_tied_embeddings(true);
  v1::Plan& p = in.plan;
  *p.mutable_model() = in.model;
  p.clear_stages();
  p.set_micro_batch_size(1);
  for (const int stages : {cut_stages, 1}) {
    v1::Pipeline& pl = *p.add_pipelines();
    pl.set_name(p.pipelines_size() == 1 ? "cut" : "whole");
    pl.set_batch_share(8);
    for (int s = 0; s < stages; ++s) {
      v1::Stage& st = *pl.add_stages();
      st.set_first_layer(s * 6 / stages);
      st.set_num_layers(6 / stages);
      st.mutable_mesh()->set_island("a");
      st.mutable_mesh()->set_node_count(1);
      st.mutable_mesh()->set_first_gpu(p.pipelines_size() == 1 ? s : 2);
      st.mutable_mesh()->set_gpus_per_node(1);
    }
  }
  return in;
}

TEST_CASE(
    "framework: FSDP2, DeepSpeed and Megatron-FSDP gather ZeRO-3's layers in lock-step, not in a plan of "
    "pipelines",
    "[framework][zero]") {
  for (const v1::Framework f : {v1::FSDP2_TORCHTITAN, v1::MEGATRON_DEEPSPEED, v1::MEGATRON_CORE}) {
    INFO(v1::Framework_Name(f));
    hetsim::proto::PlanInputs in = ProfileInputs(f, v1::FP16, 1);
    CHECK_FALSE(Applied(in).zero3_lock_step());  // nothing gathered without ZeRO-3
    in.plan.mutable_stages(0)->set_zero_stage(3);
    CHECK(Applied(in).zero3_lock_step());
  }
  for (const v1::Framework f : {v1::MEGATRON_LM_2021, v1::MEGATRON_LM_2022}) {
    hetsim::proto::PlanInputs in = ProfileInputs(f, v1::FP16, 1);
    in.plan.mutable_stages(0)->set_zero_stage(3);
    CHECK_FALSE(Applied(in).zero3_lock_step());
  }
  // A plan of pipelines at ZeRO-3: not modelled there, so the profile leaves it off (set by hand: refused).
  hetsim::proto::PlanInputs pipelines = TiedPipelinesInputs(2);
  for (v1::Pipeline& pl : *pipelines.plan.mutable_pipelines()) {
    for (v1::Stage& st : *pl.mutable_stages()) st.set_zero_stage(3);
  }
  CHECK_FALSE(Applied(pipelines).zero3_lock_step());
  pipelines.plan.set_zero3_lock_step(true);
  CHECK_THAT(std::string(hetsim::proto::ValidatePlanInputs(pipelines).message()),
             Catch::Contains("zero3_lock_step: not modelled with pipelines"));
}

TEST_CASE("framework: DeepSpeed leaves gradient accumulation to autograd without ZeRO-2/3, for FP16 and FP32 models",
          "[framework][zero]") {
  // Megatron-DeepSpeed's linears hand their weight gradients to autograd, and DeepSpeed's ZeRO-0/1 registers
  // no gradient hooks: AccumulateGrad adds each microbatch's into `.grad`.
  for (const v1::DType dtype : {v1::FP16, v1::FP32, v1::TF32}) {
    INFO(v1::DType_Name(dtype));
    hetsim::proto::PlanInputs in = ProfileInputs(v1::MEGATRON_DEEPSPEED, dtype);
    CHECK(Applied(in).autograd_grad_accumulation());
    in.plan.mutable_stages(1)->set_zero_stage(1);
    CHECK(Applied(in).autograd_grad_accumulation());
    // ZeRO-2's and ZeRO-3's hooks take each gradient out of `.grad` as it is made.
    for (const int zero : {2, 3}) {
      in.plan.mutable_stages(1)->set_zero_stage(zero);
      CHECK_FALSE(Applied(in).autograd_grad_accumulation());
    }
  }
  // A BF16 model without ZeRO runs DeepSpeed's BF16_Optimizer, which clears `.grad` before each backward.
  CHECK_FALSE(Applied(ProfileInputs(v1::MEGATRON_DEEPSPEED, v1::BF16)).autograd_grad_accumulation());
  // Megatron's own DDP and FSDP2 take the gradients into buffers of their own.
  for (const v1::Framework f : {v1::MEGATRON_CORE, v1::MEGATRON_LM_2022, v1::MEGATRON_LM_2021, v1::FSDP2_TORCHTITAN}) {
    INFO(v1::Framework_Name(f));
    CHECK_FALSE(Applied(ProfileInputs(f, v1::FP16)).autograd_grad_accumulation());
  }
  // framework_off switches it off.
  hetsim::proto::PlanInputs off = ProfileInputs(v1::MEGATRON_DEEPSPEED, v1::FP16);
  off.plan.add_framework_off("autograd_grad_accumulation");
  CHECK_FALSE(Applied(off).autograd_grad_accumulation());
}

TEST_CASE("framework: DeepSpeed reduces a ZeRO-1/2 bucket once per data-parallel rank", "[framework][zero]") {
  // stage_1_and_2.py's average_tensor with reduce_scatter on (DeepSpeed's default): one dist.reduce per owner of
  // the bucket's slices, a ZeRO-1/2 behaviour whatever the model's type.
  for (const v1::DType dtype : {v1::FP16, v1::BF16}) {
    INFO(v1::DType_Name(dtype));
    hetsim::proto::PlanInputs in = ProfileInputs(v1::MEGATRON_DEEPSPEED, dtype);
    CHECK_FALSE(Applied(in).zero_reduce_per_rank());  // ZeRO-0: DeepSpeed's engine all-reduces
    for (const int zero : {1, 2}) {
      in.plan.mutable_stages(1)->set_zero_stage(zero);
      CHECK(Applied(in).zero_reduce_per_rank());
    }
    in.plan.mutable_stages(1)->set_zero_stage(3);  // ZeRO-3's reduce-scatter is another optimizer's
    CHECK_FALSE(Applied(in).zero_reduce_per_rank());
  }
  // Megatron's distributed optimizer and FSDP2 reduce-scatter each bucket in one call.
  for (const v1::Framework f : {v1::MEGATRON_CORE, v1::MEGATRON_LM_2022, v1::MEGATRON_LM_2021, v1::FSDP2_TORCHTITAN}) {
    INFO(v1::Framework_Name(f));
    hetsim::proto::PlanInputs in = ProfileInputs(f, v1::BF16);
    in.plan.mutable_stages(1)->set_zero_stage(1);
    CHECK_FALSE(Applied(in).zero_reduce_per_rank());
  }
  // A plan of pipelines at ZeRO-1: not modelled there, so the profile leaves it off.
  hetsim::proto::PlanInputs pipelines = TiedPipelinesInputs(2);
  for (v1::Pipeline& pl : *pipelines.plan.mutable_pipelines()) {
    for (v1::Stage& st : *pl.mutable_stages()) st.set_zero_stage(1);
  }
  CHECK_FALSE(Applied(pipelines).zero_reduce_per_rank());
  // framework_off switches it off (zero_optimization.reduce_scatter false).
  hetsim::proto::PlanInputs off = ProfileInputs(v1::MEGATRON_DEEPSPEED, v1::FP16);
  off.plan.mutable_stages(1)->set_zero_stage(1);
  off.plan.add_framework_off("zero_reduce_per_rank");
  CHECK_FALSE(Applied(off).zero_reduce_per_rank());
}

TEST_CASE(
    "framework: apex's LayerNorm backward (a weight-gradient pass of its own) on Megatron-DeepSpeed and Megatron-LM "
    "2021",
    "[framework]") {
  // Megatron-DeepSpeed's MixedFusedLayerNorm calls apex's FusedLayerNormAffineFunction, and Megatron-LM
  // 2021 builds the same kernels as its own fused_mix_prec_layer_norm_cuda, whatever the model's type.
  for (const v1::Framework f : {v1::MEGATRON_DEEPSPEED, v1::MEGATRON_LM_2021}) {
    for (const v1::DType dtype : {v1::FP16, v1::BF16, v1::FP32}) {
      INFO(v1::Framework_Name(f) << " " << v1::DType_Name(dtype));
      CHECK(Applied(ProfileInputs(f, dtype)).layer_norm_weight_grad_pass());
    }
  }
  // Megatron-LM 2022's persistent kernel and Transformer Engine's compute both gradients in one backward
  // kernel; torchtitan's RMSNorm is eager ops.
  for (const v1::Framework f : {v1::MEGATRON_CORE, v1::MEGATRON_LM_2022, v1::FSDP2_TORCHTITAN}) {
    INFO(v1::Framework_Name(f));
    CHECK_FALSE(Applied(ProfileInputs(f, v1::BF16)).layer_norm_weight_grad_pass());
  }
  hetsim::proto::PlanInputs off = ProfileInputs(v1::MEGATRON_DEEPSPEED, v1::FP16);
  off.plan.add_framework_off("layer_norm_weight_grad_pass");
  CHECK_FALSE(Applied(off).layer_norm_weight_grad_pass());
}

TEST_CASE("framework: DeepSpeed's tied all-reduce in a plan of pipelines, over every first and last stage",
          "[framework][pipelines]") {
  // DeepSpeed's pipeline engine all-reduces a tied module's gradients over the stages that hold it
  // (PipelineEngine._exec_reduce_tied_grads, allreduce_tied_weight_gradients): with a pipeline cut in
  // two, the embedding and the head's copies sit on different stages and the profile syncs them, over
  // every pipeline's first and last stage (the plan of pipelines' tied group).
  hetsim::proto::PlanInputs run = TiedPipelinesInputs(2);
  const absl::Status valid = hetsim::proto::ValidatePlanInputs(run);  // the profile applied, as `hetsim run`
  INFO(valid.message());
  REQUIRE(valid.ok());
  CHECK(run.plan.tied_embedding_grad_sync());
  auto sim = hetsim::driver::SimulatePlan(run);
  INFO(sim.status().message());
  REQUIRE(sim.ok());
  REQUIRE_FALSE(sim->pipeline_sync.groups.empty());
  const auto& tied = sim->pipeline_sync.groups.back();
  CHECK(tied.tied);
  REQUIRE(tied.holders.size() == 3);      // "cut"'s first and last stage, "whole"'s one
  CHECK(tied.bytes == 32000 * 1024 * 2);  // the V x h matrix's FP16 gradients
  // Every pipeline of one stage: each copy is one stage's, reduced with its range; nothing to tie.
  CHECK_FALSE(Applied(TiedPipelinesInputs(1)).tied_embedding_grad_sync());
  // With ZeRO-1/2 the tied matrix shards over its copies (since session 33): the profile syncs it too.
  hetsim::proto::PlanInputs zero = TiedPipelinesInputs(2);
  for (v1::Pipeline& pl : *zero.plan.mutable_pipelines()) {
    for (v1::Stage& st : *pl.mutable_stages()) st.set_zero_stage(1);
  }
  CHECK(Applied(zero).tied_embedding_grad_sync());
  // The report says who set it.
  bool seen = false;
  for (const auto& b : sim->report.framework_behaviours()) {
    if (b.field() != "tied_embedding_grad_sync") continue;
    seen = true;
    CHECK(b.on());
    CHECK(b.set_by() == "profile");
  }
  CHECK(seen);
}

TEST_CASE("framework: DeepSpeed's pipeline engine makes every transfer a rendezvous where its TrainSchedule runs",
          "[framework]") {
  // deepspeed/runtime/pipe/schedule.py: a 1F1B with its own warm-ups, one chunk a stage (Plan.p2p_rendezvous).
  CHECK(Applied(ProfileInputs(v1::MEGATRON_DEEPSPEED, v1::FP16)).p2p_rendezvous());
  CHECK(Applied(ProfileInputs(v1::MEGATRON_DEEPSPEED, v1::FP16, 1)).p2p_rendezvous());  // one stage: no transfer
  for (const v1::Framework other :
       {v1::MEGATRON_CORE, v1::MEGATRON_LM_2022, v1::MEGATRON_LM_2021, v1::FSDP2_TORCHTITAN}) {
    CHECK_FALSE(Applied(ProfileInputs(other, v1::BF16)).p2p_rendezvous());
  }
  // Where the plan does not follow DeepSpeed's schedule the profile leaves it off (set by hand it is refused).
  hetsim::proto::PlanInputs gpipe = ProfileInputs(v1::MEGATRON_DEEPSPEED, v1::FP16);
  gpipe.plan.set_schedule(v1::GPIPE);
  CHECK_FALSE(Applied(gpipe).p2p_rendezvous());
  hetsim::proto::PlanInputs warm = ProfileInputs(v1::MEGATRON_DEEPSPEED, v1::FP16);
  warm.plan.mutable_stages(0)->set_warmup_forwards(2);
  warm.plan.mutable_stages(1)->set_warmup_forwards(1);
  CHECK_FALSE(Applied(warm).p2p_rendezvous());
  // framework_off frees the transfers, as before the profile had it.
  hetsim::proto::PlanInputs off = ProfileInputs(v1::MEGATRON_DEEPSPEED, v1::FP16);
  off.plan.add_framework_off("p2p_rendezvous");
  CHECK_FALSE(Applied(off).p2p_rendezvous());
  // The report says the profile set it.
  const v1::Plan p = Applied(ProfileInputs(v1::MEGATRON_DEEPSPEED, v1::FP16));
  hetsim::spec::SimulationSpec spec;
  spec.plan = hetsim::proto::ResolvePlan(p, "plan.pbtxt");
  spec.model = hetsim::proto::ResolveModel(p.model(), "plan.pbtxt: model");
  v1::Report report;
  hetsim::traces::AddFrameworkProfile(spec, report);
  REQUIRE(report.framework_behaviours_size() == 22);
  const v1::FrameworkBehaviourReport& b = report.framework_behaviours(17);
  CHECK(b.field() == "p2p_rendezvous");
  CHECK(b.on());
  CHECK(b.set_by() == "profile");
  CHECK(b.source() == "https://github.com/microsoft/DeepSpeed/blob/master/deepspeed/runtime/pipe/schedule.py");
}

TEST_CASE("framework: Megatron-DeepSpeed's TP backward is synchronous, as --deepspeed switches the async one off",
          "[framework]") {
  // megatron/arguments.py (microsoft/Megatron-DeepSpeed, lines 394-399, and Sailor's fork): validate_args sets
  // async_tensor_model_parallel_allreduce = False whenever --deepspeed is given.
  const v1::Plan p = Applied(ProfileInputs(v1::MEGATRON_DEEPSPEED, v1::FP16));
  CHECK_FALSE(p.tp_backward_overlap());
  CHECK(Applied(ProfileInputs(v1::MEGATRON_CORE, v1::FP16)).tp_backward_overlap());  // Megatron's own default
  hetsim::spec::SimulationSpec spec;
  spec.plan = hetsim::proto::ResolvePlan(p, "plan.pbtxt");
  spec.model = hetsim::proto::ResolveModel(p.model(), "plan.pbtxt: model");
  v1::Report report;
  hetsim::traces::AddFrameworkProfile(spec, report);
  const v1::FrameworkBehaviourReport& b = report.framework_behaviours(1);
  CHECK(b.field() == "tp_backward_overlap");
  CHECK_FALSE(b.on());
  CHECK_THAT(b.source(), Catch::Contains("Megatron-DeepSpeed/blob/f4157bea69f3df8c6cb66f2ebcda66ba03d1288e/megatron/"
                                         "arguments.py#L394-L399"));
  // A plan that ran with the overlap sets the field itself and keeps it.
  hetsim::proto::PlanInputs on = ProfileInputs(v1::MEGATRON_DEEPSPEED, v1::FP16);
  on.plan.set_tp_backward_overlap(true);
  CHECK(Applied(on).tp_backward_overlap());
}

TEST_CASE("framework: a field the plan sets on wins, framework_off switches a profile behaviour off", "[framework]") {
  hetsim::proto::PlanInputs in = ProfileInputs(v1::MEGATRON_LM_2021, v1::BF16);
  in.plan.set_tp_backward_overlap(true);  // the profile leaves it off; the plan's own field wins
  in.plan.add_framework_off("blocking_p2p");
  const v1::Plan p = Applied(in);
  CHECK(p.tp_backward_overlap());
  CHECK_FALSE(p.blocking_p2p());
  CHECK(p.grad_reduce_in_fp32());
  // Applying again changes nothing (ValidatePlanInputs may run more than once on the same inputs).
  v1::Plan twice = p;
  ApplyFrameworkProfile(&twice, in.model);
  CHECK(google::protobuf::util::MessageDifferencer::Equals(twice, p));
}

TEST_CASE("framework: the report names the profile and who set each behaviour", "[framework]") {
  hetsim::proto::PlanInputs in = ProfileInputs(v1::MEGATRON_LM_2021, v1::BF16);
  in.plan.set_overlap_grad_reduce(true);
  in.plan.add_framework_off("blocking_p2p");
  const v1::Plan p = Applied(in);
  hetsim::spec::SimulationSpec spec;
  spec.plan = hetsim::proto::ResolvePlan(p, "plan.pbtxt");
  spec.model = hetsim::proto::ResolveModel(in.model, "plan.pbtxt: model");
  v1::Report report;
  hetsim::traces::AddFrameworkProfile(spec, report);
  CHECK(report.framework() == "Megatron-LM 2021 (SC'21)");
  REQUIRE(report.framework_behaviours_size() == 22);
  auto behaviour = [&](const std::string& field) {
    for (const v1::FrameworkBehaviourReport& b : report.framework_behaviours()) {
      if (b.field() == field) return b;
    }
    FAIL("no behaviour " << field);
    return v1::FrameworkBehaviourReport();
  };
  CHECK_FALSE(behaviour("blocking_p2p").on());
  CHECK(behaviour("blocking_p2p").set_by() == "framework_off");
  CHECK(behaviour("overlap_grad_reduce").on());
  CHECK(behaviour("overlap_grad_reduce").set_by() == "plan");
  CHECK(behaviour("grad_reduce_in_fp32").on());
  CHECK(behaviour("grad_reduce_in_fp32").set_by() == "profile");
  CHECK(behaviour("grad_reduce_in_fp32").profile() == "on for BF16 and FP8 models");
  CHECK_THAT(behaviour("blocking_p2p").source(), Catch::StartsWith("https://github.com/NVIDIA/Megatron-LM/blob/v2.5/"));
  CHECK(hetsim::traces::FormatFramework(report) ==
        "framework Megatron-LM 2021 (SC'21): blocking_p2p off (framework_off), tp_backward_overlap off, "
        "grad_reduce_in_fp32 on, overlap_grad_reduce on (plan), overlap_param_gather off, zero3_prefetch off, "
        "tied_embedding_grad_sync off, eager_kernels off, op_selective_recompute off, fp8_dynamic_casts off, "
        "pytorch_async_tp off, "
        "attention_repeats_kv off, pytorch_context_parallel off, flash_attention_2 off, host_bound_blocks off, "
        "dtensor_sequence_copies off, nccl_sm_contention on, p2p_rendezvous off, zero3_lock_step off, "
        "autograd_grad_accumulation off, layer_norm_weight_grad_pass on, zero_reduce_per_rank off\n");
  // The HTML page has the profile's table, sources included.
  hetsim::traces::html::RunHtmlInputs html;
  html.report = &report;
  const std::string page = hetsim::traces::html::RunReportHtml(html);
  CHECK_THAT(page, Catch::Contains("Framework: Megatron-LM 2021 (SC&#39;21)") ||
                       Catch::Contains("Framework: Megatron-LM 2021 (SC'21)"));
  CHECK_THAT(page, Catch::Contains("https://github.com/NVIDIA/Megatron-LM/blob/v2.5/megatron/p2p_communication.py"));
  // Without a framework the report is as before.
  v1::Report none;
  spec.plan.framework = hetsim::spec::Framework::kUnspecified;
  hetsim::traces::AddFrameworkProfile(spec, none);
  CHECK(none.ByteSizeLong() == 0);
  CHECK(hetsim::traces::FormatFramework(none).empty());
}

TEST_CASE("framework: every profile has a source for every behaviour", "[framework]") {
  for (const hetsim::spec::FrameworkProfile& p : hetsim::spec::FrameworkProfiles()) {
    INFO(p.name);
    v1::Framework parsed = v1::FRAMEWORK_UNSPECIFIED;
    CHECK(v1::Framework_Parse(p.enum_name, &parsed));
    CHECK(hetsim::proto::FrameworkOf(parsed) == p.framework);
    for (const auto& [field, value] : p.Behaviours()) {
      INFO(field);
      CHECK_THAT(std::string(value.source), Catch::StartsWith("https://"));
    }
  }
}

TEST_CASE("framework: framework_off names known behaviours, once, not set on, with a framework", "[framework]") {
  hetsim::proto::PlanInputs in = ProfileInputs(v1::MEGATRON_CORE, v1::BF16);
  in.plan.add_framework_off("blocking_p2p_typo");
  CHECK_PROBLEM(hetsim::proto::ValidatePlanInputs(in),
                "plan.pbtxt: framework_off[0]: \"blocking_p2p_typo\" is not a framework behaviour (blocking_p2p, ");
  in = ProfileInputs(v1::MEGATRON_CORE, v1::BF16);
  in.plan.add_framework_off("tp_backward_overlap");
  in.plan.add_framework_off("tp_backward_overlap");
  CHECK_PROBLEM(hetsim::proto::ValidatePlanInputs(in),
                "plan.pbtxt: framework_off[1]: \"tp_backward_overlap\" named twice");
  in = ProfileInputs(v1::MEGATRON_CORE, v1::BF16);
  in.plan.add_framework_off("grad_reduce_in_fp32");
  in.plan.set_grad_reduce_in_fp32(true);
  CHECK_PROBLEM(hetsim::proto::ValidatePlanInputs(in),
                "plan.pbtxt: framework_off[0]: \"grad_reduce_in_fp32\" is switched off here but set on by the plan's "
                "own field grad_reduce_in_fp32");
  in = ProfileInputs(v1::FRAMEWORK_UNSPECIFIED, v1::BF16);
  in.plan.add_framework_off("blocking_p2p");
  CHECK_PROBLEM(hetsim::proto::ValidatePlanInputs(in), "plan.pbtxt: framework_off: needs a framework");
}

TEST_CASE("framework: the Megatron importer reads the profile from the line's version clues", "[framework]") {
  absl::StatusOr<v1::Cluster> cluster =
      hetsim::proto::LoadCluster(HETSIM_SOURCE_DIR "/examples/cluster-a100-512.pbtxt");
  REQUIRE(cluster.ok());
  const std::string base =
      "torchrun --nproc_per_node 8 --nnodes 2 pretrain_gpt.py --num-layers 8 --hidden-size 4096 "
      "--num-attention-heads 32 --seq-length 2048 --max-position-embeddings 2048 --micro-batch-size 1 "
      "--global-batch-size 16 --tensor-model-parallel-size 4 --pipeline-model-parallel-size 2 --bf16 ";
  auto import = [&](const std::string& flags) {
    auto parsed = hetsim::interop::ParseMegatronLaunchLine(base + flags, "line.sh");
    REQUIRE(parsed.ok());
    auto m = hetsim::interop::ImportMegatron(*parsed, *cluster, {}, "line.sh");
    INFO(m.status().message());
    REQUIRE(m.ok());
    return *m;
  };
  const auto applied_equals_imported = [](const hetsim::interop::MegatronImport& m) {
    v1::Plan applied = m.plan;
    ApplyFrameworkProfile(&applied, m.model);
    return google::protobuf::util::MessageDifferencer::Equals(applied, m.plan);
  };
  // 2021's code: --checkpoint-activations and none of the later flags.
  const auto m2021 = import("--checkpoint-activations");
  CHECK(m2021.plan.framework() == v1::MEGATRON_LM_2021);
  CHECK(applied_equals_imported(m2021));
  // 2022's flags without Megatron-Core's.
  const auto m2022 = import("--sequence-parallel --recompute-activations");
  CHECK(m2022.plan.framework() == v1::MEGATRON_LM_2022);
  CHECK(applied_equals_imported(m2022));
  // A flag only Megatron-Core knows; the line's --grad-reduce-in-bf16 switches the profile's FP32 off.
  const auto core = import("--sequence-parallel --overlap-grad-reduce --grad-reduce-in-bf16");
  CHECK(core.plan.framework() == v1::MEGATRON_CORE);
  CHECK(core.plan.overlap_grad_reduce());
  CHECK_FALSE(core.plan.grad_reduce_in_fp32());
  REQUIRE(core.plan.framework_off_size() == 1);
  CHECK(core.plan.framework_off(0) == "grad_reduce_in_fp32");
  CHECK(applied_equals_imported(core));
  // No version clue: today's Megatron.
  CHECK(import("").plan.framework() == v1::MEGATRON_CORE);
}

TEST_CASE("the plan's behaviour members and the profiles' behaviours are one list, each a Plan field", "[framework]") {
  const auto behaviours = hetsim::spec::ProfileOf(hetsim::spec::Framework::kMegatronCore).Behaviours();
  REQUIRE(std::size(hetsim::spec::kBehaviourFields) == behaviours.size());
  for (size_t i = 0; i < behaviours.size(); ++i) {
    INFO(behaviours[i].first);
    CHECK(std::string(hetsim::spec::kBehaviourFields[i].first) == behaviours[i].first);
    const google::protobuf::FieldDescriptor* f =
        hetsim::v1::Plan::descriptor()->FindFieldByName(hetsim::spec::kBehaviourFields[i].first);
    REQUIRE(f != nullptr);
    CHECK(f->type() == google::protobuf::FieldDescriptor::TYPE_BOOL);
  }
}
