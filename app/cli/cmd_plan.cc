// `hetsim plan --model M --cluster C [--planner hapt|tangram|megatron|alpa] [--layers N]
//  [--global-batch B] [--micro-batch b] [--context-parallel N] [--grad-reduce-in-fp32] [--alternative K]
//  [--prediction hetsim|naive] [--out plan.pbtxt]`: plans a model on a cluster and writes a
// Plan that `hetsim run` accepts.
#include <cstdio>
#include <filesystem>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "app/cli/cli.h"
#include "planner/plan_table.h"
#include "planner/planner.h"
#include "proto/inputs.h"
#include "proto/output_files.h"
#include "proto/validate_cluster.h"
#include "proto/validate_plan.h"
#include "service/planning/plan_command.h"

namespace hetsim::cli {
namespace {

const CommandInfo kPlanInfo = {
    "plan",
    "hetsim plan --model M --cluster C [--planner hapt|tangram|megatron|alpa] [--layers N] [--global-batch B] "
    "[--micro-batch b] [--context-parallel N] [--cp-comm-type p2p|all_gather|a2a] [--grad-reduce-in-fp32] "
    "[--alternative K] "
    "[--prediction hetsim|naive] [--max-wall-seconds S] "
    "[--out PLAN]",
    "Finds a parallel plan (stages, layers, meshes, TP/DP/ZeRO/recompute, schedule and warm-up counts)\n"
    "for the model on the cluster with the chosen planner, prints it with its predicted iteration time\n"
    "and the planning time, and writes it to --out (format from the extension; the model is referenced\n"
    "by a path relative to the plan, or carried inline when the planner refined its granularity).\n"
    "--layers sets the planner's layer count (hapt: more than the model's blocks switches to attention/MLP\n"
    "halves; alpa: default 8). --context-parallel splits every sequence over N GPUs (Megatron's CP; 0 searches\n"
    "the powers of two up to 16 that the sequence allows); --cp-comm-type how it moves K and V (Megatron's\n"
    "--cp-comm-type: p2p, the ring hidden behind the attention, the default; all_gather, exposed all-gathers\n"
    "and reduce-scatters; a2a, exposed all-to-alls of a head split; Plan.cp_comm_type). --grad-reduce-in-fp32 prices "
    "FP32 gradient buffers\n"
    "and reductions (Plan.grad_reduce_in_fp32: Megatron-LM's BF16 runs; 18 bytes of model state a parameter\n"
    "of a 16-bit model instead of 16)\n"
    "and writes the field. --alternative K writes the search's K-th best plan instead (1 = the best).\n"
    "--prediction stores a prediction in the plan (Plan.prediction) for `hetsim validate`: hetsim's own\n"
    "cost model, or the naive one (FLOPs over peak, free communication). Exit code 2 when nothing fits.\n"
    "--max-wall-seconds S stops the search and exits 2 once it has run S seconds (checked between the\n"
    "searches of each micro-batch size, CP degree and expert layout; 0 = no limit); nothing is written."};

int Plan(const Args& args) {
  po::options_description options("options");
  std::string model_path, cluster_path, planner_name = "hapt", out, name;
  std::string prediction, cp_comm_type = "p2p";
  int layers = 0, threads = 0, alternative = 1, context_parallel = 1;
  uint64_t global_batch = 128, micro_batch = 0, max_micro_batch = 16;
  double epsilon = proto::kDefaultH1f1bEpsilon, gap = 0, max_wall_seconds = 0;
  bool no_pruning = false, fp32_gradients = false, no_mixed = false, no_pipelines = false;
  options.add_options()("model,m", po::value(&model_path)->required()->value_name("M"), "model file")(
      "cluster,c", po::value(&cluster_path)->required()->value_name("C"), "cluster file")(
      "planner,p", po::value(&planner_name)->value_name("P"), "hapt (default), tangram, megatron or alpa")(
      "layers,l", po::value(&layers)->value_name("N"), "planner layers (0 = planner default)")(
      "global-batch,b", po::value(&global_batch)->value_name("B"), "samples per iteration (default 128)")(
      "micro-batch", po::value(&micro_batch)->value_name("b"), "samples per microbatch (default: searched)")(
      "context-parallel", po::value(&context_parallel)->value_name("N"),
      "context-parallel degree of every stage (default 1; 0 = searched)")(
      "cp-comm-type", po::value(&cp_comm_type)->value_name("T"), "p2p (default), all_gather or a2a")(
      "grad-reduce-in-fp32", po::bool_switch(&fp32_gradients), "FP32 gradients (Plan.grad_reduce_in_fp32)")(
      "max-micro-batch", po::value(&max_micro_batch)->value_name("b"), "largest micro-batch searched (default 16)")(
      "threads,j", po::value(&threads)->value_name("N"), "search threads (default: all cores)")(
      "epsilon", po::value(&epsilon)->value_name("E"), "H-1F1B epsilon of Eq. 2 (default 0.01)")(
      "t-max-gap", po::value(&gap)->value_name("R"), "skip t_max candidates within this ratio (default 0: exact)")(
      "no-pruning", po::bool_switch(&no_pruning), "evaluate every t_max candidate")(
      "no-mixed-replicas", po::bool_switch(&no_mixed),
      "hapt: keep every stage inside one island (do not search mixed replica groups)")(
      "no-pipelines", po::bool_switch(&no_pipelines),
      "hapt: one pipeline only (do not search pipelines per GPU type, Plan.pipelines)")(
      "name", po::value(&name)->value_name("NAME"), "plan name")(
      "alternative", po::value(&alternative)->value_name("K"), "write the K-th best plan (default 1)")(
      "prediction", po::value(&prediction)->value_name("hetsim|naive"), "store a prediction in the plan")(
      "max-wall-seconds", po::value(&max_wall_seconds)->value_name("S"), "stop and exit 2 after S seconds")(
      "out,o", po::value(&out)->value_name("PLAN"), "write the plan here");
  po::positional_options_description positional;
  po::variables_map vm;
  if (auto exit = ParseCommandLine(kPlanInfo, args, options, positional, &vm)) return *exit;
  planning::PlanCommand command;
  command.planner_name = planner_name;
  command.cp_comm_type = cp_comm_type;
  command.alternative = alternative;
  command.prediction = prediction;
  planner::PlanRequest& req = command.request;
  req.layers = layers;
  req.global_batch_size = global_batch;
  req.micro_batch_size = micro_batch;
  req.max_micro_batch_size = max_micro_batch;
  req.context_parallel = context_parallel;
  req.grad_reduce_in_fp32 = fp32_gradients;
  req.threads = threads;
  req.epsilon = epsilon;
  req.t_max_relative_gap = gap;
  req.bidirectional_pruning = !no_pruning;
  req.search_mixed_replicas = !no_mixed;
  req.search_pipelines = !no_pipelines;
  req.name = name;
  req.max_wall_seconds = max_wall_seconds;
  if (absl::Status s = planning::CheckPlanCommand(command); !s.ok()) return UsageError(kPlanInfo, s.message());

  absl::StatusOr<hetsim::v1::Model> model = proto::LoadModel(proto::Source::File(model_path));
  if (!model.ok()) return ReportFailure(kPlanInfo, model.status());
  absl::StatusOr<hetsim::v1::Cluster> cluster = proto::LoadCluster(cluster_path);
  if (!cluster.ok()) return ReportFailure(kPlanInfo, cluster.status());
  command.inputs.model = *std::move(model);
  command.inputs.cluster = *cluster;
  command.inputs.cluster_path = cluster_path;
  if (!out.empty()) {
    namespace fs = std::filesystem;
    const fs::path dir = fs::absolute(fs::path(out)).parent_path();
    command.inputs.model_path = fs::absolute(fs::path(model_path)).lexically_relative(dir).string();
  }
  absl::StatusOr<driver::Planned> planned = planning::PlanWith(command);
  if (!planned.ok()) {
    const absl::Status& s = planned.status();
    return planning::IsUsageError(s) ? UsageError(kPlanInfo, s.message()) : ReportFailure(kPlanInfo, s);
  }
  std::fputs(planner::RenderPlanOutcome(planned->outcome, cluster->name()).c_str(), stdout);
  if (!out.empty()) {
    if (absl::Status s = proto::SaveOutputFile(out, planned->plan, {model_path, cluster_path}); !s.ok()) {
      return ReportFailure(kPlanInfo, s);
    }
    std::printf("wrote %s\n", out.c_str());
  }
  return kExitOk;
}

}  // namespace

int RunPlan(const Args& args) {
  return RunGuarded(kPlanInfo, [&] { return Plan(args); });
}

}  // namespace hetsim::cli
