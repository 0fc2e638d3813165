// The file a sweep writes as it goes, and the protocol that makes it survive a kill.
//
// Rows are appended strictly in point order (the runner reorders results), each with one write(2) of a
// whole line on a file opened O_APPEND; data is flushed to disk (fdatasync) at most once a second and
// at the end. A process killed at any instant, even by SIGKILL, therefore leaves: the header, then the
// rows of a prefix of its points, then at most one incomplete last line. --resume reads that file,
// checks the header and that row k is the k-th point of this sweep and shard (same point number and
// axis values), cuts the incomplete line off and appends from the first missing point: no row lost,
// none written twice. (A machine crash may additionally lose the last second of rows; they are
// recomputed, never duplicated, because the file is always a prefix.)
#ifndef HETSIM_SERVICE_SWEEP_OUTPUT_INTERNAL_H_
#define HETSIM_SERVICE_SWEEP_OUTPUT_INTERNAL_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace hetsim::sweep {

class RowFile {
 public:
  // Checks the k-th complete row (from 0, without its '\n') of a file being resumed.
  using RowCheck = std::function<absl::Status(int64_t k, absl::string_view row)>;

  // Starts `path` afresh (truncating an existing file) with `header` (may be empty); an empty path
  // writes to standard output.
  static absl::StatusOr<std::unique_ptr<RowFile>> Create(const std::string& path, absl::string_view header);

  // Continues `path`: a missing file, an empty one or one cut inside its header starts afresh; otherwise
  // its first line must be `header` (when not empty), every complete row must pass `check`, and an
  // incomplete last line is removed. `*rows` receives the number of complete rows kept.
  static absl::StatusOr<std::unique_ptr<RowFile>> Resume(const std::string& path, absl::string_view header,
                                                         const RowCheck& check, int64_t* rows);

  ~RowFile();
  RowFile(const RowFile&) = delete;
  RowFile& operator=(const RowFile&) = delete;

  // Appends `line` (ending with '\n') with one write; syncs when the last sync is a second old.
  absl::Status Append(absl::string_view line);
  // Flushes to disk and closes; the destructor closes without the error check.
  absl::Status Close();

 private:
  RowFile(int fd, std::string path, bool owned) : fd_(fd), path_(std::move(path)), owned_(owned) {}
  absl::Status WriteAll(absl::string_view bytes);
  absl::Status Sync();

  int fd_;
  std::string path_;
  bool owned_;
  absl::Time last_sync_ = absl::Now();
};

}  // namespace hetsim::sweep

#endif  // HETSIM_SERVICE_SWEEP_OUTPUT_INTERNAL_H_
