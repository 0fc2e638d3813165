// proto/validate_model and proto/layer_count: one test per rule.
#include <limits>

#include <catch2/catch.hpp>

#include "proto/layer_count.h"
#include "proto/validate_model.h"
#include "tests/proto/validate_test_util.h"

namespace {

using hetsim::proto::ValidateModel;
using hetsim::testing::Example;
using hetsim::v1::Model;

Model Gpt() { return Example<Model>("model-gpt39b"); }

Model TwoLayers() {
  Model m;
  auto* list = m.mutable_layer_list();
  list->set_seq_length(2048);
  for (int i = 0; i < 2; ++i) {
    auto* l = list->add_layers();
    l->set_forward_gflop_per_sample(10);
    l->set_param_count(1000);
  }
  return m;
}

}  // namespace

TEST_CASE("LayerCount: BLOCK is blocks + 2, SUBLAYER 2 x blocks + 2, a list its size", "[validate]") {
  Model m = Gpt();
  CHECK(hetsim::proto::LayerCount(m) == 50);
  m.mutable_transformer()->set_granularity(hetsim::v1::LAYER_GRANULARITY_UNSPECIFIED);
  CHECK(hetsim::proto::LayerCount(m) == 50);
  m.mutable_transformer()->set_granularity(hetsim::v1::SUBLAYER);
  CHECK(hetsim::proto::LayerCount(m) == 98);
  CHECK(hetsim::proto::LayerCount(TwoLayers()) == 2);
  CHECK(hetsim::proto::LayerCount(Model()) == 0);
}

TEST_CASE("GPT-39B has about 39 billion parameters", "[validate]") {
  CHECK(hetsim::proto::ModelParamCount(Gpt()) == Approx(39.1e9).epsilon(0.01));
  CHECK(hetsim::proto::ModelParamCount(TwoLayers()) == 2000);
}

TEST_CASE("model: valid examples and layer lists pass", "[validate]") {
  CHECK(ValidateModel(Gpt(), "m.pbtxt").ok());
  CHECK(ValidateModel(TwoLayers(), "m.pbtxt").ok());
}

TEST_CASE("model: an architecture is required", "[validate]") {
  CHECK_PROBLEM(ValidateModel(Model(), "m.pbtxt"), "m.pbtxt: transformer: required: a transformer or a layer_list");
}

TEST_CASE("model: the inline prefix goes before every path", "[validate]") {
  Model m = Gpt();
  m.mutable_transformer()->set_num_layers(0);
  CHECK_PROBLEM(ValidateModel(m, "plan.pbtxt", "model."), "plan.pbtxt: model.transformer.num_layers: required");
}

TEST_CASE("model: transformer sizes are required and bounded", "[validate]") {
  Model m = Gpt();
  m.mutable_transformer()->set_hidden_size(0);
  m.mutable_transformer()->set_seq_length(0);
  m.mutable_transformer()->set_vocab_size(1'000'000'000);
  m.mutable_transformer()->set_num_layers(200'000);
  const auto s = ValidateModel(m, "m.pbtxt");
  CHECK_PROBLEM(s, "m.pbtxt: transformer.hidden_size: required");
  CHECK_PROBLEM(s, "m.pbtxt: transformer.seq_length: required");
  CHECK_PROBLEM(s, "m.pbtxt: transformer.vocab_size: 1000000000 is more than 100000000");
  CHECK_PROBLEM(s, "m.pbtxt: transformer.num_layers: 200000 is more than 100000");
}

TEST_CASE("model: heads divide the hidden size, KV heads divide the heads", "[validate]") {
  Model m = Gpt();
  m.mutable_transformer()->set_num_attention_heads(60);
  CHECK_PROBLEM(ValidateModel(m, "m.pbtxt"),
                "m.pbtxt: transformer.num_attention_heads: 60 does not divide hidden_size 8192");
  m = Gpt();
  m.mutable_transformer()->set_num_kv_heads(6);
  CHECK_PROBLEM(ValidateModel(m, "m.pbtxt"),
                "m.pbtxt: transformer.num_kv_heads: 6 does not divide num_attention_heads 64");
}

TEST_CASE("model: MoE top-k lies between 1 and the expert count, MoE fields need experts", "[validate]") {
  Model m = Gpt();
  m.mutable_transformer()->set_num_experts(8);
  m.mutable_transformer()->set_moe_top_k(9);
  CHECK_PROBLEM(ValidateModel(m, "m.pbtxt"), "m.pbtxt: transformer.moe_top_k: 9 is outside [1, num_experts = 8]");
  m = Gpt();
  m.mutable_transformer()->set_moe_top_k(2);
  m.mutable_transformer()->set_expert_ffn_hidden_size(1024);
  CHECK_PROBLEM(ValidateModel(m, "m.pbtxt"), "m.pbtxt: transformer.moe_top_k: 2 needs num_experts > 1");
  CHECK_PROBLEM(ValidateModel(m, "m.pbtxt"), "m.pbtxt: transformer.expert_ffn_hidden_size: set but num_experts <= 1");
}

TEST_CASE("model: layer lists need layers, a sequence length and finite sizes", "[validate]") {
  Model m = TwoLayers();
  m.mutable_layer_list()->set_seq_length(0);
  m.mutable_layer_list()->mutable_layers(1)->set_forward_gflop_per_sample(std::numeric_limits<double>::infinity());
  m.mutable_layer_list()->mutable_layers(0)->set_activation_bytes_per_sample(uint64_t{1} << 60);
  const auto s = ValidateModel(m, "m.pbtxt");
  CHECK_PROBLEM(s, "m.pbtxt: layer_list.seq_length: required");
  CHECK_PROBLEM(s, "m.pbtxt: layer_list.layers[1].forward_gflop_per_sample: inf is not a finite number");
  CHECK_PROBLEM(s, "m.pbtxt: layer_list.layers[0].activation_bytes_per_sample: 1152921504606846976 is more than 1e+15");
  m.mutable_layer_list()->clear_layers();
  CHECK_PROBLEM(ValidateModel(m, "m.pbtxt"), "m.pbtxt: layer_list.layers: required: at least one layer");
}

TEST_CASE("model: a model beyond 1e15 parameters is rejected", "[validate]") {
  Model m = Gpt();
  m.mutable_transformer()->set_hidden_size(1'000'000);
  m.mutable_transformer()->set_num_attention_heads(1000);
  m.mutable_transformer()->set_ffn_hidden_size(4'000'000);
  m.mutable_transformer()->set_num_layers(100'000);
  CHECK_PROBLEM(ValidateModel(m, "m.pbtxt"), "m.pbtxt: transformer: ");
  CHECK_PROBLEM(ValidateModel(m, "m.pbtxt"), "parameters, more than 1e+15");
}
