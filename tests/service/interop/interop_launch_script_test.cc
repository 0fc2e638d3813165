// Launch scripts as their authors write them (service/interop/launch_script.h): each construct
// rendered as bash renders it, checked word by word; what cannot be known without running the script
// noted, never guessed; the DeepSpeed config folded into the flags; hostile scripts bounded.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "proto/inputs.h"
#include "service/interop/deepspeed_config.h"
#include "service/interop/launch_script.h"
#include "service/interop/megatron_flags.h"
#include "service/interop/megatron_import.h"
#include "service/interop/shell_arithmetic_internal.h"

namespace {

using hetsim::interop::RenderedLaunch;
using hetsim::interop::RenderLaunchScript;

RenderedLaunch RenderOk(const std::string& script) {
  absl::StatusOr<RenderedLaunch> r = RenderLaunchScript(script, "run.sh");
  INFO(r.status().message());
  REQUIRE(r.ok());
  return *std::move(r);
}

std::string Words(const std::string& script) { return absl::StrJoin(RenderOk(script).words, "|"); }

bool AnyNoteHas(const RenderedLaunch& r, const std::string& text) {
  for (const std::string& n : r.notes) {
    if (absl::StrContains(n, text)) return true;
  }
  return false;
}

int64_t Arith(const std::string& expr) {
  absl::StatusOr<int64_t> v = hetsim::interop::EvaluateShellArithmetic(
      expr, [](absl::string_view name) { return name == "GPUS" ? std::optional<std::string>("8") : std::nullopt; });
  INFO(v.status().message());
  REQUIRE(v.ok());
  return *v;
}

TEST_CASE("shell arithmetic follows bash's precedence and integer rules", "[launch_script]") {
  CHECK(Arith("2 + 3 * 4") == 14);
  CHECK(Arith("(2 + 3) * 4") == 20);
  CHECK(Arith("GPUS / 2 / 2") == 2);
  CHECK(Arith("7 / 2") == 3);          // integer division
  CHECK(Arith("-7 % 3") == -1);        // C's remainder, as bash
  CHECK(Arith("2 ** 3 ** 2") == 512);  // right-associative
  CHECK(Arith("UNSET + 1") == 1);      // an unset variable reads as 0
  CHECK(Arith("GPUS > 4 && GPUS <= 8") == 1);
  CHECK(Arith("!0 + -(-3)") == 4);
  auto fails = [](const std::string& expr) {
    return !hetsim::interop::EvaluateShellArithmetic(expr, [](absl::string_view) { return std::nullopt; }).ok();
  };
  CHECK(fails("1 / 0"));
  CHECK(fails("9223372036854775807 + 1"));
  CHECK(fails("2 ** 64"));
  CHECK(fails("(1 + 2"));
  CHECK(fails(std::string(100000, '-') + "1"));  // bounded recursion
}

TEST_CASE("a script's variables, defaults and arithmetic reach its launch command", "[launch_script]") {
  CHECK(Words("TP=4\nPP=2\ntorchrun pretrain_gpt.py --tensor-model-parallel-size $TP --pipeline-model-parallel-size "
              "${PP}\n") == "torchrun|pretrain_gpt.py|--tensor-model-parallel-size|4|--pipeline-model-parallel-size|2");
  CHECK(Words("export GBS=${GBS:-512}\nMBS=${MBS:-2}\nNODES=2; GPUS=8\nWORLD=$(( NODES * GPUS ))\n"
              "python pretrain_gpt.py --global-batch-size $GBS --micro-batch-size \"$MBS\" --x $WORLD\n") ==
        "python|pretrain_gpt.py|--global-batch-size|512|--micro-batch-size|2|--x|16");
  // A string of options splits at blanks; quoted it stays one word; arrays splice element by element.
  CHECK(Words("OPTS=\" --fp16  --bf16 \"\nARGS=(--a 1 \"--b c\")\nARGS+=(--d)\n"
              "torchrun pretrain_gpt.py $OPTS \"${ARGS[@]}\" \"$OPTS\"\n") ==
        "torchrun|pretrain_gpt.py|--fp16|--bf16|--a|1|--b c|--d| --fp16  --bf16 ");
  // Single quotes keep $; escapes and line continuations as bash reads them.
  CHECK(Words("X=1\ntorchrun pretrain_gpt.py '$X' \\$X \\\n  --y=$X # a comment $X\n") ==
        "torchrun|pretrain_gpt.py|$X|$X|--y=1");
  // ${VAR:=x} assigns; ${VAR:+x} replaces a set value; ${#VAR} is its length.
  CHECK(Words("echo ${A:=7}\nB=abc\ntorchrun pretrain_gpt.py $A ${B:+yes} ${C:+no} ${#B}\n") ==
        "torchrun|pretrain_gpt.py|7|yes|3");
}

TEST_CASE("if branches are taken when their test is decidable, and only then", "[launch_script]") {
  const std::string script =
      "USE_DS=1\nif [ \"$USE_DS\" -eq 1 ]; then\n  DS=\"--deepspeed\"\nelif [ -z \"$X\" ]; then DS=\"--b\"\nelse\n"
      "  DS=\"--c\"\nfi\n[ -z \"$TP\" ] && TP=8\n[ -n \"$PP\" ] || PP=2\n"
      "if [[ $TP == 8 ]]; then if [ -f /etc/x ]; then TP=1; fi; fi\n"
      "torchrun pretrain_gpt.py $DS --tp $TP --pp $PP\n";
  const RenderedLaunch r = RenderOk(script);
  CHECK(absl::StrJoin(r.words, "|") == "torchrun|pretrain_gpt.py|--deepspeed|--tp|8|--pp|2");
  CHECK(AnyNoteHas(r, "line 10: a condition that needs the machine"));  // the file test: not read
  CHECK(r.line == 11);
}

TEST_CASE("a program's exit status decides no if, and a chain that assumes it says so", "[launch_script]") {
  // Session 33: `if grep ...` read its first branch as if grep had succeeded, without a note.
  const RenderedLaunch r =
      RenderOk("TP=2\nif grep -q a100 /etc/hosts; then\n  TP=8\nelse\n  TP=4\nfi\ntorchrun pretrain_gpt.py --tp $TP\n");
  CHECK(absl::StrJoin(r.words, "|") == "torchrun|pretrain_gpt.py|--tp|2");
  CHECK(AnyNoteHas(r, "line 2: a condition that needs the machine"));
  // A statement still assumes success (`cd "$DIR" && torchrun ...`), and says what || then skipped.
  const RenderedLaunch chain = RenderOk("nvidia-smi -L && TP=8 || TP=4\ncd /x && torchrun pretrain_gpt.py --tp $TP\n");
  CHECK(absl::StrJoin(chain.words, "|") == "torchrun|pretrain_gpt.py|--tp|8");
  CHECK(AnyNoteHas(chain, "line 1: a program's exit status is not known: it is assumed to succeed"));
  CHECK_FALSE(AnyNoteHas(chain, "line 2: a program's exit status"));
  // `if eval ...` runs a script of its own inside the condition (fuzz_launch_line found a dangling frame).
  const RenderedLaunch evaled =
      RenderOk("TP=2\nif eval \"grep -q x y\"; then TP=8; fi\ntorchrun pretrain_gpt.py --tp $TP\n");
  CHECK(absl::StrJoin(evaled.words, "|") == "torchrun|pretrain_gpt.py|--tp|2");
}

TEST_CASE("eval, sh -c and here documents are followed, loops and commands are noted", "[launch_script]") {
  CHECK(Words("run_cmd=\"deepspeed pretrain_gpt.py --x 1\"\necho ${run_cmd}\neval ${run_cmd}\n") ==
        "deepspeed|pretrain_gpt.py|--x|1");
  CHECK(Words("cmd=\"python -u pretrain_gpt.py --y 2\"\nsrun -l --nodes 2 sh -c \"${cmd}\"\n") ==
        "python|-u|pretrain_gpt.py|--y|2");
  const RenderedLaunch r = RenderOk(
      "MB=4\nCFG=ds.json\ncat <<EOT > $CFG\n{\"train_micro_batch_size_per_gpu\": $MB}\nEOT\n"
      "cat <<'EOT' > raw.json\n$MB\nEOT\nfor i in 1 2; do TP=$i; done\nN=$(nproc)\n"
      "deepspeed --num_gpus=$N pretrain_gpt.py --deepspeed_config $CFG --tp $TP\n");
  CHECK(r.written_files.at("ds.json") == "{\"train_micro_batch_size_per_gpu\": 4}\n");
  CHECK(r.written_files.at("raw.json") == "$MB\n");  // a quoted delimiter: no expansion
  // <<- strips leading tabs, not spaces: an indented-with-spaces delimiter does not close it.
  const RenderedLaunch tabs = RenderOk("cat <<-EOT > t.json\n\t\t  {}\n  EOT\n\tEOT\ntorchrun pretrain_gpt.py\n");
  CHECK(tabs.written_files.at("t.json") == "  {}\n  EOT\n");
  CHECK(AnyNoteHas(r, "loops, case and functions are not run"));
  CHECK(AnyNoteHas(r, "$(nproc) is not run"));
  CHECK(AnyNoteHas(r, "TP is not set in the script"));
  CHECK(absl::StrJoin(r.words, "|") ==
        "deepspeed|--num_gpus=$(nproc)|pretrain_gpt.py|--deepspeed_config|ds.json|--tp|$TP");
  // The script's own folder, as scripts find their configs.
  CHECK(Words("D=$(dirname $0)\ntorchrun pretrain_gpt.py --c $D/x.json\n") == "torchrun|pretrain_gpt.py|--c|./x.json");
}

// Templates' placeholders (Megatron-DeepSpeed's examples/pretrain_gpt3_175B.sh, pretrain_gpt_distributed_with_mp.sh)
// are one word each, not redirections: read as a shell would, `<PATH TO CHECKPOINTS DIRECTORY> --fp16`
// sent --fp16 to a file and the run was priced in FP32. Real redirections stay redirections.
TEST_CASE("printf %q's escapes: a backslash before a blank, bash's $'...' quoting", "[launch_script]") {
  // `printf '%q '` quotes a blank with a backslash and a control character with $'...' (bash's manual,
  // QUOTING); until session 37 $'/d/a\tb' was read as the word $/d/a\tb.
  CHECK(Words("python pretrain_gpt.py --name my\\ run --path $'/d/a\\tb' --x $'\\x41\\101\\q'\n") ==
        "python|pretrain_gpt.py|--name|my run|--path|/d/a\tb|--x|AA\\q");
  CHECK_FALSE(RenderLaunchScript("python pretrain_gpt.py --x $'open\n", "s.sh").ok());
}

TEST_CASE("a template's <PLACEHOLDER> is one word, a redirection is not", "[launch_script]") {
  CHECK(Words("opts=\"--save <PATH TO CHECKPOINTS> --fp16\"\ncmd=\"python pretrain_gpt.py ${opts}\"\n"
              "srun sh -c \"${cmd}\"\n") == "python|pretrain_gpt.py|--save|<PATH_TO_CHECKPOINTS>|--fp16");
  CHECK(Words("V=<Specify path to file>/gpt2-vocab.json\ntorchrun pretrain_gpt.py --vocab-file $V --fp16\n") ==
        "torchrun|pretrain_gpt.py|--vocab-file|<Specify_path_to_file>/gpt2-vocab.json|--fp16");
  CHECK(Words("torchrun pretrain_gpt.py --x 1 < in.txt > out.log\n") == "torchrun|pretrain_gpt.py|--x|1");
  CHECK(Words("torchrun pretrain_gpt.py --x 1 <in.txt >out.log 2>&1\n") == "torchrun|pretrain_gpt.py|--x|1");
}

// A Slurm batch script's header sets what Slurm sets for the job: $SLURM_JOB_NUM_NODES and $SLURM_NNODES
// (AWS's Megatron-LM jobs: torchrun --nnodes $SLURM_JOB_NUM_NODES); a range sets nothing.
TEST_CASE("#SBATCH --nodes sets the job's node count as Slurm does", "[launch_script]") {
  const RenderedLaunch r = RenderOk(
      "#!/bin/bash\n#SBATCH --nodes=2  # two p4d\n#SBATCH --exclusive\n"
      "srun torchrun --nnodes $SLURM_JOB_NUM_NODES --nproc_per_node 8 pretrain_gpt.py\n");
  CHECK(absl::StrJoin(r.words, "|") == "srun|torchrun|--nnodes|2|--nproc_per_node|8|pretrain_gpt.py");
  CHECK(r.sbatch_nodes == 2);
  CHECK(r.sbatch_line == 2);
  CHECK(RenderOk("#SBATCH -N 4\nsrun python pretrain_gpt.py --n $SLURM_NNODES\n").words.back() == "4");
  CHECK(RenderOk("#SBATCH --nodes=2-4\nsrun python pretrain_gpt.py\n").sbatch_nodes == 0);
}

TEST_CASE("what a shell refuses is refused with the line, hostile scripts are bounded", "[launch_script]") {
  auto error = [](const std::string& script) {
    absl::StatusOr<RenderedLaunch> r = RenderLaunchScript(script, "run.sh");
    return r.ok() ? std::string() : std::string(r.status().message());
  };
  CHECK(absl::StrContains(error("torchrun pretrain_gpt.py --a \"unterminated\n--b 1\n"),
                          "run.sh: line 1: unterminated double quote"));
  CHECK(absl::StrContains(error("X=1\nY='open\n"), "line 2: unterminated single quote"));
  CHECK(absl::StrContains(error("cat <<EOF > a.json\n{}\n"), "unterminated here document"));
  CHECK(absl::StrContains(error("X=$(echo\n"), "unterminated $("));
  CHECK(absl::StrContains(error("fi\n"), "\"fi\" without its if"));
  // Doubling a value 40 times would need a terabyte: refused at 1 MiB.
  std::string bomb = "A=xxxxxxxxxxxxxxxx\n";
  for (int i = 0; i < 40; ++i) bomb += "A=\"$A$A\"\n";
  CHECK(absl::StrContains(error(bomb), "grows past"));
  std::string nest = "X=${A:-";
  for (int i = 0; i < 40; ++i) nest += "${A:-";
  nest += std::string(41, '}') + "\n";
  CHECK(absl::StrContains(error(nest), "nested too deeply"));
  CHECK(absl::StrContains(error("c='eval $c'\neval $c\n"), "nested too deeply"));
  std::string arithmetic = "X=";
  for (int i = 0; i < 5000; ++i) arithmetic += "$((";
  arithmetic += "1";
  for (int i = 0; i < 5000; ++i) arithmetic += "))";
  CHECK(absl::StrContains(error(arithmetic + "\n"), "$(( )) nested too deeply"));
}

hetsim::v1::Cluster A100Cluster() {
  absl::StatusOr<hetsim::v1::Cluster> c = hetsim::proto::LoadCluster(
      hetsim::proto::Source::File(std::string(HETSIM_SOURCE_DIR) + "/examples/cluster-a100-512.pbtxt"));
  REQUIRE(c.ok());
  return *c;
}

absl::StatusOr<hetsim::interop::MegatronImport> ImportScript(const std::string& script) {
  absl::StatusOr<hetsim::interop::MegatronFlags> flags = hetsim::interop::ParseMegatronLaunchLine(script, "run.sh");
  if (!flags.ok()) return flags.status();
  return hetsim::interop::ImportMegatron(*flags, A100Cluster(), {}, "run.sh");
}

// A Megatron-DeepSpeed script in the shape of its examples_deepspeed/ ones: the config in a here
// document, the ZeRO stage in both.
std::string DeepSpeedScript(const std::string& config, const std::string& flags) {
  return "NODES=2\nGPN=8\nDS_CONFIG=ds_config.json\ncat <<EOT > $DS_CONFIG\n" + config +
         "\nEOT\nds_args=\" --deepspeed --deepspeed_config=$DS_CONFIG ${ds_args}\"\n"
         "deepspeed --num_nodes=$NODES --num_gpus=$GPN pretrain_gpt.py --tensor-model-parallel-size 2 "
         "--pipeline-model-parallel-size 2 --num-layers 24 --hidden-size 2048 --num-attention-heads 16 "
         "--seq-length 2048 --max-position-embeddings 2048 --fp16 " +
         flags + " $ds_args\n";
}

TEST_CASE("Megatron-DeepSpeed: the JSON config sets the batch, ZeRO stage and framework", "[launch_script]") {
  absl::StatusOr<hetsim::interop::MegatronImport> m = ImportScript(DeepSpeedScript(
      "{\"train_batch_size\": 64, \"train_micro_batch_size_per_gpu\": 2, \"zero_optimization\": {\"stage\": 1},"
      " \"fp16\": {\"enabled\": true}}",
      "--zero-stage 1"));
  INFO(m.status().message());
  REQUIRE(m.ok());
  // 16 GPUs / (TP 2 x PP 2) = DP 4; hetsim's microbatch = 2 x 4; 64 / 8 = 8 microbatches.
  CHECK(m->plan.stages(0).data_parallel() == 4);
  CHECK(m->plan.micro_batch_size() == 8);
  CHECK(m->plan.global_batch_size() == 64);
  CHECK(m->plan.stages(0).zero_stage() == 1);
  CHECK(m->plan.framework() == hetsim::v1::MEGATRON_DEEPSPEED);
  CHECK(m->plan.framework_off_size() == 0);  // the engine's behaviours are its profile's

  // zero_optimization.reduce_scatter false: average_tensor all-reduces each bucket, so the profile's per-rank
  // reduce calls are switched off; at ZeRO-0 the profile has none to switch off.
  m =
      ImportScript(DeepSpeedScript("{\"train_batch_size\": 64, \"train_micro_batch_size_per_gpu\": 2, "
                                   "\"zero_optimization\": {\"stage\": 1, \"reduce_scatter\": false}}",
                                   ""));
  REQUIRE(m.ok());
  REQUIRE(m->plan.framework_off_size() == 1);
  CHECK(m->plan.framework_off(0) == "zero_reduce_per_rank");
  CHECK(absl::StrContains(absl::StrJoin(m->notes, "\n"), "zero_optimization.reduce_scatter false"));
  m =
      ImportScript(DeepSpeedScript("{\"train_batch_size\": 64, \"train_micro_batch_size_per_gpu\": 2, "
                                   "\"zero_optimization\": {\"stage\": 0, \"reduce_scatter\": false}}",
                                   ""));
  REQUIRE(m.ok());
  CHECK(m->plan.framework_off_size() == 0);

  // The accumulation steps give the batch: 2 x DP 4 x 4 = 32.
  m = ImportScript(DeepSpeedScript("{\"train_micro_batch_size_per_gpu\": 2, \"gradient_accumulation_steps\": 4}", ""));
  REQUIRE(m.ok());
  CHECK(m->plan.global_batch_size() == 32);

  auto refusal = [](const std::string& config, const std::string& flags) {
    absl::StatusOr<hetsim::interop::MegatronImport> r = ImportScript(DeepSpeedScript(config, flags));
    return r.ok() ? std::string() : std::string(r.status().message());
  };
  CHECK(
      absl::StrContains(refusal("{\"train_micro_batch_size_per_gpu\": 2}", "--micro-batch-size 4"),
                        "--micro-batch-size 4 and the DeepSpeed config's train_micro_batch_size_per_gpu 2 contradict"));
  CHECK(absl::StrContains(refusal("{\"train_micro_batch_size_per_gpu\": 2, \"zero_optimization\": {\"stage\": 2}}", ""),
                          "DeepSpeed's pipeline engine runs ZeRO stages 0 and 1 only"));
  CHECK(absl::StrContains(refusal("{\"train_micro_batch_size_per_gpu\": 2, \"zero_optimization\": {\"stage\": 7}}", ""),
                          "zero_optimization.stage: 7 is not 0, 1, 2 or 3"));
  CHECK(absl::StrContains(refusal("{\"train_micro_batch_size_per_gpu\": 2.5}", ""), "must be a whole number"));
  // ZeRO-Offload (Megatron-DeepSpeed's azure/run-1t.sh): refused, not priced in GPU memory.
  CHECK(absl::StrContains(refusal("{\"train_micro_batch_size_per_gpu\": 2, \"zero_optimization\": {\"stage\": 1, "
                                  "\"offload_optimizer\": {\"device\": \"cpu\"}}}",
                                  ""),
                          "zero_optimization.offload_optimizer.device \"cpu\": ZeRO-Offload is not modelled"));
  CHECK(refusal("{\"train_micro_batch_size_per_gpu\": 2, \"zero_optimization\": {\"stage\": 1, "
                "\"offload_param\": {\"device\": \"none\"}}}",
                "")
            .empty());
  CHECK(absl::StrContains(refusal("{\"train_micro_batch_size_per_gpu\": 2,", ""), "not a JSON object"));
  CHECK(absl::StrContains(
      refusal("{\"train_batch_size\": 64, \"train_micro_batch_size_per_gpu\": 2, \"gradient_accumulation_steps\": 3}",
              ""),
      "gradient_accumulation_steps 3 contradict"));
}

TEST_CASE("a script whose launch is out of reach says how to render it", "[launch_script]") {
  absl::StatusOr<hetsim::interop::MegatronFlags> flags =
      hetsim::interop::ParseMegatronLaunchLine("source ./CONFIG.sh\nbash ./SRUN.sh\n", "fig11.sh");
  REQUIRE(!flags.ok());
  CHECK(absl::StrContains(flags.status().message(), "no command of the script runs a Python training script"));
  // The launch is in scripts it runs, which may submit jobs: named, and no advice to run the script.
  CHECK(absl::StrContains(flags.status().message(), "it runs ./CONFIG.sh, ./SRUN.sh, which hetsim does not follow"));
  CHECK_FALSE(absl::StrContains(flags.status().message(), "bash -x"));
  absl::StatusOr<hetsim::interop::MegatronFlags> plain =
      hetsim::interop::ParseMegatronLaunchLine("export NNODES=2\nhostname\n", "job.sh");
  REQUIRE(!plain.ok());
  CHECK(absl::StrContains(plain.status().message(), "bash -x job.sh"));
  // A refusal of a missing value names the variable the script left unset.
  absl::StatusOr<hetsim::interop::MegatronImport> m =
      ImportScript("torchrun --nnodes 2 --nproc_per_node 8 pretrain_gpt.py --num-layers $LAYERS --hidden-size 1024\n");
  REQUIRE(!m.ok());
  CHECK(absl::StrContains(m.status().message(), "\"$LAYERS\""));
  CHECK(absl::StrContains(m.status().message(), "LAYERS is not set in the script"));
}

}  // namespace
