#include "service/sweep/runner.h"

#include <algorithm>
#include <condition_variable>
#include <mutex>

#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "base/threads.h"
#include "proto/io.h"
#include "proto/output_files.h"
#include "proto/validate_sweep.h"
#include "service/sweep/output_internal.h"
#include "service/sweep/progress.h"

namespace hetsim::sweep {
namespace {

// Hands out points to workers and passes finished points to the sink in point order. A worker may
// run ahead of the first unwritten point by at most `window` points, which bounds the results held in
// memory when one point is slow.
class OrderedWriter {
 public:
  OrderedWriter(const SweepRunContext& c, const std::vector<int64_t>& points, int64_t first, PointSink* sink, int jobs,
                SweepProgress* progress)
      : c_(c),
        points_(points),
        sink_(sink),
        progress_(progress),
        next_claim_(first),
        next_write_(first),
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
      absl::StatusOr<hetsim::v1::Report> result = EvaluatePoint(*c_.space, *c_.base, point, *c_.evaluator);
      const bool failed = !result.ok() || result->oom();
      std::lock_guard<std::mutex> lock(mu_);
      failed_ += failed ? 1 : 0;
      pending_.emplace(i, std::move(result));
      for (auto it = pending_.find(next_write_); it != pending_.end() && error_.ok(); it = pending_.find(next_write_)) {
        error_ = sink_->Write(points_[static_cast<size_t>(next_write_)], it->second);
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
  PointSink* sink_;
  SweepProgress* progress_;
  std::mutex mu_;
  std::condition_variable cv_;
  int64_t next_claim_;
  int64_t next_write_;
  const int64_t window_;
  // Looked up by index only, never iterated.
  absl::flat_hash_map<int64_t, absl::StatusOr<hetsim::v1::Report>> pending_;
  int64_t failed_ = 0;
  absl::Status error_;
};

// Rows in a file, CSV or JSON Lines (service/sweep/output_internal.h).
class RowFileSink : public PointSink {
 public:
  RowFileSink(const RowFormatter* formatter, RowFile* out) : formatter_(formatter), out_(out) {}
  absl::Status Write(int64_t point, const absl::StatusOr<hetsim::v1::Report>& result) override {
    return out_->Append(formatter_->Row(point, result));
  }

 private:
  const RowFormatter* formatter_;
  RowFile* out_;
};

// SweepPointResult messages.
class MessageSink : public PointSink {
 public:
  MessageSink(const SweepSpace* space, hetsim::v1::SweepResult* out) : space_(space), out_(out) {}
  absl::Status Write(int64_t point, const absl::StatusOr<hetsim::v1::Report>& result) override {
    hetsim::v1::SweepPointResult* p = out_->add_points();
    p->set_point(point);
    const std::vector<const AxisValue*> values = space_->Values(point);
    for (size_t a = 0; a < values.size(); ++a) {
      hetsim::v1::SweepAxisValue* v = p->add_axis_values();
      v->set_path(space_->axes()[a].path);
      v->set_value(values[a]->text);
    }
    p->set_status(PointStatusName(result));
    if (result.ok()) {
      *p->mutable_report() = *result;
      if (result->oom()) p->set_message(OomMessage(*result));
    } else {
      p->set_message(std::string(result.status().message()));
    }
    return absl::OkStatus();
  }

 private:
  const SweepSpace* space_;
  hetsim::v1::SweepResult* out_;
};

// The rows file and the page may not overwrite the sweep or a file it names (`sweep s.pbtxt -o s.pbtxt`
// truncated its own sweep), nor each other; the page's folder must exist before any point runs.
absl::Status CheckOutputs(const SweepJob& job, const SweepBase& base) {
  const proto::OutputFiles inputs({job.sweep_path, base.cluster_path, base.model_path, base.plan_path});
  if (!job.output_path.empty()) HETSIM_RETURN_IF_ERROR(inputs.Check(job.output_path));
  if (!job.html_path.empty()) {
    HETSIM_RETURN_IF_ERROR(inputs.Check(job.html_path));
    if (job.html_path == job.output_path) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: named for both the rows and the page; choose another name", job.html_path));
    }
  }
  return absl::OkStatus();
}

struct LoadedSweep {
  hetsim::v1::Sweep sweep;
  SweepBase base;
  SweepSpace space;
};

// `path` names the sweep in errors; the files it names are relative to its folder.
absl::StatusOr<LoadedSweep> CheckSweep(hetsim::v1::Sweep sweep, const std::string& path) {
  HETSIM_RETURN_IF_ERROR(proto::ValidateSweep(sweep, path));
  HETSIM_ASSIGN_OR_RETURN(SweepBase base, LoadSweepBase(sweep, path));
  HETSIM_ASSIGN_OR_RETURN(SweepSpace space, SweepSpace::Create(sweep, path, base));
  return LoadedSweep{std::move(sweep), std::move(base), std::move(space)};
}

absl::StatusOr<LoadedSweep> LoadSweep(const std::string& path) {
  HETSIM_ASSIGN_OR_RETURN(hetsim::v1::Sweep sweep, proto::LoadAs<hetsim::v1::Sweep>(path));
  return CheckSweep(std::move(sweep), path);
}

// Points run at once: checked before anything is read or written.
absl::Status CheckJobs(int jobs) {
  if (jobs > kMaxWorkerThreads) {
    return absl::InvalidArgumentError(
        absl::StrFormat("--jobs: %d is more than %d, the most threads hetsim starts", jobs, kMaxWorkerThreads));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<SweepOutcome> RunSweepPoints(const SweepRunContext& context, const std::vector<int64_t>& points,
                                            int64_t first, PointSink* sink, int jobs, bool progress) {
  const int64_t n = static_cast<int64_t>(points.size());
  SweepProgress bar(progress, n, first);
  OrderedWriter writer(context, points, first, sink, std::max(jobs, 1), &bar);
  const int threads = static_cast<int>(std::min<int64_t>(std::max(jobs, 1), std::max<int64_t>(n - first, 1)));
  RunOnThreads(threads, [&writer](int) { writer.Work(); });
  bar.Finish(writer.written());
  if (!writer.error().ok()) return writer.error();
  SweepOutcome outcome;
  outcome.shard_points = n;
  outcome.resumed = first;
  outcome.evaluated = writer.written() - first;
  outcome.failed = writer.failed();
  return outcome;
}

absl::StatusOr<SweepOutcome> RunSweep(const SweepJob& job, const PointEvaluator& evaluator) {
  HETSIM_RETURN_IF_ERROR(CheckJobs(job.jobs));
  HETSIM_ASSIGN_OR_RETURN(LoadedSweep loaded, LoadSweep(job.sweep_path));
  const SweepSpace& space = loaded.space;
  if (job.resume && job.output_path.empty()) {
    return absl::InvalidArgumentError("--resume needs an output file (-o FILE)");
  }
  HETSIM_RETURN_IF_ERROR(CheckOutputs(job, loaded.base));
  const RowFormat format = job.format.value_or(RowFormatForPath(job.output_path));
  const RowFormatter formatter(format, space);
  const std::vector<int64_t> points = ShardPoints(space.size(), job.shard);

  int64_t rows_done = 0;
  absl::StatusOr<std::unique_ptr<RowFile>> out;
  if (job.resume) {
    const RowFile::RowCheck check = [&](int64_t k, absl::string_view row) -> absl::Status {
      if (k >= static_cast<int64_t>(points.size())) {
        return absl::InvalidArgumentError(absl::StrFormat("this sweep (shard %d/%d) has only %d points",
                                                          job.shard.index, job.shard.count, points.size()));
      }
      const std::string key = formatter.Key(points[static_cast<size_t>(k)]);
      if (!absl::StartsWith(row, key)) {
        return absl::InvalidArgumentError(
            absl::StrFormat("expected the row of point %d starting \"%s\": the file comes from another sweep or shard",
                            points[static_cast<size_t>(k)], key));
      }
      return formatter.CheckFingerprint(row);
    };
    out = RowFile::Resume(job.output_path, formatter.Header(), check, &rows_done);
  } else {
    out = RowFile::Create(job.output_path, formatter.Header());
  }
  if (!out.ok()) return out.status();
  const SweepRunContext context{&space, &loaded.base, &evaluator};
  RowFileSink sink(&formatter, out->get());
  HETSIM_ASSIGN_OR_RETURN(SweepOutcome outcome,
                          RunSweepPoints(context, points, rows_done, &sink, job.jobs, job.progress));
  HETSIM_RETURN_IF_ERROR((*out)->Close());
  outcome.total_points = space.size();
  return outcome;
}

absl::StatusOr<hetsim::v1::SweepResult> RunSweepToMessage(const hetsim::v1::Sweep& sweep, const std::string& name,
                                                          int jobs, const PointEvaluator& evaluator) {
  HETSIM_RETURN_IF_ERROR(CheckJobs(jobs));
  HETSIM_ASSIGN_OR_RETURN(LoadedSweep loaded, CheckSweep(sweep, name));
  hetsim::v1::SweepResult result;
  result.set_name(loaded.sweep.name());
  MessageSink sink(&loaded.space, &result);
  const SweepRunContext context{&loaded.space, &loaded.base, &evaluator};
  HETSIM_RETURN_IF_ERROR(
      RunSweepPoints(context, ShardPoints(loaded.space.size(), Shard{}), 0, &sink, jobs, false).status());
  return result;
}

}  // namespace hetsim::sweep
