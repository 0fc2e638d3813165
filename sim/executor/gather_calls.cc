#include "sim/executor/gather_calls.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_format.h"
#include "base/check.h"
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
      const int stage = setups[p]->dag->node(static_cast<pipeline::NodeId>(id)).stage;
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
        calls_[p][id].push_back({index[r], h, 0});
      }
    }
  }
}

// Every call's range has every holder's same call made, or the holder has joined (all its passes over the
// range ended).
bool GatherCalls::Satisfied(const std::vector<Call>& calls) const {
  for (const Call& c : calls) {
    for (const Holder& h : holders_[c.range]) {
      const bool joined = h.calls <= c.index && h.done == h.calls;
      if (h.made <= c.index && !joined) return false;
    }
  }
  return true;
}

void GatherCalls::AdmitWaiting(const Admit& admit) {
  // Admitting one may make calls that release another: until none is left to admit.
  for (bool admitted = true; admitted;) {
    admitted = false;
    for (size_t w = 0; w < waiting_.size(); ++w) {
      const auto [run, node] = waiting_[w];
      if (!Satisfied(calls_[run][node])) continue;
      waiting_.erase(waiting_.begin() + static_cast<std::ptrdiff_t>(w));
      admit(run, node);
      admitted = true;
      break;
    }
  }
}

bool GatherCalls::Ready(int run, int node, const Admit& admit) {
  std::vector<Call>& calls = calls_[run][node];
  if (calls.empty()) return true;
  for (Call& c : calls) c.index = holders_[c.range][c.holder].made++;
  AdmitWaiting(admit);
  if (Satisfied(calls)) return true;
  waiting_.emplace_back(run, node);
  return false;
}

std::string GatherCalls::Stuck(const std::vector<const ExecutionSetup*>& setups) const {
  if (waiting_.empty()) return "";
  const auto [run, node] = waiting_.front();
  const pipeline::DagNode& n = setups[run]->dag->node(node);
  for (const Call& c : calls_[run][node]) {
    const LayerRangeGroup& g = *ranges_[c.range];
    for (size_t h = 0; h < g.holders.size(); ++h) {
      const Holder& other = holders_[c.range][h];
      if (other.made > c.index || (other.calls <= c.index && other.done == other.calls)) continue;
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

void GatherCalls::Done(int run, int node, const Admit& admit) {
  const std::vector<Call>& calls = calls_[run][node];
  if (calls.empty()) return;
  bool joined = false;
  for (const Call& c : calls) {
    Holder& h = holders_[c.range][c.holder];
    joined = ++h.done == h.calls || joined;
  }
  if (joined) AdmitWaiting(admit);
}

}  // namespace hetsim::executor
