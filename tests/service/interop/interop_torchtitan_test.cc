// hetsim import torchtitan: torchtitan's TOML training configs (tests/torchtitan_data/README.md) become
// plans laid out and run as torchtitan runs them; the layouts are computed by hand from torchtitan's
// rules (data_parallel_shard_degree -1 takes the GPUs the other degrees leave; without pipelines the
// local batch is one microbatch; hetsim's microbatch spans the data-parallel replicas). The
// published configs are in the corpus (tests/service/interop/interop_corpus_test.cc).
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "service/interop/torchtitan_import.h"
#include "tests/service/interop/interop_test_util.h"

namespace {

namespace v1 = hetsim::v1;
using hetsim::interop::ImportTorchtitan;
using hetsim::interop::MegatronImportRequest;

const std::string kData = std::string(HETSIM_SOURCE_DIR) + "/tests/torchtitan_data/";

// The status message of a config that must be refused.
std::string Refusal(const std::string& toml, MegatronImportRequest request = {}) {
  auto r = ImportTorchtitan(toml, hetsim::testing::ImportTestCluster(), request, "bad.toml");
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(r.status().message());
}

}  // namespace

TEST_CASE("import torchtitan: the 2025 layout, FSDP x TP with float8 and async TP", "[interop][torchtitan]") {
  MegatronImportRequest request;
  request.nodes = 2;  // 16 GPUs: shard -1 takes 16 / TP 2 = 8
  auto r = ImportTorchtitan(hetsim::testing::ImportTestText(kData + "llama3_8b_2025.toml"),
                            hetsim::testing::ImportTestCluster(), request, "llama3_8b_2025.toml");
  INFO(r.status());
  REQUIRE(r.ok());
  const v1::Plan& p = r->plan;
  REQUIRE(p.stages_size() == 1);
  CHECK(p.stages(0).tensor_parallel() == 2);
  CHECK(p.stages(0).data_parallel() == 8);
  CHECK(p.stages(0).zero_stage() == 3);  // FSDP2
  CHECK(p.stages(0).sequence_parallel());
  CHECK(p.stages(0).recompute() == v1::RECOMPUTE_FULL);
  CHECK(p.global_batch_size() == 32);
  CHECK(p.micro_batch_size() == 2 * 8);  // the local batch, over the 8 data-parallel replicas
  CHECK(p.zero3_prefetch());
  CHECK(p.zero3_lock_step());
  CHECK(p.overlap_grad_reduce());
  CHECK(p.grad_reduce_in_fp32());  // mixed_precision_reduce's default float32
  CHECK(p.tp_comm_overlap());      // async TP
  CHECK_FALSE(p.tp_backward_overlap());
  CHECK(p.framework() == v1::FSDP2_TORCHTITAN);
  const v1::Transformer& t = r->model.transformer();
  CHECK(r->model.dtype() == v1::FP8);
  CHECK(t.num_layers() == 32);
  CHECK(t.hidden_size() == 4096);
  CHECK(t.num_kv_heads() == 8);
  // 1024 x ceil(1.3 x int(8 x 4096 / 3) / 1024) = 1024 x ceil(14198.1 / 1024) = 14336.
  CHECK(t.ffn_hidden_size() == 14336);
  CHECK(t.vocab_size() == 128256);
  CHECK(t.seq_length() == 8192);
  CHECK_FALSE(t.tied_embeddings());
  CHECK(hetsim::testing::HasImportNote(r->notes, "torch.compile: the blocks' elementwise ops fused"));
  CHECK(hetsim::testing::HasImportNote(r->notes, "enable_fsdp_float8_all_gather: not modelled"));
  CHECK(hetsim::testing::HasImportNote(r->notes, "not applied (unknown to this importer): some_new_section.new_knob"));
  CHECK(hetsim::testing::HasImportNote(
      r->notes, "no effect on an iteration's cost: job.description, job.dump_folder, metrics.log_freq"));
}

TEST_CASE("import torchtitan: the 2024 layout, an interleaved 3D plan from split points", "[interop][torchtitan]") {
  auto r = ImportTorchtitan(hetsim::testing::ImportTestText(kData + "llama3_70b_pp_2024.toml"),
                            hetsim::testing::ImportTestCluster(), {}, "llama3_70b_pp_2024.toml");
  INFO(r.status());
  REQUIRE(r.ok());
  const v1::Plan& p = r->plan;
  // 2 x 4 x 4 = 32 GPUs; 8 stages from 7 split points over PP 4: two chunks per rank of 10 blocks.
  REQUIRE(p.stages_size() == 4);
  CHECK(p.stages(0).tensor_parallel() == 4);
  CHECK(p.stages(0).data_parallel() == 2);
  CHECK(p.schedule() == v1::INTERLEAVED_1F1B);
  CHECK(p.virtual_stages() == 2);
  // The local batch 8 in 4 microbatches of 2 samples, over DP 2; the global batch 8 x DP 2.
  CHECK(p.micro_batch_size() == 2 * 2);
  CHECK(p.global_batch_size() == 16);
  CHECK(p.stages(0).zero_stage() == 3);
  CHECK_FALSE(p.blocking_p2p());
  CHECK(r->model.dtype() == v1::BF16);
  CHECK(r->model.transformer().ffn_hidden_size() == 28672);
  CHECK(hetsim::testing::HasImportNote(r->notes, "pipeline_parallel_split_points: 8 stages"));
  CHECK(hetsim::testing::HasImportNote(r->notes, "selective (op)"));
}

TEST_CASE("import torchtitan: bad configs name the file, the key and the problem", "[interop][torchtitan]") {
  CHECK_THAT(Refusal("[model\nname = 1\n"), Catch::StartsWith("bad.toml:1:"));
  CHECK_THAT(
      Refusal("[model]\nname = \"llama3\"\nflavor = \"13B\"\n"),
      Catch::Contains("bad.toml: model.flavor: \"13B\": not a llama3 flavor (known: debugmodel, 8B, 70B, 405B)"));
  CHECK_THAT(Refusal("[model]\nname = \"llama2\"\nflavor = \"8B\"\n"),
             Catch::Contains("not a llama2 flavor (known: debugmodel, 7B, 13B, 70B)"));
  CHECK_THAT(Refusal("[model]\nname = \"flux\"\n"), Catch::Contains("bad.toml: model.name: \"flux\""));
  CHECK_THAT(Refusal("[parallelism]\ntensor_parallel_degree = \"8\"\n"),
             Catch::Contains("bad.toml: parallelism.tensor_parallel_degree: not an integer"));
  CHECK_THAT(Refusal("[parallelism]\ntensor_parallel_degree = 0\n"),
             Catch::Contains("parallelism.tensor_parallel_degree: 0: must be >= 1"));
  CHECK_THAT(Refusal("[parallelism]\npipeline_parallel_degree = 2\npipeline_parallel_schedule = \"ZBVZeroBubble\"\n"),
             Catch::Contains("parallelism.pipeline_parallel_schedule: \"ZBVZeroBubble\": not modelled"));
  MegatronImportRequest one_node;
  one_node.nodes = 1;
  CHECK_THAT(
      Refusal("[parallelism]\ntensor_parallel_degree = 3\n", one_node),
      Catch::Contains("data_parallel_shard_degree: -1 (the rest): the other degrees' product 3 does not divide"));
  CHECK_THAT(Refusal("[training]\nlocal_batch_size = 3\n[parallelism]\npipeline_parallel_degree = 2\n"
                     "pipeline_parallel_microbatch_size = 2\n",
                     one_node),
             Catch::Contains("pipeline_parallel_microbatch_size: 2 does not divide training.local_batch_size 3"));
  CHECK_THAT(Refusal("[training]\nenable_cpu_offload = true\n", one_node),
             Catch::Contains("training.enable_cpu_offload: CPU offloading of FSDP is not modelled"));
  CHECK_THAT(Refusal("[activation_checkpoint]\nmode = \"sometimes\"\n", one_node),
             Catch::Contains("activation_checkpoint.mode: \"sometimes\" is not none, selective or full"));
}

// torchtitan's Llama 4 debug config as published (238fa99): llama4_args["debugmodel"] is dim 256, 6 layers,
// 16 heads (n_kv_heads None: as many), vocabulary 2048, multiple_of 256, MoEArgs' defaults (8 experts, top-1,
// one shared expert), interleave_moe_layer_step 2. Dense blocks' FeedForward(hidden_dim = 4 x 256):
// int(2 x 1024 / 3) = 682, up to a multiple of 256: 768. MoE blocks: 682 / (top_k 1 + 1 shared) = 341, up to
// 512, the shared expert 512 x 1. Block i is MoE when (i + 1) % 2 == 0: blocks 1, 3, 5.
TEST_CASE("import torchtitan: Llama 4's debug config, alternate MoE blocks with a shared expert",
          "[interop][torchtitan]") {
  MegatronImportRequest request;
  request.nodes = 1;  // 8 GPUs: shard -1 takes 8
  auto r = ImportTorchtitan(hetsim::testing::ImportTestText(kData + "llama4_debug_model_238fa99.toml"),
                            hetsim::testing::ImportTestCluster(), request, "llama4_debug_model_238fa99.toml");
  INFO(r.status());
  REQUIRE(r.ok());
  const v1::Transformer& t = r->model.transformer();
  CHECK(r->model.name() == "llama4-debugmodel");
  CHECK(t.num_layers() == 6);
  CHECK(t.hidden_size() == 256);
  CHECK(t.num_attention_heads() == 16);
  CHECK(t.vocab_size() == 2048);
  CHECK(t.ffn_hidden_size() == 768);
  CHECK(t.num_experts() == 8);
  CHECK(t.moe_top_k() == 1);
  CHECK(t.expert_ffn_hidden_size() == 512);
  CHECK(t.moe_shared_expert_ffn_hidden_size() == 512);
  CHECK(t.moe_first_dense_layers() == 1);
  CHECK(t.moe_layer_freq() == 2);
  CHECK(t.moe_grouped_gemm());
  CHECK_FALSE(t.tied_embeddings());
  const v1::Plan& p = r->plan;
  CHECK(p.stages(0).data_parallel() == 8);
  CHECK(p.global_batch_size() == 8 * 8);
  CHECK(p.framework() == v1::FSDP2_TORCHTITAN);
}

// DeepSeek-V3's debug config as published (238fa99): deepseekv3_args["debugmodel"] is dim 256, inter_dim
// 1024, moe_inter_dim 256, 6 layers of which n_dense_layers 1 dense, 16 heads, 8 experts top-3 with 2 shared
// (one FeedForward of 2 x 256), MLA without query compression (q_lora_rank 0, kv_lora_rank 512, heads of
// 128 + 64 rotary channels, values of 128).
TEST_CASE("import torchtitan: DeepSeek-V3's debug config, MLA and shared experts", "[interop][torchtitan]") {
  MegatronImportRequest request;
  request.nodes = 1;
  auto r = ImportTorchtitan(hetsim::testing::ImportTestText(kData + "deepseek_v3_debug_model_238fa99.toml"),
                            hetsim::testing::ImportTestCluster(), request, "deepseek_v3_debug_model_238fa99.toml");
  INFO(r.status());
  REQUIRE(r.ok());
  const v1::Transformer& t = r->model.transformer();
  CHECK(t.num_layers() == 6);
  CHECK(t.hidden_size() == 256);
  CHECK(t.ffn_hidden_size() == 1024);
  CHECK(t.num_experts() == 8);
  CHECK(t.moe_top_k() == 3);
  CHECK(t.expert_ffn_hidden_size() == 256);
  CHECK(t.moe_shared_expert_ffn_hidden_size() == 2 * 256);
  CHECK(t.moe_first_dense_layers() == 1);
  REQUIRE(t.has_mla());
  CHECK(t.mla().q_lora_rank() == 0);
  CHECK(t.mla().kv_lora_rank() == 512);
  CHECK(t.mla().qk_head_dim() == 128);
  CHECK(t.mla().qk_pos_emb_head_dim() == 64);
  CHECK(t.mla().v_head_dim() == 128);
  CHECK(hetsim::testing::HasImportNote(r->notes, "block-causal flex attention priced as causal attention"));
}

namespace {
// A torchtitan config of `model` / `flavor` on 16 GPUs, with `parallelism` lines.
std::string TitanToml(const std::string& model, const std::string& flavor, const std::string& parallelism,
                      int64_t seq = 4096) {
  return absl::StrCat("[model]\nname = \"", model, "\"\nflavor = \"", flavor,
                      "\"\n[training]\nlocal_batch_size = 2\nseq_len = ", seq,
                      "\n[parallelism]\ndata_parallel_shard_degree = -1\n", parallelism);
}
}  // namespace

// Qwen3 (qwen3_args at 238fa99): head_dim 128 apart from dim / heads, weight tying in the small flavors, qk_norm
// noted; its train spec has no pipelining_fn, so torchtitan refuses pipelines for it. The MoE flavors take
// torchtitan's expert mesh: EP ranks from dp_shard x cp x tp, ETP 1 or TP.
TEST_CASE("import torchtitan: Qwen3 dense and MoE flavors, their expert mesh and refusals", "[interop][torchtitan]") {
  MegatronImportRequest request;
  request.nodes = 2;
  const auto import = [&](const std::string& toml) {
    auto r = ImportTorchtitan(toml, hetsim::testing::ImportTestCluster(), request, "qwen3.toml");
    INFO(r.status());
    REQUIRE(r.ok());
    return *std::move(r);
  };
  auto small = import(TitanToml("qwen3", "0.6B", ""));
  const v1::Transformer& t = small.model.transformer();
  CHECK(t.hidden_size() == 1024);
  CHECK(t.num_layers() == 28);
  CHECK(t.head_dim() == 128);  // 16 heads x 128 = 2048 wide Q, wider than dim 1024
  CHECK(t.num_kv_heads() == 8);
  CHECK(t.ffn_hidden_size() == 3072);
  CHECK(t.vocab_size() == 151936);
  CHECK(t.tied_embeddings());
  CHECK(t.num_experts() <= 1);
  CHECK(hetsim::testing::HasImportNote(small.notes, "qk_norm: Qwen3's RMSNorm of each head's query and key"));
  CHECK_FALSE(import(TitanToml("qwen3", "8B", "")).model.transformer().tied_embeddings());
  CHECK(absl::StrContains(Refusal(TitanToml("qwen3", "0.6B", "pipeline_parallel_degree = 2\n"), request),
                          "qwen3 train spec has no pipelining_fn"));
  // 30B-A3B: 128 experts of 768, top-8, every block MoE; EP 8 x ETP 1 on TP 2 x shard 8.
  auto moe =
      import(TitanToml("qwen3", "30B-A3B",
                       "tensor_parallel_degree = 2\nexpert_parallel_degree = 8\nexpert_tensor_parallel_degree = 1\n"));
  const v1::Transformer& m = moe.model.transformer();
  CHECK(m.num_experts() == 128);
  CHECK(m.moe_top_k() == 8);
  CHECK(m.expert_ffn_hidden_size() == 768);
  CHECK(m.moe_shared_expert_ffn_hidden_size() == 0);
  CHECK(m.moe_first_dense_layers() == 0);
  CHECK(moe.plan.stages(0).expert_parallel() == 8);
  CHECK(moe.plan.stages(0).expert_tensor_parallel() == 1);
  CHECK(absl::StrContains(
      Refusal(TitanToml("qwen3", "30B-A3B",
                        "tensor_parallel_degree = 2\nexpert_parallel_degree = 4\nexpert_tensor_parallel_degree = 4\n"),
              request),
      "parallelism.expert_tensor_parallel_degree: 4: torchtitan runs 1 or the tensor-parallel degree 2"));
  // Llama 4's iRoPE flavors attend in blocks of 8192 tokens: the same as causal up to 8192, not modelled above.
  CHECK(absl::StrContains(Refusal(TitanToml("llama4", "17bx16e_irope", "tensor_parallel_degree = 8\n", 16384), request),
                          "iRoPE's chunked attention"));
  auto irope = import(TitanToml("llama4", "17bx16e_irope", "tensor_parallel_degree = 8\n", 8192));
  // 17bx16e: every block MoE (interleave 1); int(2 x 20480 / 3) = 13653, x 1.2 = 16383, / (1 + 1) = 8191, up to
  // a multiple of 2048: 8192.
  CHECK(irope.model.transformer().expert_ffn_hidden_size() == 8192);
  CHECK(irope.model.transformer().num_experts() == 16);
  CHECK(irope.model.transformer().vocab_size() == 202048);
  CHECK(hetsim::testing::HasImportNote(irope.notes, "iRoPE's chunked attention is causal attention at seq_len 8192"));
  CHECK(absl::StrContains(Refusal(TitanToml("qwen3", "3B", ""), request), "\"3B\": not a qwen3 flavor (known: "));
}
