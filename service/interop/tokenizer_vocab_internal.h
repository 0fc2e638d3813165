// The vocabulary size of the tokenizers launch lines and configs name (Megatron's --tokenizer-type and
// --tokenizer-model, NeMo's model.tokenizer), from the model cards and configs that publish them
// (docs/megatron.md, "The vocabulary"). Before Megatron pads it (to a multiple of 128 x TP).
#ifndef HETSIM_SERVICE_INTEROP_TOKENIZER_VOCAB_INTERNAL_H_
#define HETSIM_SERVICE_INTEROP_TOKENIZER_VOCAB_INTERNAL_H_

#include <cstdint>
#include <optional>

#include "absl/strings/string_view.h"

namespace hetsim::interop {

// GPT-2's BPE: Megatron's tokenizer in its GPT examples, and hetsim's fallback.
inline constexpr int64_t kGpt2Vocab = 50257;

// The size of the tokenizer `name` names (a tokenizer type, a Hugging Face model id, a file name;
// case does not matter), or nullopt when hetsim does not know it.
std::optional<int64_t> KnownTokenizerVocab(absl::string_view name);

}  // namespace hetsim::interop

#endif  // HETSIM_SERVICE_INTEROP_TOKENIZER_VOCAB_INTERNAL_H_
