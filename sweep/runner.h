// Runs a sweep: the points of one shard on N worker threads, rows written in point order as soon as
// every earlier point is done, so the output is byte-identical whatever N is and a kill leaves a
// resumable prefix (sweep_output.h).
#ifndef HETSIM_SWEEP_RUNNER_H_
#define HETSIM_SWEEP_RUNNER_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "sweep/point.h"
#include "sweep/row.h"
#include "sweep/space.h"

namespace hetsim::sweep {

struct SweepJob {
  std::string sweep_path;
  std::string output_path;  // empty: standard output (no --resume)
  std::optional<RowFormat> format;  // default: from the output's extension
  int jobs = 1;              // worker threads, >= 1
  bool resume = false;
  Shard shard;               // default 0/1: every point
  bool progress = false;     // a progress line on stderr
};

struct SweepOutcome {
  int64_t total_points = 0;  // in the whole sweep (after the filter)
  int64_t shard_points = 0;  // in this shard
  int64_t resumed = 0;       // rows already in the file
  int64_t evaluated = 0;     // points run now
  int64_t failed = 0;        // of those, rows whose status is not ok
};

// Loads and checks the sweep and its inputs (InvalidArgument naming file and field, before any
// point runs), opens or resumes the output and evaluates the missing points of the shard.
absl::StatusOr<SweepOutcome> RunSweep(const SweepJob& job, const PointEvaluator& evaluator);

// The same on inputs already loaded; `points` are point numbers in ascending order and `rows_done`
// of them already have their rows in `out`.
struct SweepRunContext {
  const SweepSpace* space;
  const SweepBase* base;
  const PointEvaluator* evaluator;
  const RowFormatter* formatter;
};
absl::StatusOr<SweepOutcome> RunSweepPoints(const SweepRunContext& context, const std::vector<int64_t>& points,
                                            int64_t rows_done, class RowFile* out, int jobs, bool progress);

}  // namespace hetsim::sweep

#endif  // HETSIM_SWEEP_RUNNER_H_
