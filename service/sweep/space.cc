#include "service/sweep/space.h"

#include <cmath>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "base/status_macros.h"
#include "proto/inputs.h"
#include "proto/io.h"
#include "proto/limits.h"
#include "service/sweep/fingerprint.h"

namespace hetsim::sweep {
namespace {

namespace pb = google::protobuf;
using hetsim::v1::Sweep;
using hetsim::v1::SweepAxis;
using Root = SweepAxisBinding::Root;

absl::Status AxisError(absl::string_view file, int axis, absl::string_view field, absl::string_view problem) {
  return absl::InvalidArgumentError(absl::StrFormat("%s: axes[%d].%s: %s", file, axis, field, problem));
}

// The values an axis lists or its range spans, canonical, without repeats.
absl::StatusOr<std::vector<AxisValue>> AxisValues(const SweepAxis& axis, const pb::FieldDescriptor* field,
                                                  absl::string_view file, int a) {
  std::vector<AxisValue> values;
  if (axis.values_size() > 0) {
    for (int k = 0; k < axis.values_size(); ++k) {
      if (field == nullptr) {
        AxisValue v;
        v.text = axis.values(k);
        values.push_back(std::move(v));
        continue;
      }
      absl::StatusOr<AxisValue> v = ParseAxisValue(field, axis.values(k));
      if (!v.ok()) return AxisError(file, a, absl::StrFormat("values[%d]", k), v.status().message());
      values.push_back(*std::move(v));
    }
  } else {
    // from + k * step rather than repeated addition, so 0.1-steps do not drift; the tolerance keeps
    // "to" itself when (to - from) / step is a whole number up to rounding.
    const double span = (axis.to() - axis.from()) / axis.step();
    const int64_t last = static_cast<int64_t>(std::floor(span + 1e-9));
    for (int64_t k = 0; k <= last; ++k) {
      absl::StatusOr<AxisValue> v = NumericAxisValue(field, axis.from() + static_cast<double>(k) * axis.step());
      // The point's own field: "from" blamed for 1e299 = 0 + 1 x step (session 36).
      if (!v.ok()) {
        return AxisError(
            file, a, k == 0 ? "from" : "step",
            k == 0 ? std::string(v.status().message())
                   : absl::StrFormat("point %d of the range (from + %d x step): %s", k, k, v.status().message()));
      }
      values.push_back(*std::move(v));
    }
  }
  for (size_t i = 0; i < values.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (values[i].text == values[j].text) {
        return AxisError(file, a, axis.values_size() > 0 ? absl::StrFormat("values[%d]", i) : "step",
                         absl::StrFormat("%s appears twice", values[i].text));
      }
    }
  }
  return values;
}

}  // namespace

absl::StatusOr<SweepBase> LoadSweepBase(const Sweep& sweep, absl::string_view sweep_path) {
  SweepBase base;
  base.sweep_path = std::string(sweep_path);
  base.cluster_path = proto::ResolveRelativeTo(sweep_path, sweep.cluster_path());
  HETSIM_RETURN_IF_ERROR(proto::Load(base.cluster_path, &base.cluster));
  const bool sweep_model = !sweep.model_path().empty();
  if (sweep_model) {
    base.model_path = proto::ResolveRelativeTo(sweep_path, sweep.model_path());
    HETSIM_RETURN_IF_ERROR(proto::Load(base.model_path, &base.model));
  }
  base.has_plan = !sweep.plan_path().empty();
  base.planner = sweep.planner();
  if (!base.has_plan) return base;
  base.plan_path = proto::ResolveRelativeTo(sweep_path, sweep.plan_path());
  HETSIM_RETURN_IF_ERROR(proto::Load(base.plan_path, &base.plan));
  if (base.plan.has_model()) {
    if (sweep_model) {
      *base.plan.mutable_model() = base.model;  // the sweep's model replaces the inline one
    } else {
      base.model = base.plan.model();
    }
  } else if (!sweep_model && !base.plan.model_path().empty()) {
    base.model_path = proto::ResolveRelativeTo(base.plan_path, base.plan.model_path());
    if (absl::Status s = proto::Load(base.model_path, &base.model); !s.ok()) {
      return absl::Status(s.code(), absl::StrCat(base.plan_path, ": model_path: cannot load \"", base.plan.model_path(),
                                                 "\":\n", s.message()));
    }
  }
  return base;
}

absl::Status CheckSweepAxes(const Sweep& sweep, absl::string_view sweep_path) {
  HETSIM_ASSIGN_OR_RETURN(SweepBase base, LoadSweepBase(sweep, sweep_path));
  return SweepSpace::Create(sweep, sweep_path, base).status();
}

absl::StatusOr<SweepSpace> SweepSpace::Create(const Sweep& sweep, absl::string_view file, const SweepBase& base) {
  SweepSpace space;
  for (int a = 0; a < sweep.axes_size(); ++a) {
    const SweepAxis& axis = sweep.axes(a);
    SweepAxisBinding b;
    b.path = axis.path();
    const pb::FieldDescriptor* field = nullptr;
    if (axis.path() == "planner") {
      if (base.has_plan) return AxisError(file, a, "path", "a \"planner\" axis needs plan_path to be empty");
      b.root = Root::kPlanner;
    } else {
      std::vector<std::string> parts = absl::StrSplit(axis.path(), absl::MaxSplits('.', 1));
      if (parts.size() != 2) return AxisError(file, a, "path", absl::StrFormat("\"%s\" names no field", axis.path()));
      // plan.model.* is the inline model, which model.* already names (and keeps in sync).
      if (parts[0] == "plan" && absl::StartsWith(parts[1], "model.") && base.plan.has_model()) {
        parts = {"model", parts[1].substr(6)};
      }
      const pb::Message* root = nullptr;
      absl::string_view root_file;
      if (parts[0] == "cluster") {
        b.root = Root::kCluster;
        root = &base.cluster;
        root_file = base.cluster_path;
      } else if (parts[0] == "model") {
        if (!base.has_plan && base.model_path.empty()) return AxisError(file, a, "path", "the sweep has no model");
        b.root = Root::kModel;
        root = &base.model;
        root_file = base.model_path.empty() ? base.plan_path : base.model_path;
        space.model_axes_ = true;
      } else if (parts[0] == "plan") {
        b.root = Root::kPlan;
        root = &base.plan;
        root_file = base.has_plan ? absl::string_view(base.plan_path) : "the planner's settings";
        if (parts[1] == "model_path") {
          return AxisError(file, a, "path", "plan.model_path cannot be swept: sweep the model's fields (model.*)");
        }
      } else {
        return AxisError(
            file, a, "path",
            absl::StrFormat("\"%s\" must start with cluster., model. or plan. (or be \"planner\")", axis.path()));
      }
      absl::StatusOr<FieldTarget> target = BindFieldPath(*root, parts[0], parts[1], root_file);
      if (!target.ok()) return AxisError(file, a, "path", target.status().message());
      b.target = *std::move(target);
      field = b.target.field();
    }
    absl::StatusOr<std::vector<AxisValue>> values = AxisValues(axis, field, file, a);
    if (!values.ok()) return values.status();
    if (values->empty()) return AxisError(file, a, "values", "no values");
    b.values = *std::move(values);
    if (static_cast<double>(space.product_size_) * static_cast<double>(b.values.size()) >
        proto::limits::kMaxSweepPoints) {
      return AxisError(file, a, "values",
                       absl::StrFormat("the sweep would have more than %g points", proto::limits::kMaxSweepPoints));
    }
    space.product_size_ *= static_cast<int64_t>(b.values.size());
    space.axes_.push_back(std::move(b));
  }
  std::vector<FilterAxis> filter_axes;
  for (const SweepAxisBinding& b : space.axes_) {
    filter_axes.push_back({b.path, b.root == Root::kPlanner ? nullptr : b.target.field()});
  }
  absl::StatusOr<SweepFilter> filter = SweepFilter::Parse(sweep.filter(), filter_axes);
  if (!filter.ok()) return absl::InvalidArgumentError(absl::StrCat(file, ": filter: ", filter.status().message()));
  if (!sweep.filter().empty()) {
    space.filtered_ = true;
    for (int64_t p = 0; p < space.product_size_; ++p) {
      std::vector<const AxisValue*> values;
      const std::vector<int> c = space.Coordinates(p);
      for (size_t a = 0; a < c.size(); ++a) values.push_back(&space.axes_[a].values[c[a]]);
      if (filter->Accepts(values)) space.kept_.push_back(p);
    }
  }
  space.fingerprint_ = SweepFingerprint(sweep, base, space.size());
  return space;
}

std::vector<int> SweepSpace::Coordinates(int64_t product_index) const {
  std::vector<int> c(axes_.size());
  for (size_t a = axes_.size(); a-- > 0;) {
    const int64_t n = static_cast<int64_t>(axes_[a].values.size());
    c[a] = static_cast<int>(product_index % n);
    product_index /= n;
  }
  return c;
}

std::vector<const AxisValue*> SweepSpace::Values(int64_t point) const {
  const std::vector<int> c = Coordinates(ProductIndex(point));
  std::vector<const AxisValue*> values(c.size());
  for (size_t a = 0; a < c.size(); ++a) values[a] = &axes_[a].values[c[a]];
  return values;
}

void SweepSpace::Apply(int64_t point, SweepBase* in) const {
  const std::vector<int> c = Coordinates(ProductIndex(point));
  for (size_t a = 0; a < c.size(); ++a) {
    const SweepAxisBinding& b = axes_[a];
    const AxisValue& v = b.values[c[a]];
    switch (b.root) {
      case Root::kCluster: ApplyAxisValue(b.target, v, &in->cluster); break;
      case Root::kModel: ApplyAxisValue(b.target, v, &in->model); break;
      case Root::kPlan: ApplyAxisValue(b.target, v, &in->plan); break;
      case Root::kPlanner: in->planner = v.text; break;
    }
  }
  if (model_axes_ && in->plan.has_model()) *in->plan.mutable_model() = in->model;
}

absl::StatusOr<Shard> ParseShard(absl::string_view text) {
  const std::vector<absl::string_view> parts = absl::StrSplit(text, '/');
  Shard shard;
  if (parts.size() != 2 || !absl::SimpleAtoi(parts[0], &shard.index) || !absl::SimpleAtoi(parts[1], &shard.count)) {
    return absl::InvalidArgumentError(absl::StrFormat("--shard \"%s\": expected K/N, e.g. 0/4", text));
  }
  if (shard.count < 1 || shard.index < 0 || shard.index >= shard.count) {
    return absl::InvalidArgumentError(
        absl::StrFormat("--shard \"%s\": K must be in 0..N-1 (shards are numbered from 0) and N at least 1", text));
  }
  return shard;
}

std::vector<int64_t> ShardPoints(int64_t total, const Shard& shard) {
  std::vector<int64_t> points;
  for (int64_t p = shard.index; p < total; p += shard.count) points.push_back(p);
  return points;
}

}  // namespace hetsim::sweep
