// hetsim import/export megatron on launch lines written from Megatron-LM's published example scripts
// (tests/megatron_data/README.md): layouts computed by hand from Megatron's rules (ranks TP innermost,
// then CP, DP, PP; vocabulary padded to a multiple of 128 x TP; hetsim's microbatch = Megatron's
// micro-batch x DP), round trips, and every kind of bad line.
#include <catch2/catch.hpp>

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "proto/layer_count.h"
#include "tests/sim/executor/executor_test_util.h"

#include "google/protobuf/util/message_differencer.h"
#include "proto/inputs.h"
#include "proto/io.h"
#include "proto/validate_cluster.h"
#include "service/interop/deepspeed_export.h"
#include "service/interop/megatron_export.h"
#include "service/interop/megatron_flags.h"
#include "service/interop/megatron_import.h"
#include "service/interop/megatron_moe_layout.h"
#include "service/interop/megatron_yaml.h"

namespace hetsim::interop {
namespace {

const std::string kSource = HETSIM_SOURCE_DIR;

v1::Cluster ExampleCluster(const std::string& name) {
  absl::StatusOr<v1::Cluster> c = hetsim::proto::LoadCluster(kSource + "/examples/cluster-" + name + ".pbtxt");
  REQUIRE(c.ok());
  return *c;
}

std::string Line(const std::string& file) {
  absl::StatusOr<std::string> text = hetsim::proto::ReadFileToString(kSource + "/tests/megatron_data/" + file);
  REQUIRE(text.ok());
  return *text;
}

absl::StatusOr<MegatronImport> Import(const std::string& line, const v1::Cluster& cluster,
                                      MegatronImportRequest request = {}) {
  absl::StatusOr<hetsim::interop::MegatronFlags> flags = ParseMegatronLaunchLine(line, "line.sh");
  if (!flags.ok()) return flags.status();
  return ImportMegatron(*flags, cluster, request, "line.sh");
}

// Import that must succeed; the failure's message is shown when it does not.
MegatronImport ImportOk(const std::string& line, const v1::Cluster& cluster) {
  absl::StatusOr<MegatronImport> m = Import(line, cluster);
  INFO(m.status().message());
  REQUIRE(m.ok());
  return *std::move(m);
}

// A small MoE line (32 experts, top 8) on 4 nodes, TP 2 x PP 2 with EP 16 x ETP 1, without its dispatcher.
const std::string kSmallMoeLine =
    "torchrun --nproc_per_node 8 --nnodes 4 pretrain_gpt.py --num-layers 8 --hidden-size 1024 "
    "--num-attention-heads 16 --group-query-attention --num-query-groups 4 --seq-length 1024 "
    "--max-position-embeddings 1024 --micro-batch-size 1 --global-batch-size 64 --bf16 --num-experts 32 "
    "--moe-router-topk 8 --moe-ffn-hidden-size 256 --moe-grouped-gemm --tensor-model-parallel-size 2 "
    "--pipeline-model-parallel-size 2 --expert-model-parallel-size 16 --expert-tensor-parallel-size 1 ";

MegatronImportRequest OnNodes(int64_t nodes) {
  MegatronImportRequest r;
  r.nodes = nodes;
  return r;
}

bool HasNote(const MegatronImport& m, const std::string& text) {
  for (const std::string& n : m.notes) {
    if (n.find(text) != std::string::npos) return true;
  }
  return false;
}

// export(plan) imported again on the same cluster gives the plan back. The exported line has today's
// flags, not the original line's version clues, so the framework read back may differ
// (docs/frameworks.md); every behaviour field must not.
void CheckRoundTrip(const MegatronImport& first, const v1::Cluster& cluster, MegatronImportRequest request = {}) {
  hetsim::proto::PlanInputs in;
  in.cluster = cluster;
  in.model = first.model;
  in.plan = first.plan;
  REQUIRE(hetsim::proto::ValidatePlanInputs(in).ok());
  absl::StatusOr<hetsim::interop::MegatronExport> line = ExportMegatron(in);
  REQUIRE(line.ok());
  INFO(line->launch_line);
  absl::StatusOr<MegatronImport> again = Import(line->launch_line, cluster, request);
  REQUIRE(again.ok());
  std::string diff;
  google::protobuf::util::MessageDifferencer d;
  d.ReportDifferencesToString(&diff);
  v1::Plan a = first.plan, b = again->plan;
  for (v1::Plan* p : {&a, &b}) {
    p->clear_framework();
    p->clear_framework_off();
  }
  CHECK(d.Compare(a, b));
  CHECK(diff == "");
}

// Imports `line`, which must succeed, and checks that its export imports back to the same plan.
MegatronImport ImportRoundTrip(const std::string& line, const v1::Cluster& cluster) {
  INFO(line);
  absl::StatusOr<MegatronImport> m = Import(line, cluster);
  REQUIRE(m.ok());
  CheckRoundTrip(*m, cluster);
  return *std::move(m);
}

TEST_CASE("GPT-3 175B: TP 8 x PP 16 on 16 nodes", "[interop]") {
  const v1::Cluster cluster = ExampleCluster("a100-512");
  absl::StatusOr<MegatronImport> m = Import(Line("gpt3_175b.sh"), cluster);
  REQUIRE(m.ok());
  const v1::Transformer& t = m->model.transformer();
  CHECK(t.num_layers() == 96);
  CHECK(t.ffn_hidden_size() == 4 * 12288);
  CHECK(t.vocab_size() == 51200);  // 50257 up to a multiple of 128 x 8
  CHECK(t.tied_embeddings());
  CHECK(t.attention() == v1::ATTENTION_FLASH);  // --attention-backend auto
  CHECK(m->model.dtype() == v1::FP16);
  const v1::Plan& p = m->plan;
  CHECK(p.name() == "megatron-tp8-pp16-dp1");
  CHECK(p.micro_batch_size() == 1);
  CHECK(p.global_batch_size() == 1536);
  CHECK(p.schedule() == v1::ONE_F_ONE_B);
  CHECK(p.blocking_p2p());
  CHECK(p.tp_backward_overlap());  // Megatron-LM's asynchronous input-gradient reductions (v2.6 on)
  REQUIRE(p.stages_size() == 16);
  // 96 / 16 = 6 blocks per stage; the embedding joins stage 0, the head stage 15; stage p on node p.
  CHECK(p.stages(0).num_layers() == 7);
  CHECK(p.stages(1).first_layer() == 7);
  CHECK(p.stages(1).num_layers() == 6);
  CHECK(p.stages(15).first_layer() == 91);
  CHECK(p.stages(15).num_layers() == 7);
  CHECK(p.stages(15).mesh().first_node() == 15);
  CHECK(p.stages(15).mesh().node_count() == 1);
  CHECK(p.stages(3).tensor_parallel() == 8);
  CHECK(p.stages(3).data_parallel() == 1);
  CHECK(HasNote(*m, "not modelled (ignored): --rampup-batch-size 16 16 5859375"));
  CHECK(HasNote(*m, "50257 tokens (GPT-2's BPE)"));
  CHECK(HasNote(*m, "no effect on an iteration's cost: --train-iters 500000"));
  CHECK_FALSE(HasNote(*m, "unknown"));
  CheckRoundTrip(*m, cluster);
}

TEST_CASE("Llama 3 8B FP8 on one H100 node: DP 8, GQA, SwiGLU, distributed optimizer", "[interop]") {
  const v1::Cluster cluster = ExampleCluster("512gpu");
  MegatronImportRequest request;
  request.island = "h100";
  absl::StatusOr<MegatronImport> m = Import(Line("llama3_8b_h100_fp8.sh"), cluster, request);
  REQUIRE(m.ok());
  const v1::Transformer& t = m->model.transformer();
  CHECK(m->model.dtype() == v1::FP8);
  CHECK(t.num_kv_heads() == 8);
  CHECK(t.gated_mlp());
  CHECK(t.ffn_hidden_size() == 14336);
  CHECK_FALSE(t.tied_embeddings());
  CHECK(t.vocab_size() == 128256);  // already a multiple of 128
  const v1::Plan& p = m->plan;
  REQUIRE(p.stages_size() == 1);
  CHECK(p.stages(0).num_layers() == 34);
  CHECK(p.stages(0).data_parallel() == 8);
  CHECK(p.stages(0).zero_stage() == 1);
  CHECK_FALSE(p.stages(0).sequence_parallel());  // TP 1
  CHECK(p.stages(0).mesh().island() == "h100");
  CHECK(p.micro_batch_size() == 8);
  CHECK(p.overlap_grad_reduce());
  CHECK_FALSE(p.blocking_p2p());  // no pipeline
  CHECK(HasNote(*m, "--sequence-parallel: no effect with --tensor-model-parallel-size 1"));
  CHECK(p.overlap_param_gather());
  CHECK_FALSE(HasNote(*m, "not modelled (ignored): --overlap-param-gather"));
  CHECK(HasNote(*m, "not modelled (ignored): --fp8-param-gather"));
  CHECK_FALSE(p.grad_reduce_in_fp32());  // the line says --grad-reduce-in-bf16
  CHECK_FALSE(HasNote(*m, "unknown"));
  CheckRoundTrip(*m, cluster, request);
}

TEST_CASE("Llama 3.1 405B's FP8 recipe gives the stages of the NeMo validation plan", "[interop]") {
  absl::StatusOr<v1::Cluster> cluster =
      hetsim::proto::LoadCluster(kSource + "/validation/clusters/dgx-h100-1024.pbtxt");
  REQUIRE(cluster.ok());
  absl::StatusOr<MegatronImport> m = Import(Line("llama31_405b_h100_fp8.sh"), *cluster);
  INFO(m.status().message());
  REQUIRE(m.ok());
  absl::StatusOr<hetsim::proto::PlanInputs> nemo =
      hetsim::proto::LoadPlanInputs(kSource + "/validation/plans/nemo-h100-llama3.1-405b-fp8.pbtxt",
                                    kSource + "/validation/clusters/dgx-h100-1024.pbtxt");
  REQUIRE(nemo.ok());
  const v1::Plan& p = m->plan;
  const v1::Plan& want = nemo->plan;
  CHECK(p.schedule() == v1::INTERLEAVED_1F1B);
  CHECK(p.virtual_stages() == want.virtual_stages());
  CHECK(p.context_parallel() == want.context_parallel());
  CHECK(p.micro_batch_size() == want.micro_batch_size());
  CHECK(p.tp_comm_overlap() == want.tp_comm_overlap());
  CHECK(p.tp_backward_overlap() == want.tp_backward_overlap());
  CHECK(p.blocking_p2p() == want.blocking_p2p());
  REQUIRE(p.stages_size() == want.stages_size());
  google::protobuf::util::MessageDifferencer d;
  for (int i = 0; i < p.stages_size(); ++i) {
    INFO("stage " << i);
    CHECK(d.Compare(p.stages(i), want.stages(i)));  // 16 layers each: the embedding and 15 blocks, ...
  }
  CHECK(p.grad_reduce_in_fp32());  // --bf16 without --grad-reduce-in-bf16
  CHECK_FALSE(HasNote(*m, "unknown"));
  CheckRoundTrip(*m, *cluster);
}

TEST_CASE("Mixtral smoke configuration: 2 experts over EP 2 on 2 GPUs", "[interop]") {
  const v1::Cluster cluster = ExampleCluster("a100-512");
  absl::StatusOr<MegatronImport> m = Import(Line("mixtral_8x7b_small.sh"), cluster);
  REQUIRE(m.ok());
  const v1::Transformer& t = m->model.transformer();
  CHECK(m->model.dtype() == v1::FP32);  // --bf16 is commented out in the script
  CHECK(t.num_experts() == 2);
  CHECK(t.moe_top_k() == 2);
  CHECK(t.vocab_size() == 32000);  // Llama2Tokenizer with Mixtral's model: 32,000, a multiple of 128
  const v1::Plan& p = m->plan;
  REQUIRE(p.stages_size() == 1);
  CHECK(p.stages(0).expert_parallel() == 2);
  CHECK(p.stages(0).data_parallel() == 2);
  CHECK(p.stages(0).mesh().gpus_per_node() == 2);
  CHECK(p.micro_batch_size() == 2);
  CHECK(t.moe_token_dispatcher() == v1::MOE_DISPATCHER_ALL_TO_ALL);  // --moe-token-dispatcher-type alltoall
  CheckRoundTrip(*m, cluster);
  // Without the flag Megatron gathers (its default); DeepEP's flex is noted and priced as alltoall.
  std::string line = Line("mixtral_8x7b_small.sh");
  const size_t at = line.find("--moe-token-dispatcher-type alltoall");
  REQUIRE(at != std::string::npos);
  const MegatronImport gathered = ImportRoundTrip(line.replace(at, 36, ""), cluster);
  CHECK(gathered.model.transformer().moe_token_dispatcher() == v1::MOE_DISPATCHER_ALL_GATHER);
  // A flag added on a line of its own would be a command of its own: it goes into the launch.
  std::string flex_line = Line("mixtral_8x7b_small.sh");
  flex_line.replace(at, 36, "--moe-token-dispatcher-type flex");
  absl::StatusOr<MegatronImport> flex = Import(flex_line, cluster);
  REQUIRE(flex.ok());
  CHECK(HasNote(*flex, "not modelled: --moe-token-dispatcher-type flex (priced as alltoall)"));
}

TEST_CASE("the SC'21 39.1B line gives the bundled validation plan", "[interop]") {
  const v1::Cluster cluster = ExampleCluster("a100-512");
  absl::StatusOr<MegatronImport> m = Import(Line("sc21_39b.sh"), cluster);
  REQUIRE(m.ok());
  v1::Plan expected;
  REQUIRE(hetsim::proto::Load(kSource + "/examples/plan-megatron-39b.pbtxt", &expected).ok());
  v1::Plan got = m->plan;
  CHECK(got.framework() == v1::MEGATRON_LM_2021);  // the example predates Plan.framework
  CHECK(got.framework_off().empty());
  CHECK(got.nccl_sm_contention());  // every profile's; the example predates it (and overlaps no NCCL collective)
  // v2.5's own passes (its FP16 step, local DDP's copies, apex's LayerNorm backward), which the SC'21
  // validation plans set; the example leaves them out, as it round-trips through a launch line of today.
  CHECK(got.megatron_v2_fp16_optimizer());
  CHECK(got.megatron_local_ddp_copies());
  CHECK(got.layer_norm_weight_grad_pass());
  got.clear_framework();
  got.clear_nccl_sm_contention();
  got.clear_megatron_v2_fp16_optimizer();
  got.clear_megatron_local_ddp_copies();
  got.clear_layer_norm_weight_grad_pass();
  got.set_name(expected.name());
  got.mutable_model()->set_name(expected.model().name());
  std::string diff;
  google::protobuf::util::MessageDifferencer d;
  d.ReportDifferencesToString(&diff);
  CHECK(d.Compare(expected, got));
  CHECK(diff == "");
  CheckRoundTrip(*m, cluster);
}

// A plan that runs v2.5's FP16 step without full recomputation of every layer: the line cannot carry
// --checkpoint-activations, the one mark of 2021's code, so it reads back as a later release's without the
// v2 fields; the export says so, naming the fields it loses. With full recomputation it keeps them (above).
TEST_CASE("export megatron: v2.5's passes without --checkpoint-activations are named as lost", "[interop]") {
  const v1::Cluster cluster = ExampleCluster("a100-512");
  absl::StatusOr<MegatronImport> m = Import(Line("sc21_39b.sh"), cluster);
  REQUIRE(m.ok());
  hetsim::proto::PlanInputs in;
  in.cluster = cluster;
  in.model = m->model;
  in.plan = m->plan;
  const auto lost_note = [&]() -> std::string {
    absl::StatusOr<hetsim::interop::MegatronExport> line = ExportMegatron(in);
    REQUIRE(line.ok());
    for (const std::string& n : line->notes) {
      if (absl::StrContains(n, "v2.5's own passes, not expressible")) return n;
    }
    return "";
  };
  CHECK(lost_note().empty());  // full recomputation: --checkpoint-activations, the fields read back
  for (v1::Stage& s : *in.plan.mutable_stages()) s.set_recompute(v1::RECOMPUTE_NONE);
  std::string note = lost_note();
  CHECK_THAT(note, Catch::StartsWith("megatron_v2_fp16_optimizer, megatron_local_ddp_copies: "));
  CHECK_THAT(note, Catch::Contains("without them"));
  // The block method's recompute_num_layers is written with today's flags: the same loss.
  for (v1::Stage& s : *in.plan.mutable_stages()) {
    s.set_recompute(v1::RECOMPUTE_FULL);
    s.set_recompute_num_layers(1);
  }
  in.plan.set_megatron_local_ddp_copies(false);
  note = lost_note();
  CHECK_THAT(note, Catch::StartsWith("megatron_v2_fp16_optimizer: "));
  CHECK_THAT(note, Catch::Contains("without it)"));
  // What the note says: imported back, the line has neither field.
  absl::StatusOr<hetsim::interop::MegatronExport> line = ExportMegatron(in);
  REQUIRE(line.ok());
  absl::StatusOr<MegatronImport> again = Import(line->launch_line, cluster);
  REQUIRE(again.ok());
  CHECK_FALSE(again->plan.megatron_v2_fp16_optimizer());
}

// An 8-block model on one A100 node, to which a test adds the flags it is about.
const std::string kSmallLine =
    "torchrun --nproc_per_node 8 --nnodes 1 pretrain_gpt.py --num-layers 8 --hidden-size 4096 --num-attention-heads "
    "32 --seq-length 2048 --max-position-embeddings 2048 --micro-batch-size 1 --global-batch-size 8 ";

TEST_CASE("the asynchronous TP backward: on from Megatron-LM v2.6, off when switched off or in 2021's code",
          "[interop]") {
  const v1::Cluster cluster = ExampleCluster("a100-512");
  const std::string base = kSmallLine + "--bf16 ";
  auto overlap = [&](const std::string& flags) {
    const MegatronImport m = ImportOk(base + flags, cluster);
    CheckRoundTrip(m, cluster);
    return m.plan.tp_backward_overlap();
  };
  CHECK(overlap("--tensor-model-parallel-size 8"));
  CHECK_FALSE(overlap("--tensor-model-parallel-size 8 --no-async-tensor-model-parallel-allreduce"));
  CHECK_FALSE(overlap("--tensor-model-parallel-size 8 --checkpoint-activations"));
  CHECK_FALSE(overlap("--tensor-model-parallel-size 1"));  // nothing to reduce
  // Under sequence parallelism the reduce-scatter is asynchronous whatever the switch says.
  CHECK(overlap("--tensor-model-parallel-size 8 --sequence-parallel --no-async-tensor-model-parallel-allreduce"));
  // --checkpoint-activations beside a later flag is 2022's code, which still accepted it.
  CHECK(overlap("--tensor-model-parallel-size 8 --checkpoint-activations --use-distributed-optimizer"));
}

TEST_CASE("context parallelism: ranks TP, then CP, then DP inside a stage", "[interop]") {
  const v1::Cluster cluster = ExampleCluster("a100-512");
  // Two nodes of 8: TP 4 x CP 2 fills a node, PP 2 over the two nodes, DP 1.
  absl::StatusOr<MegatronImport> m = Import(
      "torchrun --nproc_per_node 8 --nnodes 2 pretrain_gpt.py --num-layers 32 --hidden-size 4096 "
      "--num-attention-heads 32 --seq-length 16384 --max-position-embeddings 16384 --micro-batch-size 1 "
      "--global-batch-size 64 --tensor-model-parallel-size 4 --context-parallel-size 2 "
      "--pipeline-model-parallel-size 2 --sequence-parallel --bf16 --use-distributed-optimizer",
      cluster);
  REQUIRE(m.ok());
  const v1::Plan& p = m->plan;
  CHECK(p.context_parallel() == 2);
  CHECK(p.name() == "megatron-tp4-cp2-pp2-dp1");
  CHECK(p.micro_batch_size() == 1);  // CP splits the sequence, not the batch
  REQUIRE(p.stages_size() == 2);
  for (int i = 0; i < 2; ++i) {
    CHECK(p.stages(i).tensor_parallel() == 4);
    CHECK(p.stages(i).data_parallel() == 1);
    CHECK(p.stages(i).mesh().first_node() == static_cast<uint32_t>(i));
    CHECK(p.stages(i).mesh().node_count() == 1);
    CHECK(p.stages(i).mesh().gpus_per_node() == 8);
  }
  CHECK_FALSE(HasNote(*m, "context-parallel"));
  CheckRoundTrip(*m, cluster);
}

TEST_CASE("launch lines: shell tokens, --flag=value, interleaving", "[interop]") {
  using hetsim::interop::ShellTokens;
  CHECK(ShellTokens("a \\\n  'b c' \"d\" # comment\ne") == std::vector<std::string>{"a", "b c", "d", "e"});
  const v1::Cluster cluster = ExampleCluster("a100-512");
  absl::StatusOr<MegatronImport> m = Import(
      "--num-layers=24 --hidden-size 1024 --num-attention-heads 16 --seq-length 1024 --micro-batch-size 2 "
      "--global-batch-size 64 --tensor-model-parallel-size 2 --pipeline-model-parallel-size 4 "
      "--num-layers-per-virtual-pipeline-stage 3 --bf16 --frobnicate 3 --overlap-p2p-communication",
      cluster, OnNodes(1));
  REQUIRE(m.ok());
  // 8 GPUs / (TP 2 x PP 4) = DP 1; 24 / 4 = 6 blocks per stage in chunks of 3: 2 virtual stages; each
  // stage of 2 GPUs sits on GPUs 2p, 2p + 1 of node 0.
  CHECK(m->plan.schedule() == v1::INTERLEAVED_1F1B);
  CHECK(m->plan.virtual_stages() == 2);
  CHECK(m->plan.stages(3).mesh().first_gpu() == 6);
  CHECK(m->plan.stages(3).mesh().gpus_per_node() == 2);
  CHECK_FALSE(m->plan.blocking_p2p());
  CHECK(HasNote(*m, "unknown (ignored): --frobnicate 3"));
  CheckRoundTrip(*m, cluster, OnNodes(1));
}

std::string ImportError(const std::string& line, MegatronImportRequest request = OnNodes(1)) {
  absl::StatusOr<MegatronImport> m = Import(line, ExampleCluster("a100-512"), request);
  REQUIRE_FALSE(m.ok());
  return std::string(m.status().message());
}

TEST_CASE("context parallelism: --cp-comm-type, one type or one per layer", "[interop]") {
  const v1::Cluster cluster = ExampleCluster("a100-512");
  const std::string flags =
      "--num-layers 4 --hidden-size 4096 --num-attention-heads 32 --seq-length 16384 "
      "--max-position-embeddings 16384 --micro-batch-size 1 --global-batch-size 64 "
      "--tensor-model-parallel-size 4 --pipeline-model-parallel-size 2 --bf16 ";
  const std::string line = "torchrun --nproc_per_node 8 --nnodes 2 pretrain_gpt.py --context-parallel-size 2 " + flags;
  // Transformer Engine's spelling, and the help text's.
  for (const char* type : {"--cp-comm-type all_gather", "--cp-comm-type=allgather"}) {
    const MegatronImport m = ImportRoundTrip(line + type, cluster);
    CHECK(m.plan.cp_comm_type() == v1::CP_COMM_ALL_GATHER);
    hetsim::proto::PlanInputs in;
    in.cluster = cluster;
    in.model = m.model;
    in.plan = m.plan;
    absl::StatusOr<hetsim::interop::MegatronExport> exported = ExportMegatron(in);
    REQUIRE(exported.ok());
    CHECK(exported->launch_line.find("--cp-comm-type all_gather") != std::string::npos);
  }
  CHECK(ImportRoundTrip(line + "--cp-comm-type a2a a2a a2a a2a --sequence-parallel", cluster).plan.cp_comm_type() ==
        v1::CP_COMM_ALL_TO_ALL);
  absl::StatusOr<MegatronImport> m = Import(line + "--cp-comm-type p2p", cluster);
  REQUIRE(m.ok());
  CHECK(m->plan.cp_comm_type() == v1::CP_COMM_P2P);
  // Without context parallelism Megatron ignores the type, even one hetsim does not price.
  m = Import("torchrun --nproc_per_node 8 --nnodes 1 pretrain_gpt.py " + flags + "--cp-comm-type a2a+p2p", cluster);
  REQUIRE(m.ok());
  CHECK(HasNote(*m, "--cp-comm-type a2a+p2p: no effect with --context-parallel-size 1"));
  CHECK(ImportError(line + "--cp-comm-type a2a+p2p", OnNodes(2)) ==
        "line.sh: --cp-comm-type a2a+p2p: not modelled (hetsim prices p2p, all_gather and a2a)");
  CHECK(ImportError(line + "--cp-comm-type p2p all_gather p2p p2p", OnNodes(2)) ==
        "line.sh: --cp-comm-type p2p all_gather p2p p2p: one type per layer, mixed, is not modelled (a plan has "
        "one)");
  CHECK(ImportError(line + "--cp-comm-type ring", OnNodes(2)) ==
        "line.sh: --cp-comm-type: \"ring\" is not p2p, all_gather, a2a or a2a+p2p");
  CHECK(ImportError(line + "--cp-comm-type --bf16", OnNodes(2)) == "line.sh: --cp-comm-type: needs at least one value");
}

TEST_CASE("FSDP: Megatron-FSDP's sharding strategies and PyTorch FSDP2 are ZeRO stages", "[interop]") {
  const v1::Cluster cluster = ExampleCluster("a100-512");
  const std::string line =
      "torchrun --nproc_per_node 8 --nnodes 1 pretrain_gpt.py --num-layers 4 --hidden-size 1024 "
      "--num-attention-heads 16 --seq-length 1024 --max-position-embeddings 1024 --micro-batch-size 1 "
      "--global-batch-size 16 --bf16 --overlap-grad-reduce ";
  const struct {
    const char* flags;
    uint32_t zero;
  } cases[] = {
      {"--use-megatron-fsdp --data-parallel-sharding-strategy optim_grads_params --overlap-param-gather", 3},
      {"--use-custom-fsdp --data-parallel-sharding-strategy optim_grads --overlap-param-gather", 2},
      {"--use-megatron-fsdp --data-parallel-sharding-strategy optim", 1},
      {"--use-megatron-fsdp --use-distributed-optimizer", 0},  // no_shard, Megatron's default: nothing sharded
      {"--use-megatron-fsdp", 0},
      {"--use-torch-fsdp2", 3},
  };
  for (const auto& c : cases) {
    const MegatronImport m = ImportRoundTrip(line + c.flags, cluster);
    CHECK(m.plan.stages(0).zero_stage() == c.zero);
    // Sharded parameters are ZeRO-3's per-layer gathers, prefetched; not the optimizer's after the step.
    CHECK(m.plan.zero3_prefetch() == (c.zero == 3));
    CHECK(m.plan.zero3_lock_step() == (c.zero == 3));
    const bool gathers_after_step =
        (c.zero == 1 || c.zero == 2) && std::string(c.flags).find("overlap-param") != std::string::npos;
    CHECK(m.plan.overlap_param_gather() == gathers_after_step);
  }
  absl::StatusOr<MegatronImport> m = Import(line + "--data-parallel-sharding-strategy optim_grads", cluster);
  REQUIRE(m.ok());
  CHECK(m->plan.stages(0).zero_stage() == 0);
  CHECK(HasNote(*m, "--data-parallel-sharding-strategy optim_grads: no effect without --use-megatron-fsdp"));
  CHECK(ImportError(line + "--use-megatron-fsdp --data-parallel-sharding-strategy full") ==
        "line.sh: --data-parallel-sharding-strategy: \"full\" is not no_shard, optim, optim_grads or "
        "optim_grads_params");
  CHECK(ImportError(line + "--use-megatron-fsdp --use-torch-fsdp2") ==
        "line.sh: --use-torch-fsdp2 and --use-megatron-fsdp contradict each other");
}

TEST_CASE("import: --fp8-recipe tensorwise is Plan.fp8_current_scaling, and exports back", "[interop]") {
  const v1::Cluster cluster = ExampleCluster("16k-h100");
  const std::string line =
      "torchrun --nproc_per_node 8 --nnodes 1 pretrain_gpt.py --num-layers 4 --hidden-size 1024 "
      "--num-attention-heads 16 --seq-length 1024 --max-position-embeddings 1024 --micro-batch-size 1 "
      "--global-batch-size 16 --bf16 --tensor-model-parallel-size 2 --sequence-parallel ";
  CHECK(ImportRoundTrip(line + "--fp8-format hybrid --fp8-recipe tensorwise", cluster).plan.fp8_current_scaling());
  // Megatron's default recipe is delayed scaling; a recipe without FP8 is no FP8.
  CHECK_FALSE(ImportRoundTrip(line + "--fp8-format hybrid", cluster).plan.fp8_current_scaling());
  CHECK_FALSE(ImportOk(line + "--fp8-format hybrid --fp8-recipe delayed", cluster).plan.fp8_current_scaling());
  CHECK_FALSE(ImportOk(line + "--fp8-recipe tensorwise", cluster).plan.fp8_current_scaling());
}

TEST_CASE("settings priced at one value only: the others are noted with what is priced instead", "[interop]") {
  const v1::Cluster cluster = ExampleCluster("16k-h100");  // FP8
  const std::string line =
      "torchrun --nproc_per_node 8 --nnodes 1 pretrain_gpt.py --num-layers 4 --hidden-size 1024 "
      "--num-attention-heads 16 --seq-length 1024 --max-position-embeddings 1024 --micro-batch-size 1 "
      "--global-batch-size 16 --bf16 --tensor-model-parallel-size 2 --sequence-parallel --num-experts 8 "
      "--expert-model-parallel-size 4 ";
  const auto notes = [&](const std::string& flags) {
    absl::StatusOr<MegatronImport> m = Import(line + flags, cluster);
    REQUIRE(m.ok());
    return absl::StrJoin(m->notes, "\n");
  };
  // What hetsim prices: no note.
  CHECK(notes("--fp8-format hybrid --fp8-recipe tensorwise --expert-tensor-parallel-size 2 "
              "--recompute-granularity selective --recompute-modules core_attn")
            .find("not modelled") == std::string::npos);
  const std::string other = notes(
      "--fp8-format hybrid --fp8-recipe blockwise --expert-tensor-parallel-size 1 "
      "--recompute-granularity selective --recompute-modules mlp moe_act");
  CHECK(other.find("not modelled: --fp8-recipe blockwise (its block scales' quantization; priced as per-tensor "
                   "FP8)") != std::string::npos);
  CHECK(other.find("expert-tensor-parallel") == std::string::npos);  // priced since session 21
  CHECK(other.find("not modelled: --recompute-modules mlp moe_act (priced as Megatron's default, the attention "
                   "core)") != std::string::npos);
  CHECK(notes("--fp8-recipe mxfp8 --recompute-modules mlp")
            .find("--fp8-recipe mxfp8: no effect without "
                  "--fp8-format") != std::string::npos);
  CHECK(notes("--recompute-modules mlp")
            .find("--recompute-modules mlp: no effect without --recompute-granularity "
                  "selective") != std::string::npos);
}

TEST_CASE("full recomputation's methods: block recomputes the first N blocks of each chunk, uniform every block",
          "[interop]") {
  const v1::Cluster cluster = ExampleCluster("a100-512");
  const std::string base =
      "torchrun --nproc_per_node 8 --nnodes 2 pretrain_gpt.py --num-layers 16 --hidden-size 4096 --num-attention-heads "
      "32 --seq-length 2048 --max-position-embeddings 2048 --micro-batch-size 1 --global-batch-size 16 --bf16 "
      "--tensor-model-parallel-size 8 --pipeline-model-parallel-size 2 --recompute-granularity full ";
  auto stage = [&](const std::string& flags) {
    absl::StatusOr<MegatronImport> m = Import(base + flags, cluster);
    INFO(m.status().message());
    REQUIRE(m.ok());
    CHECK_FALSE(HasNote(*m, "not modelled"));
    CheckRoundTrip(*m, cluster);
    return m->plan.stages(1);
  };
  const v1::Stage block = stage("--recompute-method block --recompute-num-layers 3");
  CHECK(block.recompute() == v1::RECOMPUTE_FULL);
  CHECK(block.recompute_num_layers() == 3);
  const v1::Stage uniform = stage("--recompute-method uniform --recompute-num-layers 1");
  CHECK(uniform.recompute() == v1::RECOMPUTE_FULL);
  CHECK(uniform.recompute_num_layers() == 0);
  absl::StatusOr<MegatronImport> grouped =
      Import(base + "--recompute-method uniform --recompute-num-layers 4", cluster);
  REQUIRE(grouped.ok());
  CHECK(grouped->plan.stages(0).recompute_num_layers() == 0);
  CHECK(HasNote(*grouped, "--recompute-method uniform --recompute-num-layers 4: every block recomputed"));

  // More than a stage's 8 blocks: every block recomputes, as in Megatron (and one N serves uneven stages).
  CHECK(stage("--recompute-method block --recompute-num-layers 9").recompute_num_layers() == 9);
  CHECK(stage("--decoder-first-pipeline-num-layers 2 --recompute-method block --recompute-num-layers 4")
            .recompute_num_layers() == 4);
  CHECK(ImportError(base + "--recompute-method first_n --recompute-num-layers 2", {}) ==
        "line.sh: --recompute-method: \"first_n\" is not block or uniform");
  CHECK(ImportError(base + "--recompute-method block --recompute-num-layers 0", {}) ==
        "line.sh: --recompute-num-layers: \"0\" is not a positive whole number");
}

TEST_CASE("a stage of 1.5 nodes (TP 4 x DP 3 on 8-GPU nodes) is tiled as 3 nodes x 4 GPUs", "[interop]") {
  // Megatron-LM's GPT-3 175B strong-scaling start: 96 H100, TP 4, PP 8, so DP 3 and 12 GPUs a stage.
  const v1::Cluster cluster = ExampleCluster("a100-512");
  const MegatronImport m = ImportOk(
      "torchrun --nproc_per_node 8 --nnodes 12 pretrain_gpt.py --num-layers 96 --hidden-size 12288 "
      "--num-attention-heads 96 --seq-length 4096 --max-position-embeddings 4096 --vocab-size 131072 "
      "--micro-batch-size 1 --global-batch-size 1152 --bf16 --tensor-model-parallel-size 4 "
      "--pipeline-model-parallel-size 8 --sequence-parallel",
      cluster);
  REQUIRE(m.plan.stages_size() == 8);
  for (int p = 0; p < 8; ++p) {
    INFO("stage " << p);
    const v1::Mesh& mesh = m.plan.stages(p).mesh();
    CHECK(mesh.first_node() == static_cast<uint32_t>(p / 2 * 3));
    CHECK(mesh.node_count() == 3);
    CHECK(mesh.first_gpu() == static_cast<uint32_t>(p % 2 * 4));
    CHECK(mesh.gpus_per_node() == 4);
    CHECK(m.plan.stages(p).data_parallel() == 3);
  }
  CHECK(HasNote(m, "placed on 3 nodes x 4 GPUs, 2 stages side by side"));
  // TP 12 (1.5 nodes in Megatron's order) spans 3 node rows of 4 GPUs.
  const MegatronImport wide = ImportOk(
      "torchrun --nproc_per_node 8 --nnodes 12 pretrain_gpt.py --num-layers 96 --hidden-size 12288 "
      "--num-attention-heads 96 --seq-length 4096 --max-position-embeddings 4096 --micro-batch-size 1 --bf16 "
      "--tensor-model-parallel-size 12 --pipeline-model-parallel-size 8",
      cluster);
  CHECK(wide.plan.stages(1).mesh().node_count() == 3);
  CHECK(wide.plan.stages(1).mesh().gpus_per_node() == 4);
  CHECK(wide.plan.stages(1).tensor_parallel() == 12);
  // With TP 3 no rectangle of whole TP groups tiles 12-GPU stages on 8-GPU nodes.
  CHECK(ImportError("--num-layers 96 --hidden-size 12288 --num-attention-heads 96 --seq-length 4096 "
                    "--micro-batch-size 1 --tensor-model-parallel-size 3 --pipeline-model-parallel-size 8",
                    OnNodes(12))
            .find("no rectangle of nodes x GPUs holds it") != std::string::npos);
}

TEST_CASE("Megatron kv-channels sets head_dim: heads wider than hidden / heads, as in Qwen3", "[interop]") {
  const v1::Cluster cluster = ExampleCluster("a100-512");
  const MegatronImport m = ImportOk(
      "torchrun --nproc_per_node 8 --nnodes 1 pretrain_gpt.py --num-layers 48 --hidden-size 2048 "
      "--num-attention-heads 32 --group-query-attention --num-query-groups 4 --kv-channels 128 --swiglu "
      "--ffn-hidden-size 6144 --seq-length 4096 --max-position-embeddings 4096 --position-embedding-type rope "
      "--micro-batch-size 1 --global-batch-size 64 --bf16 --tensor-model-parallel-size 2",
      cluster);
  CHECK(m.model.transformer().head_dim() == 128);
  CHECK(m.model.transformer().num_kv_heads() == 4);
  CheckRoundTrip(m, cluster);
}

TEST_CASE("gradients: --bf16 runs reduce in FP32 unless --grad-reduce-in-bf16, FP16 runs only when asked",
          "[interop]") {
  const v1::Cluster cluster = ExampleCluster("a100-512");
  const std::string base = kSmallLine + "--use-distributed-optimizer ";
  auto fp32 = [&](const std::string& flags) {
    const MegatronImport m = ImportOk(base + flags, cluster);
    CHECK_FALSE(HasNote(m, "--grad-reduce-in-bf16"));  // read, not ignored
    CheckRoundTrip(m, cluster);
    return m.plan.grad_reduce_in_fp32();
  };
  CHECK(fp32("--bf16"));
  CHECK_FALSE(fp32("--bf16 --grad-reduce-in-bf16"));
  CHECK_FALSE(fp32("--bf16 --grad-reduce-in-bf16 --accumulate-allreduce-grads-in-fp32"));  // Megatron: bf16 wins
  CHECK_FALSE(fp32("--bf16 --main-grads-dtype bf16"));
  CHECK(fp32("--bf16 --main-grads-dtype fp32"));
  CHECK(fp32("--bf16 --accumulate-allreduce-grads-in-fp32"));
  CHECK_FALSE(fp32("--fp16"));
  CHECK_FALSE(fp32("--fp16 --grad-reduce-in-bf16"));  // ignored by Megatron for FP16
  CHECK(fp32("--fp16 --accumulate-allreduce-grads-in-fp32"));
  CHECK_FALSE(fp32(""));                                      // FP32 run: 4-byte gradients anyway
  CHECK_FALSE(fp32("--accumulate-allreduce-grads-in-fp32"));  // nor does the flag change that
  CHECK(ImportError(base + "--bf16 --accumulate-allreduce-grads-in-fp32 --main-grads-dtype bf16") ==
        "line.sh: --accumulate-allreduce-grads-in-fp32 and --main-grads-dtype bf16 contradict each other");
  // FP8 runs follow their --bf16 or --fp16 (on H100s, which have FP8).
  MegatronImportRequest h100;
  h100.island = "h100";
  auto fp8 = [&](const std::string& flags) {
    absl::StatusOr<MegatronImport> m = Import(base + flags, ExampleCluster("512gpu"), h100);
    INFO(m.status().message());
    REQUIRE(m.ok());
    CHECK(m->model.dtype() == v1::FP8);
    return m->plan.grad_reduce_in_fp32();
  };
  CHECK(fp8("--bf16 --fp8-format hybrid"));
  CHECK_FALSE(fp8("--fp16 --fp8-format hybrid"));
  CHECK(ImportError(base + "--bf16 --main-grads-dtype fp16") ==
        "line.sh: --main-grads-dtype: \"fp16\" is not fp32 or bf16");

  // Export writes what Megatron needs to be told.
  hetsim::proto::PlanInputs in;
  in.cluster = cluster;
  const MegatronImport bf16 = ImportOk(base + "--bf16 --grad-reduce-in-bf16", cluster);
  in.model = bf16.model;
  in.plan = bf16.plan;
  absl::StatusOr<hetsim::interop::MegatronExport> line = ExportMegatron(in);
  REQUIRE(line.ok());
  CHECK(line->launch_line.find("--grad-reduce-in-bf16") != std::string::npos);
  in.plan.set_grad_reduce_in_fp32(true);
  line = ExportMegatron(in);
  REQUIRE(line.ok());
  CHECK(line->launch_line.find("--grad-reduce-in-bf16") == std::string::npos);
  CHECK(line->launch_line.find("--accumulate-allreduce-grads-in-fp32") == std::string::npos);
}

TEST_CASE("bad launch lines name the flags", "[interop]") {
  const std::string base =
      "--num-layers 24 --hidden-size 1024 --num-attention-heads 16 --seq-length 1024 --micro-batch-size 1 ";
  CHECK(ImportError(base + "--fp16 --bf16") == "line.sh: --fp16 and --bf16 contradict each other");
  CHECK(ImportError(base + "--use-flash-attn --attention-backend unfused") ==
        "line.sh: --use-flash-attn and --attention-backend unfused contradict each other");
  CHECK(ImportError(base + "--num-layers 32") == "line.sh: --num-layers 24 and --num-layers 32 contradict each other");
  CHECK(ImportError("--num-layers 24 --hidden-size 1024 --num-attention-heads 16 --seq-length 1022 "
                    "--micro-batch-size 1 --context-parallel-size 2") ==
        "line.sh: context_parallel: 2: seq_length 1022 is not a multiple of 2 x context_parallel = 4");
  CHECK(ImportError(base + "--overlap-param-gather")
            .find("--overlap-param-gather and the absence of "
                  "--use-distributed-optimizer contradict") != std::string::npos);
  CHECK(ImportError(base + "--overlap-param-gather --use-distributed-optimizer")
            .find("--overlap-param-gather and the absence of --overlap-grad-reduce contradict") != std::string::npos);
  CHECK(ImportError(base + "--tp-comm-overlap --tensor-model-parallel-size 2").find("--sequence-parallel") !=
        std::string::npos);
  CHECK(ImportError(base + "--recompute-granularity selective --recompute-method uniform") ==
        "line.sh: --recompute-method uniform and --recompute-granularity selective contradict each other: a "
        "recompute method applies to full recomputation only");
  CHECK(ImportError(base + "--recompute-activations --recompute-num-layers 2") ==
        "line.sh: --recompute-num-layers 2 and selective recomputation contradict each other: it counts the layers "
        "of full recomputation");
  CHECK(ImportError(base + "--max-position-embeddings 512")
            .find("--seq-length 1024 and --max-position-embeddings "
                  "512 contradict") != std::string::npos);
  CHECK(ImportError(base + "--pipeline-model-parallel-size 5") ==
        "line.sh: --tensor-model-parallel-size 1 x --context-parallel-size 1 x --pipeline-model-parallel-size 5 = 5 "
        "does not divide the 8 GPUs (1 nodes x 8)");
  CHECK(ImportError(base + "--global-batch-size 10 --tensor-model-parallel-size 2")
            .find("the global batch must be a multiple of micro-batch x data parallel (4)") != std::string::npos);
  CHECK(ImportError(base + "--tensor-model-parallel-size") ==
        "line.sh: --tensor-model-parallel-size: needs 1 value, got 0");
  CHECK(ImportError(base + "--tensor-model-parallel-size two") ==
        "line.sh: --tensor-model-parallel-size: \"two\" is not a positive whole number");
  CHECK(ImportError("--hidden-size 1024") == "line.sh: --num-layers: required");
  CHECK(ImportError(base, {}) == "line.sh: --nodes: required (or torchrun's --nnodes in the launch line)");
  CHECK(ImportError(base + "--num-layers-per-virtual-pipeline-stage 2").find("interleaving needs a pipeline") !=
        std::string::npos);
}

TEST_CASE("interleaving that counts the embedding and the head as layers: the accounting flags", "[interop]") {
  // 10 blocks on 2 stages of 6 layers (the embedding and 5 blocks, 5 blocks and the head), 3 chunks of
  // 2 layers: Megatron's --account-for-embedding/loss-in-pipeline-split with 2 layers a chunk.
  const v1::Cluster cluster = ExampleCluster("a100-512");
  const std::string line =
      "torchrun --nproc_per_node 8 --nnodes 2 pretrain_gpt.py --num-layers 10 --hidden-size 1024 "
      "--num-attention-heads 16 --seq-length 1024 --max-position-embeddings 1024 --micro-batch-size 1 "
      "--global-batch-size 8 --tensor-model-parallel-size 8 --pipeline-model-parallel-size 2 --bf16 ";
  absl::StatusOr<MegatronImport> m = Import(line, cluster);
  REQUIRE(m.ok());
  hetsim::proto::PlanInputs in;
  in.cluster = cluster;
  in.model = m->model;
  in.plan = m->plan;
  in.plan.set_schedule(v1::INTERLEAVED_1F1B);
  in.plan.set_virtual_stages(3);
  in.plan.set_blocking_p2p(false);
  REQUIRE(hetsim::proto::ValidatePlanInputs(in).ok());
  absl::StatusOr<hetsim::interop::MegatronExport> e = ExportMegatron(in);
  REQUIRE(e.ok());
  CHECK_THAT(e->launch_line, Catch::Contains("--account-for-embedding-in-pipeline-split "
                                             "--account-for-loss-in-pipeline-split "
                                             "--num-layers-per-virtual-pipeline-stage 2"));
  absl::StatusOr<MegatronImport> again = Import(e->launch_line, cluster);
  REQUIRE(again.ok());
  google::protobuf::util::MessageDifferencer d;
  CHECK(d.Compare(in.plan, again->plan));
}

TEST_CASE("uneven pipelines: Megatron's first/last stage counts and its accounting of the embedding and loss",
          "[interop]") {
  const v1::Cluster cluster = ExampleCluster("a100-512");
  const std::string base =
      "torchrun --nproc_per_node 8 --nnodes 4 pretrain_gpt.py --num-layers 30 --hidden-size 4096 "
      "--num-attention-heads 32 --seq-length 2048 --max-position-embeddings 2048 --micro-batch-size 1 "
      "--global-batch-size 32 --bf16 --tensor-model-parallel-size 8 --pipeline-model-parallel-size 4 ";
  auto blocks_of = [&](const std::string& flags) {
    absl::StatusOr<MegatronImport> m = Import(base + flags, cluster);
    INFO(m.status().message());
    REQUIRE(m.ok());
    CHECK_FALSE(HasNote(*m, "not modelled"));
    CheckRoundTrip(*m, cluster);
    std::vector<int64_t> blocks;
    for (const v1::Stage& s : m->plan.stages()) blocks.push_back(s.num_layers());
    blocks.front() -= 1;  // the embedding
    blocks.back() -= 1;   // the head
    return std::make_pair(blocks, m->plan.virtual_stages());
  };
  using Blocks = std::vector<int64_t>;
  CHECK(blocks_of("--decoder-first-pipeline-num-layers 6 --decoder-last-pipeline-num-layers 6").first ==
        Blocks{6, 9, 9, 6});
  CHECK(blocks_of("--decoder-first-pipeline-num-layers 3").first == Blocks{3, 9, 9, 9});
  CHECK(blocks_of("--decoder-last-pipeline-num-layers 6").first == Blocks{8, 8, 8, 6});
  CHECK(blocks_of("--account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split").first ==
        Blocks{7, 8, 8, 7});
  // Interleaved: layers a chunk counting the embedding and loss, or chunks a stage when uneven.
  CHECK(blocks_of("--account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split "
                  "--num-layers-per-virtual-pipeline-stage 4") == std::make_pair(Blocks{7, 8, 8, 7}, 2u));
  CHECK(blocks_of("--decoder-first-pipeline-num-layers 6 --decoder-last-pipeline-num-layers 6 "
                  "--num-virtual-stages-per-pipeline-rank 3") == std::make_pair(Blocks{6, 9, 9, 6}, 3u));
}

TEST_CASE("uneven pipelines Megatron refuses", "[interop]") {
  const std::string base =
      "--num-layers 30 --hidden-size 1024 --num-attention-heads 16 --seq-length 1024 --micro-batch-size 1 "
      "--pipeline-model-parallel-size 4 ";
  CHECK(ImportError(base) == "line.sh: --num-layers 30 is not divisible by --pipeline-model-parallel-size 4");
  CHECK(ImportError(base + "--decoder-first-pipeline-num-layers 5") ==
        "line.sh: --num-layers 30 minus the first stage's 5 leaves 25 blocks, which do not split evenly "
        "over the other 3 stages");
  CHECK(ImportError(base + "--account-for-loss-in-pipeline-split") ==
        "line.sh: --num-layers 30 (31 counting the embedding/loss) is not divisible by --pipeline-model-parallel-size "
        "4");
  CHECK(ImportError(base + "--account-for-loss-in-pipeline-split --decoder-first-pipeline-num-layers 3")
            .find("contradict each other") != std::string::npos);
  CHECK(ImportError(base + "--decoder-first-pipeline-num-layers 6 --decoder-last-pipeline-num-layers 6 "
                           "--num-layers-per-virtual-pipeline-stage 3")
            .find("--num-virtual-stages-per-pipeline-rank") != std::string::npos);
  CHECK(ImportError(base + "--account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split "
                           "--num-layers-per-virtual-pipeline-stage 3") ==
        "line.sh: --num-layers-per-virtual-pipeline-stage 3 does not divide the 8 layers of a pipeline stage");
  CHECK(ImportError("--num-layers 30 --hidden-size 1024 --num-attention-heads 16 --seq-length 1024 "
                    "--micro-batch-size 1 --decoder-first-pipeline-num-layers 6") ==
        "line.sh: --decoder-first/last-pipeline-num-layers need --pipeline-model-parallel-size of at least 2");
  CHECK(ImportError(base + "--decoder-first-pipeline-num-layers 9223372036854775807 "
                           "--decoder-last-pipeline-num-layers 9223372036854775807") ==
        "line.sh: --decoder-first-pipeline-num-layers: 9223372036854775807 is larger than 2147483647, the most "
        "hetsim reads");
  CHECK(ImportError(base + "--decoder-first-pipeline-num-layers 31") ==
        "line.sh: --decoder-first-pipeline-num-layers 31: not between 1 and --num-layers 30");
  CHECK(ImportError(base + "--decoder-first-pipeline-num-layers 15 --decoder-last-pipeline-num-layers 15") ==
        "line.sh: --num-layers 30 minus the first and last stages' 30 leaves no block for the other 2 stages (a "
        "hetsim stage holds at least one)");
  // --num-virtual-stages-per-pipeline-rank must cut every stage's share evenly, as Megatron checks.
  const auto line = [](int layers, int pp, const std::string& flags) {
    return absl::StrFormat(
        "--num-layers %d --hidden-size 1024 --num-attention-heads 16 --seq-length 1024 --micro-batch-size 1 "
        "--tensor-model-parallel-size 8 --pipeline-model-parallel-size %d %s",
        layers, pp, flags);
  };
  CHECK(ImportError(line(6, 2, "--num-virtual-stages-per-pipeline-rank 4"), OnNodes(2)) ==
        "line.sh: --num-virtual-stages-per-pipeline-rank 4 does not divide the 3 layers of pipeline stage 0");
  CHECK(ImportError(line(5, 2, "--account-for-embedding-in-pipeline-split --num-virtual-stages-per-pipeline-rank 2"),
                    OnNodes(2)) ==
        "line.sh: --num-virtual-stages-per-pipeline-rank 2 does not divide the 3 layers of pipeline stage 0");
  CHECK(ImportError(line(9, 3, "--decoder-first-pipeline-num-layers 1 --num-virtual-stages-per-pipeline-rank 2"),
                    OnNodes(3)) ==
        "line.sh: --num-virtual-stages-per-pipeline-rank 2 does not divide the 1 blocks of pipeline stage 0");
}

TEST_CASE("export: a split no pair of flags gives is written as Megatron's layout of letters", "[interop]") {
  // Blocks 0, 5, 3: --decoder-first-pipeline-num-layers 0 is refused by Megatron, and no other split
  // flag gives them; --pipeline-model-parallel-layout does.
  const v1::Cluster cluster = ExampleCluster("a100-512");
  absl::StatusOr<MegatronImport> m = Import(
      "torchrun --nproc_per_node 8 --nnodes 3 pretrain_gpt.py --num-layers 8 --hidden-size 1024 "
      "--num-attention-heads 16 --seq-length 1024 --max-position-embeddings 1024 --micro-batch-size 1 "
      "--global-batch-size 8 --tensor-model-parallel-size 8 --pipeline-model-parallel-size 3 --bf16 "
      "--decoder-first-pipeline-num-layers 2 --decoder-last-pipeline-num-layers 3",
      cluster);
  REQUIRE(m.ok());
  hetsim::proto::PlanInputs in;
  in.cluster = cluster;
  in.model = m->model;
  in.plan = m->plan;
  // Stage 0 keeps only the embedding; stage 1 takes its 2 blocks (6 blocks, stage 2 as before).
  in.plan.mutable_stages(0)->set_num_layers(1);
  in.plan.mutable_stages(1)->set_first_layer(1);
  in.plan.mutable_stages(1)->set_num_layers(5);
  REQUIRE(hetsim::proto::ValidatePlanInputs(in).ok());
  absl::StatusOr<hetsim::interop::MegatronExport> e = ExportMegatron(in);
  REQUIRE(e.ok());
  CHECK_THAT(e->launch_line, Catch::Contains("--pipeline-model-parallel-layout 'E|ttttt|tttL'"));
  absl::StatusOr<MegatronImport> again = Import(e->launch_line, cluster);
  REQUIRE(again.ok());
  CHECK(again->plan.stages(0).num_layers() == 1);
  CHECK(again->plan.stages(1).num_layers() == 5);
  CHECK(again->plan.stages(2).num_layers() == 4);
  CHECK(again->plan.virtual_stage_layers_size() == 0);  // not interleaved: the stages say it
}

TEST_CASE("Megatron's pipeline layout of letters: DeepSeek-V3's uneven chunks, MTP with the loss", "[interop]") {
  const v1::Cluster cluster = ExampleCluster("a100-512");
  // 7 blocks and one MTP module on PP 2 x 2 chunks: virtual stages E t | t t t | t t | t m L.
  const std::string line =
      "torchrun --nproc_per_node 8 --nnodes 2 pretrain_gpt.py --num-layers 7 --hidden-size 1024 "
      "--num-attention-heads 16 --seq-length 1024 --max-position-embeddings 1024 --micro-batch-size 1 "
      "--global-batch-size 16 --tensor-model-parallel-size 8 --pipeline-model-parallel-size 2 --bf16 "
      "--mtp-num-layers 1 ";
  const MegatronImport m = ImportRoundTrip(line + "--pipeline-model-parallel-layout 'Et|t*3|(t)*2,|tmL'", cluster);
  const v1::Plan& p = m.plan;
  CHECK(p.schedule() == v1::INTERLEAVED_1F1B);
  CHECK(p.virtual_stages() == 2);
  // hetsim's layers (the embedding and the head counted) of virtual stages k = chunk x 2 + stage.
  CHECK(std::vector<uint32_t>(p.virtual_stage_layers().begin(), p.virtual_stage_layers().end()) ==
        std::vector<uint32_t>{2, 3, 2, 2});
  CHECK(p.stages(0).num_layers() == 4);  // virtual stages 0 and 2
  CHECK(p.stages(1).num_layers() == 5);  // 1 and 3
  // The simulator runs exactly those chunks.
  hetsim::proto::PlanInputs in;
  in.cluster = cluster;
  in.model = m.model;
  in.plan = p;
  in.layer_count = hetsim::proto::LayerCount(m.model);
  REQUIRE(hetsim::proto::ValidatePlanInputs(in).ok());
  const auto setup = hetsim::testing::MakeSetup(in, hetsim::network::NetworkMode::kContentionFree);
  REQUIRE(setup->virtual_stages.size() == 4);
  const std::vector<std::pair<int, int>> expected = {{0, 2}, {2, 3}, {5, 2}, {7, 2}};
  for (size_t k = 0; k < 4; ++k) {
    CHECK(setup->virtual_stages[k].first_layer == expected[k].first);
    CHECK(setup->virtual_stages[k].num_layers == expected[k].second);
  }
  const auto bad = [&](const std::string& layout) { return ImportError(line + layout, OnNodes(2)); };
  CHECK(bad("--pipeline-model-parallel-layout 'Et|ttt|tt|tmL' --num-virtual-stages-per-pipeline-rank 2") ==
        "line.sh: --pipeline-model-parallel-layout and --num-virtual-stages-per-pipeline-rank contradict each other");
  CHECK(bad("--pipeline-model-parallel-layout 'Et|ttt|ttmL'") ==
        "line.sh: --pipeline-model-parallel-layout Et|ttt|ttmL: 3 virtual stages do not divide by "
        "--pipeline-model-parallel-size 2");
  CHECK(bad("--pipeline-model-parallel-layout 'Et|ttt|tt|tL'") ==
        "line.sh: --pipeline-model-parallel-layout Et|ttt|tt|tL: 0 MTP modules (m), but --mtp-num-layers 1");
  CHECK(bad("--pipeline-model-parallel-layout 'Et|ttt|tt|tm|L'") ==
        "line.sh: --pipeline-model-parallel-layout Et|ttt|tt|tm|L: 5 virtual stages do not divide by "
        "--pipeline-model-parallel-size 2");
  CHECK(bad("--pipeline-model-parallel-layout 'Et|tt|tt|tm|L|E'").find("the embedding (E) must come once") !=
        std::string::npos);
  CHECK(bad("--pipeline-model-parallel-layout 'Et|tt|tt|tmL'") ==
        "line.sh: --pipeline-model-parallel-layout Et|tt|tt|tmL: 6 blocks (t), but --num-layers 7");
  CHECK(bad("--pipeline-model-parallel-layout 'tE|ttt|tt|tmL'") ==
        "line.sh: --pipeline-model-parallel-layout tE|ttt|tt|tmL: the embedding (E) must come once, first");
  CHECK(bad("--pipeline-model-parallel-layout 'Et|tttt||ttmL'") ==
        "line.sh: --pipeline-model-parallel-layout Et|tttt||ttmL: virtual stage 2 has no embedding, block or loss "
        "(not modelled: hetsim's virtual stages hold a layer at least)");
  CHECK(bad("--pipeline-model-parallel-layout 'Et|tx|tt|tmL'") ==
        "line.sh: --pipeline-model-parallel-layout Et|tx|tt|tmL: 'x' is not a layer letter (E, t, m, L)");
  CHECK(bad("--pipeline-model-parallel-layout 'Et|(tt|tt|tmL'") ==
        "line.sh: --pipeline-model-parallel-layout Et|(tt|tt|tmL: '(' is not a layer letter (E, t, m, L)");
}

TEST_CASE("export: userbuffers settings are notes, not flags, --use-flash-attn is read", "[interop]") {
  const v1::Cluster cluster = ExampleCluster("a100-512");
  const MegatronImport m = ImportOk(
      "torchrun --nproc_per_node 8 --nnodes 1 pretrain_gpt.py --num-layers 4 --hidden-size 1024 "
      "--num-attention-heads 16 --seq-length 1024 --max-position-embeddings 1024 --micro-batch-size 1 "
      "--global-batch-size 8 --tensor-model-parallel-size 8 --sequence-parallel --tp-comm-overlap --bf16 "
      "--use-flash-attn",
      cluster);
  // The switch of Megatron-LM before --attention-backend: read, not listed as ignored.
  CHECK(m.model.transformer().attention() == v1::ATTENTION_FLASH);
  for (const std::string& n : m.notes) CHECK(n.find("use-flash-attn") == std::string::npos);
  hetsim::proto::PlanInputs in;
  in.cluster = cluster;
  in.model = m.model;
  in.plan = m.plan;
  REQUIRE(in.plan.tp_comm_overlap());
  in.plan.set_tp_comm_overlap_aggregate(true);
  in.plan.mutable_tp_comm_overlap_config()->set_fc2_fprop_method(v1::TP_OVERLAP_RING_EXCHANGE);
  REQUIRE(hetsim::proto::ValidatePlanInputs(in).ok());
  absl::StatusOr<hetsim::interop::MegatronExport> e = ExportMegatron(in);
  REQUIRE(e.ok());
  CHECK_THAT(e->launch_line, Catch::Contains("--tp-comm-overlap"));
  for (const char* setting : {"tp_comm_overlap_aggregate", "tp_comm_overlap_config"}) {
    bool noted = false;
    for (const std::string& n : e->notes) noted |= n.find(setting) != std::string::npos;
    CHECK(noted);
  }
}

// The plan fields an export says it could not write ("blocking_p2p false: not exported (...)").
std::vector<std::string> FieldsNotExported(const hetsim::interop::MegatronExport& e) {
  std::vector<std::string> fields;
  for (const std::string& n : e.notes) {
    const size_t space = n.find_first_of(" :");
    if (n.find("not exported") != std::string::npos && space != std::string::npos) fields.push_back(n.substr(0, space));
  }
  return fields;
}

TEST_CASE("every bundled example plan that exports imports back to the same plan fields", "[interop]") {
  // Each example plan with the cluster it is written for; the others are refused (checked below).
  const struct {
    const char* plan;
    const char* cluster;
    bool exports;
  } examples[] = {
      {"plan-512gpu", "512gpu", false},  // H_1F1B on two GPU types
      {"plan-hapt-case", "hapt-case", false},
      {"plan-lab-pipelines", "lab-pcie", false},
      {"plan-llama3-405b-100k", "100k-h100", true},
      {"plan-llama3-405b-128k", "16k-h100", true},
      {"plan-llama3-405b", "16k-h100", true},
      {"plan-megatron-39b", "a100-512", true},
      {"plan-mixed-replicas", "mixed-cloud", false},  // two pipeline shapes
  };
  for (const auto& ex : examples) {
    INFO(ex.plan);
    absl::StatusOr<hetsim::proto::PlanInputs> in = hetsim::proto::LoadPlanInputs(
        kSource + "/examples/" + ex.plan + ".pbtxt", kSource + "/examples/cluster-" + ex.cluster + ".pbtxt");
    REQUIRE(in.ok());
    absl::StatusOr<hetsim::interop::MegatronExport> e = ExportMegatron(*in);
    INFO(e.status().message());
    REQUIRE(e.ok() == ex.exports);
    if (!e.ok()) continue;
    INFO(e->launch_line);
    // Today's Megatron-LM has only --no-overlap-p2p-communication (arguments.py).
    CHECK(e->launch_line.find("--overlap-p2p-communication") == std::string::npos);
    absl::StatusOr<MegatronImport> again = Import(e->launch_line, in->cluster);
    INFO(again.status().message());
    REQUIRE(again.ok());
    google::protobuf::util::MessageDifferencer d;
    std::string diff;
    d.ReportDifferencesToString(&diff);
    const google::protobuf::Descriptor* plan = v1::Plan::descriptor();
    // nccl_sm_contention: on in the imported framework's profile, which the examples predate.
    for (const char* field : {"name", "framework", "framework_off", "nccl_sm_contention"}) {
      d.IgnoreField(plan->FindFieldByName(field));
    }
    d.IgnoreField(v1::Model::descriptor()->FindFieldByName("name"));  // the import names it by its shape
    for (const std::string& field : FieldsNotExported(*e)) {
      REQUIRE(plan->FindFieldByName(field) != nullptr);
      d.IgnoreField(plan->FindFieldByName(field));
    }
    const bool same = d.Compare(in->plan, again->plan);
    INFO(diff);  // the ignored fields are listed too
    CHECK(same);
  }
}

TEST_CASE("pipeline sends: only the flags today's Megatron-LM accepts for the schedule", "[interop]") {
  const v1::Cluster cluster = ExampleCluster("a100-512");
  const std::string base =
      "torchrun --nproc_per_node 8 --nnodes 2 pretrain_gpt.py --num-layers 24 --hidden-size 1024 "
      "--num-attention-heads 16 --seq-length 1024 --max-position-embeddings 1024 --micro-batch-size 1 "
      "--global-batch-size 16 --tensor-model-parallel-size 2 --bf16 ";
  auto exported = [&](const std::string& flags, bool blocking) {
    absl::StatusOr<MegatronImport> m = Import(base + flags, cluster);
    INFO(m.status().message());
    REQUIRE(m.ok());
    hetsim::proto::PlanInputs in;
    in.cluster = cluster;
    in.model = m->model;
    in.plan = m->plan;
    in.plan.clear_framework();  // the field alone says what the sends do
    in.plan.clear_framework_off();
    in.plan.set_blocking_p2p(blocking);
    REQUIRE(hetsim::proto::ValidatePlanInputs(in).ok());
    absl::StatusOr<hetsim::interop::MegatronExport> e = ExportMegatron(in);
    REQUIRE(e.ok());
    return *std::move(e);
  };
  auto noted = [](const hetsim::interop::MegatronExport& e, const std::string& text) {
    for (const std::string& n : e.notes) {
      if (n.find(text) != std::string::npos) return true;
    }
    return false;
  };
  // 1F1B: Megatron blocks its sends whatever the line says; an overlapped plan is noted, not flagged.
  hetsim::interop::MegatronExport e = exported("--pipeline-model-parallel-size 4", false);
  CHECK(e.launch_line.find("overlap-p2p") == std::string::npos);
  CHECK(noted(e, "blocking_p2p false: not exported"));
  e = exported("--pipeline-model-parallel-size 4", true);
  CHECK(e.launch_line.find("overlap-p2p") == std::string::npos);
  CHECK_FALSE(noted(e, "blocking_p2p"));
  // Interleaved: overlapped by default; blocked with the flag at PP > 2 only (Megatron asserts).
  const std::string interleaved = "--num-layers-per-virtual-pipeline-stage 3 --pipeline-model-parallel-size ";
  e = exported(interleaved + "4", true);
  CHECK(e.launch_line.find("--no-overlap-p2p-communication") != std::string::npos);
  e = exported(interleaved + "4", false);
  CHECK(e.launch_line.find("overlap-p2p") == std::string::npos);
  e = exported(interleaved + "2", true);
  CHECK(e.launch_line.find("overlap-p2p") == std::string::npos);
  CHECK(noted(e, "blocking_p2p true: not exported (Megatron-LM blocks interleaved sends only at"));
}

TEST_CASE("vision-language lines are refused, whatever their training script is called", "[interop]") {
  // Megatron-LM's examples/multimodal/pretrain_mistral_clip.sh runs examples/multimodal/train.py.
  const std::string line =
      "torchrun --nproc_per_node 8 examples/multimodal/train.py --num-layers 4 --hidden-size 1024 "
      "--num-attention-heads 16 --seq-length 1024 --max-position-embeddings 1024 --micro-batch-size 1 "
      "--global-batch-size 8 --bf16 ";
  CHECK(ImportError(line + "--img-h 336 --img-w 336 --patch-dim 14") ==
        "line.sh: --img-h 336: a vision-language model (Megatron-LM's multimodal training, train.py), which hetsim "
        "does not model (it prices GPT-style decoders; the vision encoder and its image tokens are not in the line's "
        "decoder flags)");
  CHECK_THAT(ImportError(line + "--language-model-type=mistral_7b"),
             Catch::StartsWith("line.sh: --language-model-type mistral_7b: a vision-language model"));
  CHECK(Import(line, ExampleCluster("a100-512"), OnNodes(1)).ok());
}

TEST_CASE("a heterogeneous plan: what Megatron's flags cannot say", "[interop]") {
  absl::StatusOr<hetsim::proto::PlanInputs> in = hetsim::proto::LoadPlanInputs(
      kSource + "/examples/plan-hapt-case.pbtxt", kSource + "/examples/cluster-hapt-case.pbtxt");
  REQUIRE(in.ok());
  absl::StatusOr<hetsim::interop::MegatronExport> e = ExportMegatron(*in);
  REQUIRE_FALSE(e.ok());
  const std::string m(e.status().message());
  INFO(m);
  CHECK(m.find("plan-hapt-case.pbtxt: schedule: H_1F1B: Megatron runs 1F1B or interleaved 1F1B") != std::string::npos);
  CHECK(m.find("mesh.island: GPU type") != std::string::npos);
  CHECK(m.find("stages[1].mesh: is not where Megatron's rank order") != std::string::npos);
  // Its uneven blocks (21, 53, 52) are --decoder-first/last-pipeline-num-layers: not a problem.
  CHECK(m.find("num_layers") == std::string::npos);
  CHECK(m.find("split") == std::string::npos);
}

TEST_CASE("Megatron MoE layer pattern: an integer, dense blocks then MoE, alternate blocks, what hetsim cannot say",
          "[interop]") {
  using hetsim::interop::MoeLayerFreqValue;
  using hetsim::interop::ParseMoeLayerFreq;
  auto layout = [](const std::string& v, uint32_t n) {
    absl::StatusOr<hetsim::interop::MoeLayout> l = ParseMoeLayerFreq(v, n);
    INFO(l.status().message());
    REQUIRE(l.ok());
    return std::pair<uint32_t, uint32_t>{l->first_dense, l->freq};
  };
  CHECK(layout("2", 8) == std::pair<uint32_t, uint32_t>{0, 2});              // Megatron: i % 2 == 0
  CHECK(layout("([0]*3+[1]*5)", 8) == std::pair<uint32_t, uint32_t>{3, 1});  // DeepSeek-V3's form
  CHECK(layout("[0, 1]*4", 8) == std::pair<uint32_t, uint32_t>{1, 2});       // Llama 4's alternate blocks
  CHECK(layout("[1,0,1,0]", 4) == std::pair<uint32_t, uint32_t>{0, 2});
  CHECK(layout("[0]*2+[1,0,0]*2", 8) == std::pair<uint32_t, uint32_t>{2, 3});
  CHECK(layout("([0]*1)+([1]*3)", 4) == std::pair<uint32_t, uint32_t>{1, 1});  // Python's grouping
  CHECK(layout("[1,0,0,0]", 4) == std::pair<uint32_t, uint32_t>{0, 4});        // one MoE block
  CHECK(layout("[0,0,0,1]", 4) == std::pair<uint32_t, uint32_t>{3, 1});
  auto error = [](const std::string& v, uint32_t n) {
    absl::StatusOr<hetsim::interop::MoeLayout> l = ParseMoeLayerFreq(v, n);
    REQUIRE_FALSE(l.ok());
    return std::string(l.status().message());
  };
  CHECK_THAT(error("[1,1,0,1]", 4), Catch::Contains("cannot say it"));
  CHECK_THAT(error("[0,2]", 2), Catch::Contains("\"2\" is not 0 or 1"));
  CHECK_THAT(error("([0]*3+[1]*4)", 8), Catch::Contains("7 entries for 8 blocks"));
  CHECK_THAT(error("[0]*4", 4), Catch::Contains("no block is MoE"));
  CHECK_THAT(error("9", 8), Catch::Contains("not in [1, 8]"));
  CHECK_THAT(error("[0,1]*x", 8), Catch::Contains("repeat count"));
  CHECK_THAT(error("[1,,0,1]", 4), Catch::Contains("\"\" is not 0 or 1"));
  CHECK_THAT(error("[1]*99999999", 8), Catch::Contains("longer than any model"));
  // The export's value reads back as the same layout.
  for (const auto& [first, freq] :
       std::vector<std::pair<uint32_t, uint32_t>>{{0, 1}, {0, 3}, {3, 1}, {1, 2}, {2, 3}, {2, 6}, {0, 8}}) {
    INFO(first << " " << freq);
    CHECK(layout(MoeLayerFreqValue({first, freq}, 8), 8) == std::pair<uint32_t, uint32_t>{first, freq});
  }
}

TEST_CASE("a DeepSeek-like MoE line: shared experts, dense first blocks, multi-latent attention", "[interop]") {
  const v1::Cluster cluster = ExampleCluster("a100-512");
  absl::StatusOr<MegatronImport> m = Import(
      "torchrun --nproc_per_node 8 --nnodes 1 pretrain_gpt.py --num-layers 4 --hidden-size 1024 "
      "--num-attention-heads 16 --seq-length 1024 --max-position-embeddings 1024 --micro-batch-size 1 "
      "--global-batch-size 8 --expert-model-parallel-size 8 --num-experts 16 --moe-router-topk 4 "
      "--moe-ffn-hidden-size 512 --moe-shared-expert-intermediate-size 1024 --moe-layer-freq '([0]*1+[1]*3)' "
      "--swiglu --bf16 --multi-latent-attention --kv-lora-rank 512 --moe-grouped-gemm --mtp-num-layers 1",
      cluster);
  INFO(m.status().message());
  REQUIRE(m.ok());
  const v1::Transformer& t = m->model.transformer();
  CHECK(t.moe_grouped_gemm());
  CHECK(t.moe_shared_expert_ffn_hidden_size() == 1024);
  CHECK(t.moe_first_dense_layers() == 1);
  CHECK(t.moe_layer_freq() == 0);
  REQUIRE(t.has_mla());
  CHECK(t.mla().kv_lora_rank() == 512);
  CHECK(t.mla().q_lora_rank() == 0);  // not given: no Q compression
  CHECK(t.mla().qk_head_dim() == 128);
  CHECK(t.mla().qk_pos_emb_head_dim() == 64);
  CHECK(t.mla().v_head_dim() == 128);
  CHECK(t.mtp_num_layers() == 1);
  CHECK_FALSE(HasNote(*m, "--mtp-num-layers"));
  CheckRoundTrip(*m, cluster);
  CHECK(ImportError("--num-layers 4 --hidden-size 1024 --num-attention-heads 16 --seq-length 1024 --micro-batch-size 1 "
                    "--mtp-num-layers 5") == "line.sh: --mtp-num-layers 5: more modules than the 4 blocks");
  CHECK(ImportOk(kSmallLine + "--bf16 --mtp-num-layers 0", cluster).model.transformer().mtp_num_layers() == 0);
  CHECK_THAT(ImportError("torchrun --nproc_per_node 8 --nnodes 1 pretrain_gpt.py --num-layers 4 --hidden-size 1024 "
                         "--num-attention-heads 16 --seq-length 1024 --micro-batch-size 1 --global-batch-size 8 "
                         "--num-experts 16 --moe-layer-freq '[1,1,0,1]'",
                         OnNodes(1)),
             Catch::Contains("line.sh: --moe-layer-freq \"[1,1,0,1]\""));
}

}  // namespace

TEST_CASE("MoE parallel folding and combined 1F1B: a Qwen3-235B-like line imports and round-trips", "[interop]") {
  // Qwen3-235B's layout in small: TP 2 with sequence parallelism, PP 2 with virtual stages, EP 16 over
  // a stage's TP 2 x DP 8 GPUs with expert TP 1, the dispatch overlapped (combined 1F1B).
  const v1::Cluster cluster = ExampleCluster("a100-512");
  const std::string base = kSmallMoeLine;
  const std::string line = base +
                           "--moe-token-dispatcher-type alltoall --sequence-parallel "
                           "--num-layers-per-virtual-pipeline-stage 2 --overlap-moe-expert-parallel-comm "
                           "--delay-wgrad-compute";
  const MegatronImport m = ImportRoundTrip(line, cluster);
  REQUIRE(m.plan.stages_size() == 2);
  for (const v1::Stage& s : m.plan.stages()) {
    CHECK(s.tensor_parallel() == 2);
    CHECK(s.data_parallel() == 8);
    CHECK(s.expert_parallel() == 16);
    CHECK(s.expert_tensor_parallel() == 1);
  }
  CHECK(m.plan.moe_a2a_overlap());
  CHECK(HasNote(m, "not modelled: --delay-wgrad-compute"));
  CHECK_FALSE(HasNote(m, "expert-tensor-parallel"));
  // Megatron's refusals, by flag.
  auto error = [&](const std::string& l) {
    absl::StatusOr<MegatronImport> bad = Import(l, cluster);
    REQUIRE_FALSE(bad.ok());
    return std::string(bad.status().message());
  };
  CHECK(error(base + "--moe-token-dispatcher-type alltoall --num-layers-per-virtual-pipeline-stage 2") ==
        "line.sh: --num-experts with --tensor-model-parallel-size 2 needs --sequence-parallel (Megatron-LM's MoE "
        "layer refuses tensor parallelism without it)");
  CHECK(error(base + "--sequence-parallel --num-layers-per-virtual-pipeline-stage 2 "
                     "--overlap-moe-expert-parallel-comm") ==
        "line.sh: --overlap-moe-expert-parallel-comm: needs --moe-token-dispatcher-type alltoall or flex (allgather "
        "is Megatron's default)");
  CHECK(error(base + "--moe-token-dispatcher-type alltoall --sequence-parallel --overlap-moe-expert-parallel-comm") ==
        "line.sh: --overlap-moe-expert-parallel-comm: needs a virtual pipeline with --pipeline-model-parallel-size 2");
  std::string ep32 = line;
  ep32.replace(ep32.find("--expert-model-parallel-size 16"), 31, "--expert-model-parallel-size 32");
  CHECK_THAT(error(ep32),
             Catch::Contains("--expert-model-parallel-size 32 x --expert-tensor-parallel-size 1 does not divide a "
                             "pipeline stage's 16 GPUs"));
}

TEST_CASE("2021-2022 recompute flags are read under today's names, with a note", "[interop]") {
  // Megatron-LM's own SC'21 scripts: --activations-checkpoint-method alone meant full recomputation
  // (renamed --recompute-method in 2022, with --recompute-granularity full); read as unknown before,
  // they were priced without recomputation.
  const v1::Cluster cluster = ExampleCluster("a100-512");
  const MegatronImport uniform = ImportOk(kSmallLine + "--fp16 --activations-checkpoint-method uniform", cluster);
  CHECK(uniform.plan.stages(0).recompute() == v1::RECOMPUTE_FULL);
  CHECK(uniform.plan.stages(0).recompute_num_layers() == 0);
  CHECK(std::find(uniform.notes.begin(), uniform.notes.end(),
                  "read as renamed: --activations-checkpoint-method (today --recompute-method)") !=
        uniform.notes.end());
  const MegatronImport block = ImportOk(
      kSmallLine + "--fp16 --activations-checkpoint-method block --activations-checkpoint-num-layers 3", cluster);
  CHECK(block.plan.stages(0).recompute() == v1::RECOMPUTE_FULL);
  CHECK(block.plan.stages(0).recompute_num_layers() == 3);
  const MegatronImport none = ImportOk(kSmallLine + "--fp16", cluster);
  CHECK(none.plan.stages(0).recompute() == v1::RECOMPUTE_NONE);
}

namespace {

// A small Megatron-Core line (--use-mcore-models, with the tokenizer flags appended).
std::string CoreLineWith(const std::string& extra) {
  return "torchrun --nproc_per_node 8 --nnodes 1 pretrain_gpt.py --use-mcore-models --num-layers 4 "
         "--hidden-size 1024 --num-attention-heads 16 --seq-length 2048 --max-position-embeddings 2048 "
         "--micro-batch-size 1 --bf16 --tensor-model-parallel-size 2 " +
         extra;
}

}  // namespace

TEST_CASE("the vocabulary from the tokenizer, Megatron-Core's attention backend when the line names none",
          "[interop]") {
  const v1::Cluster cluster = ExampleCluster("a100-512");
  // Llama 3's 128,256 tokens, padded to a multiple of 128 x TP 2 = 256: 128,256 already is.
  MegatronImport m = ImportOk(
      CoreLineWith("--tokenizer-type HuggingFaceTokenizer --tokenizer-model meta-llama/Meta-Llama-3-8B"), cluster);
  CHECK(m.model.transformer().vocab_size() == 128256);
  CHECK(HasNote(m, "vocabulary: 128256 tokens, the size of HuggingFaceTokenizer meta-llama/Meta-Llama-3-8B"));
  // Llama 2's 32,000; DeepSeek-V3's 129,280 -> 129,280 (a multiple of 256).
  CHECK(
      ImportOk(CoreLineWith("--tokenizer-type Llama2Tokenizer --tokenizer-model /data/llama2/tokenizer.model"), cluster)
          .model.transformer()
          .vocab_size() == 32000);
  CHECK(
      ImportOk(CoreLineWith("--tokenizer-type HuggingFaceTokenizer --tokenizer-model deepseek-ai/DeepSeek-V3"), cluster)
          .model.transformer()
          .vocab_size() == 129280);
  // --pad-vocab-size-to is Megatron's exact size; below the tokenizer's it is a contradiction.
  CHECK(ImportOk(CoreLineWith("--vocab-size 50000 --pad-vocab-size-to 50304"), cluster)
            .model.transformer()
            .vocab_size() == 50304);
  absl::StatusOr<MegatronImport> small = Import(CoreLineWith("--vocab-size 50000 --pad-vocab-size-to 1000"), cluster);
  REQUIRE_FALSE(small.ok());
  CHECK_THAT(std::string(small.status().message()), Catch::Contains("--pad-vocab-size-to 1000 and the tokenizer's"));
  // An unknown tokenizer says so and how to fix it; NullTokenizer needs --vocab-size.
  MegatronImport unknown =
      ImportOk(CoreLineWith("--tokenizer-type SentencePieceTokenizer --tokenizer-model corp.model"), cluster);
  CHECK(unknown.model.transformer().vocab_size() == 50432);  // 50,257 padded to 256
  CHECK(HasNote(unknown, "is not known to hetsim; GPT-2's 50257 tokens assumed: pass --vocab-size N"));
  CHECK_FALSE(Import(CoreLineWith("--tokenizer-type NullTokenizer"), cluster).ok());
  // Megatron-Core picks flash or fused attention unless told otherwise; local layers do not.
  CHECK(m.model.transformer().attention() == v1::ATTENTION_FLASH);
  CHECK(ImportOk(CoreLineWith("--attention-backend unfused"), cluster).model.transformer().attention() ==
        v1::ATTENTION_UNFUSED);
  CHECK(ImportOk(CoreLineWith("--transformer-impl local"), cluster).model.transformer().attention() ==
        v1::ATTENTION_UNFUSED);
}

}  // namespace hetsim::interop

namespace hetsim::interop {
namespace {

// Megatron's fusion switches, flag by flag, onto Plan.unfused_kernels (today's Megatron-LM: the bias
// before the activation follows --no-bias-gelu-fusion on GeLU lines and --no-bias-swiglu-fusion on
// --swiglu lines; the masked softmax runs only in unfused attention), and back out through export.
TEST_CASE("import: --no-...-fusion flags are Plan.unfused_kernels, kernel by kernel", "[interop]") {
  const v1::Cluster cluster = ExampleCluster("a100-512");
  const std::string fp32_base =
      "pretrain_gpt.py --num-layers 4 --hidden-size 1024 --num-attention-heads 16 --seq-length 1024 "
      "--max-position-embeddings 1024 --micro-batch-size 2 --global-batch-size 16 --tensor-model-parallel-size 2 "
      "--vocab-size 50257 --transformer-impl local";
  const std::string base = fp32_base + " --bf16";  // 16-bit scores: Megatron's fused softmax kernels run
  MegatronImport m =
      ImportRoundTrip("torchrun --nproc_per_node 8 --nnodes 1 " + base + " --no-bias-gelu-fusion", cluster);
  CHECK(m.plan.unfused_kernels().bias_activation());
  CHECK_FALSE(m.plan.unfused_kernels().bias_dropout_add());
  CHECK_FALSE(m.plan.unfused_kernels().masked_softmax());
  CHECK(
      HasNote(m, "unfused kernels (Plan.unfused_kernels), each a pass of its own: the bias add before the activation"));
  m = ImportRoundTrip("torchrun --nproc_per_node 8 --nnodes 1 " + base +
                          " --no-bias-dropout-fusion --no-masked-softmax-fusion --no-persist-layer-norm",
                      cluster);
  CHECK_FALSE(m.plan.unfused_kernels().bias_activation());
  CHECK(m.plan.unfused_kernels().bias_dropout_add());
  CHECK(m.plan.unfused_kernels().masked_softmax());  // --transformer-impl local: unfused attention
  // --swiglu lines read --no-bias-swiglu-fusion; --no-bias-gelu-fusion does nothing there.
  m = ImportRoundTrip("torchrun --nproc_per_node 8 --nnodes 1 " + base + " --swiglu --no-bias-gelu-fusion", cluster);
  CHECK_FALSE(m.plan.has_unfused_kernels());
  CHECK(HasNote(m,
                "no effect: --no-bias-gelu-fusion (the bias-activation fusion of --swiglu lines is "
                "--no-bias-swiglu-fusion)"));
  m = ImportRoundTrip("torchrun --nproc_per_node 8 --nnodes 1 " + base + " --swiglu --no-bias-swiglu-fusion", cluster);
  CHECK(m.plan.unfused_kernels().bias_activation());
  // An FP32 line (no --fp16 or --bf16) runs the unfused mask and softmax with or without
  // --no-masked-softmax-fusion: FusedScaleMaskSoftmax.is_kernel_available asks for 16-bit scores.
  m = ImportRoundTrip("torchrun --nproc_per_node 8 --nnodes 1 " + fp32_base, cluster);
  CHECK(m.plan.unfused_kernels().masked_softmax());
  CHECK(HasNote(m, "FP32 scores (no --fp16 or --bf16): Megatron's fused mask-and-softmax kernels take 16-bit scores"));
  CHECK(m.plan.unfused_kernels().masked_fill_on_view());  // unscaled in today's Megatron: on the scores' view
  // All three: Plan.unfused_elementwise, Megatron-LM v1's spelling (the AMP plans').
  m = ImportRoundTrip("torchrun --nproc_per_node 8 --nnodes 1 " + fp32_base +
                          " --no-bias-gelu-fusion --no-bias-dropout-fusion --no-masked-softmax-fusion",
                      cluster);
  CHECK(m.plan.unfused_elementwise());
  // The line's FP32 scores, unscaled in today's Megatron: the mask runs on their view, the one field beside it.
  CHECK(m.plan.unfused_kernels().masked_fill_on_view());
  CHECK_FALSE(m.plan.unfused_kernels().masked_softmax());
  // Flash attention never writes the scores: --no-masked-softmax-fusion adds no pass.
  m = ImportOk("torchrun --nproc_per_node 8 --nnodes 1 " + base.substr(0, base.find(" --transformer-impl")) +
                   " --use-flash-attn --no-masked-softmax-fusion",
               cluster);
  CHECK_FALSE(m.plan.has_unfused_kernels());
  CHECK(HasNote(m, "no effect: --no-masked-softmax-fusion"));
}

// The fused softmax kernel runs only for the shapes its code's is_kernel_available accepts (16-bit scores,
// 16 < sk <= 4096 in Megatron's fused_softmax.py, 2048 in Megatron-LM v2.5's, 16384 in the legacy
// model's, sk < 16384 in Transformer Engine's, b x np a multiple of 4 and, in Megatron's, of the kernel's
// batches per block); elsewhere PyTorch masks and softmaxes apart, priced as unfused_kernels.masked_softmax.
TEST_CASE("import: the fused softmax's shape limits, version by version, price PyTorch's fallback", "[interop]") {
  const v1::Cluster cluster = ExampleCluster("a100-512");
  // TP 2 on 8 GPUs: DP 4, micro-batch 2 per rank, 16 / 2 = 8 heads per rank: b x np = 16.
  const auto line = [](int64_t seq, const std::string& more) {
    return absl::StrFormat(
        "torchrun --nproc_per_node 8 --nnodes 1 pretrain_gpt.py --num-layers 2 --hidden-size 1024 "
        "--num-attention-heads 16 --seq-length %d --max-position-embeddings %d --micro-batch-size 2 "
        "--global-batch-size 16 --tensor-model-parallel-size 2 --vocab-size 50257 --bf16 %s",
        seq, seq, more);
  };
  const auto masked = [](const MegatronImport& m) { return m.plan.unfused_kernels().masked_softmax(); };
  // Transformer Engine's unfused attention (Megatron-Core's default layers): sk < 16384.
  MegatronImport m = ImportRoundTrip(line(8192, "--attention-backend unfused"), cluster);
  CHECK_FALSE(masked(m));
  m = ImportRoundTrip(line(16384, "--attention-backend unfused"), cluster);
  CHECK(masked(m));
  CHECK(HasNote(m,
                "the fused softmax kernel does not run (Transformer Engine's softmax.py: sequence 16384 outside the "
                "kernel's 16 < sk < 16384)"));
  // Megatron-Core's local layers (megatron/core/fusions/fused_softmax.py): sk <= 4096.
  m = ImportRoundTrip(line(4096, "--transformer-impl local"), cluster);
  CHECK_FALSE(masked(m));
  m = ImportRoundTrip(line(8192, "--transformer-impl local"), cluster);
  CHECK(masked(m));
  CHECK(HasNote(m, "(Megatron's fused_softmax.py: sequence 8192 outside the kernel's 16 < sk <= 4096)"));
  // The legacy model (--use-legacy-models): unfused attention, sk <= 16384.
  m = ImportRoundTrip(line(8192, "--use-legacy-models"), cluster);
  CHECK(m.model.transformer().attention() == v1::ATTENTION_UNFUSED);
  CHECK_FALSE(masked(m));
  CHECK(masked(ImportOk(line(32768, "--use-legacy-models"), cluster)));
  // --no-masked-softmax-fusion says it already: no second note.
  m = ImportOk(line(8192, "--transformer-impl local --no-masked-softmax-fusion"), cluster);
  CHECK(masked(m));
  CHECK_FALSE(HasNote(m, "the fused softmax kernel does not run"));
  // Transformer Engine's unfused attention ignores the flag (TE's FusedScaleMaskSoftmax reads
  // NVTE_MASKED_SOFTMAX_FUSION; TEDotProductAttention never passes Megatron's masked_softmax_fusion): its
  // kernel runs where its shape check allows, and PyTorch's fallback prices where it does not.
  m = ImportRoundTrip(line(8192, "--attention-backend unfused --no-masked-softmax-fusion"), cluster);
  CHECK_FALSE(masked(m));
  CHECK(HasNote(m, "no effect: --no-masked-softmax-fusion (Transformer Engine's unfused attention fuses its softmax"));
  m = ImportRoundTrip(line(16384, "--attention-backend unfused --no-masked-softmax-fusion"), cluster);
  CHECK(masked(m));
  CHECK(HasNote(m, "(Transformer Engine's softmax.py: sequence 16384 outside the kernel's 16 < sk < 16384)"));
  // A 16-bit plan whose unfused attention masks apart exports as Megatron's local layers, which follow the
  // flag; imported back it is the same plan.
  m = ImportRoundTrip(line(8192, "--transformer-impl local --attention-backend unfused --no-masked-softmax-fusion"),
                      cluster);
  CHECK(masked(m));
  // Megatron-LM v2.5 (2021, --checkpoint-activations): sk <= 2048.
  m = ImportOk(absl::StrReplaceAll(line(4096, "--checkpoint-activations"), {{"--bf16", "--fp16"}}), cluster);
  CHECK(m.plan.framework() == v1::MEGATRON_LM_2021);
  CHECK(HasNote(m, "(Megatron-LM v2.5's fused_softmax.py: sequence 4096 outside the kernel's 16 < sk <= 2048)"));
  CHECK_FALSE(
      masked(ImportOk(absl::StrReplaceAll(line(2048, "--checkpoint-activations"), {{"--bf16", "--fp16"}}), cluster)));
  // TP 8: 16 / 8 = 2 heads per rank, b x np = 1 x 2 (micro-batch 1, DP 1): not a multiple of 4.
  const std::string tp8 = absl::StrReplaceAll(line(1024, "--transformer-impl local"),
                                              {{"--tensor-model-parallel-size 2", "--tensor-model-parallel-size 8"},
                                               {"--micro-batch-size 2", "--micro-batch-size 1"}});
  m = ImportOk(tp8, cluster);
  CHECK(masked(m));
  CHECK(HasNote(m, "micro-batch x heads per rank = 1 x 2 not a multiple of 4"));
  // 128 keys: one warp of 32 threads a row, two rows a warp (up to 128 keys), 128 / 32 x 2 = 8 per block.
  // Micro-batch 1 x 4 heads per rank (8 heads, TP 2) = 4: Megatron's kernel asks 4 % 8, Transformer
  // Engine's the rows, 128 % 8 = 0.
  const auto seq128 = [&](const std::string& more) {
    return absl::StrReplaceAll(line(128, more), {{"--num-attention-heads 16", "--num-attention-heads 8"},
                                                 {"--micro-batch-size 2", "--micro-batch-size 1"},
                                                 {"--global-batch-size 16", "--global-batch-size 8"}});
  };
  m = ImportOk(seq128("--transformer-impl local"), cluster);
  CHECK(masked(m));
  CHECK(HasNote(m, "micro-batch x heads per rank = 1 x 4 not a multiple of the kernel's 8 per block"));
  CHECK_FALSE(masked(ImportOk(seq128("--attention-backend unfused"), cluster)));
}

// Export: a plan whose unfused attention softmaxes in the fused kernel where the line's code cannot
// (FP32 scores; a sequence outside the kernel's limits) has no line that gives it back: the line's import
// prices PyTorch's mask and softmax. Refused, naming the field, rather than written and read back otherwise.
TEST_CASE("export: a fused softmax the exported line cannot run is refused, not read back unfused", "[interop]") {
  const v1::Cluster cluster = ExampleCluster("a100-512");
  const std::string base =
      "torchrun --nproc_per_node 8 --nnodes 1 pretrain_gpt.py --num-layers 2 --hidden-size 1024 "
      "--num-attention-heads 16 --max-position-embeddings 16384 --micro-batch-size 2 --global-batch-size 16 "
      "--tensor-model-parallel-size 2 --vocab-size 50257 --transformer-impl local ";
  const auto without_mask = [&](const std::string& flags) {
    const MegatronImport m = ImportOk(base + flags, cluster);
    hetsim::proto::PlanInputs in;
    in.cluster = cluster;
    in.model = m.model;
    in.plan = m.plan;
    in.plan.clear_unfused_kernels();
    REQUIRE(hetsim::proto::ValidatePlanInputs(in).ok());
    return in;
  };
  // FP32 (no --bf16): the line's import masks apart whatever it says.
  absl::StatusOr<hetsim::interop::MegatronExport> e = ExportMegatron(without_mask("--seq-length 1024"));
  REQUIRE_FALSE(e.ok());
  CHECK(absl::StrContains(e.status().message(), "unfused_kernels.masked_softmax: false with FP32 scores"));
  // BF16 at 16384: the line's --attention-backend unfused runs Transformer Engine's check, sk < 16384.
  e = ExportMegatron(without_mask("--seq-length 16384 --bf16"));
  REQUIRE_FALSE(e.ok());
  CHECK(absl::StrContains(e.status().message(), "(sequence 16384 outside the kernel's 16 < sk < 16384)"));
  // At 8192 Transformer Engine's kernel runs, Megatron-DeepSpeed's (sk <= 4096) does not.
  const hetsim::proto::PlanInputs at8k = without_mask("--seq-length 8192 --bf16");
  REQUIRE(ExportMegatron(at8k).ok());
  absl::StatusOr<hetsim::interop::DeepSpeedExport> ds = hetsim::interop::ExportDeepSpeed(at8k, "ds_config.json");
  REQUIRE_FALSE(ds.ok());
  CHECK(absl::StrContains(ds.status().message(), "Megatron-DeepSpeed's model: Megatron's fused_softmax.py"));
}

// The Megatron MoE Model Zoo's Qwen2-57B-A14B flags (model_configs/benchmarking/Qwen2-57B-A14B.yaml,
// 78fd4d6): the shared experts beside the dispatcher and TE's fused permutation are named as not
// modelled, the router's pre-softmax as no effect, none of them unknown (docs/validation.md, "Session 35").
TEST_CASE("MoE: the Model Zoo's shared-expert overlap, fused permutation and pre-softmax are named", "[interop]") {
  const v1::Cluster cluster = ExampleCluster("a100-512");
  const MegatronImport m = ImportOk(kSmallMoeLine +
                                        "--moe-token-dispatcher-type alltoall --sequence-parallel "
                                        "--moe-shared-expert-intermediate-size 2048 --moe-shared-expert-overlap "
                                        "--moe-permute-fusion --moe-router-pre-softmax",
                                    cluster);
  CHECK(HasNote(m, "not modelled (ignored): --moe-shared-expert-overlap"));
  CHECK(HasNote(m, "not modelled (ignored): --moe-permute-fusion"));
  CHECK(HasNote(m, "no effect on an iteration's cost: --moe-router-pre-softmax"));
  CHECK_FALSE(HasNote(m, "unknown"));
}

// A small GPT line on one node of 8 GPUs (DP 8 at TP 1), micro-batch 2 per replica, sequence 2048, BF16.
const std::string kSmallGptLine =
    "torchrun --nproc_per_node 8 --nnodes 1 pretrain_gpt.py --num-layers 2 --hidden-size 1024 "
    "--num-attention-heads 16 --seq-length 2048 --max-position-embeddings 2048 --micro-batch-size 2 "
    "--global-batch-size 16 --vocab-size 50257 --bf16";

// Transformer Engine's switches read from the launch's environment (TE d0067d0: softmax.py's
// NVTE_MASKED_SOFTMAX_FUSION, get_attention_backend's NVTE_FLASH_ATTN and NVTE_FUSED_ATTN, each "1" unset):
// exported, set before the launcher, or set by `env`; a plain assignment does not reach the launch.
TEST_CASE("import: NVTE_* switches of the launch's environment act as the flags do", "[interop]") {
  const v1::Cluster cluster = ExampleCluster("a100-512");
  // TP 2 on 8 GPUs: 8 heads per rank at micro-batch 2, sequence 2048: TE's fused softmax runs by its shapes.
  const std::string launch = kSmallGptLine + " --tensor-model-parallel-size 2";
  const std::string unfused = launch + " --attention-backend unfused";
  const auto masked = [](const MegatronImport& m) { return m.plan.unfused_kernels().masked_softmax(); };
  CHECK_FALSE(masked(ImportOk(unfused, cluster)));
  MegatronImport m = ImportOk("export NVTE_MASKED_SOFTMAX_FUSION=0\n" + unfused, cluster);
  CHECK(masked(m));
  CHECK(HasNote(m, "NVTE_MASKED_SOFTMAX_FUSION=0 in the launch's environment: Transformer Engine's unfused"));
  CHECK(masked(ImportOk("NVTE_MASKED_SOFTMAX_FUSION=0 " + unfused, cluster)));
  CHECK(masked(ImportOk("env NVTE_MASKED_SOFTMAX_FUSION=0 " + unfused, cluster)));
  CHECK(masked(ImportOk("NVTE_MASKED_SOFTMAX_FUSION=0\nexport NVTE_MASKED_SOFTMAX_FUSION\n" + unfused, cluster)));
  CHECK_FALSE(masked(ImportOk("NVTE_MASKED_SOFTMAX_FUSION=0\n" + unfused, cluster)));  // not exported
  CHECK_FALSE(masked(ImportOk("export NVTE_MASKED_SOFTMAX_FUSION=1\n" + unfused, cluster)));
  // Megatron's local layers follow --no-masked-softmax-fusion, not the variable; flash attention has no scores.
  m = ImportOk("export NVTE_MASKED_SOFTMAX_FUSION=0\n" + launch + " --transformer-impl local", cluster);
  CHECK_FALSE(masked(m));
  CHECK(HasNote(m, "no effect: NVTE_MASKED_SOFTMAX_FUSION=0 in the launch's environment (only Transformer"));
  m = ImportOk("export NVTE_MASKED_SOFTMAX_FUSION=0\n" + launch, cluster);
  CHECK(m.model.transformer().attention() == v1::ATTENTION_FLASH);
  CHECK_FALSE(masked(m));
  // Both of TE's fused backends off: its unfused attention, under the default backend (auto).
  m = ImportOk("export NVTE_FLASH_ATTN=0 NVTE_FUSED_ATTN=0\n" + launch, cluster);
  CHECK(m.model.transformer().attention() == v1::ATTENTION_UNFUSED);
  CHECK(HasNote(m, "NVTE_FLASH_ATTN=0 and NVTE_FUSED_ATTN=0 in the launch's environment"));
  CHECK(ImportOk("export NVTE_FLASH_ATTN=0\n" + launch, cluster).model.transformer().attention() ==
        v1::ATTENTION_FLASH);
  CHECK(ImportOk("export NVTE_FLASH_ATTN=0 NVTE_FUSED_ATTN=0\n" + launch + " --attention-backend flash", cluster)
            .model.transformer()
            .attention() == v1::ATTENTION_FLASH);
}

// A functional-test config's ENV_VARS (tests/functional_tests/test_cases/.../model_config.yaml) are the training's
// environment: Transformer Engine's NVTE_* switches act as a script's exports do (the test above); other
// variables are not read. The same small line as kSmallGptLine at TP 2.
absl::StatusOr<MegatronImport> ImportTestConfig(const std::string& env_vars, const v1::Cluster& cluster) {
  const std::string yaml = env_vars +
                           "MODEL_ARGS:\n  --num-layers: 2\n  --hidden-size: 1024\n  --num-attention-heads: 16\n"
                           "  --seq-length: 2048\n  --max-position-embeddings: 2048\n  --micro-batch-size: 2\n"
                           "  --global-batch-size: 16\n  --vocab-size: 50257\n  --bf16: true\n"
                           "  --tensor-model-parallel-size: 2\n";
  absl::StatusOr<MegatronYamlRead> read = MegatronYamlLine(yaml, "model_config.yaml");
  if (!read.ok()) return read.status();
  absl::StatusOr<hetsim::interop::MegatronFlags> flags = ParseMegatronLaunchLine(read->line, "model_config.yaml");
  if (!flags.ok()) return flags.status();
  ApplyMegatronYamlRead(*read, *flags);
  return ImportMegatron(*flags, cluster, OnNodes(1), "model_config.yaml");
}

TEST_CASE("import: NVTE_* under a functional-test config's ENV_VARS act as a script's exports", "[interop]") {
  const v1::Cluster cluster = ExampleCluster("a100-512");
  const auto attention = [&](const std::string& env_vars) {
    absl::StatusOr<MegatronImport> m = ImportTestConfig(env_vars, cluster);
    INFO(m.status().message());
    REQUIRE(m.ok());
    return m->model.transformer().attention();
  };
  CHECK(attention("") == v1::ATTENTION_FLASH);
  CHECK(attention("ENV_VARS:\n  CUDA_DEVICE_MAX_CONNECTIONS: 1\n") == v1::ATTENTION_FLASH);
  CHECK(attention("ENV_VARS:\n  NVTE_FLASH_ATTN: 0\n") == v1::ATTENTION_FLASH);  // the fused backend remains
  CHECK(attention("ENV_VARS:\n  NVTE_FLASH_ATTN: 0\n  NVTE_FUSED_ATTN: '0'\n") == v1::ATTENTION_UNFUSED);
  CHECK(attention("ENV_VARS:\n  NVTE_FLASH_ATTN: 0\n  NVTE_FUSED_ATTN: 1\n") == v1::ATTENTION_FLASH);
  absl::StatusOr<MegatronImport> m =
      ImportTestConfig("ENV_VARS:\n  NVTE_FLASH_ATTN: 0\n  NVTE_FUSED_ATTN: 0\n", cluster);
  REQUIRE(m.ok());
  CHECK(HasNote(*m, "NVTE_FLASH_ATTN=0 and NVTE_FUSED_ATTN=0 in the launch's environment"));
  // Malformed: a list where the mapping goes, a value that is not one word.
  m = ImportTestConfig("ENV_VARS: [NVTE_FLASH_ATTN]\n", cluster);
  REQUIRE_FALSE(m.ok());
  CHECK_THAT(std::string(m.status().message()), Catch::Contains("model_config.yaml: ENV_VARS: not a mapping"));
  m = ImportTestConfig("ENV_VARS:\n  NVTE_FUSED_ATTN: [0]\n", cluster);
  REQUIRE_FALSE(m.ok());
  CHECK_THAT(std::string(m.status().message()),
             Catch::Contains("model_config.yaml: ENV_VARS.NVTE_FUSED_ATTN: not a single value"));
}

// A DPO plan (Plan.reference_policy) exports as the policy's training line: the export says the reference's
// forward is not on it (it said nothing, and the line read back priced a step without it).
TEST_CASE("export megatron: a DPO plan's reference model is named as not exported", "[interop]") {
  const v1::Cluster cluster = ExampleCluster("a100-512");
  const MegatronImport m = ImportOk(kSmallGptLine, cluster);
  hetsim::proto::PlanInputs in;
  in.cluster = cluster;
  in.model = m.model;
  in.plan = m.plan;
  const auto reference_note = [&]() {
    absl::StatusOr<hetsim::interop::MegatronExport> line = ExportMegatron(in);
    REQUIRE(line.ok());
    for (const std::string& n : line->notes) {
      if (absl::StartsWith(n, "reference_policy: not exported")) return n;
    }
    return std::string();
  };
  CHECK(reference_note().empty());
  in.plan.mutable_reference_policy();
  CHECK_THAT(reference_note(), Catch::Contains("its weights on the GPU"));
  in.plan.mutable_reference_policy()->set_cpu_weight_swap(true);
  CHECK_THAT(reference_note(), Catch::Contains("its weights swapped from host memory"));
}

// Megatron-Core's --qk-layernorm is Transformer.qk_layernorm, and export writes it back.
TEST_CASE("import: --qk-layernorm is the model's norm over each head's Q and K", "[interop]") {
  const v1::Cluster cluster = ExampleCluster("a100-512");
  const std::string launch = kSmallGptLine;
  CHECK_FALSE(ImportOk(launch, cluster).model.transformer().qk_layernorm());
  const MegatronImport m = ImportRoundTrip(launch + " --qk-layernorm", cluster);
  CHECK(m.model.transformer().qk_layernorm());
  CHECK_FALSE(HasNote(m, "qk-layernorm"));
}

// --disable-bias-linear leaves the GeLU alone: --no-bias-gelu-fusion has no bias add to run apart (mlp.py), so no
// unfused bias-activation row; a SwiGLU line's SiLU and product apart are still priced as that row.
TEST_CASE("import: --no-bias-gelu-fusion without linear biases runs no pass apart", "[interop]") {
  const v1::Cluster cluster = ExampleCluster("a100-512");
  const std::string launch = kSmallGptLine;
  CHECK(ImportOk(launch + " --no-bias-gelu-fusion", cluster).plan.unfused_kernels().bias_activation());
  const MegatronImport m = ImportOk(launch + " --no-bias-gelu-fusion --disable-bias-linear", cluster);
  CHECK_FALSE(m.plan.unfused_kernels().bias_activation());
  CHECK(HasNote(m, "no effect: --no-bias-gelu-fusion with --disable-bias-linear"));
  CHECK(ImportOk(launch + " --swiglu --no-bias-swiglu-fusion --disable-bias-linear", cluster)
            .plan.unfused_kernels()
            .bias_activation());
}

// Megatron's apex norms (Megatron-LM 2022's legacy model, Megatron-Core's local spec) run apex's
// FusedLayerNormAffineFunction under --no-persist-layer-norm, whose backward computes the weight gradients in a pass
// of its own; the persistent kernel otherwise, and Transformer Engine's norms ignore the flag.
TEST_CASE("import: --no-persist-layer-norm on apex's norms prices their weight-gradient pass", "[interop]") {
  const v1::Cluster cluster = ExampleCluster("a100-512");
  const std::string line2022 = std::string(kSmallGptLine) + " --sequence-parallel --tensor-model-parallel-size 2";
  const MegatronImport persistent = ImportOk(line2022, cluster);
  REQUIRE(persistent.plan.framework() == v1::MEGATRON_LM_2022);
  CHECK_FALSE(persistent.plan.layer_norm_weight_grad_pass());
  const MegatronImport apex = ImportOk(line2022 + " --no-persist-layer-norm", cluster);
  CHECK(apex.plan.framework() == v1::MEGATRON_LM_2022);
  CHECK(apex.plan.layer_norm_weight_grad_pass());
  const std::string core = std::string(kSmallGptLine) + " --use-mcore-models --no-persist-layer-norm";
  CHECK_FALSE(ImportOk(core, cluster).plan.layer_norm_weight_grad_pass());  // Transformer Engine's norm
  CHECK(ImportOk(core + " --transformer-impl local", cluster).plan.layer_norm_weight_grad_pass());
}

}  // namespace
}  // namespace hetsim::interop
