// Runs a sweep: the points of one shard on N worker threads, rows written in point order as soon as
// every earlier point is done, so the output is byte-identical whatever N is and a kill leaves a
// resumable prefix (sweep_output.h).
#ifndef HETSIM_SERVICE_SWEEP_RUNNER_H_
#define HETSIM_SERVICE_SWEEP_RUNNER_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "service/sweep/point.h"
#include "service/sweep/row.h"
#include "service/sweep/space.h"

namespace hetsim::sweep {

struct SweepJob {
  std::string sweep_path;
  std::string output_path;          // empty: standard output (no --resume)
  std::optional<RowFormat> format;  // default: from the output's extension
  int jobs = 1;                     // worker threads, >= 1
  bool resume = false;
  Shard shard;            // default 0/1: every point
  bool progress = false;  // a progress line on stderr
  // Written by the caller after the run (sweep --html): checked with the rows file before anything
  // runs, so that a page over an input or in a missing folder leaves no rows behind.
  std::string html_path;
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

// Every point of `sweep` on `jobs` threads, as messages in point order (the rows' content with each
// point's whole report; the Python package's `hetsim.sweep`). `name` is the sweep's file (or the
// name of a message in memory): errors name it, and the files the sweep names are relative to its
// folder (the working directory for a bare name).
absl::StatusOr<hetsim::v1::SweepResult> RunSweepToMessage(const hetsim::v1::Sweep& sweep, const std::string& name,
                                                          int jobs, const PointEvaluator& evaluator);

// Receives evaluated points in point order, one call at a time.
class PointSink {
 public:
  virtual ~PointSink() = default;
  virtual absl::Status Write(int64_t point, const absl::StatusOr<hetsim::v1::Report>& result) = 0;
};

// Evaluates `points` (point numbers, ascending) from index `first` on, on `jobs` threads, and hands
// each result to `sink` in order; `first` points were done before (they count in the progress line).
struct SweepRunContext {
  const SweepSpace* space;
  const SweepBase* base;
  const PointEvaluator* evaluator;
};
absl::StatusOr<SweepOutcome> RunSweepPoints(const SweepRunContext& context, const std::vector<int64_t>& points,
                                            int64_t first, PointSink* sink, int jobs, bool progress);

}  // namespace hetsim::sweep

#endif  // HETSIM_SERVICE_SWEEP_RUNNER_H_
