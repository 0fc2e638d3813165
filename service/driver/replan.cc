#include "service/driver/replan.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "base/wall_limit.h"
#include "proto/framework_profile.h"
#include "proto/resolve.h"
#include "proto/validate_plan.h"
#include "service/driver/simulate.h"
#include "sim/pipeline/schedule.h"

namespace hetsim::driver {
namespace {

absl::StatusOr<hetsim::v1::Report> SimulateOnce(const proto::PlanInputs& inputs, const ReplanRequest& request) {
  SimulateOptions options;
  options.network_mode = request.network_mode;
  options.max_events = request.max_events;
  options.max_wall_seconds = request.max_wall_seconds;
  return SimulateReport(inputs, options);
}

// The Plan fields the re-plan decides: what the planner searched and writes (the model inline, as it
// plans it; no prediction of the running plan). Every other field is the running plan's, carried as it
// is, so that a field added to Plan is carried without a line here.
constexpr const char* kReplannedFields[] = {
    "name",           "model",  "model_path", "micro_batch_size", "schedule",     "h1f1b_epsilon",
    "virtual_stages", "stages", "prediction", "context_parallel", "cp_comm_type", "virtual_stage_layers",
    "pipelines"};

}  // namespace

hetsim::v1::Plan ReplannedPlan(const hetsim::v1::Plan& running, hetsim::v1::Plan planned) {
  hetsim::v1::Plan next = running;
  std::vector<const google::protobuf::FieldDescriptor*> fields;
  for (const char* name : kReplannedFields) fields.push_back(hetsim::v1::Plan::descriptor()->FindFieldByName(name));
  next.GetReflection()->SwapFields(&next, &planned, fields);
  // Only a sharded optimizer gathers: the new plan keeps the overlap if it still shards one.
  next.set_overlap_param_gather(running.overlap_param_gather() && proto::ShardsOptimizer(next));
  // DeepSpeed's TrainSchedule is a 1F1B of its own warm-ups and one model chunk a stage: the running
  // plan's rendezvous carries over to a re-plan of that schedule only (validate_plan.cc).
  next.set_p2p_rendezvous(running.p2p_rendezvous() && proto::FollowsTrainSchedule(next));
  return next;
}

PlannerMessages ReplanMessages(const proto::PlanInputs& inputs) {
  PlannerMessages m{.model = inputs.model, .cluster = inputs.cluster};
  if (inputs.plan.has_tp_comm_overlap_config()) m.tp_comm_overlap_config = inputs.plan.tp_comm_overlap_config();
  return m;
}

planner::PlanRequest ReplanSettings(const proto::PlanInputs& inputs, planner::PlannerKind kind, int threads) {
  planner::PlanRequest r;
  r.planner = kind;
  r.global_batch_size = inputs.plan.global_batch_size();
  r.context_parallel = static_cast<int>(proto::ContextParallel(inputs.plan));  // what the plan's memory relies on
  // Every cost-model switch of the running plan (its TP overlap settings resolved from the messages).
  static_cast<spec::CostSwitches&>(r) = proto::ResolvePlan(inputs.plan, inputs.plan_path);
  r.epsilon = proto::H1f1bEpsilon(inputs.plan);
  r.threads = threads;
  r.name = absl::StrFormat("%s-replanned-%s", inputs.plan.name().empty() ? "plan" : inputs.plan.name(),
                           planner::PlannerName(kind));
  return r;
}

absl::StatusOr<planner::PlanRequest> ReplanPlanRequest(const proto::PlanInputs& inputs, planner::PlannerKind kind,
                                                       int threads) {
  return ResolvePlanRequest(ReplanMessages(inputs), ReplanSettings(inputs, kind, threads));
}

absl::StatusOr<double> PrimeProfileCache(const proto::PlanInputs& inputs, planner::PlannerKind kind, int threads,
                                         planner::ProfileCache* cache) {
  HETSIM_ASSIGN_OR_RETURN(planner::PlanRequest r, ReplanPlanRequest(inputs, kind, threads));
  r.profile_cache = cache;
  HETSIM_ASSIGN_OR_RETURN(planner::PlanOutcome outcome, planner::MakePlan(r));
  return outcome.planning_seconds;
}

std::string PlanSummary(const hetsim::v1::Plan& plan) {
  std::vector<std::string> stages;
  for (const hetsim::v1::Stage& s : plan.stages()) {
    std::string stage =
        absl::StrFormat("L%d-%d %s %dx%d@%d", s.first_layer(), s.first_layer() + s.num_layers() - 1, s.mesh().island(),
                        s.mesh().node_count(), s.mesh().gpus_per_node(), s.mesh().first_node());
    if (s.mesh().first_gpu() != 0) absl::StrAppendFormat(&stage, ".%d", s.mesh().first_gpu());
    absl::StrAppendFormat(&stage, " tp%d dp%d", proto::TensorParallel(s), proto::DataParallel(s));
    stages.push_back(std::move(stage));
  }
  return absl::StrFormat("%s, mbs %d, %d stages: %s", pipeline::ScheduleName(proto::ScheduleKindOf(plan.schedule())),
                         plan.micro_batch_size(), plan.stages_size(), absl::StrJoin(stages, "; "));
}

absl::StatusOr<ReplanOutcome> Replan(const ReplanRequest& request) {
  ReplanOutcome out;
  absl::StatusOr<driver::SurvivingCluster> surviving =
      driver::BuildSurvivingCluster(request.original.cluster, request.failed);
  if (!surviving.ok()) return surviving.status();
  out.surviving = *std::move(surviving);

  out.fault_free_samples_per_s = request.fault_free_samples_per_s;
  if (out.fault_free_samples_per_s <= 0) {
    HETSIM_ASSIGN_OR_RETURN(hetsim::v1::Report fault_free, SimulateOnce(request.original, request));
    out.fault_free_samples_per_s = fault_free.samples_per_s();
  }

  PlannerMessages messages = ReplanMessages(request.original);
  messages.cluster = out.surviving.cluster;
  planner::PlanRequest settings = ReplanSettings(request.original, request.planner, request.threads);
  settings.profile_cache = request.cache;
  absl::StatusOr<planner::PlanRequest> plan_request = ResolvePlanRequest(messages, settings);
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<planner::PlanOutcome> planned =
      plan_request.ok() ? planner::MakePlan(*plan_request) : plan_request.status();
  out.planning_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!planned.ok()) {
    return Prefixed(planned.status(), absl::StrFormat("re-planning on the %d GPUs left: ", out.surviving.num_gpus));
  }
  out.profile = planned->profile;

  proto::PlanInputs& next = out.replanned;
  next.cluster = out.surviving.cluster;
  next.cluster_path = "the surviving cluster";
  next.model = PlannedModel(messages, *planned);
  // The model inline: the plan stands alone.
  next.plan = ReplannedPlan(request.original.plan, PlanMessageOf(planned->plan, messages, *planned));
  next.plan_path = "the re-planned plan";
  if (absl::Status s = proto::ValidatePlanInputs(next); !s.ok()) {
    return absl::InternalError(absl::StrFormat("the re-planned plan is not valid: %s", s.message()));
  }
  absl::StatusOr<hetsim::v1::Report> report = SimulateOnce(next, request);
  if (!report.ok()) return report.status();
  out.report = *std::move(report);

  hetsim::v1::ReplanReport& r = out.summary;
  r.set_planner(std::string(planner::PlannerName(request.planner)));
  r.set_num_gpus(static_cast<uint32_t>(out.surviving.num_gpus));
  if (request.record_wall_time) r.set_replan_wall_s(out.planning_seconds);
  r.set_iteration_time_ms(out.report.iteration_time_ms());
  r.set_tokens_per_s(out.report.tokens_per_s());
  r.set_samples_per_s(out.report.samples_per_s());
  r.set_plan_summary(PlanSummary(next.plan));
  if (out.fault_free_samples_per_s > 0)
    r.set_throughput_ratio(out.report.samples_per_s() / out.fault_free_samples_per_s);
  return out;
}

}  // namespace hetsim::driver
