// Whether the fused scale-mask-softmax kernel of the unfused attention runs for a line's shapes, as the
// code that runs the line decides it (FusedScaleMaskSoftmax.is_kernel_available): when it does not,
// the scores are masked and softmaxed by PyTorch apart (forward_torch_softmax), which hetsim prices as
// Plan.unfused_kernels.masked_softmax (docs/megatron.md, "The fused softmax's limits").
#ifndef HETSIM_SERVICE_INTEROP_FUSED_SOFTMAX_INTERNAL_H_
#define HETSIM_SERVICE_INTEROP_FUSED_SOFTMAX_INTERNAL_H_

#include <cstdint>
#include <optional>
#include <string>

#include "proto/inputs.h"
#include "proto/validate_problems.h"

namespace hetsim::interop {

// The code whose check decides, each with its own sequence limit.
enum class SoftmaxKernelCheck {
  // Megatron-LM v2.5 (2021, before 40becfc): 16 < sk <= 2048, sq and b x np multiples of 4.
  kMegatron2021,
  // megatron/model/fused_softmax.py from 2022-01 (7a77abd), megatron/core/fusions/fused_softmax.py
  // (Megatron-Core's local layers, --transformer-impl local), Megatron-DeepSpeed's: 16 < sk <= 4096,
  // sq, sk and b x np multiples of 4, b x np a multiple of the kernel's batches per block.
  kMegatron,
  // Megatron-LM's pre-Core model from 2023-07 (cd12636, megatron/legacy/model after 2024) to its removal
  // in 2026-05 (8de8238), under --use-legacy-models: the same with 16 < sk <= 16384.
  kMegatronLegacyModel,
  // Transformer Engine's UnfusedDotProductAttention (Megatron-Core's default layers with
  // --attention-backend unfused): 16 < sk < 16384, sk a multiple of 8, sq and b x np of 4, sq a multiple
  // of the batches per block.
  kTransformerEngine,
};

// The attention's shape on one GPU: b x np is the kernel's batch of score matrices.
struct SoftmaxShape {
  int64_t micro_batch = 1;     // b: the micro-batch of one data-parallel rank
  int64_t heads_per_rank = 1;  // np: attention heads / tensor parallel
  int64_t seq_length = 1;      // sq = sk: causal self-attention
};

// The kernel's batches per block for a key length: 128 threads a block, one warp (up to 32 threads, the
// key length's next power of two) per row, two rows a warp up to 128 keys (Megatron's
// scaled_masked_softmax.h get_batch_per_block, Transformer Engine's softmax.py).
int64_t SoftmaxBatchesPerBlock(int64_t key_length);

// Why `check` runs 16-bit scores of `shape` through PyTorch's softmax rather than the fused kernel
// ("sequence 8192 above the kernel's 4096"), or nullopt when the fused kernel runs.
std::optional<std::string> FusedSoftmaxFallback(SoftmaxKernelCheck check, const SoftmaxShape& shape);

// The check's name in notes: "Megatron-Core's fused_softmax.py".
const char* SoftmaxKernelCheckName(SoftmaxKernelCheck check);

// An exporter's check: a problem on unfused_kernels.masked_softmax when the plan's unfused attention
// softmaxes in the fused kernel where the exported line, whose layers `check` decides (`line` names
// them), cannot: FP32 scores, or shapes outside the check. The line would run PyTorch's mask and softmax,
// which its import prices, so no line gives the plan back.
void CheckFusedSoftmax(proto::Problems& p, const proto::PlanInputs& in, SoftmaxKernelCheck check, const char* line);

}  // namespace hetsim::interop

#endif  // HETSIM_SERVICE_INTEROP_FUSED_SOFTMAX_INTERNAL_H_
