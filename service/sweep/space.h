// The points of a sweep: its base inputs, its axes bound to fields of those inputs, the cartesian
// product of the axis values (first axis slowest, last axis fastest) with the filter applied, and
// the deterministic slices (--shard K/N) of that list.
//
// Everything that can be wrong with an axis (a path that does not exist in the base inputs, an index
// past the end of a list, a value of the wrong type, a filter naming no axis) is found by
// SweepSpace::Create, before any point runs.
#ifndef HETSIM_SERVICE_SWEEP_SPACE_H_
#define HETSIM_SERVICE_SWEEP_SPACE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/hetsim.pb.h"
#include "service/sweep/field_internal.h"
#include "service/sweep/filter_internal.h"

namespace hetsim::sweep {

// A sweep's base inputs as read from disk (the cluster's GPU presets not yet applied, so that an axis
// may change a preset or a field a preset would fill).
struct SweepBase {
  std::string sweep_path;
  hetsim::v1::Cluster cluster;
  std::string cluster_path;
  hetsim::v1::Model model;
  std::string model_path;  // the model's file; empty when the model is inline in the plan
  bool has_plan = false;   // false: each point is planned
  hetsim::v1::Plan plan;   // the plan to simulate; when planning, the planner's settings (plan.* axes)
  std::string plan_path;
  std::string planner;  // when planning: the sweep's planner (a "planner" axis overrides it)
};

// Loads the files a (validated) sweep names, relative to the sweep file's folder. A sweep with a plan
// and a model_path simulates the plan with that model instead of the plan's own.
absl::StatusOr<SweepBase> LoadSweepBase(const hetsim::v1::Sweep& sweep, absl::string_view sweep_path);

// What `hetsim sweep` checks before any point runs, for `hetsim check`: the base inputs load and every
// axis binds to them (SweepSpace::Create's errors).
absl::Status CheckSweepAxes(const hetsim::v1::Sweep& sweep, absl::string_view sweep_path);

struct SweepAxisBinding {
  enum class Root { kCluster, kModel, kPlan, kPlanner };
  std::string path;  // as the sweep writes it; also the axis's column name
  Root root = Root::kCluster;
  FieldTarget target;  // empty for kPlanner
  std::vector<AxisValue> values;
};

class SweepSpace {
 public:
  // Binds the axes of `sweep` (already checked by proto::ValidateSweep) to `base` and enumerates the
  // points. Errors are InvalidArgument "<file>: axes[i].<field>: <problem>".
  static absl::StatusOr<SweepSpace> Create(const hetsim::v1::Sweep& sweep, absl::string_view file,
                                           const SweepBase& base);

  const std::vector<SweepAxisBinding>& axes() const { return axes_; }
  // The sweep's fingerprint (fingerprint.h), written in every row.
  const std::string& fingerprint() const { return fingerprint_; }
  // Points that pass the filter; a point is named by its rank in that list.
  int64_t size() const { return filtered_ ? static_cast<int64_t>(kept_.size()) : product_size_; }
  // The value of every axis at `point`, in axis order.
  std::vector<const AxisValue*> Values(int64_t point) const;
  // `base` with the values of `point` written in (plan.model follows model.* when the model is inline).
  void Apply(int64_t point, SweepBase* inputs) const;

 private:
  std::vector<int> Coordinates(int64_t product_index) const;
  int64_t ProductIndex(int64_t point) const { return filtered_ ? kept_[point] : point; }

  std::vector<SweepAxisBinding> axes_;
  int64_t product_size_ = 1;
  bool filtered_ = false;
  std::vector<int64_t> kept_;  // product indices passing the filter, ascending (when filtered_)
  bool model_axes_ = false;
  std::string fingerprint_;
};

// --shard K/N: the points p of [0, total) with p % N == K, ascending; round robin so that costly
// regions of the space (big clusters at the end of an axis) spread over all shards.
struct Shard {
  int64_t index = 0;  // K, from 0
  int64_t count = 1;  // N
};
absl::StatusOr<Shard> ParseShard(absl::string_view text);  // "K/N"
std::vector<int64_t> ShardPoints(int64_t total, const Shard& shard);

}  // namespace hetsim::sweep

#endif  // HETSIM_SERVICE_SWEEP_SPACE_H_
