#include "service/interop/tokenizer_vocab_internal.h"

#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"

namespace hetsim::interop {
namespace {

struct KnownTokenizer {
  const char* clue;  // lower case; the more specific clues come first
  int64_t vocab;
};

// Sizes as the models' configs publish them (vocab_size in the Hugging Face config.json of each
// family's reference model).
constexpr KnownTokenizer kKnown[] = {
    {"llama-3", 128256},
    {"llama3", 128256},
    {"llama_3", 128256},
    {"deepseek-v3", 129280},
    {"deepseek-r1", 129280},
    {"deepseek-v2", 102400},
    {"mistral-nemo", 131072},
    {"mistral-large", 32768},  // Mistral Large 2 (2407, 2411): the v3 tokenizer
    // Nemotron-4's SentencePiece model (NeMo's nemotron_2_256k.model; 256,000 in Nemotron-4-340B's config).
    {"nemotron_2_256k", 256000},
    {"nemotron-4", 256000},
    {"tekken", 131072},
    {"v0.3", 32768},
    {"mixtral", 32000},
    {"mistral", 32000},
    {"llama-2", 32000},
    {"llama2", 32000},
    {"llama", 32000},
    {"gemma-3", 262144},
    {"gemma3", 262144},
    {"gemma", 256000},
    {"bloom", 250880},
    // BLOOM's tokenizer as BigScience's Megatron-DeepSpeed scripts name it (bigscience/tokenizer, the
    // catalogue's byte-level BPE of 250k): 250,880 padded, BLOOM's config.json vocab_size.
    {"bigscience", 250880},
    // T5's SentencePiece model and its 100 sentinel tokens (Hugging Face t5-small ... t5-11b).
    {"t5-small", 32100},
    {"t5-base", 32100},
    {"t5-large", 32100},
    {"t5-3b", 32100},
    {"t5-11b", 32100},
    {"phi-3", 32064},
    {"gpt2", kGpt2Vocab},
    {"gpt-2", kGpt2Vocab},
    {"falcon", 65024},   // tiiuae/falcon-7b and -40b: vocab_size in their config.json
    {"chatglm", 65024},  // ChatGLM2 and 3: padded_vocab_size (their config.json has no
                         // vocab_size)
    // Qwen1.5 to Qwen3 share one tokenizer, padded to 151,936 in their 0.5B-14B models' config.json
    // (152,064 in the 32B-72B ones: 0.08% more).
    {"qwen", 151936},
    {"starcoder2", 49152},
    {"baichuan2", 125696},
};

}  // namespace

std::optional<int64_t> KnownTokenizerVocab(absl::string_view name) {
  const std::string lower = absl::AsciiStrToLower(name);
  for (const KnownTokenizer& k : kKnown) {
    if (absl::StrContains(lower, k.clue)) return k.vocab;
  }
  return std::nullopt;
}

}  // namespace hetsim::interop
