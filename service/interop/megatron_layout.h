// Megatron-LM's --pipeline-model-parallel-layout: every virtual stage's layers as letters, E the
// embedding, t a transformer block, m a multi-token-prediction module, L the loss (the head), '|'
// between virtual stages (in Megatron's order: virtual stage k is pipeline rank k % PP, model chunk
// k / PP), "x*N" and "(...)*N" repeat, commas are cosmetic. DeepSeek-V3 on PP 16 x 2 chunks:
// "Et|(tt|)*30mL".
#ifndef HETSIM_SERVICE_INTEROP_MEGATRON_LAYOUT_H_
#define HETSIM_SERVICE_INTEROP_MEGATRON_LAYOUT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace hetsim::interop {

struct LayoutStage {
  int64_t embedding = 0, blocks = 0, mtp = 0, loss = 0;
  bool embedding_first = false, loss_last = false;  // its first letter E, its last L
  // hetsim's layers: the embedding, the blocks and the head (the MTP modules ride in the head layer).
  int64_t Layers() const { return embedding + blocks + loss; }
};

// The virtual stages the layout names, in its order; InvalidArgument naming the flag for a letter
// Megatron does not know or a malformed repetition.
absl::StatusOr<std::vector<LayoutStage>> ParsePipelineLayout(absl::string_view layout);

// The layout of `stages` (repetitions written out, "|" between them).
std::string FormatPipelineLayout(const std::vector<LayoutStage>& stages);

}  // namespace hetsim::interop

#endif  // HETSIM_SERVICE_INTEROP_MEGATRON_LAYOUT_H_
