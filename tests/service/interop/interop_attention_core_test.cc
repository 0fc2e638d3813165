// The unfused attention core's two fields of the Sailor set (Transformer.no_attention_dropout,
// UnfusedKernels.masked_fill_on_view) as the importers read them from real inputs, the exporters write
// them back, and `check` prints them.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "proto/inputs.h"
#include "proto/summary.h"
#include "proto/validate_plan.h"
#include "service/interop/megatron_export.h"
#include "service/interop/megatron_flags.h"
#include "service/interop/megatron_import.h"
#include "service/interop/nemo_import.h"
#include "tests/service/interop/interop_test_util.h"

namespace {

namespace v1 = hetsim::v1;
using hetsim::interop::MegatronImport;

// A launch script's text (the corpus file `file`, maybe edited) imported on `nodes` nodes.
MegatronImport ImportScript(const char* file, const std::string& text, int64_t nodes) {
  const std::string path = hetsim::testing::CorpusFile("launch-corpus", file).string();
  absl::StatusOr<hetsim::interop::MegatronFlags> flags = hetsim::interop::ParseMegatronLaunchLine(text, path);
  REQUIRE(flags.ok());
  hetsim::interop::MegatronImportRequest request;
  request.nodes = nodes;
  absl::StatusOr<MegatronImport> r =
      hetsim::interop::ImportMegatron(*flags, hetsim::testing::ImportTestCluster(), request, path);
  INFO(file << ": " << r.status());
  REQUIRE(r.ok());
  return *std::move(r);
}

// `text` with `from` (which must be there) replaced by `to`.
std::string Edited(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.rfind(from);  // the last: scripts keep commented-out copies of their flags above
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

// A NeMo config's text (the corpus file `file`, maybe edited), imported.
MegatronImport ImportNemoText(const std::string& yaml, const char* file) {
  absl::StatusOr<MegatronImport> r = hetsim::interop::ImportNemo(yaml, hetsim::testing::ImportTestCluster(), {}, file);
  INFO(r.status());
  REQUIRE(r.ok());
  return *std::move(r);
}

std::string CheckText(const MegatronImport& imported) {
  hetsim::proto::PlanInputs in;
  in.cluster = hetsim::testing::ImportTestCluster();
  in.model = imported.model;
  in.plan = imported.plan;
  in.plan_path = "plan.pbtxt";
  REQUIRE(hetsim::proto::ValidatePlanInputs(in).ok());
  return hetsim::proto::SummarizeModel(in.model, "plan.pbtxt") + hetsim::proto::SummarizePlan(in);
}

}  // namespace

// Megatron-DeepSpeed's Llama fine-tuning line: --attention-dropout 0 in its unfused attention (no
// --use-flash-attn), --no-masked-softmax-fusion and --no-query-key-layer-scaling, in BF16. Its mask runs
// on a copy of the scores (cast to FP32 for the softmax); run in FP32 it runs on their view.
TEST_CASE("import: the unfused attention core's dropout and mask, from a Megatron-DeepSpeed line",
          "[interop][corpus]") {
  const char* file = "megatron-deepspeed_finetune_hf_llama.sh";
  const std::string text = hetsim::testing::ImportTestText(hetsim::testing::CorpusFile("launch-corpus", file).string());
  const MegatronImport bf16 = ImportScript(file, text, 1);
  CHECK(bf16.model.transformer().attention() == v1::ATTENTION_UNFUSED);
  CHECK(bf16.model.transformer().no_attention_dropout());
  CHECK(bf16.plan.unfused_kernels().masked_softmax());
  CHECK_FALSE(bf16.plan.unfused_kernels().masked_fill_on_view());
  CHECK(
      hetsim::testing::HasImportNote(bf16.notes, "--attention-dropout 0: the unfused attention core runs no dropout"));
  // The same line in FP32 (no --bf16, its DeepSpeed config's bf16 off).
  const std::string fp32_text = Edited(Edited(text, "--bf16 \\\n", ""), "\"bf16\": {\n    \"enabled\": true",
                                       "\"bf16\": {\n    \"enabled\": false");
  const MegatronImport fp32 = ImportScript(file, fp32_text, 1);
  CHECK(fp32.model.dtype() == v1::FP32);
  CHECK(fp32.plan.unfused_kernels().masked_fill_on_view());
  CHECK(hetsim::testing::HasImportNote(fp32.notes, "unfused_kernels.masked_fill_on_view"));
  const std::string check = CheckText(fp32);
  CHECK_THAT(check, Catch::Contains("no dropout on the attention probabilities"));
  CHECK_THAT(check, Catch::Contains("in place on a view of the scores (masked_fill_on_view"));
  // With query-key layer scaling (Megatron-DeepSpeed's default), the scores are scaled into a new tensor.
  const MegatronImport scaled = ImportScript(file, Edited(fp32_text, "--no-query-key-layer-scaling \\\n", ""), 1);
  CHECK(scaled.plan.unfused_kernels().masked_softmax());
  CHECK_FALSE(scaled.plan.unfused_kernels().masked_fill_on_view());
  CHECK_THAT(CheckText(scaled), Catch::Contains("unfused kernels, each a pass of its own"));
  CHECK_THAT(CheckText(scaled), !Catch::Contains("masked_fill_on_view"));
  // A dropout above 0, or flash attention: neither field.
  const MegatronImport dropout =
      ImportScript(file, Edited(text, "--attention-dropout 0 \\\n", "--attention-dropout 0.1 \\\n"), 1);
  CHECK_FALSE(dropout.model.transformer().no_attention_dropout());
  const MegatronImport flash = ImportScript(file, Edited(text, "--bf16 \\\n", "--bf16 --use-flash-attn \\\n"), 1);
  CHECK_FALSE(flash.model.transformer().no_attention_dropout());
  // Exported as today's Megatron-LM line and read back: both fields kept.
  for (const MegatronImport* m : {&bf16, &fp32, &scaled}) {
    hetsim::proto::PlanInputs in;
    in.cluster = hetsim::testing::ImportTestCluster();
    in.model = m->model;
    in.plan = m->plan;
    absl::StatusOr<hetsim::interop::MegatronExport> e = hetsim::interop::ExportMegatron(in);
    INFO(e.status());
    REQUIRE(e.ok());
    std::string line =
        absl::StrCat("torchrun --nproc_per_node ", e->gpus_per_node, " --nnodes ", e->nodes, " pretrain_gpt.py");
    for (const std::string& f : e->flags) absl::StrAppend(&line, " ", f);
    INFO(line);
    absl::StatusOr<hetsim::interop::MegatronFlags> flags = hetsim::interop::ParseMegatronLaunchLine(line, "line.sh");
    REQUIRE(flags.ok());
    absl::StatusOr<MegatronImport> again =
        hetsim::interop::ImportMegatron(*flags, hetsim::testing::ImportTestCluster(), {}, "line.sh");
    REQUIRE(again.ok());
    CHECK(again->model.transformer().no_attention_dropout() == m->model.transformer().no_attention_dropout());
    CHECK(again->plan.unfused_kernels().masked_fill_on_view() == m->plan.unfused_kernels().masked_fill_on_view());
  }
}

// NeMo's GPT config (NVIDIA/NeMo's examples/): Megatron-Core's local layers (mcore_gpt, no
// transformer_engine), whose attention is unfused. At attention_dropout 0.0 its core runs no dropout; in
// FP32 with masked_softmax_fusion false its mask runs on the scores' view (NeMo scales the scores only in
// FP16: megatron_base_model.py, build_transformer_config).
TEST_CASE("import nemo: attention_dropout 0 and the mask on a view, from NeMo's GPT config", "[interop][nemo]") {
  const char* file = "nemo_megatron_gpt_config.yaml";
  const std::string text = hetsim::testing::ImportTestText(hetsim::testing::CorpusFile("launch-corpus", file).string());
  auto import = [&](const std::string& yaml) { return ImportNemoText(yaml, file); };
  const MegatronImport as_published = import(text);
  CHECK(as_published.model.transformer().attention() == v1::ATTENTION_UNFUSED);
  CHECK_FALSE(as_published.model.transformer().no_attention_dropout());  // 0.1
  const std::string quiet = Edited(text, "attention_dropout: 0.1", "attention_dropout: 0.0");
  const MegatronImport no_dropout = import(quiet);
  CHECK(no_dropout.model.transformer().no_attention_dropout());
  CHECK_FALSE(no_dropout.plan.unfused_kernels().masked_fill_on_view());  // BF16
  const MegatronImport fp32 = import(Edited(Edited(quiet, "precision: bf16", "precision: 32"),
                                            "masked_softmax_fusion: True", "masked_softmax_fusion: False"));
  CHECK(fp32.model.dtype() == v1::FP32);
  CHECK(fp32.plan.unfused_kernels().masked_softmax());
  CHECK(fp32.plan.unfused_kernels().masked_fill_on_view());
}

// NeMo's GPT config of December 2022 (no mcore_gpt: NeMo's legacy GPTModel, priced with Megatron-LM 2022's
// profile) run in FP32: the legacy model scales the scores by the layer number (apply_query_key_layer_scaling,
// its default true) into a new tensor, so its mask does not run on the scores' view; false is Megatron-LM's
// --no-query-key-layer-scaling, and the mask runs on the view (it was not read before session 40).
TEST_CASE("import nemo: the legacy GPTModel's apply_query_key_layer_scaling false, in FP32", "[interop][nemo]") {
  const char* file = "nemo-2022_megatron_gpt_config.yaml";
  const std::string text = hetsim::testing::ImportTestText(hetsim::testing::CorpusFile("launch-corpus", file).string());
  auto import = [&](const std::string& yaml) { return ImportNemoText(yaml, file); };
  const std::string fp32 = Edited(text, "precision: 16", "precision: 32");
  const MegatronImport scaled = import(fp32);
  CHECK(scaled.plan.framework() == v1::MEGATRON_LM_2022);
  CHECK(scaled.model.dtype() == v1::FP32);
  CHECK(scaled.plan.unfused_kernels().masked_softmax());  // FP32 scores: no fused softmax kernel takes them
  CHECK_FALSE(scaled.plan.unfused_kernels().masked_fill_on_view());
  const MegatronImport unscaled =
      import(Edited(fp32, "apply_query_key_layer_scaling: True", "apply_query_key_layer_scaling: False"));
  CHECK(unscaled.plan.unfused_kernels().masked_fill_on_view());
  // In FP16 (as published) the fused kernel runs, and the key changes nothing priced.
  const MegatronImport fp16 =
      import(Edited(text, "apply_query_key_layer_scaling: True", "apply_query_key_layer_scaling: False"));
  CHECK_FALSE(fp16.plan.unfused_kernels().masked_softmax());
  CHECK_FALSE(fp16.plan.unfused_kernels().masked_fill_on_view());
}
