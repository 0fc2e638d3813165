// hetsim export nemo: the NeMo YAML training config of a plan. Round trips (config -> plan -> config ->
// plan) on every NeMo config of the corpus that imports and on the test configs; the bundled examples NeMo
// runs export, the others are refused with the reason; settings NeMo's runtime fixes are notes.
#include <yaml-cpp/yaml.h>
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "google/protobuf/util/message_differencer.h"
#include "proto/inputs.h"
#include "proto/validate_plan.h"
#include "service/interop/nemo_export.h"
#include "service/interop/nemo_import.h"
#include "tests/service/interop/interop_test_util.h"

namespace {

namespace v1 = hetsim::v1;
using hetsim::interop::ExportNemo;
using hetsim::interop::ImportNemo;
using hetsim::interop::MegatronImport;
using hetsim::interop::MegatronImportRequest;
using hetsim::interop::NemoExport;

const std::string kNemoSource = HETSIM_SOURCE_DIR;

// The inputs `export` loads for an imported plan, validated.
hetsim::proto::PlanInputs NemoInputsOf(const MegatronImport& imported) {
  hetsim::proto::PlanInputs in;
  in.cluster = hetsim::testing::ImportTestCluster();
  in.model = imported.model;
  in.plan = imported.plan;
  in.plan_path = "plan.pbtxt";
  absl::Status valid = hetsim::proto::ValidatePlanInputs(in);
  INFO(valid.message());
  REQUIRE(valid.ok());
  return in;
}

NemoExport Exported(const hetsim::proto::PlanInputs& in) {
  absl::StatusOr<NemoExport> e = ExportNemo(in);
  INFO(e.status().message());
  REQUIRE(e.ok());
  return *e;
}

// Import, export, import: the same model and plan (every field), no notes, and the export of the second
// plan the same file. False when the config does not import in the first place.
bool NemoRoundTrip(const std::string& text, const std::string& source) {
  INFO(source);
  absl::StatusOr<MegatronImport> first = ImportNemo(text, hetsim::testing::ImportTestCluster(), {}, source);
  if (!first.ok()) return false;
  const NemoExport e = Exported(NemoInputsOf(*first));
  INFO(e.yaml);
  CHECK(e.notes.empty());
  MegatronImportRequest request;
  request.name = first->plan.name();
  absl::StatusOr<MegatronImport> again =
      ImportNemo(e.yaml, hetsim::testing::ImportTestCluster(), request, "exported.yaml");
  INFO(again.status().message());
  REQUIRE(again.ok());
  std::string diff;
  google::protobuf::util::MessageDifferencer d;
  d.ReportDifferencesToString(&diff);
  const bool same = d.Compare(first->plan, again->plan);
  INFO(diff);
  CHECK(same);
  CHECK(google::protobuf::util::MessageDifferencer::Equals(first->model, again->model));
  CHECK(Exported(NemoInputsOf(*again)).yaml == e.yaml);
  return true;
}

std::string NemoRefusal(const hetsim::proto::PlanInputs& in) {
  absl::StatusOr<NemoExport> e = ExportNemo(in);
  REQUIRE_FALSE(e.ok());
  CHECK(e.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(e.status().message());
}

hetsim::proto::PlanInputs Example(const std::string& plan, const std::string& cluster) {
  absl::StatusOr<hetsim::proto::PlanInputs> in = hetsim::proto::LoadPlanInputs(
      kNemoSource + "/examples/plan-" + plan + ".pbtxt", kNemoSource + "/examples/cluster-" + cluster + ".pbtxt");
  INFO(in.status().message());
  REQUIRE(in.ok());
  return *in;
}

}  // namespace

TEST_CASE("export nemo: every NeMo config of the corpus that imports comes back as the same plan", "[interop][nemo]") {
  int round_trips = 0;
  for (const std::string& name : hetsim::testing::CorpusFileNames("launch-corpus")) {
    if (!absl::StartsWith(name, "nemo") || !absl::EndsWith(name, ".yaml")) continue;
    const std::string path = hetsim::testing::CorpusFile("launch-corpus", name).string();
    if (NemoRoundTrip(hetsim::testing::ImportTestText(path), name)) ++round_trips;
  }
  // 49 of the corpus's NeMo YAML files import at session 38 (the others are refused: BERT, NeVA, Hyena, a
  // fine-tuning config, ...; tests/service/interop/interop_corpus_test.cc says why): fewer is an import lost.
  CHECK(round_trips >= 49);
  const std::string data = kNemoSource + "/tests/nemo_data/";
  for (const char* file : {"gpt_5b_launcher.yaml", "llama_70b_launcher.yaml"}) {
    CHECK(NemoRoundTrip(hetsim::testing::ImportTestText(data + file), file));
  }
}

TEST_CASE("export nemo: the YAML holds NeMo's keys, written by yaml-cpp", "[interop][nemo]") {
  const NemoExport e = Exported(Example("megatron-39b", "a100-512"));
  const YAML::Node root = YAML::Load(e.yaml);
  CHECK(root["name"].as<std::string>() == "megatron_gpt");
  CHECK(root["trainer"]["devices"].as<int>() == 8);
  CHECK(root["trainer"]["precision"].as<std::string>() == "16");  // the example's FP16
  const YAML::Node model = root["model"];
  CHECK(model["num_layers"].as<int>() == 48);
  CHECK(model["hidden_size"].as<int>() == 8192);
  CHECK(model["mcore_gpt"].as<bool>());
  CHECK(model["optim"]["name"].IsScalar());
  // The Megatron-LM line's notes NeMo shares, and the behaviours its runtime fixes.
  CHECK(hetsim::testing::HasImportNote(e.notes, "framework: not exported"));
}

TEST_CASE("export nemo: the bundled examples NeMo cannot run are refused with the reason", "[interop][nemo]") {
  const struct {
    const char* plan;
    const char* cluster;
    const char* refusal;
  } examples[] = {
      {"512gpu", "512gpu", "stages[4].mesh.island: GPU type h100-sxm, stage 0 runs on a100-80gb"},
      {"hapt-case", "hapt-case", "schedule: H_1F1B: Megatron runs 1F1B or interleaved 1F1B"},
      {"lab-pipelines", "lab-pcie", "pipelines: export nemo takes a plan of one pipeline"},
      {"llama3-405b-100k", "100k-h100", "stages: the split Megatron-LM writes --pipeline-model-parallel-layout"},
      {"llama3-405b-128k", "16k-h100", "--account-for-embedding-in-pipeline-split"},
      {"llama3-405b", "16k-h100", "splits model.num_layers evenly over pipeline_model_parallel_size stages"},
      {"mixed-replicas", "mixed-cloud", "stages[0].replica_groups: NeMo runs every replica"},
  };
  for (const auto& ex : examples) {
    INFO(ex.plan);
    CHECK_THAT(NemoRefusal(Example(ex.plan, ex.cluster)), Catch::Contains(ex.refusal));
  }
}

TEST_CASE("export nemo: ZeRO-2, a vocabulary TP does not divide and blocking interleaved sends", "[interop][nemo]") {
  const std::string data = kNemoSource + "/tests/nemo_data/";
  absl::StatusOr<MegatronImport> llama = ImportNemo(hetsim::testing::ImportTestText(data + "llama_70b_launcher.yaml"),
                                                    hetsim::testing::ImportTestCluster(), {}, "llama.yaml");
  REQUIRE(llama.ok());
  hetsim::proto::PlanInputs zero2 = NemoInputsOf(*llama);
  for (v1::Stage& s : *zero2.plan.mutable_stages()) s.set_zero_stage(2);
  CHECK_THAT(NemoRefusal(zero2), Catch::Contains("stages[0].zero_stage: 2: a NeMo config shards the optimizer"));
  hetsim::proto::PlanInputs vocab = NemoInputsOf(*llama);
  vocab.model.mutable_transformer()->set_vocab_size(32001);
  CHECK_THAT(NemoRefusal(vocab), Catch::Contains("model.transformer.vocab_size: 32001: NeMo pads the vocabulary"));
  // Megatron-Core overlaps the interleaved schedule's sends; NeMo's config has no key that blocks them.
  hetsim::proto::PlanInputs blocking = NemoInputsOf(*llama);
  REQUIRE(blocking.plan.schedule() == v1::INTERLEAVED_1F1B);
  blocking.plan.set_blocking_p2p(true);
  const NemoExport e = Exported(blocking);
  CHECK(hetsim::testing::HasImportNote(e.notes, "blocking_p2p: not exported (true in the plan"));
}

// NeMo has no TF32 key: trainer.precision 32 is its FP32 run, whose GEMMs run TF32 where PyTorch allows it
// (NVIDIA's PyTorch images, NeMo's container's base, set TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1). A TF32 plan
// exports as precision 32 with that note (it was refused as "another model": FP32 read back).
TEST_CASE("export nemo: a TF32 plan is NeMo's precision 32, its TF32 GEMMs noted", "[interop][nemo]") {
  hetsim::proto::PlanInputs in = Example("megatron-39b", "a100-512");
  in.model.set_dtype(v1::TF32);
  // FP32 scores: Megatron's unfused attention masks and softmaxes them apart (no fused kernel takes them), which
  // the plan must say to have a config (session 41: the fused softmax's limits, docs/megatron.md).
  in.plan.mutable_unfused_kernels()->set_masked_softmax(true);
  const NemoExport e = Exported(in);
  const YAML::Node root = YAML::Load(e.yaml);
  CHECK(root["trainer"]["precision"].as<std::string>() == "32");
  CHECK_FALSE(root["model"]["optim"]["grad_sync_dtype"].IsDefined());
  CHECK(hetsim::testing::HasImportNote(e.notes, "model.dtype TF32: trainer.precision 32"));
  CHECK(hetsim::testing::HasImportNote(e.notes, "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1"));
  // An FP32 plan is precision 32 without the note.
  in.model.set_dtype(v1::FP32);
  CHECK_FALSE(hetsim::testing::HasImportNote(Exported(in).notes, "TF32"));
}
