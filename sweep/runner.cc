#include "sweep/runner.h"

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "proto/io.h"
#include "proto/validate_sweep.h"
#include "sweep/output.h"
#include "sweep/progress.h"

namespace hetsim::sweep {
namespace {

// Hands out points to workers and writes finished rows in point order. A worker may run ahead of the
// first unwritten row by at most `window` points, which bounds the rows held in memory when one
// point is slow.
class OrderedWriter {
 public:
  OrderedWriter(const SweepRunContext& c, const std::vector<int64_t>& points, int64_t rows_done, RowFile* out,
                int jobs, SweepProgress* progress)
      : c_(c), points_(points), out_(out), progress_(progress), next_claim_(rows_done), next_write_(rows_done),
        window_(static_cast<int64_t>(jobs) * 4 + 16) {}

  void Work() {
    for (;;) {
      int64_t i = 0;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [&] { return Finished() || next_claim_ < next_write_ + window_; });
        if (Finished()) return;
        i = next_claim_++;
      }
      const int64_t point = points_[static_cast<size_t>(i)];
      const absl::StatusOr<hetsim::v1::Report> result = EvaluatePoint(*c_.space, *c_.base, point, *c_.evaluator);
      std::string row = c_.formatter->Row(point, result);
      const bool failed = !result.ok() || result->oom();
      std::lock_guard<std::mutex> lock(mu_);
      failed_ += failed ? 1 : 0;
      pending_.emplace(i, std::move(row));
      for (auto it = pending_.find(next_write_); it != pending_.end() && error_.ok(); it = pending_.find(next_write_)) {
        error_ = out_->Append(it->second);
        pending_.erase(it);
        ++next_write_;
        progress_->Update(next_write_);
      }
      cv_.notify_all();
    }
  }

  int64_t written() const { return next_write_; }
  int64_t failed() const { return failed_; }
  const absl::Status& error() const { return error_; }

 private:
  bool Finished() const { return !error_.ok() || next_claim_ >= static_cast<int64_t>(points_.size()); }

  const SweepRunContext& c_;
  const std::vector<int64_t>& points_;
  RowFile* out_;
  SweepProgress* progress_;
  std::mutex mu_;
  std::condition_variable cv_;
  int64_t next_claim_;
  int64_t next_write_;
  const int64_t window_;
  absl::flat_hash_map<int64_t, std::string> pending_;  // looked up by index only, never iterated
  int64_t failed_ = 0;
  absl::Status error_;
};

}  // namespace

absl::StatusOr<SweepOutcome> RunSweepPoints(const SweepRunContext& context, const std::vector<int64_t>& points,
                                            int64_t rows_done, RowFile* out, int jobs, bool progress) {
  const int64_t n = static_cast<int64_t>(points.size());
  SweepProgress bar(progress, n, rows_done);
  OrderedWriter writer(context, points, rows_done, out, std::max(jobs, 1), &bar);
  const int threads = static_cast<int>(std::min<int64_t>(std::max(jobs, 1), std::max<int64_t>(n - rows_done, 1)));
  if (threads <= 1) {
    writer.Work();
  } else {
    std::vector<std::thread> pool;
    pool.reserve(threads);
    for (int t = 0; t < threads; ++t) pool.emplace_back([&writer] { writer.Work(); });
    for (std::thread& t : pool) t.join();
  }
  bar.Finish(writer.written());
  if (!writer.error().ok()) return writer.error();
  SweepOutcome outcome;
  outcome.shard_points = n;
  outcome.resumed = rows_done;
  outcome.evaluated = writer.written() - rows_done;
  outcome.failed = writer.failed();
  return outcome;
}

absl::StatusOr<SweepOutcome> RunSweep(const SweepJob& job, const PointEvaluator& evaluator) {
  HETSIM_ASSIGN_OR_RETURN(hetsim::v1::Sweep sweep, proto::LoadAs<hetsim::v1::Sweep>(job.sweep_path));
  HETSIM_RETURN_IF_ERROR(proto::ValidateSweep(sweep, job.sweep_path));
  HETSIM_ASSIGN_OR_RETURN(SweepBase base, LoadSweepBase(sweep, job.sweep_path));
  HETSIM_ASSIGN_OR_RETURN(SweepSpace space, SweepSpace::Create(sweep, job.sweep_path, base));
  if (job.resume && job.output_path.empty()) {
    return absl::InvalidArgumentError("--resume needs an output file (-o FILE)");
  }
  const RowFormat format = job.format.value_or(RowFormatForPath(job.output_path));
  const RowFormatter formatter(format, space);
  const std::vector<int64_t> points = ShardPoints(space.size(), job.shard);

  int64_t rows_done = 0;
  absl::StatusOr<std::unique_ptr<RowFile>> out;
  if (job.resume) {
    const RowFile::RowCheck check = [&](int64_t k, absl::string_view row) -> absl::Status {
      if (k >= static_cast<int64_t>(points.size())) {
        return absl::InvalidArgumentError(
            absl::StrFormat("this sweep (shard %d/%d) has only %d points", job.shard.index, job.shard.count, points.size()));
      }
      const std::string key = formatter.Key(points[static_cast<size_t>(k)]);
      if (!absl::StartsWith(row, key)) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "expected the row of point %d starting \"%s\": the file comes from another sweep or shard",
            points[static_cast<size_t>(k)], key));
      }
      return absl::OkStatus();
    };
    out = RowFile::Resume(job.output_path, formatter.Header(), check, &rows_done);
  } else {
    out = RowFile::Create(job.output_path, formatter.Header());
  }
  if (!out.ok()) return out.status();
  const SweepRunContext context{&space, &base, &evaluator, &formatter};
  HETSIM_ASSIGN_OR_RETURN(SweepOutcome outcome, RunSweepPoints(context, points, rows_done, out->get(), job.jobs, job.progress));
  HETSIM_RETURN_IF_ERROR((*out)->Close());
  outcome.total_points = space.size();
  return outcome;
}

}  // namespace hetsim::sweep
