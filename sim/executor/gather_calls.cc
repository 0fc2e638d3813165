#include "sim/executor/gather_calls.h"

#include <algorithm>
#include <optional>
#include <string>

#include "absl/strings/str_format.h"
#include "base/check.h"
#include "base/time.h"
#include "sim/pipeline/dag.h"

namespace hetsim::executor {
namespace {

// Whether the compute of virtual stage `vs` gathers (non-tied) range `group`: its layers overlap the range's.
bool PassGathersRange(const LayerRangeGroup& group, const spec::LayerRange& vs) {
  return std::max(group.first_layer, vs.first_layer) <
         std::min(group.first_layer + group.num_layers, vs.first_layer + vs.num_layers);
}

// Whether `g`'s gathers match per call. The tied matrix's copies are not: a pipeline's first and last stage
// both hold one, and the last reaches its k-th call only after the first's k-th pass has ended (a real
// run's collective would hang there); its gathers stay timed as if every copy joined them at once.
bool Matched(const LayerRangeGroup& g) {
  const bool gathers = g.zero_stage == 3 && g.param_bytes > 0 && !g.groups.empty() && g.groups.front().size() > 1;
  return gathers && !g.tied && g.holders.size() > 1;
}

}  // namespace

Time GatherCallOffset(const LayerRangeGroup& group, const VirtualStageCost& vs, bool backward) {
  const int n = vs.num_layers;
  const std::vector<double>& compute = backward ? vs.cost.layer_backward_s : vs.cost.layer_forward_s;
  const std::vector<Time>& gather = backward ? vs.layer_backward_gather_exposed : vs.layer_forward_gather_exposed;
  const Time pass = backward ? vs.cost.backward_time : vs.cost.forward_time;
  const int first = std::max(group.first_layer, vs.first_layer) - vs.first_layer;
  const int last = std::min(group.first_layer + group.num_layers, vs.first_layer + n) - 1 - vs.first_layer;
  Time offset = 0;
  for (int i = backward ? last + 1 : 0; i < (backward ? n : first); ++i) {
    offset += static_cast<int>(compute.size()) == n ? SecondsToTime(compute[i]) : pass / std::max(1, n);
    if (static_cast<int>(gather.size()) == n) offset += gather[i];
  }
  return offset;
}

std::vector<std::vector<std::vector<int>>> MatchedGatherRanges(const std::vector<const ExecutionSetup*>& setups,
                                                               const std::vector<LayerRangeGroup>& groups) {
  std::vector<std::vector<std::vector<int>>> out(setups.size());
  for (size_t p = 0; p < setups.size(); ++p) out[p].resize(setups[p]->dag->num_nodes());
  for (size_t r = 0; r < groups.size(); ++r) {
    const LayerRangeGroup& g = groups[r];
    if (!Matched(g)) continue;
    for (const LayerRangeHolder& h : g.holders) {
      const ExecutionSetup& setup = *setups[h.pipeline];
      for (const pipeline::NodeId id : setup.dag->stage_compute_order()[h.stage]) {
        const spec::LayerRange& vs = setup.virtual_stages[setup.dag->node(id).virtual_stage];
        if (PassGathersRange(g, vs)) out[h.pipeline][id].push_back(static_cast<int>(r));
      }
    }
  }
  return out;
}

GatherCalls::GatherCalls(const std::vector<const ExecutionSetup*>& setups, const std::vector<LayerRangeGroup>& groups) {
  const std::vector<std::vector<std::vector<int>>> matched = MatchedGatherRanges(setups, groups);
  std::vector<int> index(groups.size(), -1);  // a matched range's place in ranges_
  calls_.resize(setups.size());
  for (size_t p = 0; p < setups.size(); ++p) {
    calls_[p].resize(matched[p].size());
    for (size_t id = 0; id < matched[p].size(); ++id) {
      if (matched[p][id].empty()) continue;  // not a pass (a transfer's node has no virtual stage)
      const pipeline::DagNode& node = setups[p]->dag->node(static_cast<pipeline::NodeId>(id));
      const int stage = node.stage;
      const VirtualStageCost& vs = setups[p]->virtual_stages[node.virtual_stage];
      for (const int r : matched[p][id]) {
        if (index[r] < 0) {
          index[r] = static_cast<int>(ranges_.size());
          ranges_.push_back(&groups[r]);
          holders_.emplace_back(groups[r].holders.size());
        }
        const std::vector<LayerRangeHolder>& hs = groups[r].holders;
        const auto it = std::find_if(hs.begin(), hs.end(), [&](const LayerRangeHolder& h) {
          return h.pipeline == static_cast<int>(p) && h.stage == stage;
        });
        const int h = static_cast<int>(it - hs.begin());
        ++holders_[index[r]][h].calls;
        const bool backward = node.kind == pipeline::NodeKind::kBackward;
        calls_[p][id].push_back({index[r], h, 0, GatherCallOffset(groups[r], vs, backward)});
      }
    }
  }
}

std::optional<Time> GatherCalls::StartOf(const Call& c) const {
  Time at = 0;
  for (const Holder& h : holders_[c.range]) {
    if (static_cast<int>(h.made.size()) > c.index) {
      at = std::max(at, h.made[c.index]);
    } else if (h.calls <= c.index && h.done == h.calls) {  // joined: all its passes over the range ended
      at = std::max(at, h.joined);
    } else {
      return std::nullopt;
    }
  }
  return at;
}

bool GatherCalls::Satisfied(const std::vector<Call>& calls, bool first) const {
  return std::all_of(calls.begin(), calls.end(),
                     [&](const Call& c) { return (first && c.offset > 0) || StartOf(c).has_value(); });
}

void GatherCalls::AdmitWaiting(const Admit& admit) {
  // Admitting one may make calls that release another: until none is left to admit.
  for (bool admitted = true; admitted;) {
    admitted = false;
    for (std::vector<std::pair<int, int>>* list : {&waiting_, &ending_}) {
      for (size_t w = 0; w < list->size() && !admitted; ++w) {
        const auto [run, node] = (*list)[w];
        if (!Satisfied(calls_[run][node], list == &waiting_)) continue;
        list->erase(list->begin() + static_cast<std::ptrdiff_t>(w));
        admit(run, node);
        admitted = true;
      }
      if (admitted) break;
    }
  }
}

bool GatherCalls::Ready(int run, int node, Time now, const Admit& admit) {
  std::vector<Call>& calls = calls_[run][node];
  if (calls.empty()) return true;
  for (Call& c : calls) {
    std::vector<Time>& made = holders_[c.range][c.holder].made;
    c.index = static_cast<int>(made.size());
    made.push_back(now);
  }
  AdmitWaiting(admit);
  if (Satisfied(calls, true)) return true;
  waiting_.emplace_back(run, node);
  return false;
}

bool GatherCalls::MayHold(int run, int node) const {
  const std::vector<Call>& calls = calls_[run][node];
  return std::any_of(calls.begin(), calls.end(), [](const Call& c) { return c.offset > 0; });
}

std::optional<Time> GatherCalls::PassEnd(int run, int node, Time start, Time end) {
  const std::vector<Call>& calls = calls_[run][node];
  if (!Satisfied(calls, false)) {
    if (std::find(ending_.begin(), ending_.end(), std::make_pair(run, node)) == ending_.end())
      ending_.emplace_back(run, node);  // AdmitWaiting admits it once the calls have started
    return std::nullopt;
  }
  // Each later range's layers start no earlier than its call: the rest of the pass after it.
  Time out = end;
  for (const Call& c : calls) {
    if (c.offset > 0) out = std::max(out, *StartOf(c) + (end - start) - std::min(c.offset, end - start));
  }
  return out;
}

std::string GatherCalls::Stuck(const std::vector<const ExecutionSetup*>& setups) const {
  if (waiting_.empty() && ending_.empty()) return "";
  const auto [run, node] = waiting_.empty() ? ending_.front() : waiting_.front();
  const pipeline::DagNode& n = setups[run]->dag->node(node);
  for (const Call& c : calls_[run][node]) {
    const LayerRangeGroup& g = *ranges_[c.range];
    for (size_t h = 0; h < g.holders.size(); ++h) {
      const Holder& other = holders_[c.range][h];
      if (static_cast<int>(other.made.size()) > c.index || (other.calls <= c.index && other.done == other.calls))
        continue;
      return absl::StrFormat(
          "ZeRO-3 across pipelines: pipelines[%d] stage %d's %s of microbatch %d waits at its gather call %d of "
          "layers %d-%d for pipelines[%d] stage %d's, which never comes (the holders' calls cross: a real run's "
          "collectives would hang)",
          run, n.stage, n.kind == pipeline::NodeKind::kForward ? "forward" : "backward", n.microbatch, c.index,
          g.first_layer, g.first_layer + g.num_layers - 1, g.holders[h].pipeline, g.holders[h].stage);
    }
  }
  return "";
}

void GatherCalls::Done(int run, int node, Time now, const Admit& admit) {
  const std::vector<Call>& calls = calls_[run][node];
  if (calls.empty()) return;
  bool joined = false;
  for (const Call& c : calls) {
    Holder& h = holders_[c.range][c.holder];
    if (++h.done == h.calls) {
      h.joined = now;
      joined = true;
    }
  }
  if (joined) AdmitWaiting(admit);
}

}  // namespace hetsim::executor
