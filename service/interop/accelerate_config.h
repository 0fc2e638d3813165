// Hugging Face Accelerate's config file, as `accelerate launch --config_file X.yaml script.py` runs a
// script (huggingface/accelerate src/accelerate/commands/launch.py; the keys as `accelerate config`
// writes them): how many processes on how many machines, the mixed precision, and the data-parallel
// runtime (PyTorch DDP, FSDP with its sharding strategy, or DeepSpeed's ZeRO), folded into the launch's
// flags so that one set of rules reads them (docs/megatron.md, "Accelerate"). The model stays the
// script's own: it comes from `--model MODEL.pbtxt`, or the import says it is missing.
#ifndef HETSIM_SERVICE_INTEROP_ACCELERATE_CONFIG_H_
#define HETSIM_SERVICE_INTEROP_ACCELERATE_CONFIG_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/hetsim.pb.h"
#include "service/interop/megatron_flags.h"

namespace hetsim::interop {

// The flags with an `accelerate launch` line's config folded in: --nnodes and --nproc_per_node from
// num_machines and num_processes (the line's --num_machines / --num_processes win, as Accelerate's),
// --bf16 or --fp16 from mixed_precision, the ZeRO stage from FSDP's sharding strategy (FULL_SHARD 3,
// SHARD_GRAD_OP 2, NO_SHARD 0; `pytorch_runtime` "fsdp"; MULTI_GPU "ddp") or from deepspeed_config (zero_stage,
// gradient_accumulation_steps, or its deepspeed_config_file read as a DeepSpeed JSON), and the Hugging Face
// Trainer's --per_device_train_batch_size / --gradient_accumulation_steps as Megatron's batch flags.
// InvalidArgument naming the file and key for what hetsim does not model (HYBRID_SHARD, offload, FP8, a
// distributed_type other than NO, MULTI_GPU, FSDP or DEEPSPEED) or malformed YAML. Other launchers' flags
// come back as they are.
absl::StatusOr<MegatronFlags> WithAccelerateConfig(const MegatronFlags& flags, absl::string_view source);

// PyTorch's runtime for an Accelerate FSDP or DDP run (`flags.pytorch_runtime`): the script's model in
// eager PyTorch (SDPA's flash attention, Hugging Face's default attn_implementation). FSDP: gradients
// reduce-scattered per wrapped block in the mixed precision's type (Accelerate's reduce_dtype), the next
// block's parameters gathered ahead (ZeRO-3). DDP (`ddp`): autocast keeps FP32 parameters and gradients,
// all-reduced in DDP's 25 MiB buckets during the backward. Sets the Plan's behaviours; the framework is
// FSDP2_TORCHTITAN's.
void SetAcceleratePyTorchRuntime(bool ddp, int64_t data_parallel, hetsim::v1::Plan& plan,
                                 std::vector<std::string>& notes);

// The Hugging Face Trainer's --per_device_train_batch_size and --gradient_accumulation_steps (also the
// names DeepSpeed-Chat's main.py takes) as Megatron's --micro-batch-size and
// --gradient-accumulation-steps, noted and no longer listed as unknown; a Megatron flag already given wins.
// A Trainer line that is neither DeepSpeed's nor an Accelerate config's runs PyTorch's runtime: its --fsdp
// "full_shard auto_wrap" as an Accelerate FSDP config's sharding (FSDP), else DDP. InvalidArgument for the
// --fsdp options hetsim does not model (offload, hybrid_shard).
absl::Status FoldTrainerArguments(MegatronFlags& flags);

}  // namespace hetsim::interop

#endif  // HETSIM_SERVICE_INTEROP_ACCELERATE_CONFIG_H_
