// hetsim import nemo: NeMo 1.x Hydra configs (tests/nemo_data/README.md) read into Megatron flags and
// laid out by the Megatron importer; the layouts computed by hand (world = trainer.num_nodes x devices,
// DP = world / (TP x CP x PP); hetsim's microbatch spans the DP replicas), OmegaConf interpolations
// followed, and every kind of bad config refused by file and key.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "absl/strings/str_cat.h"
#include "service/interop/nemo_import.h"
#include "tests/service/interop/interop_test_util.h"

namespace {

namespace v1 = hetsim::v1;
using hetsim::interop::ImportNemo;
using hetsim::interop::MegatronImportRequest;
using hetsim::interop::NemoBaseModel;

const std::string kNemoData = std::string(HETSIM_SOURCE_DIR) + "/tests/nemo_data/";

std::string NemoRefusal(const std::string& yaml) {
  auto r = ImportNemo(yaml, hetsim::testing::ImportTestCluster(), {}, "bad.yaml");
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(r.status().message());
}

}  // namespace

TEST_CASE("import nemo: the launcher's GPT 5B, interpolations and resolvers followed", "[interop][nemo]") {
  auto r = ImportNemo(hetsim::testing::ImportTestText(kNemoData + "gpt_5b_launcher.yaml"),
                      hetsim::testing::ImportTestCluster(), {}, "gpt_5b_launcher.yaml");
  INFO(r.status());
  REQUIRE(r.ok());
  const v1::Plan& p = r->plan;
  // 2 nodes x 8 = 16 GPUs over TP 2: DP 8.
  REQUIRE(p.stages_size() == 1);
  CHECK(p.stages(0).tensor_parallel() == 2);
  CHECK(p.stages(0).data_parallel() == 8);
  CHECK(p.stages(0).zero_stage() == 1);  // distributed_fused_adam
  CHECK(p.stages(0).sequence_parallel());
  CHECK(p.stages(0).recompute() == v1::RECOMPUTE_FULL);
  CHECK(p.stages(0).recompute_num_layers() == 4);  // block method, 4 layers
  CHECK(p.micro_batch_size() == 2 * 8);
  CHECK(p.global_batch_size() == 64);
  CHECK(p.overlap_grad_reduce());
  const v1::Transformer& t = r->model.transformer();
  CHECK(r->model.dtype() == v1::BF16);
  CHECK(t.ffn_hidden_size() == 4 * 4096);  // ${multiply:4, ${.hidden_size}}
  CHECK(t.seq_length() == 2048);
  CHECK(t.vocab_size() == 50432);  // GPT-2's 50257 padded to a multiple of 128 x TP 2
}

TEST_CASE("import nemo: a Llama 70B under training:, GQA, SwiGLU, an interleaved pipeline", "[interop][nemo]") {
  auto r = ImportNemo(hetsim::testing::ImportTestText(kNemoData + "llama_70b_launcher.yaml"),
                      hetsim::testing::ImportTestCluster(), {}, "llama_70b_launcher.yaml");
  INFO(r.status());
  REQUIRE(r.ok());
  const v1::Plan& p = r->plan;
  // 4 x 8 = 32 GPUs = TP 4 x PP 4 x DP 2; 80 layers in 4 x 5 chunks of 4.
  REQUIRE(p.stages_size() == 4);
  CHECK(p.stages(0).data_parallel() == 2);
  CHECK(p.schedule() == v1::INTERLEAVED_1F1B);
  CHECK(p.virtual_stages() == 5);
  CHECK(p.overlap_param_gather());
  CHECK_FALSE(p.blocking_p2p());
  const v1::Transformer& t = r->model.transformer();
  CHECK(t.num_kv_heads() == 8);
  CHECK(t.gated_mlp());
  CHECK_FALSE(t.tied_embeddings());
  CHECK(t.vocab_size() == 32256);  // Llama 2's 32000, padded to a multiple of 128 x TP 4 as Megatron does
  // The nodes given on the command line win over trainer.num_nodes.
  MegatronImportRequest eight;
  eight.nodes = 8;
  auto wider = ImportNemo(hetsim::testing::ImportTestText(kNemoData + "llama_70b_launcher.yaml"),
                          hetsim::testing::ImportTestCluster(), eight, "l.yaml");
  REQUIRE(wider.ok());
  CHECK(wider->plan.stages(0).data_parallel() == 4);
}

TEST_CASE("import nemo: bad configs name the file, the key and the problem", "[interop][nemo]") {
  CHECK_THAT(NemoRefusal("model: [1, 2\n"), Catch::StartsWith("bad.yaml:"));
  CHECK_THAT(NemoRefusal("- a\n- b\n"), Catch::Contains("bad.yaml: not a NeMo config"));
  CHECK_THAT(NemoRefusal("trainer:\n  devices: 8\n"), Catch::Contains("bad.yaml: model: required"));
  CHECK_THAT(NemoRefusal("model:\n  num_layers: twelve\n  tensor_model_parallel_size: [1]\n"),
             Catch::Contains("bad.yaml: model.tensor_model_parallel_size: not a single value"));
  CHECK_THAT(NemoRefusal("model:\n  num_layers: 2\n  hidden_size: ${.missing}\n"),
             Catch::Contains("bad.yaml: model.hidden_size: ${.missing}"));
  CHECK_THAT(NemoRefusal("model:\n  hidden_size: ${oc.env:HIDDEN}\n"),
             Catch::Contains("an OmegaConf resolver hetsim does not know"));
  CHECK_THAT(NemoRefusal("model:\n  a: ${.b}\n  b: ${.a}\n  hidden_size: ${.a}\n"),
             Catch::Contains("interpolations nest too deep"));
  CHECK_THAT(NemoRefusal("model:\n  global_batch_size: ???\n"),
             Catch::Contains("model.global_batch_size: ??? (a value the config leaves to the command line)"));
  CHECK_THAT(NemoRefusal("model:\n  sequence_parallel: maybe\n"),
             Catch::Contains("model.sequence_parallel: \"maybe\" is not true or false"));
}

TEST_CASE("import nemo: other model families are refused by name, mcore_gpt is Megatron-Core", "[interop][nemo]") {
  const std::string model =
      "model:\n  num_layers: 2\n  hidden_size: 256\n  num_attention_heads: 4\n  max_position_embeddings: 512\n"
      "  encoder_seq_length: 512\n  micro_batch_size: 1\n  global_batch_size: 8\n  sequence_parallel: true\n";
  CHECK(NemoRefusal("name: megatron_bert\n" + model) ==
        "bad.yaml: name: megatron_bert: NeMo's BERT (an encoder with bidirectional attention and its MLM head), which "
        "hetsim does not model (it prices GPT-style decoders: megatron_gpt, megatron_llama, ...)");
  CHECK_THAT(NemoRefusal("name: megatron_t5\n" + model), Catch::Contains("NeMo's T5"));
  MegatronImportRequest one_node;
  one_node.nodes = 1;
  // --sequence-parallel alone reads as Megatron-LM of 2022; NeMo's mcore_gpt says Megatron-Core.
  auto imported =
      ImportNemo("name: megatron_gpt\n" + model, hetsim::testing::ImportTestCluster(), one_node, "gpt.yaml");
  INFO(imported.status().message());
  REQUIRE(imported.ok());
  CHECK(imported->plan.framework() == v1::MEGATRON_LM_2022);
  imported = ImportNemo("name: megatron_gpt\n" + model + "  mcore_gpt: true\n", hetsim::testing::ImportTestCluster(),
                        one_node, "gpt.yaml");
  REQUIRE(imported.ok());
  CHECK(imported->plan.framework() == v1::MEGATRON_CORE);
}

// What NeMo runs for use_flash_attention (megatron_gpt_model.py, NVIDIA/NeMo 8cfedd7): the key reaches
// the legacy GPTModel only; with mcore_gpt the layer spec decides, by model.name first (get_specs):
// Megatron-Core's local layers (transformer_engine false) are unfused whatever the key says, Falcon's spec
// is Transformer Engine's whatever transformer_engine says, Gemma 2's attention is unfused.
TEST_CASE("import nemo: use_flash_attention and the layer spec NeMo builds", "[interop][nemo]") {
  const std::string model =
      "model:\n  num_layers: 2\n  hidden_size: 256\n  num_attention_heads: 4\n  max_position_embeddings: 512\n"
      "  encoder_seq_length: 512\n  micro_batch_size: 1\n  global_batch_size: 8\n";
  MegatronImportRequest one_node;
  one_node.nodes = 1;
  const auto import = [&](const std::string& name, const std::string& keys) {
    auto r = ImportNemo("name: x\n" + model + "  name: " + name + "\n" + keys, hetsim::testing::ImportTestCluster(),
                        one_node, "gpt.yaml");
    INFO(r.status().message());
    REQUIRE(r.ok());
    return *std::move(r);
  };
  const auto local =
      import("megatron_gpt", "  mcore_gpt: true\n  transformer_engine: false\n  use_flash_attention: true\n");
  CHECK(local.model.transformer().attention() == v1::ATTENTION_UNFUSED);
  CHECK(hetsim::testing::HasImportNote(local.notes, "model.use_flash_attention: no effect with mcore_gpt"));
  const auto legacy = import("megatron_gpt", "  mcore_gpt: false\n  use_flash_attention: true\n");
  CHECK(legacy.model.transformer().attention() == v1::ATTENTION_FLASH);
  const auto te = import("megatron_gpt", "  mcore_gpt: true\n  transformer_engine: true\n");
  CHECK(te.model.transformer().attention() == v1::ATTENTION_FLASH);
  // Falcon's spec is Transformer Engine's with transformer_engine absent (NeMo's examples/ Falcon config).
  const auto falcon = import("megatron_falcon_gpt", "  mcore_gpt: true\n");
  CHECK(falcon.model.transformer().attention() == v1::ATTENTION_FLASH);
  const auto gemma2 =
      import("megatron_gemma2", "  mcore_gpt: true\n  transformer_engine: true\n  use_flash_attention: true\n");
  CHECK(gemma2.model.transformer().attention() == v1::ATTENTION_UNFUSED);
}

namespace {

hetsim::interop::MegatronImport ImportCorpusNemo(const char* file, const std::string& text = "") {
  const std::string path = hetsim::testing::CorpusFile("launch-corpus", file).string();
  auto r = ImportNemo(text.empty() ? hetsim::testing::ImportTestText(path) : text, hetsim::testing::ImportTestCluster(),
                      {}, file);
  INFO(file << ": " << r.status());
  REQUIRE(r.ok());
  return *std::move(r);
}

}  // namespace

// The launcher's MoE configs set Megatron-Core's moe_* fields, which NeMo passes on by name: read as
// `import megatron` reads the flags of the same names (it priced Mixtral's all-to-all as the allgather
// dispatcher, Grok-1's grouped GEMM as one GEMM per expert).
TEST_CASE("import nemo: the moe_* keys of the launcher's Mixtral and Grok-1 configs", "[interop][nemo][corpus]") {
  // Mixtral 8x7B: alltoall, moe_grouped_gemm false, capacity factor 1.0 with padding, an auxiliary loss.
  const hetsim::interop::MegatronImport mixtral = ImportCorpusNemo("nemo-launcher_mixtral_8x7b.yaml");
  const v1::Transformer& t = mixtral.model.transformer();
  CHECK(t.num_experts() == 8);
  CHECK(t.moe_top_k() == 2);
  CHECK(t.moe_token_dispatcher() == v1::MOE_DISPATCHER_ALL_TO_ALL);
  CHECK_FALSE(t.moe_grouped_gemm());
  CHECK(hetsim::testing::HasImportNote(mixtral.notes, "not modelled (ignored): --moe-expert-capacity-factor 1.0"));
  CHECK(hetsim::testing::HasImportNote(mixtral.notes, "--moe-pad-expert-input-to-capacity"));
  CHECK(hetsim::testing::HasImportNote(mixtral.notes, "--moe-token-dispatcher-type alltoall"));
  CHECK_FALSE(hetsim::testing::HasImportNote(mixtral.notes, "not applied"));
  // Mixtral 8x3B: the same keys.
  const hetsim::interop::MegatronImport small = ImportCorpusNemo("nemo-launcher_mixtral_8x3b.yaml");
  CHECK(small.model.transformer().moe_token_dispatcher() == v1::MOE_DISPATCHER_ALL_TO_ALL);
  CHECK_FALSE(small.model.transformer().moe_grouped_gemm());
  // Grok-1's proxy: grouped GEMM and alltoall.
  const hetsim::interop::MegatronImport grok = ImportCorpusNemo("nemo-launcher_grok1_proxy.yaml");
  CHECK(grok.model.transformer().moe_grouped_gemm());
  CHECK(grok.model.transformer().moe_token_dispatcher() == v1::MOE_DISPATCHER_ALL_TO_ALL);
  CHECK(grok.model.transformer().num_experts() == 8);
  // Without the dispatcher key, Megatron-Core's default (allgather); a list moe_layer_freq is Megatron's
  // --moe-layer-freq list (the first block dense); a moe_* key no Megatron flag is named after is noted.
  std::string text = hetsim::testing::ImportTestText(
      hetsim::testing::CorpusFile("launch-corpus", "nemo-launcher_mixtral_8x7b.yaml").string());
  const std::string dispatcher = "  moe_token_dispatcher_type: alltoall\n";
  REQUIRE(text.find(dispatcher) != std::string::npos);
  std::string layers = "[0";
  for (int i = 1; i < 32; ++i) layers += ", 1";
  text.replace(text.find(dispatcher), dispatcher.size(),
               absl::StrCat("  moe_layer_freq: ", layers, "]\n  moe_frobnication: 3\n"));
  const hetsim::interop::MegatronImport edited = ImportCorpusNemo("nemo-launcher_mixtral_8x7b.yaml", text);
  CHECK(edited.model.transformer().moe_token_dispatcher() == v1::MOE_DISPATCHER_ALL_GATHER);
  CHECK(edited.model.transformer().moe_first_dense_layers() == 1);
  CHECK(hetsim::testing::HasImportNote(edited.notes, "model.moe_frobnication 3: not applied"));
  // A moe_layer_freq list of other things is refused by key.
  std::string bad = text;
  bad.replace(bad.find("moe_layer_freq: [0"), 18, "moe_layer_freq: [x");
  CHECK_THAT(NemoRefusal(bad), Catch::Contains("model.moe_layer_freq: not a list of whole numbers"));
}

// NeMo-Aligner's DPO (trainer.dpo): its batch sizes count chosen/rejected pairs, two sequences each; the plan prices
// the reference policy's forward with NeMo-Aligner's CPU weight swap. By hand: 1 node of 8 GPUs at TP 2, DP 4; a
// micro-batch of 2 pairs is 4 sequences a replica (16 over DP 4), 8 pairs a step are 16 sequences.
TEST_CASE("import nemo: NeMo-Aligner's DPO reads pairs as two sequences and prices the reference policy",
          "[interop][nemo]") {
  const std::string model =
      "model:\n  mcore_gpt: true\n  num_layers: 2\n  hidden_size: 256\n  num_attention_heads: 4\n"
      "  max_position_embeddings: 512\n  encoder_seq_length: 512\n  micro_batch_size: 2\n  global_batch_size: 8\n"
      "  tensor_model_parallel_size: 2\n  qk_layernorm: true\n";
  const std::string dpo = "trainer:\n  num_nodes: 1\n  devices: 8\n  dpo:\n    max_steps: 10\n" + model +
                          "  dpo:\n    log_prob_forward_micro_batch_size: ${model.micro_batch_size}\n";
  auto imported = ImportNemo(dpo, hetsim::testing::ImportTestCluster(), {}, "dpo.yaml");
  INFO((imported.ok() ? "" : imported.status().message()));
  REQUIRE(imported.ok());
  CHECK(imported->plan.stages(0).tensor_parallel() == 2);
  CHECK(imported->plan.stages(0).data_parallel() == 4);
  CHECK(imported->plan.global_batch_size() == 16);
  CHECK(imported->plan.micro_batch_size() == 16);  // 4 sequences a replica
  CHECK(imported->plan.reference_policy().cpu_weight_swap());
  CHECK(imported->plan.model().transformer().qk_layernorm());
  CHECK(hetsim::testing::HasImportNote(imported->notes, "global_batch_size 8 and micro_batch_size 2 count"));
  CHECK_FALSE(hetsim::testing::HasImportNote(imported->notes, "log_prob_forward_micro_batch_size"));
  // A reference forward in other microbatches than the training's is noted.
  imported = ImportNemo("trainer:\n  num_nodes: 1\n  devices: 8\n  dpo:\n    max_steps: 10\n" + model +
                            "  dpo:\n    log_prob_forward_micro_batch_size: 1\n",
                        hetsim::testing::ImportTestCluster(), {}, "dpo.yaml");
  REQUIRE(imported.ok());
  CHECK(hetsim::testing::HasImportNote(imported->notes, "not modelled: model.dpo.log_prob_forward_micro_batch_size 1"));
  // The same config without trainer.dpo is one model's training at its own batch.
  imported = ImportNemo("trainer:\n  num_nodes: 1\n  devices: 8\n" + model, hetsim::testing::ImportTestCluster(), {},
                        "sft.yaml");
  REQUIRE(imported.ok());
  CHECK_FALSE(imported->plan.has_reference_policy());
  CHECK(imported->plan.global_batch_size() == 8);
  // KTO and SPIN are not priced.
  CHECK_THAT(NemoRefusal("trainer:\n  kto:\n    max_steps: 1\n" + model),
             Catch::Contains("trainer.kto: NeMo-Aligner's KTO"));
}

// A NeMo config merged over the checkpoint's model config (--model): the config's keys win, sections merge key by key.
TEST_CASE("import nemo: a config over its checkpoint's model config", "[interop][nemo]") {
  const std::string checkpoint =
      "num_layers: 4\nhidden_size: 512\nnum_attention_heads: 8\nmax_position_embeddings: 1024\n"
      "encoder_seq_length: 1024\nmicro_batch_size: 4\nglobal_batch_size: 256\nmcore_gpt: true\n"
      "optim:\n  name: distributed_fused_adam\n  overlap_grad_sync: true\n";
  const std::string config =
      "trainer:\n  num_nodes: 1\n  devices: 8\nmodel:\n  micro_batch_size: 1\n"
      "  global_batch_size: 16\n  optim:\n    lr: 1e-6\n";
  auto imported = ImportNemo(config, hetsim::testing::ImportTestCluster(), {}, "sft.yaml",
                             NemoBaseModel{checkpoint, "model_config.yaml"});
  INFO((imported.ok() ? "" : imported.status().message()));
  REQUIRE(imported.ok());
  CHECK(imported->plan.model().transformer().num_layers() == 4);
  CHECK(imported->plan.model().transformer().hidden_size() == 512);
  CHECK(imported->plan.global_batch_size() == 16);
  CHECK(imported->plan.micro_batch_size() == 8);  // 1 a replica over DP 8
  CHECK(imported->plan.overlap_grad_reduce());    // the checkpoint's optim key, beside the config's lr
  // Without it the config has no shape.
  CHECK_THAT(NemoRefusal(config), Catch::Contains("no num_layers or hidden_size"));
}
