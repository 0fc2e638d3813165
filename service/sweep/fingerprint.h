// A sweep's fingerprint: 16 hex digits that every row of its output carries (column
// `sweep_fingerprint`), so that `sweep-merge` and `sweep --resume` refuse rows of another sweep even
// when the axes agree (another base plan or cluster, another filter, another point count).
#ifndef HETSIM_SERVICE_SWEEP_FINGERPRINT_H_
#define HETSIM_SERVICE_SWEEP_FINGERPRINT_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "proto/hetsim.pb.h"
#include "service/sweep/space.h"

namespace hetsim::sweep {

// CRC-64/XZ of the deterministic binary serialisation of the sweep, of the files it names as loaded
// (cluster, model, plan or planner settings, planner) and of the point count. Depends only on those
// values: not on the sweep file's path or encoding, the shard, the machine or the run.
std::string SweepFingerprint(const hetsim::v1::Sweep& sweep, const SweepBase& base, int64_t points);

// True when `text` has a fingerprint's form (16 lowercase hex digits).
bool IsSweepFingerprint(absl::string_view text);

}  // namespace hetsim::sweep

#endif  // HETSIM_SERVICE_SWEEP_FINGERPRINT_H_
