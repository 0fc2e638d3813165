// Re-planning after a failure (`hetsim run --fault ... --replan [PLANNER]`): the planner plans again on
// what survives (service/driver/surviving_cluster.h), reusing the stage profiles it priced for the original
// cluster (planner/profile_cache.h), and the new plan is simulated for one iteration (service/driver/simulate.h).
// It lives in the driver, above the planner, because it simulates: the planner itself never does.
//
//   planner::ProfileCache cache;
//   PrimeProfileCache(inputs, planner::PlannerKind::kHapt, 0, &cache);  // what the first planning run priced
//   ReplanRequest r{.original = inputs, .failed = FailedTargetsOf(faults), .cache = &cache};
//   absl::StatusOr<ReplanOutcome> out = Replan(r);
//   out->summary;  // ReplanReport: GPUs left, re-plan wall time, new throughput, ratio to fault-free
#ifndef HETSIM_SERVICE_DRIVER_REPLAN_H_
#define HETSIM_SERVICE_DRIVER_REPLAN_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "planner/planner.h"
#include "planner/profile_cache.h"
#include "proto/hetsim.pb.h"
#include "proto/inputs.h"
#include "service/driver/plan_messages.h"
#include "service/driver/surviving_cluster.h"
#include "sim/network/network.h"

namespace hetsim::driver {

struct ReplanRequest {
  proto::PlanInputs original;  // validated: cluster (presets applied), model, the plan that was running
  planner::PlannerKind planner = planner::PlannerKind::kHapt;
  driver::FailedTargets failed;
  planner::ProfileCache* cache = nullptr;  // profiles of earlier planning runs of this model; may be null
  int threads = 0;                         // planner threads, 0 = hardware concurrency (the plan does not depend on it)
  network::NetworkMode network_mode = network::NetworkMode::kMaxMinFair;
  uint64_t max_events = 0;  // per simulation, as hetsim run's limits (0 = none)
  double max_wall_seconds = 0;
  // Samples/s of the original plan without faults, when the caller already simulated it (0 = simulate).
  double fault_free_samples_per_s = 0;
  bool record_wall_time = true;  // false: replan_wall_s stays 0 (byte-identical reports)
};

struct ReplanOutcome {
  driver::SurvivingCluster surviving;
  proto::PlanInputs replanned;  // the surviving cluster, the planner's model and plan, validated
  hetsim::v1::Report report;    // the new plan's iteration, simulated
  hetsim::v1::ReplanReport summary;
  double fault_free_samples_per_s = 0;
  planner::ProfilerStats profile;  // the re-plan's profiler: cache_hits against stage_mesh_pairs priced anew
  double planning_seconds = 0;     // wall time of the re-plan alone (also when record_wall_time is false)
};

// The re-planned plan: the running plan with the fields the re-plan decides (its stages, schedule,
// micro-batch size, CP, pipelines, the model it plans, no prediction) taken from `planned`, the
// planner's. Every other field is carried; overlap_param_gather while the new plan still shards an
// optimizer, p2p_rendezvous while its schedule is DeepSpeed's (1F1B, implicit warm-ups, one chunk).
hetsim::v1::Plan ReplannedPlan(const hetsim::v1::Plan& running, hetsim::v1::Plan planned);

// What `hetsim run --replan` plans with for `inputs`: its model and the running plan's TP-overlap
// settings (the model inline in the new plan), and the search's settings: the plan's global batch
// size, CP and H-1F1B epsilon, micro-batch size searched. The same for the first plan and the re-plan.
PlannerMessages ReplanMessages(const proto::PlanInputs& inputs);
planner::PlanRequest ReplanSettings(const proto::PlanInputs& inputs, planner::PlannerKind kind, int threads);
// Both, resolved: the planner's request for `inputs`' own cluster.
absl::StatusOr<planner::PlanRequest> ReplanPlanRequest(const proto::PlanInputs& inputs, planner::PlannerKind kind,
                                                       int threads);

// Plans `inputs`' cluster as the first planning run would, filling `cache`; returns its wall seconds.
absl::StatusOr<double> PrimeProfileCache(const proto::PlanInputs& inputs, planner::PlannerKind kind, int threads,
                                         planner::ProfileCache* cache);

// InvalidArgument for a failed target that does not exist; FailedPrecondition when nothing survives or
// the model fits nowhere on what does; run limits as the executor reports them.
absl::StatusOr<ReplanOutcome> Replan(const ReplanRequest& request);

// "H-1F1B, mbs 2, 3 stages: L0-7 a100 1x2@0 tp2; L8-13 a100 1x2@1 tp1 dp2; ..." (meshes as
// nodes x GPUs @ first node).
std::string PlanSummary(const hetsim::v1::Plan& plan);

}  // namespace hetsim::driver

#endif  // HETSIM_SERVICE_DRIVER_REPLAN_H_
