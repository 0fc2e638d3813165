// Tests build models and GPU types as messages; these resolve them (proto/resolve.h) on the way to
// the cost model, which reads only the spec.
#ifndef HETSIM_TESTS_SPEC_TEST_UTIL_H_
#define HETSIM_TESTS_SPEC_TEST_UTIL_H_

#include <catch2/catch.hpp>

#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/gpu_presets.h"
#include "proto/hetsim.pb.h"
#include "proto/resolve.h"
#include "proto/validate_model.h"
#include "sim/workload/gpu_compute.h"
#include "sim/workload/model_cost.h"
#include "sim/workload/stage_cost.h"

namespace hetsim::testing {

// A model read as the edge reads one: checked (proto::ValidateModel), then resolved.
inline absl::StatusOr<workload::ModelCost> ModelCostOf(const v1::Model& model, absl::string_view source) {
  if (absl::Status s = proto::ValidateModel(model, source); !s.ok()) return s;
  return workload::ModelCost::Create(proto::ResolveModel(model, source));
}

inline absl::StatusOr<workload::GpuCompute> GpuComputeOf(const v1::GpuType& gpu, v1::DType dtype,
                                                         absl::string_view where, bool ideal = false) {
  return workload::GpuCompute::Create(proto::ResolveGpu(gpu), proto::DTypeOf(dtype), where, ideal);
}

// The same with the model's (resolved) dtype.
inline absl::StatusOr<workload::GpuCompute> GpuComputeOf(const v1::GpuType& gpu, spec::DType dtype,
                                                         absl::string_view where, bool ideal = false) {
  return workload::GpuCompute::Create(proto::ResolveGpu(gpu), dtype, where, ideal);
}

// BF16 compute of `gpu` as cluster.pbtxt's first GPU type; the test fails if it does not resolve.
inline workload::GpuCompute Bf16ComputeOk(const v1::GpuType& gpu, bool ideal = false) {
  auto c = GpuComputeOf(gpu, v1::BF16, "cluster.pbtxt: gpu_types[0]", ideal);
  REQUIRE(c.ok());
  return *c;
}

// Compute of the GPU preset `preset` (e.g. "H100-SXM") for `dtype`; the test fails if it does not resolve.
inline workload::GpuCompute PresetComputeOk(const char* preset, v1::DType dtype) {
  v1::GpuType g;
  g.set_preset(preset);
  REQUIRE(proto::ApplyGpuPreset(&g, "c", "gpu").ok());
  auto c = GpuComputeOf(g, dtype, "c", false);
  REQUIRE(c.ok());
  return *std::move(c);
}

// A model's costs beside the compute of the GPU preset that runs it, as the kernel tests price stages.
struct ModelOnGpu {
  workload::ModelCost model;
  workload::GpuCompute gpu;
};

// `model` (read as model.pbtxt) on `preset` in `dtype`; the test fails if either does not resolve.
inline ModelOnGpu ModelOnPresetOk(const v1::Model& model, const char* preset, v1::DType dtype) {
  auto cost = ModelCostOf(model, "model.pbtxt");
  REQUIRE(cost.ok());
  return {*std::move(cost), PresetComputeOk(preset, dtype)};
}

// Llama 3 70B's block shapes (h 8192, FFN 28672, 64 heads, 8 KV heads, 8K tokens) in two blocks, with
// `experts` routed experts (top 2) and a shared expert of `shared` FFN width when experts > 0.
inline v1::Model Llama70bBlocks(v1::DType dtype, int experts = 0, uint64_t shared = 0) {
  v1::Model m;
  m.set_dtype(dtype);
  auto* t = m.mutable_transformer();
  t->set_num_layers(2);
  t->set_hidden_size(8192);
  t->set_ffn_hidden_size(28672);
  t->set_num_attention_heads(64);
  t->set_num_kv_heads(8);
  t->set_seq_length(8192);
  t->set_vocab_size(128256);
  t->set_gated_mlp(true);
  t->set_attention(v1::ATTENTION_FLASH);
  if (experts > 0) {
    t->set_num_experts(experts);
    t->set_moe_top_k(2);
    t->set_moe_shared_expert_ffn_hidden_size(shared);
  }
  return m;
}

// The kernel tests' stage: layer `layer` alone, two samples, at TP `tensor_parallel`.
inline workload::StageConfig OneLayerStage(int layer, int tensor_parallel = 1) {
  workload::StageConfig c;
  c.first_layer = layer;
  c.num_layers = 1;
  c.micro_batch_size = 2;
  c.tensor_parallel = tensor_parallel;
  return c;
}

// The cost of stage `c`; the test fails if the model refuses it.
inline workload::StageCost StageCostOk(const workload::ModelCost& model, const workload::StageConfig& c,
                                       const workload::GpuCompute& gpu) {
  auto cost = workload::ComputeStageCost(model, c, gpu, "plan");
  REQUIRE(cost.ok());
  return *std::move(cost);
}

// How many forward collective calls a stage makes a microbatch (each entry's count).
inline int ForwardCollectiveCalls(const workload::StageCost& cost) {
  int calls = 0;
  for (const workload::StageCollective& sc : cost.forward_collectives) calls += sc.count;
  return calls;
}

// A preset's GPU type with `set` applied to its efficiency fields, its compute for `dtype`; the test fails if it
// does not resolve.
template <typename SetEfficiency>
workload::GpuCompute PresetComputeWith(const char* preset, v1::DType dtype, SetEfficiency set) {
  v1::GpuType g;
  g.set_preset(preset);
  REQUIRE(proto::ApplyGpuPreset(&g, "c", "gpu").ok());
  set(*g.mutable_efficiency());
  auto c = GpuComputeOf(g, dtype, "c", false);
  REQUIRE(c.ok());
  return *std::move(c);
}

// The AMP tests' stage (GPT-2 345M's layers [first, first + count)): micro-batch 1, TP 2, each block's
// forward run `passes` times (Plan.block_forward_passes).
inline workload::StageConfig AmpStageConfig(int first, int count, int passes) {
  workload::StageConfig c;
  c.first_layer = first;
  c.num_layers = count;
  c.micro_batch_size = 1;
  c.tensor_parallel = 2;
  c.block_forward_passes = passes;
  return c;
}

}  // namespace hetsim::testing

#endif  // HETSIM_TESTS_SPEC_TEST_UTIL_H_
