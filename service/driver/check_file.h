// `hetsim check` on one file: validate a cluster, model, plan (against a cluster), sweep (and its base
// inputs) or faults file (against a cluster) and summarise it. The CLI and the Python API's check().
#ifndef HETSIM_SERVICE_DRIVER_CHECK_FILE_H_
#define HETSIM_SERVICE_DRIVER_CHECK_FILE_H_

#include <string>

#include "absl/status/status.h"
#include "proto/any_message.h"

namespace hetsim::driver {

struct Checked {
  std::string summary;
  absl::Status status;  // the file's problems, one "<file>: <field path>: <problem>" line each
};

// `m` was loaded from `path`; `cluster_path` is "" when no cluster is known (plans and faults then fail).
Checked CheckOne(const proto::AnyMessage& m, const std::string& path, const std::string& cluster_path);

}  // namespace hetsim::driver

#endif  // HETSIM_SERVICE_DRIVER_CHECK_FILE_H_
