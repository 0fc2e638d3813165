// `hetsim check` on one file: validate a cluster, model, plan (against a cluster), sweep (and its base
// inputs) or faults file (against a cluster) and summarise it. The CLI and the Python API's check().
#ifndef HETSIM_SERVICE_DRIVER_CHECK_FILE_H_
#define HETSIM_SERVICE_DRIVER_CHECK_FILE_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "proto/any_message.h"
#include "proto/inputs.h"

namespace hetsim::driver {

struct Checked {
  std::string summary;
  absl::Status status;  // the file's problems, one "<file>: <field path>: <problem>" line each
};

// `m` was read from `file` (a file, or a message in memory); `cluster` is null when no cluster is known
// (plans and faults then fail).
Checked CheckOne(const proto::AnyMessage& m, const proto::Source& file, const proto::Source* cluster);
inline Checked CheckOne(const proto::AnyMessage& m, const std::string& path, const std::string& cluster_path) {
  const proto::Source cluster = proto::Source::File(cluster_path);
  return CheckOne(m, proto::Source::File(path), cluster_path.empty() ? nullptr : &cluster);
}

// `hetsim check FILES`: every file read (as `type` when set) and, once all are read, each checked in
// order: plans and faults against `cluster_path`, or when none is named against the one cluster among
// the files (with several, each plan and faults file fails asking for --cluster).
struct CheckedFiles {
  std::vector<absl::Status> unreadable;  // the files that did not load, in order
  std::vector<Checked> checked;          // the others, in order
  std::string cluster_path;              // the cluster plans were checked against ("": none)
};
CheckedFiles CheckFiles(const std::vector<std::string>& files, std::optional<proto::MessageType> type,
                        std::string cluster_path);

}  // namespace hetsim::driver

#endif  // HETSIM_SERVICE_DRIVER_CHECK_FILE_H_
