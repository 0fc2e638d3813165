// Outputs of the newer commands never replace a file the command read, also one it read indirectly (a
// plan a list or a validation set names, a plan's model, a DeepSpeed config a launch line names), and an
// export is written whole or not at all (session 32's hostile-input pass).
#include <filesystem>
#include <string>

#include <catch2/catch.hpp>

#include "absl/strings/str_cat.h"
#include "proto/io.h"
#include "tests/app/cli/cli_util.h"

// A namespace of its own: the unity build joins this file with others that define EmptyDir, Read, ...
namespace cli_outputs_test {
namespace {

namespace fs = std::filesystem;
using hetsim::testing::CliRun;
using hetsim::testing::RunHetsim;

fs::path EmptyDir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / absl::StrCat("hetsim_cli_outputs_", name, "_", ::getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string Source(const std::string& relative) { return absl::StrCat(HETSIM_SOURCE_DIR, "/", relative); }

// Copies `from` (in the source tree) to `dir`/`name` and returns the copy's path.
std::string CopyInto(const fs::path& dir, const std::string& from, const std::string& name) {
  const std::string to = (dir / name).string();
  fs::copy_file(Source(from), to, fs::copy_options::overwrite_existing);
  return to;
}

std::string Read(const std::string& path) { return *hetsim::proto::ReadFileToString(path); }

// The command must exit 2 saying `expected` and leave `kept` as it was.
void RefusedAndKept(const std::string& args, const std::string& kept, const std::string& expected) {
  const std::string before = Read(kept);
  const CliRun r = RunHetsim(args);
  INFO(args << "\n" << r.err);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains(expected));
  CHECK(Read(kept) == before);
}

const std::string kHaptCluster = Source("examples/cluster-hapt-case.pbtxt");

TEST_CASE("validate: --chart over the --plans list and --report over a plan's model are refused", "[cli][outputs]") {
  const fs::path dir = EmptyDir("validate");
  fs::create_directories(dir / "models");
  CopyInto(dir, "examples/validate-naive/models/gpt-hapt-case.pbtxt", "models/gpt-hapt-case.pbtxt");
  for (const char* plan : {"hapt.pbtxt", "alpa.pbtxt"}) {
    CopyInto(dir, absl::StrCat("examples/validate-naive/", plan), plan);
  }
  const std::string list = (dir / "plans.txt").string();
  REQUIRE(hetsim::proto::WriteFileAtomically(list, "hapt.pbtxt\nalpa.pbtxt\n").ok());
  // --chart writes any name (--report needs a message's extension, which a list's .txt is not).
  RefusedAndKept(absl::StrCat("validate --plans ", list, " --cluster ", kHaptCluster, " --chart ", list), list,
                 "plans.txt: is also an input of this command");
  const std::string model = (dir / "models/gpt-hapt-case.pbtxt").string();
  RefusedAndKept(absl::StrCat("validate ", (dir / "hapt.pbtxt").string(), " ", (dir / "alpa.pbtxt").string(),
                              " --cluster ", kHaptCluster, " --report ", model),
                 model, "gpt-hapt-case.pbtxt: is also an input of this command");
  // A missing folder is found before the plans are simulated, and nothing is written.
  const CliRun r = RunHetsim(absl::StrCat("validate --plans ", list, " --cluster ", kHaptCluster, " --report ",
                                          (dir / "r.json").string(), " --chart ", (dir / "no/c.svg").string()));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("does not exist"));
  CHECK_FALSE(fs::exists(dir / "r.json"));
  fs::remove_all(dir);
}

TEST_CASE("fidelity: --json over a case's plan and --chart over its cluster are refused", "[cli][outputs]") {
  const fs::path dir = EmptyDir("fidelity");
  const std::string plan = CopyInto(dir, "tests/fidelity_data/plan-a.pbtxt", "plan-a.pbtxt");
  const std::string cluster = CopyInto(dir, "tests/fidelity_data/cluster-one-gpu.pbtxt", "cluster-one-gpu.pbtxt");
  const std::string set = (dir / "set.pbtxt").string();
  REQUIRE(hetsim::proto::WriteFileAtomically(
              set,
              "name: \"s\"\ncases { name: \"a\" training_run { plan: \"plan-a.pbtxt\" cluster: "
              "\"cluster-one-gpu.pbtxt\" measured_tflops_per_gpu: 100 flop_count: MODEL_FLOPS } }\n")
              .ok());
  RefusedAndKept(absl::StrCat("fidelity ", set, " --json ", plan), plan, "plan-a.pbtxt: is also an input");
  RefusedAndKept(absl::StrCat("fidelity ", set, " --json ", (dir / "r.json").string(), " --chart ", cluster), cluster,
                 "cluster-one-gpu.pbtxt: is also an input");
  CHECK_FALSE(fs::exists(dir / "r.json"));
  fs::remove_all(dir);
}

TEST_CASE("calibrate: --out over a plan an iteration file names is refused", "[cli][outputs]") {
  const fs::path dir = EmptyDir("calibrate");
  const std::string plan = CopyInto(dir, "examples/plan-hapt-case.pbtxt", "plan.pbtxt");
  const std::string csv = (dir / "iterations.csv").string();
  REQUIRE(hetsim::proto::WriteFileAtomically(csv, "plan,time_ms\nplan.pbtxt,812.5\n").ok());
  RefusedAndKept(absl::StrCat("calibrate --iterations ", csv, " --cluster ", kHaptCluster, " --out ", plan), plan,
                 "plan.pbtxt: is also an input of this command");
  fs::remove_all(dir);
}

TEST_CASE("import megatron: --out over --model or over the DeepSpeed config the line reads is refused",
          "[cli][outputs]") {
  const fs::path dir = EmptyDir("import");
  const std::string cluster = Source("examples/cluster-a100-512.pbtxt");
  const std::string model = CopyInto(dir, "examples/model-gpt39b.pbtxt", "model.pbtxt");
  const std::string config = (dir / "ds.json").string();
  REQUIRE(hetsim::proto::WriteFileAtomically(
              config, "{\"train_micro_batch_size_per_gpu\": 1, \"gradient_accumulation_steps\": 1}\n")
              .ok());
  // A DeepSpeed script that builds its model from a name: the model comes from --model, the batch from
  // the config beside it.
  const std::string script = (dir / "train.sh").string();
  REQUIRE(hetsim::proto::WriteFileAtomically(
              script, "deepspeed --num_gpus 8 train.py --deepspeed_config ds.json --model_name_or_path gpt2\n")
              .ok());
  RefusedAndKept(
      absl::StrCat("import megatron ", script, " --model ", model, " --nodes 1 --cluster ", cluster, " --out ", model),
      model, "model.pbtxt: is also an input of this command");
  RefusedAndKept(
      absl::StrCat("import megatron ", script, " --model ", model, " --nodes 1 --cluster ", cluster, " --out ", config),
      config, "ds.json: is also an input of this command");
  const std::string line = (dir / "line.sh").string();
  REQUIRE(hetsim::proto::WriteFileAtomically(
              line,
              "deepspeed pretrain_gpt.py --deepspeed --deepspeed_config ds.json --num-layers 4 --hidden-size 1024 "
              "--num-attention-heads 16 --seq-length 1024 --max-position-embeddings 1024\n")
              .ok());
  RefusedAndKept(absl::StrCat("import megatron ", line, " --nodes 1 --cluster ", cluster, " --out ", config), config,
                 "ds.json: is also an input of this command");
  fs::remove_all(dir);
}

TEST_CASE("export chakra: all files or none, never over an input", "[cli][outputs]") {
  const fs::path dir = EmptyDir("export");
  const std::string plan = Source("examples/plan-hapt-case.pbtxt");
  // A prefix the rank files' names allow but the groups file's does not (255 bytes): no rank file is left,
  // nor the folder the command created.
  const fs::path out = dir / "new" / "traces";
  const CliRun r = RunHetsim(absl::StrCat("export chakra ", plan, " --cluster ", kHaptCluster, " --out ", out.string(),
                                          " --prefix ", std::string(245, 'p')));
  INFO(r.err);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("comm_groups.json: the file name is 262 bytes, more than the 255"));
  CHECK_FALSE(fs::exists(dir / "new"));
  // The cluster, in JSON, named as the export's groups file in the export's folder.
  const std::string cluster = (dir / "c.comm_groups.json").string();
  const CliRun converted = RunHetsim(absl::StrCat("convert ", kHaptCluster, " ", cluster));
  REQUIRE(converted.exit_code == 0);
  RefusedAndKept(absl::StrCat("export chakra ", plan, " --cluster ", cluster, " --out ", dir.string(), " --prefix c"),
                 cluster, "c.comm_groups.json: is also an input of this command");
  CHECK_FALSE(fs::exists(dir / "c.0.et"));
  fs::remove_all(dir);
}

TEST_CASE("import megatron and plan: a --name that is not UTF-8 is refused before a plan is written",
          "[cli][outputs]") {
  const fs::path dir = EmptyDir("name");
  const std::string plan = (dir / "p.pbtxt").string();
  // The shell's printf writes the two bytes 0xff 0xfe (not UTF-8) as the argument.
  CliRun r = RunHetsim(absl::StrCat("import megatron ", Source("tests/megatron_data/sc21_39b.sh"), " --cluster ",
                                    Source("examples/cluster-a100-512.pbtxt"),
                                    " --name \"$(printf '\\377\\376')\" --out ", plan));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("--name: not valid UTF-8"));
  r = RunHetsim(absl::StrCat("plan --model ", Source("examples/model-gpt39b.pbtxt"), " --cluster ", kHaptCluster,
                             " --name \"$(printf '\\377\\376')\" --out ", plan));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("--name: not valid UTF-8"));
  CHECK_FALSE(fs::exists(plan));
  fs::remove_all(dir);
}

TEST_CASE("an empty flag value is refused, not read as an absent flag", "[cli][outputs]") {
  // Session 33: `run --report ''` wrote no report and exited 0; `--max-memory ''` set no limit.
  const std::string plan = Source("examples/plan-hapt-case.pbtxt");
  for (const char* flag : {"--report ''", "--max-memory ''", "--trace \"\""}) {
    const CliRun r = RunHetsim(absl::StrCat("run ", plan, " --cluster ", kHaptCluster, " ", flag));
    INFO(flag << "\n" << r.err);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains(": empty value"));
  }
  const CliRun positional = RunHetsim(absl::StrCat("run '' --cluster ", kHaptCluster));
  CHECK(positional.exit_code == 2);
  CHECK_THAT(positional.err, Catch::Contains("plan (argument 1): empty"));
}

}  // namespace
}  // namespace cli_outputs_test
