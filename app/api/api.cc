#include "app/api/api.h"

#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "app/cli/gpu_list.h"
#include "base/collective_op.h"
#include "base/status_macros.h"
#include "planner/planner.h"
#include "proto/any_message.h"
#include "proto/gpu_presets.h"
#include "proto/inputs.h"
#include "proto/io.h"
#include "proto/summary.h"
#include "proto/validate_cluster.h"
#include "proto/validate_model.h"
#include "service/driver/check_file.h"
#include "service/driver/collective_command.h"
#include "service/driver/simulate.h"
#include "service/evaluation/validate_predictions.h"
#include "service/planning/plan_command.h"
#include "service/sweep/evaluator.h"
#include "service/sweep/runner.h"
#include "sim/collectives/simulate.h"
#include "sim/network/network.h"

namespace hetsim::api {
namespace {

namespace v1 = hetsim::v1;

absl::Status ParseInput(const Input& in, google::protobuf::Message* m) {
  if (in.is_path) return proto::Load(in.path, m);
  return proto::ParseMessage(in.bytes, proto::FileFormat::kBinary, in.name, m);
}

absl::StatusOr<v1::Cluster> LoadClusterInput(const Input& in) {
  if (in.is_path) return proto::LoadCluster(in.path);
  v1::Cluster c;
  HETSIM_RETURN_IF_ERROR(ParseInput(in, &c));
  HETSIM_RETURN_IF_ERROR(proto::ValidateCluster(c, in.name));
  HETSIM_RETURN_IF_ERROR(proto::ApplyGpuPresets(&c, in.name));
  return c;
}

// A plan from a file resolves its model_path against its folder; one from memory against the working
// directory.
absl::StatusOr<proto::PlanInputs> LoadPlanInput(const Input& plan, const Input& cluster) {
  if (plan.is_path && cluster.is_path) return proto::LoadPlanInputs(plan.path, cluster.path);
  proto::PlanInputs in;
  in.plan_path = plan.is_path ? plan.path : plan.name;
  in.cluster_path = cluster.is_path ? cluster.path : cluster.name;
  HETSIM_ASSIGN_OR_RETURN(in.cluster, LoadClusterInput(cluster));
  HETSIM_RETURN_IF_ERROR(ParseInput(plan, &in.plan));
  const std::string& model_path = in.plan.model_path();
  HETSIM_RETURN_IF_ERROR(
      proto::ReadModelAndValidate(in, plan.is_path ? proto::ResolveRelativeTo(plan.path, model_path) : model_path));
  return in;
}

absl::StatusOr<std::string> Serialize(const google::protobuf::Message& m) {
  std::string out;
  if (!m.SerializeToString(&out)) return absl::InternalError("cannot serialize the result");
  return out;
}

}  // namespace

absl::StatusOr<std::string> Run(const Input& plan, const Input& cluster, const RunOptions& options) {
  HETSIM_ASSIGN_OR_RETURN(sim::NetworkMode mode, sim::ParseNetworkMode(options.network));
  HETSIM_ASSIGN_OR_RETURN(proto::PlanInputs inputs, LoadPlanInput(plan, cluster));
  driver::SimulateOptions simulate;
  simulate.network_mode = mode;
  simulate.ideal = options.ideal;
  simulate.max_events = options.max_events;
  simulate.max_wall_seconds = options.max_wall_seconds;
  HETSIM_ASSIGN_OR_RETURN(v1::Report report, driver::SimulateReport(inputs, simulate));
  return Serialize(report);
}

absl::StatusOr<std::string> Plan(const Input& model_in, const Input& cluster_in, const PlanOptions& options) {
  planning::PlanCommand command;
  command.planner_name = options.planner;
  command.cp_comm_type = options.cp_comm_type;
  command.prediction = options.prediction;
  planner::PlanRequest& req = command.request;
  req.layers = options.layers;
  req.global_batch_size = options.global_batch_size;
  req.micro_batch_size = options.micro_batch_size;
  req.threads = options.threads;
  req.context_parallel = options.context_parallel;
  req.grad_reduce_in_fp32 = options.grad_reduce_in_fp32;
  HETSIM_RETURN_IF_ERROR(planning::CheckPlanCommand(command));
  HETSIM_RETURN_IF_ERROR(ParseInput(model_in, &command.inputs.model));
  HETSIM_RETURN_IF_ERROR(proto::ValidateModel(command.inputs.model, model_in.is_path ? model_in.path : model_in.name));
  HETSIM_ASSIGN_OR_RETURN(command.inputs.cluster, LoadClusterInput(cluster_in));
  HETSIM_ASSIGN_OR_RETURN(driver::Planned planned, planning::PlanWith(command));
  return Serialize(planned.plan);
}

absl::StatusOr<std::string> Validate(const std::vector<Input>& plans, const Input& cluster, bool chart) {
  std::vector<proto::PlanInputs> inputs;
  for (const Input& p : plans) {
    HETSIM_ASSIGN_OR_RETURN(proto::PlanInputs in, LoadPlanInput(p, cluster));
    inputs.push_back(std::move(in));
  }
  HETSIM_ASSIGN_OR_RETURN(v1::PlanValidationReport report, evaluation::ValidatePredictions(inputs, {.chart = chart}));
  return Serialize(report);
}

absl::StatusOr<std::string> Collective(const Input& cluster_in, const CollectiveOptions& options) {
  sim::CollectiveRequest req;
  HETSIM_ASSIGN_OR_RETURN(req.op, ParseCollectiveOp(options.op));
  HETSIM_ASSIGN_OR_RETURN(req.algorithm, sim::ParseAlgorithm(options.algorithm));
  HETSIM_ASSIGN_OR_RETURN(sim::NetworkMode mode, sim::ParseNetworkMode(options.network));
  HETSIM_ASSIGN_OR_RETURN(v1::Cluster cluster, LoadClusterInput(cluster_in));
  HETSIM_ASSIGN_OR_RETURN(req.gpus, app::GpuIdsOf(options.gpus, "gpus"));
  HETSIM_ASSIGN_OR_RETURN(driver::CollectiveSession session,
                          driver::CollectiveSession::Open({.cluster = std::move(cluster),
                                                           .cluster_file = cluster_in.name,
                                                           .ideal = options.ideal,
                                                           .request = req,
                                                           .mode = mode}));
  HETSIM_ASSIGN_OR_RETURN(sim::CollectiveResult r, session.Simulate(options.bytes));
  return Serialize(driver::CollectiveReportOf(session.request(), r));
}

absl::StatusOr<std::string> Sweep(const Input& sweep, int jobs) {
  v1::Sweep message;
  HETSIM_RETURN_IF_ERROR(ParseInput(sweep, &message));
  sweep::SimulationEvaluator evaluator;
  HETSIM_ASSIGN_OR_RETURN(
      v1::SweepResult result,
      sweep::RunSweepToMessage(message, sweep.is_path ? sweep.path : sweep.name, jobs > 0 ? jobs : 1, evaluator));
  return Serialize(result);
}

absl::StatusOr<std::string> Check(const Input& file, const std::string& type, const Input* cluster) {
  std::optional<proto::MessageType> t;
  if (!type.empty()) {
    HETSIM_ASSIGN_OR_RETURN(proto::MessageType parsed, proto::MessageTypeFromName(type));
    t = parsed;
  }
  if (cluster != nullptr && !cluster->is_path && (file.is_path || t != proto::MessageType::kPlan)) {
    return absl::InvalidArgumentError(
        "cluster: only a plan in memory is checked against a cluster in memory; "
        "pass the cluster's file");
  }
  if (file.is_path) {
    HETSIM_ASSIGN_OR_RETURN(proto::AnyMessage m, proto::LoadAnyMessage(file.path, t));
    driver::Checked c = driver::CheckOne(m, file.path, cluster != nullptr ? cluster->path : "");
    if (!c.status.ok()) return c.status;
    return c.summary;
  }
  // A message in memory: its type is the caller's (the binding passes the message's own type); the
  // summary is the one its file would get.
  if (!t) return absl::InvalidArgumentError(absl::StrCat(file.name, ": the message type is required"));
  if (*t == proto::MessageType::kCluster) {
    HETSIM_ASSIGN_OR_RETURN(v1::Cluster c, LoadClusterInput(file));
    return proto::SummarizeCluster(c, file.name);
  }
  if (*t == proto::MessageType::kPlan) {
    if (cluster == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(file.name, ": a plan is checked against a cluster"));
    }
    HETSIM_ASSIGN_OR_RETURN(proto::PlanInputs in, LoadPlanInput(file, *cluster));
    return absl::StrCat(proto::SummarizeModel(in.model, in.model_path.empty() ? file.name : in.model_path),
                        proto::SummarizePlan(in));
  }
  proto::AnyMessage m{*t, proto::NewMessage(*t)};
  HETSIM_RETURN_IF_ERROR(ParseInput(file, m.message.get()));
  driver::Checked c = driver::CheckOne(m, file.name, cluster != nullptr ? cluster->path : "");
  if (!c.status.ok()) return c.status;
  return c.summary;
}

}  // namespace hetsim::api
