#include "sim/workload/model_cost.h"

#include <cmath>

#include "sim/workload/transformer_layers_internal.h"

namespace hetsim::workload {

int ElementBytes(spec::DType dtype) {
  switch (dtype) {
    case spec::DType::kFp32:
    case spec::DType::kTf32: return 4;
    case spec::DType::kBf16:
    case spec::DType::kFp16:
    case spec::DType::kFp8: return 2;  // FP8 is the GEMMs' input format only (docs/cost-model.md)
  }
  return 2;
}

int OptimizerBytesPerParam(spec::DType dtype) { return ElementBytes(dtype) == 4 ? 8 : 12; }

ModelCost ModelCost::Create(const spec::ModelSpec& model) {
  ModelCost m;
  m.name_ = model.name;
  m.dtype_ = model.dtype;
  m.element_bytes_ = ElementBytes(m.dtype_);
  m.edge_layers_ = model.edge_layers();
  if (model.transformer) {
    const spec::TransformerSpec& t = *model.transformer;
    m.is_transformer_ = true;
    m.layers_ = BuildTransformerLayers(t, m.element_bytes_);
    m.seq_length_ = t.seq_length;
    m.hidden_size_ = t.hidden_size;
    m.num_attention_heads_ = t.num_attention_heads;
    m.num_kv_heads_ = t.num_kv_heads;
    m.ffn_hidden_size_ = t.ffn_hidden_size;
    m.vocab_size_ = t.vocab_size;
    m.num_experts_ = t.num_experts;
    if (t.num_experts > 1) m.expert_ffn_hidden_size_ = t.expert_ffn_hidden_size;
    m.uniform_blocks_ = t.UniformBlocks();
  } else {
    m.layers_ = BuildLayerListLayers(model.layers);
    m.seq_length_ = model.layer_list_seq_length;
  }
  return m;
}

uint64_t ModelCost::TotalParamCount() const {
  uint64_t total = 0;
  for (const LayerCost& l : layers_) total += l.param_count;
  return total;
}

double ModelCost::ModelFlopPerSample() const { return ModelFlopPerSample(0, num_layers()); }

double ModelCost::ModelFlopPerSample(int first, int count) const {
  double flop = 0;
  for (int i = first; i < first + count; ++i) {
    flop += layers_[i].forward_flop_per_sample + layers_[i].backward_flop_per_sample;
  }
  return flop;
}

double ModelCost::AttentionCoreFlopPerSample() const {
  double flop = 0;
  for (const LayerCost& l : layers_) {
    if (l.forward_flop_per_sample <= 0) continue;
    // A layer's backward is its forward's multiple (twice for every GEMM); the core's share of it alike.
    const double passes = 1 + l.backward_flop_per_sample / l.forward_flop_per_sample;
    for (const Gemm& g : l.gemms) {
      if (g.attention_core) flop += passes * g.forward_flop_per_sample;
    }
  }
  return flop;
}

double ModelCost::HardwareFlopPerSample(int first, int count, spec::Recompute recompute) const {
  double flop = ModelFlopPerSample(first, count);
  for (int i = first; i < first + count; ++i) {
    const LayerCost& l = layers_[i];
    if (!l.recomputable) continue;
    if (recompute == spec::Recompute::kFull) {
      flop += l.forward_flop_per_sample;
    } else if (recompute == spec::Recompute::kSelective) {
      for (const Gemm& g : l.gemms) {
        if (g.attention_core) flop += g.forward_flop_per_sample;
      }
    }
  }
  return flop;
}

}  // namespace hetsim::workload
