#include "planner/layers_internal.h"

#include <algorithm>

namespace hetsim::planner {

using workload::LayerKind;

spec::ModelSpec RefineGranularity(const spec::ModelSpec& model, int target_layers) {
  spec::ModelSpec refined = model;
  if (!model.transformer || model.transformer->granularity != spec::Granularity::kBlock) return refined;
  if (target_layers > workload::ModelCost::Create(model).num_layers()) {
    refined.transformer->granularity = spec::Granularity::kSublayer;
  }
  return refined;
}

namespace {

std::vector<LayerGroup> OnePerLayer(int n) {
  std::vector<LayerGroup> groups;
  for (int i = 0; i < n; ++i) groups.push_back({i, 1});
  return groups;
}

// Cuts [first, first + count) into `parts` contiguous groups whose sizes differ by at most one unit of
// `period` model layers (the repeated module), larger groups first.
void SplitEvenly(int first, int count, int parts, int period, std::vector<LayerGroup>& out) {
  const int units = count / period;
  const int remainder = count % period;  // leftover layers go to the last group
  parts = std::clamp(parts, 1, std::max(1, units));
  int at = first;
  for (int p = 0; p < parts; ++p) {
    int size = (units / parts + (p < units % parts ? 1 : 0)) * period;
    if (p == parts - 1) size += remainder;
    if (size == 0) continue;
    out.push_back({at, size});
    at += size;
  }
}

std::vector<LayerGroup> Structural(const workload::ModelCost& cost, int target) {
  const int n = cost.num_layers();
  int body_first = 0, body_end = n;
  if (n > 0 && cost.layer(0).kind == LayerKind::kEmbedding) body_first = 1;
  if (n > body_first && cost.layer(n - 1).kind == LayerKind::kHead) body_end = n - 1;
  const int period = (body_end > body_first && cost.layer(body_first).kind == LayerKind::kAttention) ? 2 : 1;
  std::vector<LayerGroup> groups;
  if (body_first == 1) groups.push_back({0, 1});
  const int fixed = (body_first == 1 ? 1 : 0) + (body_end < n ? 1 : 0);
  if (body_end > body_first) SplitEvenly(body_first, body_end - body_first, target - fixed, period, groups);
  if (body_end < n) groups.push_back({n - 1, 1});
  return groups;
}

std::vector<LayerGroup> Balanced(const workload::ModelCost& cost, int target) {
  const int n = cost.num_layers();
  double total = 0;
  for (int i = 0; i < n; ++i) total += cost.layer(i).forward_flop_per_sample;
  std::vector<LayerGroup> groups;
  int first = 0;
  double acc = 0;
  for (int i = 0; i < n; ++i) {
    acc += cost.layer(i).forward_flop_per_sample;
    const int made = static_cast<int>(groups.size());
    const int needed_after = target - made - 1;  // groups still to open after closing this one
    if (needed_after <= 0) continue;             // the last group takes the rest
    const int left = n - i - 1;
    if (acc >= total * (made + 1) / target || left == needed_after) {
      groups.push_back({first, i - first + 1});
      first = i + 1;
    }
  }
  if (first < n) groups.push_back({first, n - first});
  return groups;
}

}  // namespace

std::vector<LayerGroup> BuildPlannerLayers(const workload::ModelCost& cost, int target_layers,
                                           LayerConstruction construction) {
  const int n = cost.num_layers();
  if (target_layers <= 0 || target_layers >= n) return OnePerLayer(n);
  if (construction == LayerConstruction::kBalanced) return Balanced(cost, target_layers);
  return Structural(cost, target_layers);
}

}  // namespace hetsim::planner
