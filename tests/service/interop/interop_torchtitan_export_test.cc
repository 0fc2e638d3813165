// hetsim export torchtitan: the TOML job config of a plan. Round trips (config -> plan -> config -> plan)
// on the test configs and on torchtitan's own configs of the corpus; the bundled examples, which
// torchtitan cannot run, are refused with the reason; settings torchtitan fixes are notes.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "google/protobuf/util/message_differencer.h"
#include "proto/inputs.h"
#include "proto/validate_plan.h"
#include "service/interop/torchtitan_export.h"
#include "service/interop/torchtitan_import.h"
#include "tests/service/interop/interop_test_util.h"

namespace {

namespace v1 = hetsim::v1;
using hetsim::interop::ExportTorchtitan;
using hetsim::interop::ImportTorchtitan;
using hetsim::interop::MegatronImportRequest;
using hetsim::interop::TorchtitanExport;
using hetsim::interop::TorchtitanImport;

const std::string kSource = HETSIM_SOURCE_DIR;

TorchtitanImport Imported(const std::string& text, int64_t nodes, const std::string& source) {
  MegatronImportRequest request;
  request.nodes = nodes;
  absl::StatusOr<TorchtitanImport> r = ImportTorchtitan(text, hetsim::testing::ImportTestCluster(), request, source);
  INFO(r.status().message());
  REQUIRE(r.ok());
  return *r;
}

// The inputs `export` loads for an imported plan, validated.
hetsim::proto::PlanInputs InputsOf(const TorchtitanImport& imported) {
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

// Import, export, import: the same model and plan (every field, the name given back by the exporter's
// import), and the export of the second plan the same file.
void CheckRoundTrip(const std::string& text, int64_t nodes, const std::string& source) {
  INFO(source);
  const TorchtitanImport first = Imported(text, nodes, source);
  absl::StatusOr<TorchtitanExport> e = ExportTorchtitan(InputsOf(first));
  INFO(e.status().message());
  REQUIRE(e.ok());
  INFO(e->toml);
  CHECK(e->notes.empty());
  MegatronImportRequest request;
  request.name = first.plan.name();
  absl::StatusOr<TorchtitanImport> again =
      ImportTorchtitan(e->toml, hetsim::testing::ImportTestCluster(), request, "exported.toml");
  INFO(again.status().message());
  REQUIRE(again.ok());
  std::string diff;
  google::protobuf::util::MessageDifferencer d;
  d.ReportDifferencesToString(&diff);
  const bool same = d.Compare(first.plan, again->plan);
  INFO(diff);
  CHECK(same);
  CHECK(google::protobuf::util::MessageDifferencer::Equals(first.model, again->model));
  absl::StatusOr<TorchtitanExport> twice = ExportTorchtitan(InputsOf(*again));
  REQUIRE(twice.ok());
  CHECK(twice->toml == e->toml);
}

std::string Refusal(const hetsim::proto::PlanInputs& in) {
  absl::StatusOr<TorchtitanExport> e = ExportTorchtitan(in);
  REQUIRE_FALSE(e.ok());
  CHECK(e.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(e.status().message());
}

}  // namespace

TEST_CASE("export torchtitan: import, export, import gives the same plan", "[interop][torchtitan]") {
  const std::string data = kSource + "/tests/torchtitan_data/";
  CheckRoundTrip(hetsim::testing::ImportTestText(data + "llama3_8b_2025.toml"), 2, "llama3_8b_2025.toml");
  CheckRoundTrip(hetsim::testing::ImportTestText(data + "llama3_70b_pp_2024.toml"), 0, "llama3_70b_pp_2024.toml");
  // torchtitan's own configs (the corpus), on the nodes the corpus test lays them out on.
  const struct {
    const char* file;
    int64_t nodes;
  } corpus[] = {
      {"torchtitan-2024_debug_model.toml", 1},
      {"torchtitan-2024_llama3_8b.toml", 8},
      {"torchtitan-2024_llama3_405b.toml", 64},
      {"torchtitan-2024_llama2_70b.toml", 8},
      {"torchtitan-2025_llama3_70b.toml", 8},
      {"torchtitan-2025_llama3_405b.toml", 64},
      {"torchtitan-2025-12_sft_llama3_8b_gsm8k.toml", 8},
  };
  for (const auto& c : corpus) {
    CheckRoundTrip(hetsim::testing::ImportTestText(hetsim::testing::CorpusFile("launch-corpus", c.file).string()),
                   c.nodes, c.file);
  }
}

TEST_CASE("export torchtitan: pipelines, context parallelism, DDP and GPipe round-trip", "[interop][torchtitan]") {
  const std::string base =
      "[model]\nname = \"llama3\"\nflavor = \"8B\"\n[training]\nlocal_batch_size = 8\n"
      "seq_len = 4096\n[activation_checkpoint]\nmode = \"none\"\n[parallelism]\n";
  CheckRoundTrip(base +
                     "data_parallel_shard_degree = 2\npipeline_parallel_degree = 4\ntensor_parallel_degree = 2\n"
                     "pipeline_parallel_schedule = \"GPipe\"\npipeline_parallel_microbatch_size = 2\n",
                 0, "gpipe.toml");
  CheckRoundTrip(base + "data_parallel_replicate_degree = 4\ndata_parallel_shard_degree = 1\n", 0, "ddp.toml");
  CheckRoundTrip(base +
                     "data_parallel_shard_degree = 2\ncontext_parallel_degree = 4\n"
                     "context_parallel_rotate_method = \"alltoall\"\n",
                 0, "cp.toml");
  CheckRoundTrip(base +
                     "data_parallel_shard_degree = 1\npipeline_parallel_degree = 2\n"
                     "pipeline_parallel_schedule = \"Interleaved1F1B\"\npipeline_parallel_layers_per_stage = 4\n",
                 0, "interleaved.toml");
}

TEST_CASE("export torchtitan: the bundled examples torchtitan cannot run are refused with the reason",
          "[interop][torchtitan]") {
  const struct {
    const char* plan;
    const char* cluster;
    const char* refusal;
  } examples[] = {
      {"plan-512gpu", "512gpu", "model.transformer: 48 layers, hidden 8192"},
      {"plan-hapt-case", "hapt-case", "schedule: H_1F1B: torchtitan's config runs 1F1B, GPipe or Interleaved1F1B"},
      {"plan-lab-pipelines", "lab-pcie", "pipelines: export torchtitan takes a plan of one pipeline"},
      {"plan-llama3-405b-100k", "100k-h100", "stages[0].zero_stage: 1: torchtitan shards"},
      {"plan-llama3-405b-128k", "16k-h100", "stages[0].zero_stage: 1: torchtitan shards"},
      {"plan-llama3-405b", "16k-h100", "virtual_stages: 64 chunks (16 stages x 4) do not split the 126 layers"},
      {"plan-megatron-39b", "a100-512", "model.dtype: FP16: torchtitan trains in bfloat16 or float32"},
      {"plan-mixed-replicas", "mixed-cloud", "stages[0].replica_groups: torchtitan runs every replica"},
  };
  for (const auto& ex : examples) {
    INFO(ex.plan);
    absl::StatusOr<hetsim::proto::PlanInputs> in = hetsim::proto::LoadPlanInputs(
        kSource + "/examples/" + ex.plan + ".pbtxt", kSource + "/examples/cluster-" + ex.cluster + ".pbtxt");
    REQUIRE(in.ok());
    CHECK_THAT(Refusal(*in), Catch::Contains(ex.refusal));
  }
}

TEST_CASE("export torchtitan: what torchtitan fixes is a note, a layout it cannot run an error",
          "[interop][torchtitan]") {
  const TorchtitanImport imported =
      Imported(hetsim::testing::ImportTestText(kSource + "/tests/torchtitan_data/llama3_70b_pp_2024.toml"), 0,
               "llama3_70b_pp_2024.toml");
  hetsim::proto::PlanInputs in = InputsOf(imported);

  hetsim::proto::PlanInputs blocking = in;
  blocking.plan.set_blocking_p2p(true);  // torchtitan's pipeline sends are non-blocking
  absl::StatusOr<TorchtitanExport> e = ExportTorchtitan(blocking);
  REQUIRE(e.ok());
  CHECK(hetsim::testing::HasImportNote(e->notes, "blocking_p2p: not exported (true in the plan"));

  hetsim::proto::PlanInputs uneven = in;  // 20 and 20 blocks (the first with the embedding) to 21 and 19
  uneven.plan.set_schedule(v1::ONE_F_ONE_B);
  uneven.plan.clear_virtual_stages();
  uneven.plan.mutable_stages(0)->set_num_layers(uneven.plan.stages(0).num_layers() + 1);
  uneven.plan.mutable_stages(1)->set_num_layers(uneven.plan.stages(1).num_layers() - 1);
  uneven.plan.mutable_stages(1)->set_first_layer(uneven.plan.stages(1).first_layer() + 1);
  CHECK_THAT(Refusal(uneven), Catch::Contains("stages[0].num_layers: 22, the config torchtitan runs gives 21: "
                                              "torchtitan splits the layers evenly"));

  hetsim::proto::PlanInputs no_sp = in;
  for (v1::Stage& s : *no_sp.plan.mutable_stages()) s.set_sequence_parallel(false);
  CHECK_THAT(Refusal(no_sp), Catch::Contains("stages[0].sequence_parallel: false, the config torchtitan runs gives "
                                             "true: torchtitan's TP plan always shards the norms' sequence"));

  hetsim::proto::PlanInputs wider = in;
  wider.model.mutable_transformer()->set_hidden_size(8192 + 128);
  *wider.plan.mutable_model() = wider.model;
  CHECK_THAT(Refusal(wider), Catch::Contains("model.transformer: 80 layers, hidden 8320"));

  hetsim::proto::PlanInputs list = in;
  list.model.clear_transformer();
  CHECK_THAT(Refusal(list), Catch::Contains("model: a layer list"));
}
