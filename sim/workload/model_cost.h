// The model's layer sequence with the cost of every layer: what plans index with
// Stage.first_layer / Stage.num_layers and what the planner and the executor price stages with.
//
//   ModelCost model = ModelCost::Create(proto::ResolveModel(model_proto, "model.pbtxt"));
//   model.num_layers();                 // BLOCK: num_layers + 2, SUBLAYER: 2 * num_layers + 2,
//                                      // LayerList: as listed
//   model.layer(i).forward_flop_per_sample;
//   model.ModelFlopPerSample();       // Megatron formula, for MFU
#ifndef HETSIM_SIM_WORKLOAD_MODEL_COST_H_
#define HETSIM_SIM_WORKLOAD_MODEL_COST_H_

#include <cstdint>
#include <string>
#include <vector>

#include "base/spec/dtype.h"
#include "base/spec/model.h"
#include "base/spec/plan.h"
#include "sim/workload/layer_cost_internal.h"

namespace hetsim::workload {

// Bytes of one element of weights, gradients and activations for a compute dtype under mixed
// precision: 4 for FP32/TF32, 2 for BF16/FP16, and 2 for FP8 (FP8 is a GEMM input format; weights,
// gradients and saved activations stay in BF16).
int ElementBytes(spec::DType dtype);
// Optimizer state bytes per parameter for mixed-precision Adam: an FP32 master copy, momentum and
// variance (12), or momentum and variance only (8) when the weights are FP32 already.
int OptimizerBytesPerParam(spec::DType dtype);

class ModelCost {
 public:
  // Builds the layer sequence of a resolved model (proto::ValidateModel checked the message before
  // proto::ResolveModel converted it, so nothing here can fail).
  static ModelCost Create(const spec::ModelSpec& model);

  const std::string& name() const { return name_; }
  spec::DType dtype() const { return dtype_; }
  int element_bytes() const { return element_bytes_; }

  int num_layers() const { return static_cast<int>(layers_.size()); }
  const LayerCost& layer(int i) const { return layers_[i]; }
  const std::vector<LayerCost>& layers() const { return layers_; }

  uint64_t seq_length() const { return seq_length_; }  // tokens per sample
  bool is_transformer() const { return is_transformer_; }
  // The embedding and output layers at the model's two ends (spec::ModelSpec::edge_layers).
  spec::EdgeLayers edge_layers() const { return edge_layers_; }
  // Transformer shape (zero for a LayerList); hidden_size is what TP collectives carry.
  uint64_t hidden_size() const { return hidden_size_; }
  uint32_t num_attention_heads() const { return num_attention_heads_; }
  uint32_t num_kv_heads() const { return num_kv_heads_; }
  uint64_t ffn_hidden_size() const { return ffn_hidden_size_; }
  uint64_t vocab_size() const { return vocab_size_; }
  uint32_t num_experts() const { return num_experts_; }                        // 1 for a dense model
  uint64_t expert_ffn_hidden_size() const { return expert_ffn_hidden_size_; }  // 0 for a dense model
  // Every transformer block alike (no dense blocks among MoE ones): what repeated-layer pricing needs.
  bool uniform_blocks() const { return uniform_blocks_; }

  uint64_t TotalParamCount() const;  // a tied LM head counted once

  // Model FLOPs per sample of one iteration, forward plus backward, no recompute (what MFU counts,
  // 72 B s l h^2 (1 + s/(6h) + V/(12 l h)) for a GPT without GQA/gating/MoE).
  double ModelFlopPerSample() const;
  // The same over a layer range [first, first + count).
  double ModelFlopPerSample(int first, int count) const;
  // Of ModelFlopPerSample, the attention core's (the score and context products, forward plus
  // backward at the model's count, all s^2 of them): what a count of a causal mask's half leaves out
  // half of (ValidationFlopCount MODEL_FLOPS_CAUSAL).
  double AttentionCoreFlopPerSample() const;
  // Model FLOPs of one training iteration (MFU numerator x iteration time).
  double ModelFlopPerIteration(uint64_t global_batch_size) const {
    return ModelFlopPerSample() * static_cast<double>(global_batch_size);
  }
  // Hardware FLOPs per sample over a layer range: model FLOPs plus what `recompute` runs again
  // (the whole forward under full recompute, the attention core under selective recompute).
  double HardwareFlopPerSample(int first, int count, spec::Recompute recompute) const;

 private:
  ModelCost() = default;

  std::string name_;
  spec::DType dtype_ = spec::DType::kBf16;
  int element_bytes_ = 2;
  std::vector<LayerCost> layers_;
  uint64_t seq_length_ = 0;
  bool is_transformer_ = false;
  spec::EdgeLayers edge_layers_;
  uint64_t hidden_size_ = 0;
  uint32_t num_attention_heads_ = 0;
  uint32_t num_kv_heads_ = 0;
  uint64_t ffn_hidden_size_ = 0;
  uint64_t vocab_size_ = 0;
  uint32_t num_experts_ = 1;
  uint64_t expert_ffn_hidden_size_ = 0;
  bool uniform_blocks_ = true;
};

}  // namespace hetsim::workload

#endif  // HETSIM_SIM_WORKLOAD_MODEL_COST_H_
