#include "service/driver/run_replan.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/counted.h"
#include "base/wall_limit.h"
#include "service/driver/replan.h"

namespace hetsim::driver {

absl::Status AddReplan(const proto::PlanInputs& inputs, const hetsim::v1::Faults& faults,
                       const RunReplanOptions& options, hetsim::v1::Report* report) {
  absl::StatusOr<planner::PlannerKind> kind = planner::ParsePlannerKind(options.planner);
  if (!kind.ok()) return absl::InvalidArgumentError(absl::StrCat("--replan: ", kind.status().message()));
  driver::ReplanRequest request;
  request.original = inputs;
  request.planner = *kind;
  request.failed = driver::FailedTargetsOf(faults);
  if (request.failed.empty()) {
    return absl::InvalidArgumentError("--replan: no FAIL fault to re-plan after (give one with --fault or --faults)");
  }
  request.network_mode = options.network_mode;
  request.max_events = options.max_events;
  request.max_wall_seconds = options.max_wall_seconds;
  request.record_wall_time = options.record_wall_time;
  planner::ProfileCache cache;
  absl::StatusOr<double> primed = driver::PrimeProfileCache(inputs, *kind, /*threads=*/0, &cache);
  if (!primed.ok()) {
    return absl::Status(primed.status().code(),
                        absl::StrCat("--replan: planning the fault-free cluster: ", primed.status().message()));
  }
  request.cache = &cache;
  absl::StatusOr<driver::ReplanOutcome> out = driver::Replan(request);
  if (!out.ok()) return Prefixed(out.status(), "--replan: ");
  *report->mutable_replan() = std::move(out->summary);
  return absl::OkStatus();
}

std::string FormatReplan(const hetsim::v1::ReplanReport& r) {
  std::string out = absl::StrFormat("re-planned (%s) on the %s left", r.planner(), Counted(r.num_gpus(), "GPU"));
  if (r.replan_wall_s() > 0) absl::StrAppendFormat(&out, " in %.2f s", r.replan_wall_s());
  absl::StrAppendFormat(&out, ": %s\n", r.plan_summary());
  absl::StrAppendFormat(&out,
                        "re-planned iteration %.3f ms, %.1f tokens/s, %.3f samples/s: %.1f%% of the fault-free "
                        "throughput\n",
                        r.iteration_time_ms(), r.tokens_per_s(), r.samples_per_s(), 100 * r.throughput_ratio());
  if (r.throughput_ratio() > 1) out += "(the running plan was slower than what the planner finds even on fewer GPUs)\n";
  return out;
}

}  // namespace hetsim::driver
