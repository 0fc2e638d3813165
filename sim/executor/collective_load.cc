#include "sim/executor/collective_load.h"

#include <algorithm>
#include <deque>

#include <boost/pending/disjoint_sets.hpp>

#include "base/wall_limit.h"
#include "sim/collectives/algorithms.h"
#include "sim/collectives/execution.h"
#include "sim/collectives/simulate.h"
#include "sim/engine/simulator.h"

namespace hetsim::executor {

using topology::DeviceId;

void AddLoad(std::vector<LinkLoad>& into, const std::vector<LinkLoad>& load, int64_t times) {
  if (load.empty() || times == 0) return;
  std::vector<LinkLoad> merged;
  merged.reserve(into.size() + load.size());
  size_t i = 0, j = 0;
  while (i < into.size() || j < load.size()) {
    if (j == load.size() || (i < into.size() && into[i].link < load[j].link)) {
      merged.push_back(into[i++]);
    } else if (i == into.size() || load[j].link < into[i].link) {
      merged.push_back({load[j].link, load[j].bytes * times, load[j].busy_time * times});
      ++j;
    } else {
      merged.push_back(
          {into[i].link, into[i].bytes + load[j].bytes * times, into[i].busy_time + load[j].busy_time * times});
      ++i;
      ++j;
    }
  }
  into = std::move(merged);
}

std::vector<LinkLoad> SumByLink(std::vector<LinkLoad> loads) {
  std::stable_sort(loads.begin(), loads.end(), [](const LinkLoad& a, const LinkLoad& b) { return a.link < b.link; });
  std::vector<LinkLoad> out;
  for (const LinkLoad& l : loads) {
    if (!out.empty() && out.back().link == l.link) {
      out.back().bytes += l.bytes;
      out.back().busy_time += l.busy_time;
    } else {
      out.push_back(l);
    }
  }
  return out;
}

absl::StatusOr<const CollectiveTimer::Timed*> CollectiveTimer::Simulate(CollectiveOp op,
                                                                        const std::vector<std::vector<GpuId>>& groups,
                                                                        int64_t bytes) {
  static const Timed kNothing;
  std::vector<std::vector<GpuId>> real;
  for (const auto& g : groups) {
    if (g.size() > 1) real.push_back(g);
  }
  if (real.empty() || bytes <= 0) return &kNothing;
  Key key(static_cast<int>(op), bytes, real);
  if (auto it = cache_.find(key); it != cache_.end()) return &it->second;
  // As SimulateCollective, several requests on one network, which is kept to read its link counters.
  std::vector<collectives::TransferGraph> graphs;
  graphs.reserve(real.size());
  for (const auto& gpus : real) {
    collectives::CollectiveRequest request;
    request.op = op;
    request.gpus = gpus;
    request.bytes = bytes;
    if (auto s = collectives::ValidateRequest(topology_, request); !s.ok()) return s;
    absl::StatusOr<collectives::ShapeChoice> choice = collectives::ChooseShape(topology_, router_, request);
    if (!choice.ok()) return choice.status();
    graphs.push_back(collectives::BuildTransferGraph(topology_, request, choice->shape));
    if (auto s = CurrentWallLimit().Check("building a collective's transfers"); !s.ok()) return s;
  }
  // One network for every collective timed here, reused: built over all the cluster's links once,
  // not once per distinct collective (at 16K GPUs that construction dominated the setup). Each
  // collective starts on an idle network at the clock's current instant; times are differences and
  // integer, so the result is the one a fresh network at time 0 gives.
  if (network_ == nullptr) {
    auto network = network::Network::Create(&simulator_, collectives::NetworkLinks(topology_), mode_);
    if (!network.ok()) return network.status();
    network_ = *std::move(network);
  }
  const Time start = simulator_.now();
  std::deque<collectives::CollectiveExecution> executions;
  for (const collectives::TransferGraph& graph : graphs) {
    executions.emplace_back(network_.get(), &router_, &graph);
    if (auto s = executions.back().Start(&simulator_); !s.ok()) return s;
  }
  if (auto s = collectives::RunWithinWallLimit(simulator_, "timing a collective"); !s.ok()) return s;
  Timed timed;
  std::vector<LinkId> touched;
  for (const collectives::CollectiveExecution& e : executions) {
    if (!e.done()) return absl::InternalError("a collective did not complete: a transfer never became ready");
    timed.time = std::max(timed.time, e.finish_time() - start);
    for (std::span<const LinkId> route : e.routes()) touched.insert(touched.end(), route.begin(), route.end());
  }
  std::sort(touched.begin(), touched.end());
  touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
  for (LinkId l : touched) {
    const network::LinkCounters c = network_->link_counters(l);
    if (c.bytes > 0 || c.busy_time > 0) timed.load.push_back({l, c.bytes, c.busy_time});
    network_->ResetLinkCounters(l);
  }
  return &cache_.emplace(std::move(key), std::move(timed)).first->second;
}

absl::StatusOr<Time> CollectiveTimer::TimeOf(CollectiveOp op, const std::vector<GpuId>& gpus, int64_t bytes) {
  return ConcurrentTimeOf(op, {gpus}, bytes);
}

absl::StatusOr<Time> CollectiveTimer::ConcurrentTimeOf(CollectiveOp op, const std::vector<std::vector<GpuId>>& groups,
                                                       int64_t bytes) {
  absl::StatusOr<const Timed*> t = Simulate(op, groups, bytes);
  if (!t.ok()) return t.status();
  return (*t)->time;
}

absl::StatusOr<std::vector<LinkLoad>> CollectiveTimer::ConcurrentLoadOf(CollectiveOp op,
                                                                        const std::vector<std::vector<GpuId>>& groups,
                                                                        int64_t bytes) {
  absl::StatusOr<const Timed*> t = Simulate(op, groups, bytes);
  if (!t.ok()) return t.status();
  return (*t)->load;
}

absl::StatusOr<std::vector<LinkLoad>> CollectiveTimer::LoadOf(CollectiveOp op, const std::vector<GpuId>& gpus,
                                                              int64_t bytes) {
  absl::StatusOr<Timed> t = SetTimed(op, {gpus}, bytes);
  if (!t.ok()) return t.status();
  return std::move(t->load);
}

absl::StatusOr<CollectiveTimer::Timed> CollectiveTimer::SetTimed(CollectiveOp op,
                                                                 const std::vector<std::vector<GpuId>>& set,
                                                                 int64_t bytes) {
  std::vector<size_t> sizes;
  std::vector<GpuId> gpus;  // the set's GPUs, group after group: what MapLoad pairs position by position
  for (const std::vector<GpuId>& g : set) {
    sizes.push_back(g.size());
    gpus.insert(gpus.end(), g.begin(), g.end());
  }
  if (bytes <= 0 || std::all_of(sizes.begin(), sizes.end(), [](size_t n) { return n <= 1; })) return Timed{};
  auto template_key = std::make_tuple(static_cast<int>(op), bytes, std::move(sizes));
  if (auto it = templates_.find(template_key);
      reuse_ == ReplicaReuse::kMapped && it != templates_.end() && it->second != set) {
    // Virtual stages of one stage ask again for the same groups: map each once.
    const auto mapped_key = std::make_tuple(static_cast<int>(op), bytes, set);
    if (auto m = mapped_.find(mapped_key); m != mapped_.end()) {
      ++mapped_groups_;
      return m->second;
    }
    absl::StatusOr<const Timed*> base = Simulate(op, it->second, bytes);
    if (!base.ok()) return base.status();
    std::vector<GpuId> from;
    for (const std::vector<GpuId>& g : it->second) from.insert(from.end(), g.begin(), g.end());
    Timed mapped{(*base)->time, {}};
    if (MapLoad(from, gpus, (*base)->load, mapped.load)) {
      ++mapped_groups_;
      return mapped_.emplace(mapped_key, std::move(mapped)).first->second;
    }
  }
  ++simulated_groups_;
  absl::StatusOr<const Timed*> t = Simulate(op, set, bytes);
  if (!t.ok()) return t.status();
  templates_.emplace(std::move(template_key), set);
  return **t;
}

absl::StatusOr<GroupsTiming> CollectiveTimer::EachGroup(CollectiveOp op, const std::vector<std::vector<GpuId>>& groups,
                                                        int64_t bytes) {
  GroupsTiming out;
  // Gathered and merged at once: merging group by group made the setup quadratic in the replicas
  // (128 groups per collective at 16K GPUs).
  std::vector<LinkLoad> all;
  for (const std::vector<GpuId>& g : groups) {
    absl::StatusOr<Timed> t = SetTimed(op, {g}, bytes);
    if (!t.ok()) return t.status();
    out.slowest = std::max(out.slowest, t->time);
    all.insert(all.end(), t->load.begin(), t->load.end());
  }
  out.load = SumByLink(std::move(all));
  return out;
}

absl::StatusOr<GroupsTiming> CollectiveTimer::EachNodeSharingSet(CollectiveOp op,
                                                                 const std::vector<std::vector<GpuId>>& groups,
                                                                 int64_t bytes) {
  // Disjoint sets of the groups that move bytes, joined through the nodes (their first switch) they share.
  boost::disjoint_sets_with_storage<> joined(groups.size());
  for (size_t i = 0; i < groups.size(); ++i) joined.make_set(i);
  absl::flat_hash_map<DeviceId, size_t> first_on_node;
  for (size_t i = 0; i < groups.size(); ++i) {
    if (groups[i].size() <= 1) continue;
    for (const GpuId gpu : groups[i]) {
      const auto [it, fresh] = first_on_node.emplace(topology_.node_switch(gpu), i);
      if (!fresh) joined.union_set(i, it->second);
    }
  }
  // The sets in the order of their first group (deterministic), each its groups in the list's order.
  std::vector<std::vector<std::vector<GpuId>>> sets;
  absl::flat_hash_map<size_t, size_t> set_of_root;
  for (size_t i = 0; i < groups.size(); ++i) {
    if (groups[i].size() <= 1) continue;
    const auto [it, fresh] = set_of_root.emplace(joined.find_set(i), sets.size());
    if (fresh) sets.emplace_back();
    sets[it->second].push_back(groups[i]);
  }
  GroupsTiming out;
  std::vector<LinkLoad> all;
  for (const std::vector<std::vector<GpuId>>& set : sets) {
    absl::StatusOr<Timed> t = SetTimed(op, set, bytes);
    if (!t.ok()) return t.status();
    out.slowest = std::max(out.slowest, t->time);
    all.insert(all.end(), t->load.begin(), t->load.end());
  }
  out.load = SumByLink(std::move(all));
  return out;
}

const absl::flat_hash_map<std::pair<DeviceId, DeviceId>, LinkId>& CollectiveTimer::LinkIndex() {
  if (link_index_built_) return link_index_;
  link_index_built_ = true;
  absl::flat_hash_map<std::pair<DeviceId, DeviceId>, int> count;
  const auto& links = topology_.links();
  for (LinkId l : IdsBelow<LinkId>(links.size())) {
    const std::pair<DeviceId, DeviceId> ends(links[l.value()].src, links[l.value()].dst);
    if (++count[ends] == 1) {
      link_index_[ends] = l;
    } else {
      link_index_.erase(ends);
    }
  }
  return link_index_;
}

bool CollectiveTimer::MapLoad(const std::vector<GpuId>& from, const std::vector<GpuId>& to,
                              const std::vector<LinkLoad>& load, std::vector<LinkLoad>& out) {
  // A one-to-one correspondence of the devices a GPU reaches without a fabric switch.
  absl::flat_hash_map<DeviceId, DeviceId> forward, backward;
  auto pair = [&](DeviceId a, DeviceId b) {
    if (a == topology::kNoDevice || b == topology::kNoDevice) return a == b;
    auto [f, fresh_f] = forward.emplace(a, b);
    auto [r, fresh_r] = backward.emplace(b, a);
    return f->second == b && r->second == a;
  };
  for (size_t i = 0; i < from.size(); ++i) {
    if (!pair(topology_.gpu_device(from[i]), topology_.gpu_device(to[i])) ||
        !pair(topology_.node_switch(from[i]), topology_.node_switch(to[i])) ||
        !pair(topology_.nic_of(from[i]), topology_.nic_of(to[i]))) {
      return false;
    }
  }
  const auto& index = LinkIndex();
  const auto& links = topology_.links();
  out.clear();
  for (const LinkLoad& l : load) {
    auto src = forward.find(links[l.link.value()].src);
    auto dst = forward.find(links[l.link.value()].dst);
    if (src == forward.end() || dst == forward.end()) return false;
    auto mapped = index.find({src->second, dst->second});
    // Only onto links of the same capacity and latency (another island's node may be faster).
    if (mapped == index.end() ||
        topology_.link(mapped->second).bandwidth.bytes_per_second() !=
            links[l.link.value()].bandwidth.bytes_per_second() ||
        topology_.link(mapped->second).latency != links[l.link.value()].latency) {
      return false;
    }
    out.push_back({mapped->second, l.bytes, l.busy_time});
  }
  std::sort(out.begin(), out.end(), [](const LinkLoad& a, const LinkLoad& b) { return a.link < b.link; });
  return true;
}

}  // namespace hetsim::executor
