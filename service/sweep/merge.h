// `hetsim sweep-merge`: the outputs of the shards of one sweep (--shard K/N for every K) combined into
// the file a single unsharded run writes: same header, every point once, in point order.
#ifndef HETSIM_SERVICE_SWEEP_MERGE_H_
#define HETSIM_SERVICE_SWEEP_MERGE_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "service/sweep/row.h"

namespace hetsim::sweep {

// What the merged file must be when the sweep is known: this header and exactly `total` points whose
// rows start with Key(point). Without it, the merge checks that the shards agree on the header and
// that the points they hold are 0..n-1 with none twice (a shard that lost its last rows goes unseen).
struct MergeExpectation {
  const RowFormatter* formatter = nullptr;
  int64_t total = 0;
};

// The merged contents of `shards` (format from `format`); InvalidArgument naming the shard file and
// line for a header that differs, a line that is not a row, an incomplete last line, a point in two
// shards or a point missing.
absl::StatusOr<std::string> MergeSweepShards(RowFormat format, const std::vector<std::string>& shards,
                                             const MergeExpectation* expect);

}  // namespace hetsim::sweep

#endif  // HETSIM_SERVICE_SWEEP_MERGE_H_
