#include "sim/workload/model_cost.h"

#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "base/check.h"
#include "base/status_macros.h"
#include "proto/validate_model.h"
#include "proto/validate_plan.h"
#include "sim/workload/transformer_layers.h"

namespace hetsim::sim::workload {

hetsim::v1::DType EffectiveDType(hetsim::v1::DType dtype) {
  return dtype == hetsim::v1::DTYPE_UNSPECIFIED ? hetsim::v1::BF16 : dtype;
}

int ElementBytes(hetsim::v1::DType dtype) {
  switch (EffectiveDType(dtype)) {
    case hetsim::v1::FP32:
    case hetsim::v1::TF32: return 4;
    default: return 2;
  }
}

int OptimizerBytesPerParam(hetsim::v1::DType dtype) { return ElementBytes(dtype) == 4 ? 8 : 12; }

namespace {

absl::Status Invalid(absl::string_view source, absl::string_view field, absl::string_view problem) {
  return absl::InvalidArgumentError(absl::StrFormat("%s: %s: %s", source, field, problem));
}

// Not a rule of the file (proto/validate_model.cc has those): an enum value this build does not know.
absl::Status CheckGranularity(const hetsim::v1::Transformer& t, absl::string_view src) {
  if (t.granularity() != hetsim::v1::LAYER_GRANULARITY_UNSPECIFIED && t.granularity() != hetsim::v1::BLOCK &&
      t.granularity() != hetsim::v1::SUBLAYER) {
    return Invalid(src, "transformer.granularity", "unknown value");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ModelCost> ModelCost::Create(const hetsim::v1::Model& model, absl::string_view source) {
  ModelCost m;
  m.name_ = model.name();
  m.dtype_ = EffectiveDType(model.dtype());
  if (m.dtype_ != hetsim::v1::FP32 && m.dtype_ != hetsim::v1::TF32 && m.dtype_ != hetsim::v1::BF16 &&
      m.dtype_ != hetsim::v1::FP16 && m.dtype_ != hetsim::v1::FP8) {
    return Invalid(source, "dtype", absl::StrFormat("unknown value %d", static_cast<int>(m.dtype_)));
  }
  m.element_bytes_ = ElementBytes(m.dtype_);
  // The model's rules have one home, proto::ValidateModel, with one field path per rule; inputs
  // validated at the edge pass again here in a few comparisons.
  HETSIM_RETURN_IF_ERROR(proto::ValidateModel(model, source));
  switch (model.architecture_case()) {
    case hetsim::v1::Model::kTransformer: {
      const hetsim::v1::Transformer& t = model.transformer();
      HETSIM_RETURN_IF_ERROR(CheckGranularity(t, source));
      m.is_transformer_ = true;
      m.layers_ = BuildTransformerLayers(t, m.element_bytes_);
      m.seq_length_ = t.seq_length();
      m.hidden_size_ = t.hidden_size();
      m.num_attention_heads_ = t.num_attention_heads();
      m.num_kv_heads_ = t.num_kv_heads() == 0 ? t.num_attention_heads() : t.num_kv_heads();
      m.ffn_hidden_size_ = proto::FfnHiddenSize(t);
      m.vocab_size_ = t.vocab_size();
      m.num_experts_ = t.num_experts() <= 1 ? 1 : t.num_experts();
      break;
    }
    case hetsim::v1::Model::kLayerList: {
      m.layers_ = BuildLayerListLayers(model.layer_list());
      m.seq_length_ = model.layer_list().seq_length();
      break;
    }
    default:
      HETSIM_CHECK(false, "ValidateModel accepted a model without an architecture");
      return absl::InternalError("unreachable");
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

double ModelCost::HardwareFlopPerSample(int first, int count, hetsim::v1::Recompute recompute) const {
  double flop = ModelFlopPerSample(first, count);
  for (int i = first; i < first + count; ++i) {
    const LayerCost& l = layers_[i];
    if (!l.recomputable) continue;
    if (recompute == hetsim::v1::RECOMPUTE_FULL) {
      flop += l.forward_flop_per_sample;
    } else if (recompute == hetsim::v1::RECOMPUTE_SELECTIVE) {
      for (const Gemm& g : l.gemms) {
        if (g.attention_core) flop += g.forward_flop_per_sample;
      }
    }
  }
  return flop;
}

}  // namespace hetsim::sim::workload
