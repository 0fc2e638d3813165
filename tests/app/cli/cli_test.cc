// The `hetsim` command as a user runs it: exit codes, usage lines, --help, and the commands example,
// convert and check end to end.
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include <catch2/catch.hpp>

#include "absl/strings/str_cat.h"
#include "app/cli/commands.h"
#include "proto/io.h"
#include "tests/app/cli/cli_util.h"

namespace {

using hetsim::testing::CliRun;
using hetsim::testing::RunHetsim;
using hetsim::testing::RunOk;

namespace fs = std::filesystem;

fs::path FreshDir(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / absl::StrCat("hetsim_cli_", name, "_", ::getpid());
  fs::remove_all(dir);
  return dir;
}

const std::string kExamples = absl::StrCat(HETSIM_SOURCE_DIR, "/examples");

}  // namespace

TEST_CASE("no command, an unknown command or an unknown flag exit 2 with a usage line", "[cli]") {
  CliRun r = RunHetsim("");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("usage: hetsim <command>"));
  r = RunHetsim("frobnicate");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("unknown command 'frobnicate'"));
  for (const char* command : {"example", "convert", "check"}) {
    INFO(command);
    r = RunHetsim(absl::StrCat(command, " --no-such-flag"));
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains(absl::StrCat("usage: hetsim ", command)));
    CHECK_THAT(r.err, Catch::Contains("no-such-flag"));
  }
}

TEST_CASE("missing or extra arguments are usage errors", "[cli]") {
  CHECK(RunHetsim("example").exit_code == 2);
  CHECK(RunHetsim("convert a.pbtxt").exit_code == 2);
  CHECK(RunHetsim("convert a.pbtxt b.json c.pb").exit_code == 2);
  CHECK(RunHetsim("check").exit_code == 2);
}

TEST_CASE("--help works on every command and exits 0", "[cli]") {
  for (const hetsim::cli::Command& command : hetsim::cli::AllCommands()) {
    INFO(command.name);
    const CliRun r = RunHetsim(absl::StrCat(command.name, " --help"));
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::StartsWith(absl::StrCat("usage: hetsim ", command.name)));
    CHECK_THAT(r.out, Catch::Contains("--help"));
  }
  CHECK(RunHetsim("--help").exit_code == 0);
  CHECK_THAT(RunHetsim("--version").out, Catch::StartsWith("hetsim "));
}

TEST_CASE("examples/ holds exactly what `hetsim example` writes", "[cli]") {
  const fs::path dir = FreshDir("examples");
  REQUIRE(RunHetsim(absl::StrCat("example --out ", dir.string())).exit_code == 0);
  int count = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    INFO(entry.path().filename());
    const fs::path committed = fs::path(kExamples) / entry.path().filename();
    REQUIRE(fs::exists(committed));
    CHECK(*hetsim::proto::ReadFileToString(entry.path().string()) ==
          *hetsim::proto::ReadFileToString(committed.string()));
    ++count;
  }
  CHECK(count == 19);
  int committed_count = 0;
  for (const auto& entry : fs::directory_iterator(kExamples)) committed_count += entry.path().extension() == ".pbtxt";
  CHECK(committed_count == count);
}

TEST_CASE("examples in every format check clean and convert back to the same bytes", "[cli]") {
  for (const char* format : {"pb", "json", "pbtxt"}) {
    INFO(format);
    const fs::path dir = FreshDir(absl::StrCat("formats_", format));
    REQUIRE(RunHetsim(absl::StrCat("example --out ", dir.string(), " --format ", format)).exit_code == 0);
    const std::string ext = absl::StrCat(".", format);
    const auto f = [&](const char* name) { return (dir / absl::StrCat(name, ext)).string(); };
    CliRun r = RunHetsim(absl::StrCat("check ", f("cluster-512gpu"), " ", f("cluster-hapt-case"), " --cluster ",
                                      f("cluster-hapt-case"), " ", f("plan-hapt-case"), " ", f("sweep-bandwidth"), " ",
                                      f("sweep-add-h100"), " ", f("model-gpt39b")));
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.err, Catch::Equals(""));
    r = RunHetsim(absl::StrCat("check ", f("plan-512gpu"), " --cluster ", f("cluster-512gpu")));
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains("8 stages"));
    for (const char* name : {"cluster-512gpu", "plan-512gpu", "sweep-add-h100"}) {
      const std::string mid = (dir / absl::StrCat(name, ".mid.json")).string();
      const std::string back = (dir / absl::StrCat(name, ".back", ext)).string();
      REQUIRE(RunHetsim(absl::StrCat("convert ", f(name), " ", mid)).exit_code == 0);
      REQUIRE(RunHetsim(absl::StrCat("convert ", mid, " ", back)).exit_code == 0);
      CHECK(*hetsim::proto::ReadFileToString(back) == *hetsim::proto::ReadFileToString(f(name)));
    }
  }
}

TEST_CASE("check prints a summary of the 512-GPU example", "[cli]") {
  const CliRun r =
      RunHetsim(absl::StrCat("check ", kExamples, "/plan-512gpu.pbtxt ", kExamples, "/cluster-512gpu.pbtxt"));
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("512 GPUs in 2 islands"));
  // What each fabric means to NCCL: the example's islands are InfiniBand, their link slow Ethernet.
  CHECK_THAT(r.out, Catch::Contains("INFINIBAND (NCCL over IB verbs, RDMA)"));
  CHECK_THAT(r.out, Catch::Contains("ETHERNET (NCCL over TCP sockets, no RDMA; RoCE is ROCE)"));
  CHECK_THAT(r.out, Catch::Contains("39.09 B parameters, 50 layers"));
  CHECK_THAT(r.out, Catch::Contains("128 microbatches, 8 stages"));
  CHECK_THAT(r.out, Catch::Contains("OK: 2 files valid"));
}

TEST_CASE("check prints the long-context Llama 3 plan's context parallelism and its exchange", "[cli]") {
  const CliRun r = RunHetsim(
      absl::StrCat("check ", kExamples, "/plan-llama3-405b-128k.pbtxt ", kExamples, "/cluster-16k-h100.pbtxt"));
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("  context parallel 16 (K/V all-gather)\n"));
}

// "<examples>/PLAN.pbtxt --cluster <examples>/CLUSTER.pbtxt".
std::string ExampleInputs(const char* plan, const char* cluster) {
  return absl::StrCat(kExamples, "/", plan, ".pbtxt --cluster ", kExamples, "/", cluster, ".pbtxt");
}

TEST_CASE("check and run show the replica groups of the mixed A100 + L40S example", "[cli][replicas]") {
  const std::string inputs = ExampleInputs("plan-mixed-replicas", "cluster-mixed-cloud");
  const CliRun check = RunOk(absl::StrCat("check ", inputs));
  CHECK_THAT(check.out, Catch::Contains("2 replica groups"));
  CHECK_THAT(check.out, Catch::Contains("group l40s     nodes 0..0 GPUs 0..7  TP 4 DP 2  share 4"));
  const CliRun run = RunOk(absl::StrCat("run ", inputs));
  CHECK_THAT(run.out, Catch::Contains("replica groups: stage"));
  CHECK_THAT(run.out, Catch::Contains("a100 (A100-80GB) + l40s"));
}

TEST_CASE("check and run show the pipelines of different shapes of the lab example", "[cli][pipelines]") {
  const std::string inputs = ExampleInputs("plan-lab-pipelines", "cluster-lab-pcie");
  const CliRun check = RunOk(absl::StrCat("check ", inputs));
  CHECK_THAT(check.out, Catch::Contains("6 pipelines"));
  CHECK_THAT(check.out, Catch::Contains("  pipeline a6000-1: 16 samples, microbatch 2 -> 8 microbatches, 2 stages"));
  const CliRun run = RunOk(absl::StrCat("run ", inputs));
  CHECK_THAT(run.out,
             Catch::Contains("pipeline rtx4090-3: 24 samples in 24 microbatches of 1, stages 12-15 on 4 GPUs"));
  CHECK_THAT(run.out, Catch::Contains("gradient all-reduce per layer range:\n  layers 0-6  6 GPUs x 2 shards"));
  // The HTML page: a schedule per pipeline, titled with its share and GPU type, and the ranges' table.
  const fs::path dir = FreshDir("pipelines_html");
  fs::create_directories(dir);
  const std::string page_path = (dir / "r.html").string();
  const CliRun html = RunHetsim(absl::StrCat("run ", inputs, " --html ", page_path));
  CHECK(html.exit_code == 0);
  absl::StatusOr<std::string> page = hetsim::proto::ReadFileToString(page_path);
  REQUIRE(page.ok());
  CHECK_THAT(*page, Catch::Contains("Pipeline rtx4090-3"));
  CHECK_THAT(*page,
             Catch::Contains("24 samples of the batch in 24 microbatches of 1, 4 stages (report stages 12-15) on"));
  CHECK_THAT(*page, Catch::Contains("Pipeline a6000-1"));
  CHECK_THAT(*page, Catch::Contains("Gradient all-reduce per layer range"));
  // The trace: each pipeline's processes named with its share, its passes' args with its share and GPU type.
  const std::string trace_path = (dir / "r.trace.json").string();
  REQUIRE(RunHetsim(absl::StrCat("run ", inputs, " --trace ", trace_path)).exit_code == 0);
  absl::StatusOr<std::string> trace = hetsim::proto::ReadFileToString(trace_path);
  REQUIRE(trace.ok());
  const auto has = [&](const std::string& text) { CHECK_THAT(*trace, Catch::Contains(text)); };
  has("\"name\":\"rtx4090-3 (24 samples in 24 microbatches of 1): rtx4090 node 1 (RTX-4090)\"");
  has("\"name\":\"a6000-1 (16 samples in 8 microbatches of 2): network\"");
  has("\"pipeline\":\"rtx4090-3\",\"batch_share\":24,\"microbatches\":24,\"micro_batch_size\":1,"
      "\"gpu_type\":\"rtx4090 (RTX-4090)\"}");
  has("\"pipeline\":\"a6000-1\",\"batch_share\":16,\"microbatches\":8,\"micro_batch_size\":2,"
      "\"gpu_type\":\"a6000 (RTX-A6000)\"}");
}

TEST_CASE("run names ZeRO's reduce-scatter and parameter all-gather per layer range of a plan of pipelines",
          "[cli][pipelines]") {
  const std::string inputs =
      absl::StrCat(HETSIM_SOURCE_DIR, "/tests/planner_data/plan-lab-pipelines-zero1.pbtxt --cluster ", kExamples,
                   "/cluster-lab-pcie.pbtxt");
  const CliRun run = RunOk(absl::StrCat("run ", inputs));
  CHECK_THAT(run.out, Catch::Contains("gradient reduce-scatter and parameter all-gather per layer range (ZeRO-1):\n"
                                      "  layers 0-6  6 GPUs x 2 shards"));
  CHECK_THAT(run.out, Catch::Contains(" ms, gather "));
  CHECK_THAT(run.out, !Catch::Contains("gradient all-reduce per layer range"));
}

TEST_CASE("check summarises DeepSeek-V3: multi-latent attention, shared experts, dense first blocks", "[cli]") {
  const fs::path dir = FreshDir("check_deepseek");
  fs::create_directories(dir);
  const std::string model = (dir / "deepseek-v3.pbtxt").string();
  REQUIRE(
      hetsim::proto::WriteFileAtomically(
          model,
          "name: \"deepseek-v3\" dtype: FP8 transformer { num_layers: 61 hidden_size: 7168 "
          "num_attention_heads: 128 ffn_hidden_size: 18432 gated_mlp: true seq_length: 4096 vocab_size: 129280 "
          "num_experts: 256 moe_top_k: 8 expert_ffn_hidden_size: 2048 moe_shared_expert_ffn_hidden_size: 2048 "
          "moe_first_dense_layers: 3 moe_grouped_gemm: true mla { q_lora_rank: 1536 kv_lora_rank: 512 qk_head_dim: 128 "
          "qk_pos_emb_head_dim: 64 v_head_dim: 128 } }")
          .ok());
  const CliRun r = RunHetsim(absl::StrCat("check ", model));
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("MLA (latents Q 1536, KV 512; QK 128+64, V 128)"));
  CHECK_THAT(r.out, Catch::Contains("256 experts top-8 + shared 2048, first 3 dense, grouped GEMM"));
  CHECK_THAT(r.out, Catch::Contains("671.19 B parameters"));
}

TEST_CASE("check of a plan needs a cluster, and only one", "[cli]") {
  CliRun r = RunHetsim(absl::StrCat("check ", kExamples, "/plan-512gpu.pbtxt"));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("a plan is checked against a cluster"));
  r = RunHetsim(absl::StrCat("check ", kExamples, "/plan-512gpu.pbtxt ", kExamples, "/cluster-512gpu.pbtxt ", kExamples,
                             "/cluster-hapt-case.pbtxt"));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("several clusters given"));
}

TEST_CASE("check --out writes the summary only when everything is valid", "[cli]") {
  const fs::path dir = FreshDir("check_out");
  fs::create_directories(dir);
  const std::string out = (dir / "summary.txt").string();
  CliRun r = RunHetsim(absl::StrCat("check ", kExamples, "/model-gpt39b.pbtxt --out ", out));
  REQUIRE(r.exit_code == 0);
  CHECK(*hetsim::proto::ReadFileToString(out) == r.out.substr(0, r.out.find("OK:")));
  fs::remove(out);
  r = RunHetsim(absl::StrCat("check ", kExamples, "/model-gpt39b.pbtxt ", kExamples, "/plan-512gpu.pbtxt --out ", out));
  CHECK(r.exit_code == 2);
  CHECK_FALSE(fs::exists(out));
}

TEST_CASE("import reads at most 4 MiB of launch line or training config, before parsing it", "[cli]") {
  // A NeMo config holding one 60 MB value took 17 s (and a minute on a loaded machine) in yaml-cpp.
  const fs::path dir = FreshDir("config_size");
  fs::create_directories(dir);
  const std::string yaml = (dir / "big.yaml").string();
  REQUIRE(hetsim::proto::WriteFileAtomically(yaml, absl::StrCat("a: \"", std::string(5 << 20, 'x'), "\"\n")).ok());
  const std::string out = (dir / "p.pbtxt").string();
  CliRun r =
      RunHetsim(absl::StrCat("import nemo ", yaml, " --cluster ", kExamples, "/cluster-a100-512.pbtxt --out ", out));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("big.yaml: 5242886 bytes is larger than 4 MiB, the limit for a launch line or "
                                    "training config"));
  CHECK_FALSE(fs::exists(out));
  fs::remove_all(dir);
}
