// hetsim import torchtitan: torchtitan's TOML training configs (tests/torchtitan_data/README.md) become
// plans laid out and run as torchtitan runs them; the layouts are computed by hand from torchtitan's
// rules (data_parallel_shard_degree -1 takes the GPUs the other degrees leave; without pipelines the
// local batch is one microbatch; hetsim's microbatch spans the data-parallel replicas). The
// published configs are in the corpus (tests/service/interop/interop_corpus_test.cc).
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

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
  CHECK_THAT(Refusal("[model]\nname = \"deepseek_v3\"\n"), Catch::Contains("bad.toml: model.name: \"deepseek_v3\""));
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
