// hetsim export deepspeed: the DeepSpeed config and Megatron-DeepSpeed line of a plan, read back by
// `hetsim import megatron` (the line, with the JSON beside it) to the same plan, on the bundled examples
// DeepSpeed can run and on Megatron-DeepSpeed scripts of the corpus; and the plans it refuses.
#include <catch2/catch.hpp>

#include <unistd.h>
#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/message_differencer.h"
#include "proto/inputs.h"
#include "proto/io.h"
#include "proto/validate_plan.h"
#include "service/interop/deepspeed_export.h"
#include "service/interop/import_command.h"
#include "service/interop/megatron_flags.h"
#include "tests/service/interop/interop_test_util.h"

namespace hetsim::interop {
namespace {

namespace fs = std::filesystem;
namespace v1 = hetsim::v1;
const std::string kDsSource = HETSIM_SOURCE_DIR;

fs::path DsExportDir(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / absl::StrCat("hetsim_ds_export_test_", name, "_", ::getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// Writes the export's two files as `hetsim export deepspeed --out-dir` does and imports the line back.
v1::Plan DsExportAndImport(const proto::PlanInputs& in, const std::string& cluster_path, const std::string& name) {
  absl::StatusOr<DeepSpeedExport> e = ExportDeepSpeed(in, "ds_config.json");
  INFO(e.status().message());
  REQUIRE(e.ok());
  INFO(e->launch_line << e->config_json);
  const fs::path dir = DsExportDir(name);
  REQUIRE(proto::WriteFileAtomically((dir / "ds_config.json").string(), e->config_json).ok());
  REQUIRE(proto::WriteFileAtomically((dir / "launch.sh").string(), e->launch_line).ok());
  ImportRequest request;
  request.format = "megatron";
  request.file = (dir / "launch.sh").string();
  request.cluster = proto::Source::File(cluster_path);
  absl::StatusOr<ImportResponse> again = ImportPlan(request);
  INFO(again.status().message());
  REQUIRE(again.ok());
  // The config was read, not left to the flags.
  CHECK(std::find(again->files_read.begin(), again->files_read.end(), (dir / "ds_config.json").string()) !=
        again->files_read.end());
  fs::remove_all(dir);
  return again->plan;
}

// The fields the two files carry: stages (layers, mesh, TP, DP, recomputation, ZeRO), batch, schedule,
// precision, and the framework DeepSpeed's engine is.
void CheckSameDsLayout(const proto::PlanInputs& in, const v1::Plan& again) {
  REQUIRE(again.stages_size() == in.plan.stages_size());
  for (int i = 0; i < again.stages_size(); ++i) {
    INFO("stage " << i);
    const v1::Stage &a = in.plan.stages(i), &b = again.stages(i);
    CHECK(google::protobuf::util::MessageDifferencer::Equals(a.mesh(), b.mesh()));
    CHECK(a.first_layer() == b.first_layer());
    CHECK(a.num_layers() == b.num_layers());
    CHECK(proto::TensorParallel(a) == proto::TensorParallel(b));
    CHECK(proto::DataParallel(a) == proto::DataParallel(b));
    CHECK(a.recompute() == b.recompute());
    CHECK(a.recompute_num_layers() == b.recompute_num_layers());
    CHECK(a.zero_stage() == b.zero_stage());
    CHECK(a.sequence_parallel() == b.sequence_parallel());
  }
  CHECK(again.micro_batch_size() == in.plan.micro_batch_size());
  CHECK(again.global_batch_size() == in.plan.global_batch_size());
  CHECK(again.schedule() == in.plan.schedule());
  CHECK(again.model().dtype() == in.model.dtype());
  CHECK(again.framework() == v1::MEGATRON_DEEPSPEED);
}

TEST_CASE("export deepspeed: the bundled examples DeepSpeed runs import back to the same plan", "[interop]") {
  const struct {
    const char* plan;
    const char* cluster;
    const char* refusal;  // "" when it exports
  } examples[] = {
      {"plan-512gpu", "512gpu", "schedule: H_1F1B: DeepSpeed's pipeline engine runs its own 1F1B"},
      {"plan-hapt-case", "hapt-case", "schedule: H_1F1B"},
      {"plan-lab-pipelines", "lab-pcie", "export deepspeed takes a plan of one pipeline"},
      // 126 blocks on 20 stages: neither of DeepSpeed's partitions (Megatron-DeepSpeed's line has no
      // Megatron-LM split flag) gives the plan's.
      {"plan-llama3-405b-100k", "100k-h100",
       "stages: the split Megatron-LM writes --pipeline-model-parallel-layout 'Etttttt|"},
      {"plan-llama3-405b-128k", "16k-h100", "context_parallel: 16: Megatron-DeepSpeed splits sequences"},
      {"plan-llama3-405b", "16k-h100", "schedule: INTERLEAVED_1F1B of 4 virtual stages"},
      {"plan-megatron-39b", "a100-512", ""},
      {"plan-mixed-replicas", "mixed-cloud", "stages[0].replica_groups"},
  };
  for (const auto& ex : examples) {
    INFO(ex.plan);
    const std::string cluster = kDsSource + "/examples/cluster-" + ex.cluster + ".pbtxt";
    absl::StatusOr<proto::PlanInputs> in =
        proto::LoadPlanInputs(kDsSource + "/examples/" + ex.plan + ".pbtxt", cluster);
    REQUIRE(in.ok());
    if (std::string(ex.refusal).empty()) {
      CheckSameDsLayout(*in, DsExportAndImport(*in, cluster, ex.plan));
      continue;
    }
    absl::StatusOr<DeepSpeedExport> e = ExportDeepSpeed(*in, "ds_config.json");
    REQUIRE_FALSE(e.ok());
    INFO(e.status().message());
    CHECK(absl::StrContains(e.status().message(), ex.refusal));
  }
}

TEST_CASE("export deepspeed: Megatron-DeepSpeed scripts of the corpus, imported, exported and imported again",
          "[interop][corpus]") {
  const std::string cluster = kDsSource + "/examples/cluster-16k-h100.pbtxt";
  // {file, nodes (0: the script's own count)}: BigScience's runs with pipelines, and a ZeRO run of one stage.
  // BigScience's tr11f-6B3 counts the embeddings in its split (--pp-partition-method of BigScience's fork):
  // written for that fork, in its spelling.
  const std::pair<const char*, int64_t> files[] = {{"bigscience_tr1-13B-round1.slurm", 0},
                                                   {"bigscience_tr11f-6B3-ml.slurm", 0},
                                                   {"megatron-deepspeed_pretrain_llama2_distributed.sh", 0},
                                                   {"megatron-deepspeed_rebase_ds_pretrain_gpt_1.3B.sh", 8}};
  for (const auto& [file, nodes] : files) {
    INFO(file);
    ImportRequest request;
    request.format = "megatron";
    request.file = hetsim::testing::CorpusFile("launch-corpus", file).string();
    request.cluster = proto::Source::File(cluster);
    request.layout.nodes = nodes;
    absl::StatusOr<ImportResponse> first = ImportPlan(request);
    REQUIRE(first.ok());
    REQUIRE(first->plan.framework() == v1::MEGATRON_DEEPSPEED);
    proto::PlanInputs in;
    in.plan = first->plan;
    in.model = first->plan.model();
    in.cluster = hetsim::testing::ImportTestCluster();
    const v1::Plan again = DsExportAndImport(in, cluster, "corpus");
    CheckSameDsLayout(in, again);
    // Beyond the layout: the whole plan, model included, but for the names the import gives.
    google::protobuf::util::MessageDifferencer d;
    std::string diff;
    d.ReportDifferencesToString(&diff);
    d.IgnoreField(v1::Plan::descriptor()->FindFieldByName("name"));
    d.IgnoreField(v1::Model::descriptor()->FindFieldByName("name"));
    const bool same = d.Compare(first->plan, again);
    INFO(diff);
    CHECK(same);
  }
}

TEST_CASE("export deepspeed: the config is DeepSpeed's batch arithmetic, ZeRO stage and precision", "[interop]") {
  absl::StatusOr<proto::PlanInputs> in = proto::LoadPlanInputs(kDsSource + "/examples/plan-megatron-39b.pbtxt",
                                                               kDsSource + "/examples/cluster-a100-512.pbtxt");
  REQUIRE(in.ok());
  absl::StatusOr<DeepSpeedExport> e = ExportDeepSpeed(*in, "cfg.json");
  REQUIRE(e.ok());
  google::protobuf::Struct config;
  REQUIRE(google::protobuf::util::JsonStringToMessage(e->config_json, &config).ok());
  const auto& f = config.fields();
  const v1::Plan& plan = in->plan;
  const double dp = proto::DataParallel(plan.stages(0));
  // DeepSpeed asserts train_batch_size = micro-batch per GPU x accumulation steps x data-parallel size.
  CHECK(f.at("train_batch_size").number_value() == f.at("train_micro_batch_size_per_gpu").number_value() *
                                                       f.at("gradient_accumulation_steps").number_value() * dp);
  CHECK(f.at("train_batch_size").number_value() == static_cast<double>(plan.global_batch_size()));
  CHECK(f.at("zero_optimization").struct_value().fields().at("stage").number_value() == plan.stages(0).zero_stage());
  CHECK(absl::StrContains(e->launch_line, "--deepspeed --deepspeed_config cfg.json"));
  CHECK(absl::StartsWith(e->launch_line, "deepspeed --num_nodes "));
  CHECK_FALSE(absl::StrContains(e->launch_line, "--use-distributed-optimizer"));
  CHECK_FALSE(absl::StrContains(e->launch_line, "--attention-backend"));  // not a Megatron-DeepSpeed flag
  // ZeRO-2 under pipelines: DeepSpeed's pipeline engine refuses it.
  proto::PlanInputs zero2 = *in;
  for (v1::Stage& s : *zero2.plan.mutable_stages()) s.set_zero_stage(2);
  if (zero2.plan.stages_size() > 1) {
    absl::StatusOr<DeepSpeedExport> refused = ExportDeepSpeed(zero2, "cfg.json");
    REQUIRE_FALSE(refused.ok());
    CHECK(absl::StrContains(refused.status().message(),
                            "stages[0].zero_stage: 2 with 2 pipeline stages: DeepSpeed's pipeline engine runs ZeRO"));
  }
}

// The flags microsoft/Megatron-DeepSpeed (f4157bea69f3df8c6cb66f2ebcda66ba03d1288e) accepts that the export
// writes, each with its line in megatron/arguments.py (its parser errors on any other: parse_args without
// ignore_unknown_args); --deepspeed and --deepspeed_config are DeepSpeed's (deepspeed/__init__.py,
// _add_core_arguments), added by the deepspeed.add_config_arguments(parser) of arguments.py line 54.
// docs/megatron.md lists them.
const std::pair<const char*, int> kMegatronDeepSpeedArguments[] = {
    {"--num-layers", 602},
    {"--hidden-size", 616},
    {"--ffn-hidden-size", 618},
    {"--num-attention-heads", 621},
    {"--num-key-value-heads", 623},
    {"--kv-channels", 625},
    {"--max-position-embeddings", 630},
    {"--make-vocab-size-divisible-by", 644},
    {"--swiglu", 670},
    {"--untie-embeddings-and-output-weights", 680},
    {"--micro-batch-size", 801},
    {"--global-batch-size", 808},
    {"--recompute-granularity", 830},
    {"--recompute-method", 842},
    {"--recompute-num-layers", 851},
    {"--no-masked-softmax-fusion", 899},
    {"--no-bias-gelu-fusion", 904},
    {"--no-bias-dropout-fusion", 907},
    {"--use-flash-attn", 927},
    {"--no-pipeline-parallel", 954},
    {"--no-async-tensor-model-parallel-allreduce", 961},
    {"--sequence-parallel", 972},
    {"--fp16", 1111},
    {"--bf16", 1113},
    {"--tensor-model-parallel-size", 1149},
    {"--pipeline-model-parallel-size", 1154},
    {"--vocab-size", 1269},
    {"--seq-length", 1278},
    {"--zero-stage", 1487},
    {"--deepspeed", 0},
    {"--deepspeed_config", 0},
    {"--attention-dropout", 768},
    {"--no-query-key-layer-scaling", 1129},
};

// A Megatron-DeepSpeed script of the corpus imported on `nodes` nodes (0: its own) of the 16K-H100 cluster,
// as `export` loads it.
proto::PlanInputs ImportedCorpusScript(const char* file, int64_t nodes) {
  INFO(file);
  ImportRequest request;
  request.format = "megatron";
  request.file = hetsim::testing::CorpusFile("launch-corpus", file).string();
  request.cluster = proto::Source::File(kDsSource + "/examples/cluster-16k-h100.pbtxt");
  request.layout.nodes = nodes;
  absl::StatusOr<ImportResponse> imported = ImportPlan(request);
  REQUIRE(imported.ok());
  proto::PlanInputs in;
  in.plan = imported->plan;
  in.model = imported->plan.model();
  in.cluster = hetsim::testing::ImportTestCluster();
  REQUIRE(proto::ValidatePlanInputs(in).ok());
  return in;
}

// Every flag of `line` after the script is one of kMegatronDeepSpeedArguments, and `hetsim import megatron`
// reads each (none unknown or left unmodelled).
void CheckFlagsAccepted(const std::string& line, std::set<std::string>& seen) {
  INFO(line);
  bool after_script = false;
  for (absl::string_view word : absl::StrSplit(line, absl::ByAnyChar(" \n"), absl::SkipEmpty())) {
    if (word == "pretrain_gpt.py") after_script = true;
    if (!after_script || !absl::StartsWith(word, "--")) continue;
    INFO(word);
    const bool accepted = std::any_of(std::begin(kMegatronDeepSpeedArguments), std::end(kMegatronDeepSpeedArguments),
                                      [&](const auto& a) { return word == a.first; });
    CHECK(accepted);
    seen.insert(std::string(word));
  }
  absl::StatusOr<MegatronFlags> flags = ParseMegatronLaunchLine(line, "launch.sh");
  REQUIRE(flags.ok());
  CHECK(flags->unknown.empty());
  CHECK(flags->not_modelled.empty());
}

TEST_CASE("export deepspeed: every flag written is one Megatron-DeepSpeed's arguments.py accepts, read back",
          "[interop]") {
  const std::string a100 = kDsSource + "/examples/cluster-a100-512.pbtxt";
  absl::StatusOr<proto::PlanInputs> base = proto::LoadPlanInputs(kDsSource + "/examples/plan-megatron-39b.pbtxt", a100);
  REQUIRE(base.ok());
  std::vector<proto::PlanInputs> plans = {*base};
  // The same plan with the switches the example leaves off: sequence parallelism, selective recomputation,
  // unfused kernels, flash attention, BF16, grouped-query attention with its own head width, and one stage.
  proto::PlanInputs more = *base;
  for (v1::Stage& s : *more.plan.mutable_stages()) {
    s.set_sequence_parallel(true);
    s.set_recompute(v1::RECOMPUTE_SELECTIVE);
  }
  more.plan.set_unfused_elementwise(true);
  v1::Transformer& t = *more.model.mutable_transformer();
  t.set_attention(v1::ATTENTION_FLASH);
  t.set_num_kv_heads(8);
  t.set_head_dim(128);
  more.model.set_dtype(v1::BF16);
  *more.plan.mutable_model() = more.model;
  plans.push_back(more);
  proto::PlanInputs gated = more;
  gated.model.mutable_transformer()->set_gated_mlp(true);
  gated.model.mutable_transformer()->set_tied_embeddings(false);
  gated.model.mutable_transformer()->set_vocab_size(51200 - 8 * 64);  // a multiple of 64 x TP 8, not of 128 x 8
  *gated.plan.mutable_model() = gated.model;
  plans.push_back(gated);
  // An FP32 unfused attention core without dropout whose mask runs on a view of the scores (the Sailor
  // set's fields): --attention-dropout 0 and --no-query-key-layer-scaling.
  proto::PlanInputs quiet = *base;
  quiet.model.mutable_transformer()->set_attention(v1::ATTENTION_UNFUSED);
  quiet.model.mutable_transformer()->set_no_attention_dropout(true);
  quiet.model.set_dtype(v1::FP32);
  quiet.plan.set_unfused_elementwise(true);
  quiet.plan.mutable_unfused_kernels()->set_masked_fill_on_view(true);
  *quiet.plan.mutable_model() = quiet.model;
  plans.push_back(quiet);
  std::set<std::string> seen;
  for (proto::PlanInputs& in : plans) {
    REQUIRE(proto::ValidatePlanInputs(in).ok());
    absl::StatusOr<DeepSpeedExport> e = ExportDeepSpeed(in, "ds_config.json");
    INFO(e.status().message());
    REQUIRE(e.ok());
    CheckFlagsAccepted(e->launch_line, seen);
    CheckSameDsLayout(in, DsExportAndImport(in, a100, "flags"));
  }
  // A ZeRO run of one stage (Megatron-DeepSpeed's rebase script): --no-pipeline-parallel.
  absl::StatusOr<DeepSpeedExport> e =
      ExportDeepSpeed(ImportedCorpusScript("megatron-deepspeed_rebase_ds_pretrain_gpt_1.3B.sh", 8), "ds_config.json");
  REQUIRE(e.ok());
  CheckFlagsAccepted(e->launch_line, seen);
  // Every flag of the table is one some export above writes: the table is what the export writes.
  for (const auto& [flag, line] : kMegatronDeepSpeedArguments) {
    INFO(flag);
    CHECK(seen.count(flag) == 1);
  }
}

// A split that counts both embeddings is BigScience's fork's (--pp-partition-method; microsoft's parser
// refuses the flag): tr11f-6B3's line is written in that fork's spelling, every flag one its arguments.py
// adds, and what the fork cannot run is refused flag by flag.
TEST_CASE("export deepspeed: BigScience's split is written for BigScience's fork", "[interop][corpus]") {
  const proto::PlanInputs tr11f = ImportedCorpusScript("bigscience_tr11f-6B3-ml.slurm", 0);
  absl::StatusOr<DeepSpeedExport> e = ExportDeepSpeed(tr11f, "ds_config.json");
  INFO(e.status().message());
  REQUIRE(e.ok());
  INFO(e->launch_line);
  CHECK(absl::StrContains(e->launch_line, "--pp-partition-method 'type:transformer|embedding'"));
  CHECK(absl::StrContains(e->launch_line, "--checkpoint-activations"));
  CHECK(absl::StrContains(e->launch_line, "--pad-vocab-size-to 250880"));
  for (const char* absent : {"--recompute-granularity", "--vocab-size", "--account-for", "--no-async-tensor"}) {
    CHECK_FALSE(absl::StrContains(e->launch_line, absent));
  }
  CHECK(hetsim::testing::HasImportNote(e->notes, "written for bigscience-workshop/Megatron-DeepSpeed"));
  // Not a flag of BigScience's fork: refused with the flag (SwiGLU, grouped-query attention), and an
  // asynchronous tensor-parallel backward, which its layers do not run.
  proto::PlanInputs other = tr11f;
  other.model.mutable_transformer()->set_gated_mlp(true);
  other.model.mutable_transformer()->set_num_kv_heads(8);
  *other.plan.mutable_model() = other.model;
  other.plan.set_tp_backward_overlap(true);
  REQUIRE(proto::ValidatePlanInputs(other).ok());
  e = ExportDeepSpeed(other, "ds_config.json");
  REQUIRE_FALSE(e.ok());
  const std::string message(e.status().message());
  CHECK_THAT(message, Catch::Contains("plan: --swiglu: not a flag of bigscience-workshop/Megatron-DeepSpeed"));
  CHECK_THAT(message, Catch::Contains("--group-query-attention: not a flag"));
  CHECK_THAT(message, Catch::Contains("tp_backward_overlap: true: BigScience's fork"));
}

TEST_CASE("export deepspeed: what microsoft/Megatron-DeepSpeed's pipeline model cannot run is refused", "[interop]") {
  // A split Megatron-DeepSpeed has no partition for: the first stage's blocks set apart.
  proto::PlanInputs uneven = ImportedCorpusScript("bigscience_tr1-13B-round1.slurm", 0);
  REQUIRE(uneven.plan.stages_size() > 2);
  v1::Stage& s0 = *uneven.plan.mutable_stages(0);
  v1::Stage& s1 = *uneven.plan.mutable_stages(1);
  s0.set_num_layers(s0.num_layers() - 1);
  s1.set_first_layer(s1.first_layer() - 1);
  s1.set_num_layers(s1.num_layers() + 1);
  REQUIRE(proto::ValidatePlanInputs(uneven).ok());
  absl::StatusOr<DeepSpeedExport> e = ExportDeepSpeed(uneven, "ds_config.json");
  REQUIRE_FALSE(e.ok());
  CHECK_THAT(std::string(e.status().message()),
             Catch::Contains("Megatron-DeepSpeed's GPTModelPipe partitions the blocks evenly"));
  // Megatron's block recomputation under pipelines.
  absl::StatusOr<proto::PlanInputs> block = proto::LoadPlanInputs(kDsSource + "/examples/plan-megatron-39b.pbtxt",
                                                                  kDsSource + "/examples/cluster-a100-512.pbtxt");
  REQUIRE(block.ok());
  for (v1::Stage& s : *block->plan.mutable_stages()) s.set_recompute_num_layers(2);
  e = ExportDeepSpeed(*block, "ds_config.json");
  REQUIRE_FALSE(e.ok());
  CHECK_THAT(std::string(e.status().message()),
             Catch::Contains("stages[0].recompute_num_layers: --recompute-granularity full --recompute-method block"));
}

}  // namespace
}  // namespace hetsim::interop
