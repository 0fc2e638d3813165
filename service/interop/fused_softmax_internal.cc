#include "service/interop/fused_softmax_internal.h"

#include "absl/strings/str_format.h"
#include "proto/validate_plan.h"

namespace hetsim::interop {

namespace v1 = hetsim::v1;

int64_t SoftmaxBatchesPerBlock(int64_t key_length) {
  int64_t pow2 = 1;
  while (pow2 < key_length) pow2 *= 2;
  constexpr int64_t kThreadsPerBlock = 128, kWarp = 32;
  const int64_t warp = pow2 < kWarp ? pow2 : kWarp;
  const int64_t rows_per_warp = pow2 <= 128 ? 2 : 1;
  return kThreadsPerBlock / warp * rows_per_warp;
}

const char* SoftmaxKernelCheckName(SoftmaxKernelCheck check) {
  switch (check) {
    case SoftmaxKernelCheck::kMegatron2021: return "Megatron-LM v2.5's fused_softmax.py";
    case SoftmaxKernelCheck::kMegatron: return "Megatron's fused_softmax.py";
    case SoftmaxKernelCheck::kMegatronLegacyModel: return "the legacy model's fused_softmax.py";
    case SoftmaxKernelCheck::kTransformerEngine: return "Transformer Engine's softmax.py";
  }
  return "";
}

std::optional<std::string> FusedSoftmaxFallback(SoftmaxKernelCheck check, const SoftmaxShape& shape) {
  const int64_t sk = shape.seq_length, sq = shape.seq_length;
  const int64_t batches = shape.micro_batch * shape.heads_per_rank;
  const bool te = check == SoftmaxKernelCheck::kTransformerEngine;
  const int64_t max_keys = check == SoftmaxKernelCheck::kMegatron2021 ? 2048
                           : check == SoftmaxKernelCheck::kMegatron   ? 4096
                                                                      : 16384;
  // Transformer Engine's bound is strict (sk < 16384), Megatron's inclusive.
  const bool long_keys = te ? sk >= max_keys : sk > max_keys;
  if (sk <= 16 || long_keys) {
    return absl::StrFormat("sequence %d outside the kernel's 16 < sk %s %d", sk, te ? "<" : "<=", max_keys);
  }
  const int64_t sk_multiple = te ? 8 : check == SoftmaxKernelCheck::kMegatron2021 ? 1 : 4;
  if (sk % sk_multiple != 0) return absl::StrFormat("sequence %d not a multiple of %d", sk, sk_multiple);
  if (sq % 4 != 0) return absl::StrFormat("sequence %d not a multiple of 4", sq);
  if (batches % 4 != 0) {
    return absl::StrFormat("micro-batch x heads per rank = %d x %d not a multiple of 4", shape.micro_batch,
                           shape.heads_per_rank);
  }
  if (check == SoftmaxKernelCheck::kMegatron2021) return std::nullopt;
  const int64_t per_block = SoftmaxBatchesPerBlock(sk);
  // Megatron's causal kernel splits the b x np score matrices into blocks; Transformer Engine's the rows.
  if (te && sq % per_block != 0) {
    return absl::StrFormat("sequence %d not a multiple of the kernel's %d rows per block", sq, per_block);
  }
  if (!te && batches % per_block != 0) {
    return absl::StrFormat("micro-batch x heads per rank = %d x %d not a multiple of the kernel's %d per block",
                           shape.micro_batch, shape.heads_per_rank, per_block);
  }
  return std::nullopt;
}

void CheckFusedSoftmax(proto::Problems& p, const proto::PlanInputs& in, SoftmaxKernelCheck check, const char* line) {
  const v1::Plan& plan = in.plan;
  const v1::Transformer& t = in.model.transformer();
  if (t.attention() != v1::ATTENTION_UNFUSED || plan.unfused_elementwise() || plan.unfused_kernels().masked_softmax())
    return;
  const v1::DType dtype = in.model.dtype();
  if (dtype == v1::FP32 || dtype == v1::TF32) {
    p.Add("unfused_kernels.masked_softmax",
          "false with %s scores: Megatron's fused mask-and-softmax kernels take 16-bit scores only "
          "(FusedScaleMaskSoftmax.is_kernel_available), so the line runs PyTorch's mask and softmax; set it",
          v1::DType_Name(dtype));
    return;
  }
  const v1::Stage& s0 = plan.stages(0);
  const SoftmaxShape shape{.micro_batch = static_cast<int64_t>(plan.micro_batch_size()) / proto::DataParallel(s0),
                           .heads_per_rank = t.num_attention_heads() / proto::TensorParallel(s0),
                           .seq_length = static_cast<int64_t>(t.seq_length())};
  if (std::optional<std::string> why = FusedSoftmaxFallback(check, shape)) {
    p.Add("unfused_kernels.masked_softmax",
          "false, but the line's unfused attention (%s: %s) does not run its fused softmax kernel here (%s), so the "
          "line runs PyTorch's mask and softmax; set it",
          line, SoftmaxKernelCheckName(check), *why);
  }
}

}  // namespace hetsim::interop
