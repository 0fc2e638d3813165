// `accelerate launch --config_file X.yaml script.py`: the Accelerate config's processes, precision and
// data-parallel runtime (FSDP's sharding strategy, DeepSpeed's ZeRO) read with the launch line, the
// model from --model (service/interop/accelerate_config.h).
#include <catch2/catch.hpp>

#include <string>

#include "proto/io.h"
#include "service/interop/megatron_import.h"
#include "tests/service/interop/interop_test_util.h"

namespace hetsim {
namespace {

using interop::ImportMegatron;
using interop::MegatronFlags;
using interop::MegatronImport;
using interop::MegatronImportRequest;
using interop::ParseMegatronLaunchLine;

// A script that writes its Accelerate config (as alignment-handbook's recipes/accelerate_configs/*.yaml)
// and launches a Hugging Face training script with it.
std::string Script(const std::string& config, const std::string& launch_options = "") {
  return "cat > acc.yaml <<EOF\n" + config + "EOF\naccelerate launch --config_file acc.yaml " + launch_options +
         " train.py --model_name_or_path meta-llama/Llama-2-7b-hf --per_device_train_batch_size 2 "
         "--gradient_accumulation_steps 4\n";
}

absl::StatusOr<MegatronImport> Import(const std::string& script, bool with_model) {
  absl::StatusOr<MegatronFlags> flags = ParseMegatronLaunchLine(script, "run.sh");
  if (!flags.ok()) return flags.status();
  MegatronImportRequest request;
  if (with_model) {
    auto model = proto::LoadAs<v1::Model>(std::string(HETSIM_SOURCE_DIR) + "/examples/model-gpt39b.pbtxt");
    REQUIRE(model.ok());
    request.model = *model;
  }
  return ImportMegatron(*flags, hetsim::testing::ImportTestCluster(), request, "run.sh");
}

constexpr const char* kFsdp =
    "compute_environment: LOCAL_MACHINE\ndistributed_type: FSDP\nfsdp_config:\n"
    "  fsdp_backward_prefetch: BACKWARD_PRE\n  fsdp_offload_params: false\n  fsdp_sharding_strategy: FULL_SHARD\n"
    "mixed_precision: bf16\nnum_machines: 1\nnum_processes: 8\n";

TEST_CASE("import: an Accelerate FSDP launch reads its config, the model from --model", "[interop]") {
  // Without --model: the refusal says what the config gave and what is missing.
  absl::StatusOr<MegatronImport> refused = Import(Script(kFsdp), false);
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(std::string(refused.status().message()),
             Catch::StartsWith("run.sh: an accelerate run of train.py (ZeRO stage 3, BF16 from its config and flags): "
                               "the script builds its model itself (--model_name_or_path meta-llama/Llama-2-7b-hf)"));
  absl::StatusOr<MegatronImport> r = Import(Script(kFsdp), true);
  INFO((r.ok() ? "" : r.status().message()));
  REQUIRE(r.ok());
  CHECK(r->plan.framework() == v1::FSDP2_TORCHTITAN);
  REQUIRE(r->plan.stages_size() == 1);
  CHECK(r->plan.stages(0).zero_stage() == 3);
  CHECK(r->plan.stages(0).data_parallel() == 8);
  CHECK(r->plan.stages(0).tensor_parallel() == 1);
  CHECK(r->model.dtype() == v1::BF16);
  CHECK(r->plan.micro_batch_size() == 2 * 8);       // --per_device_train_batch_size 2 on 8 GPUs
  CHECK(r->plan.global_batch_size() == 2 * 8 * 4);  // and 4 accumulation steps
  CHECK(r->plan.zero3_prefetch());
  CHECK(r->plan.zero3_lock_step());
  CHECK(r->plan.overlap_grad_reduce());
  CHECK_FALSE(r->plan.grad_reduce_in_fp32());  // Accelerate's reduce_dtype is the mixed precision's
  CHECK(r->plan.eager_kernels());
  CHECK(r->plan.flash_attention_2());
  CHECK(std::find(r->plan.framework_off().begin(), r->plan.framework_off().end(), "grad_reduce_in_fp32") !=
        r->plan.framework_off().end());
  CHECK(hetsim::testing::HasImportNote(r->notes, "Accelerate config acc.yaml (written by the script) read"));
  // SHARD_GRAD_OP (or its number, 2) shards gradients and optimizer state; NO_SHARD nothing; the line's
  // --num_processes / --num_machines win over the config's, as Accelerate's options do.
  std::string grad_op = kFsdp;
  grad_op.replace(grad_op.find("FULL_SHARD"), 10, "2");
  absl::StatusOr<MegatronImport> two = Import(Script(grad_op, "--num_processes 16 --num_machines 2"), true);
  REQUIRE(two.ok());
  CHECK(two->plan.stages(0).zero_stage() == 2);
  CHECK(two->plan.stages(0).data_parallel() == 16);
  CHECK_FALSE(two->plan.zero3_prefetch());
  CHECK_FALSE(two->plan.zero3_lock_step());
  std::string no_shard = kFsdp;
  no_shard.replace(no_shard.find("FULL_SHARD"), 10, "NO_SHARD");
  absl::StatusOr<MegatronImport> ddp = Import(Script(no_shard), true);
  REQUIRE(ddp.ok());
  CHECK(ddp->plan.stages(0).zero_stage() == 0);
}

TEST_CASE("import: an Accelerate DeepSpeed launch reads ZeRO from its config", "[interop]") {
  const std::string config =
      "distributed_type: DEEPSPEED\ndeepspeed_config:\n  gradient_accumulation_steps: 4\n"
      "  offload_optimizer_device: none\n  offload_param_device: none\n  zero3_init_flag: true\n  zero_stage: 3\n"
      "mixed_precision: fp16\nnum_machines: 2\nnum_processes: 16\n";
  absl::StatusOr<MegatronImport> r = Import(Script(config), true);
  INFO((r.ok() ? "" : r.status().message()));
  REQUIRE(r.ok());
  CHECK(r->plan.framework() == v1::MEGATRON_DEEPSPEED);
  CHECK(r->plan.stages(0).zero_stage() == 3);
  CHECK(r->plan.stages(0).data_parallel() == 16);
  CHECK(r->model.dtype() == v1::FP16);
  CHECK(r->plan.global_batch_size() == 2 * 16 * 4);
}

TEST_CASE("import: what an Accelerate config sets that hetsim does not model is refused by key", "[interop]") {
  const auto message = [](const std::string& from, const std::string& to) {
    std::string config = kFsdp;
    config.replace(config.find(from), from.size(), to);
    absl::StatusOr<MegatronImport> r = Import(Script(config), true);
    REQUIRE_FALSE(r.ok());
    return std::string(r.status().message());
  };
  CHECK_THAT(message("FULL_SHARD", "HYBRID_SHARD"),
             Catch::StartsWith("acc.yaml (written by the script): fsdp_config.fsdp_sharding_strategy: HYBRID_SHARD "
                               "(sharded within a node, replicated across nodes) is not modelled"));
  CHECK_THAT(message("fsdp_offload_params: false", "fsdp_offload_params: true"),
             Catch::Contains("fsdp_config.fsdp_offload_params: true: CPU offload"));
  CHECK_THAT(message("mixed_precision: bf16", "mixed_precision: fp8"), Catch::Contains("mixed_precision fp8"));
  CHECK_THAT(message("distributed_type: FSDP", "distributed_type: XLA"),
             Catch::Contains("distributed_type: XLA: not read"));
  CHECK_THAT(message("num_machines: 1", "num_machines: 5"),
             Catch::Contains("num_processes 8 over num_machines 5: not the same number on every machine"));
  const std::string ds =
      "distributed_type: DEEPSPEED\ndeepspeed_config:\n  offload_optimizer_device: cpu\n  zero_stage: 2\n";
  absl::StatusOr<MegatronImport> offload = Import(Script(ds), true);
  REQUIRE_FALSE(offload.ok());
  CHECK_THAT(std::string(offload.status().message()),
             Catch::Contains("deepspeed_config.offload_optimizer_device: cpu: ZeRO-Offload is not modelled"));
}

}  // namespace
}  // namespace hetsim
