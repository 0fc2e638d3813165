// torchtitan's llama flavors (the model shapes `model.name` / `model.flavor` name), shared by its
// importer (torchtitan_import.h) and exporter (torchtitan_export.h).
#ifndef HETSIM_SERVICE_INTEROP_TORCHTITAN_FLAVORS_H_
#define HETSIM_SERVICE_INTEROP_TORCHTITAN_FLAVORS_H_

#include <cstdint>

namespace hetsim::interop {

// A flavor as torchtitan's models/llama3 (and, in 2024, models/llama's llama2_configs) defines it: FFN
// width multiple_of x ceil(ffn_dim_multiplier x int(8 dim / 3) / multiple_of); vocabulary 128,256 (the
// Llama 3 tokenizer), 32,000 (Llama 2's), the 2025 debug model's 2,048.
struct LlamaFlavor {
  const char* name;
  int64_t dim, layers, heads, kv_heads, multiple_of, vocab;
  double ffn_multiplier;  // 0: none
  int64_t FfnHidden() const {
    int64_t hidden = 2 * (4 * dim) / 3;
    if (ffn_multiplier > 0) hidden = static_cast<int64_t>(ffn_multiplier * static_cast<double>(hidden));
    return (hidden + multiple_of - 1) / multiple_of * multiple_of;
  }
};
inline constexpr LlamaFlavor kLlama3Flavors[] = {
    {"debugmodel", 256, 6, 16, 16, 256, 2048, 0},
    {"8B", 4096, 32, 32, 8, 1024, 128256, 1.3},
    {"70B", 8192, 80, 64, 8, 4096, 128256, 1.3},
    {"405B", 16384, 126, 128, 8, 4096, 128256, 1.2},
};
inline constexpr LlamaFlavor kLlama2Flavors[] = {
    {"debugmodel", 256, 8, 16, 16, 256, 32000, 0},
    {"7B", 4096, 32, 32, 32, 256, 32000, 0},
    {"13B", 5120, 40, 40, 40, 256, 32000, 0},
    {"70B", 8192, 80, 64, 8, 4096, 32000, 1.3},
};

}  // namespace hetsim::interop

#endif  // HETSIM_SERVICE_INTEROP_TORCHTITAN_FLAVORS_H_
