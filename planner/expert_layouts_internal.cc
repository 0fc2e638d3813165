#include "planner/expert_layouts_internal.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/units.h"

namespace hetsim::planner {

bool ExpertLayoutsNest(const std::vector<std::pair<int, int>>& layouts) {
  std::pair<int, int> finest = {1, 1};
  for (const std::pair<int, int>& l : layouts) {
    if (l.first * l.second > finest.first * finest.second) finest = l;
  }
  return std::all_of(layouts.begin(), layouts.end(), [&](const std::pair<int, int>& l) {
    return l.first > 0 && l.second > 0 && finest.first % l.first == 0 && finest.second % l.second == 0;
  });
}

std::vector<std::pair<int, int>> ExpertLayoutsOfType(const workload::ModelCost& model, int gpus_per_node) {
  const int experts = static_cast<int>(model.num_experts());
  std::vector<std::pair<int, int>> out;
  if (experts <= 1) return out;
  int largest = 1;
  for (int ep = 1; ep <= experts; ep *= 2) {
    if (experts % ep != 0) continue;
    out.emplace_back(ep, 1);
    largest = ep;
  }
  for (int etp = 2; etp <= gpus_per_node; etp *= 2) {
    if (model.expert_ffn_hidden_size() % static_cast<uint64_t>(etp) == 0) out.emplace_back(largest, etp);
  }
  return out;
}

namespace {

std::string LayoutText(std::pair<int, int> l) { return absl::StrFormat("EP %d x ETP %d", l.first, l.second); }

// What a layout tried for one type gave against the best so far.
enum class Tried { kFaster, kSlower, kNone };

}  // namespace

std::optional<PipelinesCandidate> SearchExpertLayouts(const workload::ModelCost& model,
                                                      const std::vector<TypeNodes>& types,
                                                      const PriceExpertLayouts& price) {
  const int experts = static_cast<int>(model.num_experts());
  if (experts <= 1) return price({});
  const auto every_type_at = [&](std::pair<int, int> layout) {
    TypeExpertLayouts out;
    for (const TypeNodes& t : types) out[t.gpu_type] = layout;
    return out;
  };
  std::optional<PipelinesCandidate> best;
  // 1. One layout for every type: ETP 1, EP ascending while a larger one prices faster.
  std::optional<std::pair<int, Time>> runner_up;  // another EP tried and its iteration
  int uniform_last = experts;                     // the largest EP step 1 priced (planned every type at)
  for (int ep = 1; ep <= experts; ep *= 2) {
    if (experts % ep != 0) continue;
    std::optional<PipelinesCandidate> c = price(every_type_at({ep, 1}));
    if (!c) continue;
    if (best && c->iteration >= best->iteration) {
      runner_up = std::make_pair(ep, c->iteration);
      uniform_last = ep;
      break;  // a larger EP that prices no faster ends the search
    }
    if (best) runner_up = std::make_pair(best->expert_layouts.begin()->second.first, best->iteration);
    best = std::move(c);
    best->expert_layouts = every_type_at({ep, 1});
  }
  const std::optional<std::pair<int, Time>> uniform =
      best ? std::make_optional(std::make_pair(best->expert_layouts.begin()->second.first, best->iteration))
           : std::nullopt;
  // 2. Each type at its own layouts, the others kept, one pass over the types.
  TypeExpertLayouts current = best ? best->expert_layouts : every_type_at({1, 1});
  const auto try_layout = [&](const std::string& type, std::pair<int, int> layout) {
    TypeExpertLayouts next = current;
    next[type] = layout;
    std::vector<std::pair<int, int>> holders;
    for (const TypeNodes& t : types) holders.push_back(next[t.gpu_type]);
    if (!ExpertLayoutsNest(holders)) return Tried::kNone;
    std::optional<PipelinesCandidate> c = price(next);
    if (!c) return Tried::kNone;
    if (best && c->iteration >= best->iteration) return Tried::kSlower;
    best = std::move(c);
    best->expert_layouts = next;
    current = std::move(next);
    return Tried::kFaster;
  };
  for (const TypeNodes& t : types) {
    const std::vector<std::pair<int, int>> layouts = ExpertLayoutsOfType(model, t.gpus_per_node);
    int largest = 1;
    for (const auto& [ep, etp] : layouts) largest = std::max(largest, ep);
    bool reached = false;  // the type's EP ascent got to the largest EP
    for (const auto& [ep, etp] : layouts) {
      if (etp > 1) break;
      reached = ep == largest;
      if (current[t.gpu_type] == std::make_pair(ep, etp)) continue;
      // EPs step 1 planned are priced all (no DP run); beyond them, while each prices faster.
      if (try_layout(t.gpu_type, {ep, etp}) == Tried::kSlower && ep > uniform_last) break;
    }
    for (const auto& [ep, etp] : layouts) {
      if (!reached || etp == 1 || current[t.gpu_type] == std::make_pair(ep, etp)) continue;
      if (try_layout(t.gpu_type, {ep, etp}) == Tried::kSlower) break;
    }
  }
  if (!best) return best;
  const bool one_layout = std::all_of(types.begin(), types.end(), [&](const TypeNodes& t) {
    return best->expert_layouts.at(t.gpu_type) == std::make_pair(uniform ? uniform->first : 0, 1);
  });
  if (one_layout) {
    best->expert_why = runner_up
                           ? absl::StrFormat("EP %d x ETP 1 on every stage, %.3f ms at EP %d", uniform->first,
                                             TimeToMilliseconds(runner_up->second), runner_up->first)
                           : absl::StrFormat("EP %d x ETP 1 on every stage, the only EP that fits", uniform->first);
    return best;
  }
  std::vector<std::string> per_type;
  for (const TypeNodes& t : types) {
    per_type.push_back(absl::StrFormat("%s at %s", t.gpu_type, LayoutText(best->expert_layouts.at(t.gpu_type))));
  }
  best->expert_why = absl::StrFormat("experts per GPU type: %s (%s)", absl::StrJoin(per_type, ", "),
                                     uniform ? absl::StrFormat("%.3f ms at EP %d x ETP 1 on every stage",
                                                               TimeToMilliseconds(uniform->second), uniform->first)
                                             : "no one EP x ETP 1 fits every type");
  return best;
}

}  // namespace hetsim::planner
