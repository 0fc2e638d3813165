// The progress line a sweep prints on stderr when stderr is a terminal: points done of total, rate and
// an estimate of the time left, redrawn in place at most ten times a second.
#ifndef HETSIM_SERVICE_SWEEP_PROGRESS_H_
#define HETSIM_SERVICE_SWEEP_PROGRESS_H_

#include <cstdint>

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace hetsim::sweep {

class SweepProgress {
 public:
  // `enabled` false makes every call a no-op. `already` rows were done before this run (--resume);
  // the rate counts only points run now.
  SweepProgress(bool enabled, int64_t total, int64_t already);
  void Update(int64_t done);  // rows written so far, `already` included
  void Finish(int64_t done);  // final redraw and a newline

 private:
  void Draw(int64_t done);

  bool enabled_;
  int64_t total_;
  int64_t already_;
  absl::Time start_;
  absl::Time last_draw_ = absl::InfinitePast();
};

// True when standard error is a terminal.
bool StderrIsTerminal();

}  // namespace hetsim::sweep

#endif  // HETSIM_SERVICE_SWEEP_PROGRESS_H_
