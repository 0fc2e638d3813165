#include "service/sweep/progress.h"

#include <unistd.h>

#include <cstdio>

namespace hetsim::sweep {

SweepProgress::SweepProgress(bool enabled, int64_t total, int64_t already)
    : enabled_(enabled), total_(total), already_(already), start_(absl::Now()) {}

void SweepProgress::Update(int64_t done) {
  if (!enabled_) return;
  const absl::Time now = absl::Now();
  if (now - last_draw_ < absl::Milliseconds(100)) return;
  last_draw_ = now;
  Draw(done);
}

void SweepProgress::Finish(int64_t done) {
  if (!enabled_) return;
  Draw(done);
  std::fputc('\n', stderr);
}

void SweepProgress::Draw(int64_t done) {
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start_);
  const double rate = seconds > 0 ? static_cast<double>(done - already_) / seconds : 0;
  const double percent = total_ > 0 ? 100.0 * static_cast<double>(done) / static_cast<double>(total_) : 100.0;
  if (rate > 0) {
    std::fprintf(stderr, "\rsweep: %lld/%lld points (%.0f%%), %.1f points/s, %.0f s left   ",
                 static_cast<long long>(done), static_cast<long long>(total_), percent, rate,
                 static_cast<double>(total_ - done) / rate);
  } else {
    std::fprintf(stderr, "\rsweep: %lld/%lld points (%.0f%%)   ", static_cast<long long>(done),
                 static_cast<long long>(total_), percent);
  }
  std::fflush(stderr);
}

bool StderrIsTerminal() { return ::isatty(STDERR_FILENO) == 1; }

}  // namespace hetsim::sweep
