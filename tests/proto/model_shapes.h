// Published model shapes the tests and benchmarks build as messages, written once.
#ifndef HETSIM_TESTS_MODEL_SHAPES_H_
#define HETSIM_TESTS_MODEL_SHAPES_H_

#include <cstdint>

#include "proto/hetsim.pb.h"

namespace hetsim::testing {

// The five numbers that name a dense transformer's shape; the rest of Transformer keeps its defaults.
struct TransformerShape {
  int64_t layers = 0, hidden = 0, heads = 0, seq = 0, vocab = 0;
};

// Sets `model`'s transformer to `shape` and returns it for the fields a test adds.
inline v1::Transformer* SetTransformer(v1::Model& model, const TransformerShape& shape) {
  v1::Transformer* t = model.mutable_transformer();
  t->set_num_layers(shape.layers);
  t->set_hidden_size(shape.hidden);
  t->set_num_attention_heads(shape.heads);
  t->set_seq_length(shape.seq);
  t->set_vocab_size(shape.vocab);
  return t;
}

// GPT-3 175B (Brown et al. 2020, Table 2.1): 96 blocks of hidden 12288 and 96 heads, 2048 tokens, the
// GPT-2 vocabulary padded to 51200 as Megatron pads it. `blocks` cuts it shorter.
inline void SetGpt3Shape(v1::Transformer* t, int blocks = 96) {
  t->set_num_layers(blocks);
  t->set_hidden_size(12288);
  t->set_num_attention_heads(96);
  t->set_seq_length(2048);
  t->set_vocab_size(51200);
}

// GPT-2 345M as the AMP artifact's DeepSpeed runs train it (docs/validation.md, "DeepSpeed on AWS"):
// hidden 1024, 16 heads, 1024 tokens, vocabulary 52,256, tied embeddings, FP16, a layer per block;
// `blocks` of its 24.
inline v1::Model AmpGpt2(int blocks) {
  v1::Model m;
  m.set_dtype(v1::FP16);
  v1::Transformer* t = SetTransformer(m, {.layers = blocks, .hidden = 1024, .heads = 16, .seq = 1024, .vocab = 52256});
  t->set_tied_embeddings(true);
  t->set_granularity(v1::BLOCK);
  return m;
}

}  // namespace hetsim::testing

#endif  // HETSIM_TESTS_MODEL_SHAPES_H_
