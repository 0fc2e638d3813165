#include "sim/collectives/primitives.h"

#include <algorithm>
#include <array>
#include <span>

#include "absl/container/flat_hash_map.h"
#include "base/check.h"

namespace hetsim::collectives {
namespace {

const std::vector<TransferIndex>& StartOf(const Ready& start, size_t r) {
  static const std::vector<TransferIndex> kNone;
  return r < start.size() ? start[r] : kNone;
}

// NCCL's binary tree over positions 0..n-1: position 0 is the root with a single child; odd positions
// are leaves; position p > 0 with lowest set bit b hangs under (p - b) + 2b, or under p - b when that
// is beyond the last position. Its depth is ceil(log2 n).
std::vector<int32_t> BinaryTreeParents(int32_t n) {
  std::vector<int32_t> parents(n, -1);
  for (int32_t p = 1; p < n; ++p) {
    const int32_t low = p & -p;
    const int32_t up = (p ^ low) | (low << 1);
    parents[p] = up < n ? up : (p ^ low);
  }
  return parents;
}

// The rank at position p of tree t: tree 1 is tree 0 mirrored (even n) or shifted by one (odd n), so
// that each rank has at most two children over both trees (one tree's leaves are the other's inner
// nodes).
int32_t TreeRank(int32_t n, int32_t tree, int32_t p) {
  if (tree == 0) return p;
  return n % 2 == 0 ? n - 1 - p : (p + 1) % n;
}

// Per rank, the edges between it and its tree's root.
std::vector<int32_t> Depths(const std::vector<int32_t>& parents) {
  std::vector<int32_t> depth(parents.size(), 0);
  for (size_t p = 0; p < parents.size(); ++p) {
    for (int32_t q = static_cast<int32_t>(p); parents[q] >= 0; q = parents[q]) ++depth[p];
  }
  return depth;
}

int32_t Depth(const std::vector<int32_t>& parents) {
  const std::vector<int32_t> depth = Depths(parents);
  return depth.empty() ? 0 : *std::max_element(depth.begin(), depth.end());
}

// Per rank, its parent in tree `tree` of NCCL's double tree over `n` ranks laid node after node, `node_sizes`
// ranks per node (empty, or a single node: the binary trees over the ranks themselves, every rank a node).
// Across nodes NCCL builds its double binary tree over the nodes (src/graph/connect.cc, connectTrees: ncclGetDtree
// over nNodes, trees.cc), and inside each node a chain of its GPUs (ncclTopoPreset: treeIntra[0] up to the parent
// node, each next GPU under the one before); tree 1 mirrors (or shifts) the nodes, the chains are the channel's in
// both (the channel duplicated, connect.cc). The child nodes hang under the parent node's chain head: NCCL's tree
// search keeps a channel's traffic to its parent and its children on one NIC (search.cc,
// ncclTopoSearchCheckNet: NCCL_TOPO_PATTERN_TREE on the first GPU; BALANCED_TREE on the first two GPUs but
// the same NIC), and in hetsim a GPU reaches the network through its own NIC, so the head carries both.
std::vector<int32_t> TreeParentsOfRanks(int32_t n, int32_t tree, std::span<const int32_t> node_sizes) {
  std::vector<int32_t> out(n, -1);
  if (node_sizes.size() < 2) {
    const std::vector<int32_t> parents = BinaryTreeParents(n);
    for (int32_t p = 0; p < n; ++p) {
      if (parents[p] >= 0) out[TreeRank(n, tree, p)] = TreeRank(n, tree, parents[p]);
    }
    return out;
  }
  const auto nodes = static_cast<int32_t>(node_sizes.size());
  std::vector<int32_t> head(nodes, 0);
  for (int32_t a = 1; a < nodes; ++a) head[a] = head[a - 1] + node_sizes[a - 1];
  HETSIM_CHECK(head.back() + node_sizes.back() == n, "node sizes add up to %d ranks, not %d",
               head.back() + node_sizes.back(), n);
  const std::vector<int32_t> node_parents = BinaryTreeParents(nodes);
  for (int32_t q = 0; q < nodes; ++q) {
    const int32_t a = TreeRank(nodes, tree, q);
    if (node_parents[q] >= 0) out[head[a]] = head[TreeRank(nodes, tree, node_parents[q])];
    for (int32_t i = 1; i < node_sizes[a]; ++i) out[head[a] + i] = head[a] + i - 1;
  }
  return out;
}

// A stretch of a tree edge's chunks moved as one transfer: its bytes, the chunk steps (route
// latencies) it stands for, and whether it waits for the same stretch upstream (every stepped chunk
// and the first and last chunk of an aggregated edge do; the aggregated middle streams behind the
// edge's own first chunk).
struct TreeSegment {
  int64_t bytes = 0;
  int32_t steps = 1;
  bool follows_upstream = true;
  bool timed = false;  // priced without a flow (TransferGraph::SetTimed)
};

// Stepped: one segment per chunk. Aggregated (chunks >= 3): first chunk, the middle chunks as one
// transfer paying chunks - 2 latencies, last chunk. With every edge at one rate s per chunk step the
// two end at the same time: the last chunk leaves hop h at (h + chunks - 1) x s either way.
// `timed_ends`: the aggregated first and last chunks are timed transfers.
std::vector<TreeSegment> TreeSegments(int64_t bytes, int32_t chunks, bool aggregated, bool timed_ends) {
  std::vector<TreeSegment> segments;
  if (!aggregated || chunks < 3) {
    for (int32_t c = 0; c < chunks; ++c) segments.push_back({SplitBytes(bytes, chunks, c), 1, true});
    return segments;
  }
  int64_t middle = 0;
  for (int32_t c = 1; c + 1 < chunks; ++c) middle += SplitBytes(bytes, chunks, c);
  segments.push_back({SplitBytes(bytes, chunks, 0), 1, true, timed_ends});
  segments.push_back({middle, chunks - 2, false});
  segments.push_back({SplitBytes(bytes, chunks, chunks - 1), 1, true, timed_ends});
  return segments;
}

// Per rank of each tree: -1 where the rank's edge to its parent is simulated, else the rank whose transfers stand
// for it (the same local rank of the node representing its class). Nodes of `node_size` consecutive ranks fall in
// one class when every local rank has, in both trees, the same depth, the same parent inside the node (or one
// outside), and as many children outside; the class's first node is simulated and stands for the others' edges
// inside their nodes. Their edges between nodes are all simulated, waiting for the representative's edges inside.
// A stand-in sits at the same depth as the rank it stands for, so children-first order creates it in time.
using TreeStandIns = std::array<std::vector<int32_t>, 2>;
TreeStandIns NodeClassStandIns(const std::array<std::vector<int32_t>, 2>& parents, int32_t node_size) {
  const auto n = static_cast<int32_t>(parents[0].size());
  TreeStandIns out;
  if (node_size < 2 || n % node_size != 0 || n / node_size < 3) return out;
  std::array<std::vector<int32_t>, 2> depth, outside_children;
  for (int32_t t = 0; t < 2; ++t) {
    depth[t] = Depths(parents[t]);
    outside_children[t].assign(n, 0);
    for (int32_t r = 0; r < n; ++r) {
      const int32_t up = parents[t][r];
      if (up >= 0 && up / node_size != r / node_size) ++outside_children[t][up];
    }
  }
  // Per local rank and tree: depth, parent's local rank (-1 outside, -2 the root), children outside.
  absl::flat_hash_map<std::vector<int32_t>, int32_t> first_of;
  std::vector<int32_t> representative(n / node_size);
  std::vector<int32_t> key;
  for (int32_t a = 0; a < n / node_size; ++a) {
    key.clear();
    for (int32_t t = 0; t < 2; ++t) {
      for (int32_t r = a * node_size; r < (a + 1) * node_size; ++r) {
        const int32_t up = parents[t][r];
        key.push_back(depth[t][r]);
        key.push_back(up < 0 ? -2 : up / node_size == a ? up - a * node_size : -1);
        key.push_back(outside_children[t][r]);
      }
    }
    representative[a] = first_of.try_emplace(key, a).first->second;
  }
  if (first_of.size() == representative.size()) return out;
  for (int32_t t = 0; t < 2; ++t) {
    out[t].assign(n, -1);
    for (int32_t r = 0; r < n; ++r) {
      const int32_t a = r / node_size, up = parents[t][r];
      if (up < 0 || representative[a] == a || up / node_size != a) continue;
      out[t][r] = r + (representative[a] - a) * node_size;
    }
  }
  return out;
}

// The positions of a tree ordered children before parents (by decreasing depth, stable).
std::vector<int32_t> ChildrenFirst(const std::vector<int32_t>& parents) {
  const std::vector<int32_t> depth = Depths(parents);
  std::vector<int32_t> order(parents.size());
  for (size_t p = 0; p < order.size(); ++p) order[p] = static_cast<int32_t>(p);
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return depth[a] > depth[b]; });
  return order;
}

// One tree of a double tree: per rank its parent (-1 at the root), and the ranks children first. Over ranks that are
// nodes of their own, the order is the binary tree's positions children first, mapped to ranks (tree 1's mirror or
// shift keeps the order the positions had).
struct RankTree {
  std::vector<int32_t> parents;
  std::vector<int32_t> order;
  int32_t root = 0;
};

RankTree TreeOfRanks(int32_t n, int32_t tree, std::span<const int32_t> node_sizes) {
  RankTree out;
  out.parents = TreeParentsOfRanks(n, tree, node_sizes);
  if (node_sizes.size() < 2) {
    out.order = ChildrenFirst(BinaryTreeParents(n));
    for (int32_t& p : out.order) p = TreeRank(n, tree, p);
  } else {
    out.order = ChildrenFirst(out.parents);
  }
  for (int32_t r = 0; r < n; ++r) {
    if (out.parents[r] < 0) out.root = r;
  }
  return out;
}

// One binary tree's all-reduce: reduce segments up to the root, broadcast them back down.
// `stand_in` (empty: none) lists the ranks whose edges other ranks' transfers stand for
// (NodeClassStandIns): those edges are not simulated, and what waits for them waits for the stand-in.
void TreeAllReduce(TransferGraph& g, const Ranks& ranks, const RankTree& tree, const std::vector<TreeSegment>& segments,
                   uint64_t key, const Ready& start, std::span<const int32_t> stand_in, Ready& ready) {
  const int32_t n = static_cast<int32_t>(ranks.size());
  const int32_t count = static_cast<int32_t>(segments.size());
  const std::vector<int32_t>& parents = tree.parents;
  const int32_t root = tree.root;
  std::vector<std::vector<int32_t>> children(n);
  for (int32_t p : tree.order) {
    if (parents[p] >= 0) children[parents[p]].push_back(p);
  }
  std::vector<TransferIndex> up(static_cast<size_t>(n) * count, kNoTransfer), down(up.size(), kNoTransfer);
  auto at = [n](int32_t c, int32_t r) { return static_cast<size_t>(c) * n + r; };
  auto add = [&](int32_t from, int32_t to, const TreeSegment& seg, const std::vector<TransferIndex>& deps) {
    const TransferIndex t = g.Add(g.Path(ranks[from], ranks[to], key), seg.bytes, deps);
    if (seg.steps > 1) g.SetLatencyRepeats(t, seg.steps);
    if (seg.timed) g.SetTimed(t);
    return t;
  };
  const auto stands_in = [&](int32_t r) { return !stand_in.empty() && stand_in[r] >= 0; };
  const auto edge = [&](int32_t r) { return stands_in(r) ? stand_in[r] : r; };
  std::vector<TransferIndex> deps;
  for (int32_t c = 0; c < count; ++c) {
    const TreeSegment& seg = segments[c];
    for (int32_t r : tree.order) {
      if (parents[r] < 0 || stands_in(r)) continue;
      deps.assign(StartOf(start, r).begin(), StartOf(start, r).end());
      if (seg.follows_upstream) {
        for (int32_t ch : children[r]) deps.push_back(up[at(c, edge(ch))]);
      }
      if (c > 0) deps.push_back(up[at(c - 1, r)]);
      up[at(c, r)] = add(r, parents[r], seg, deps);
    }
    for (auto it = tree.order.rbegin(); it != tree.order.rend(); ++it) {
      const int32_t r = *it;
      if (parents[r] < 0 || stands_in(r)) continue;
      const int32_t parent = parents[r];
      deps.clear();
      if (parent == root) {
        deps.assign(StartOf(start, root).begin(), StartOf(start, root).end());
        if (seg.follows_upstream) {
          for (int32_t ch : children[root]) deps.push_back(up[at(c, edge(ch))]);
        }
      } else if (seg.follows_upstream) {
        deps.push_back(down[at(c, edge(parent))]);
      }
      if (c > 0) deps.push_back(down[at(c - 1, r)]);
      down[at(c, r)] = add(parent, r, seg, deps);
    }
  }
  for (int32_t r = 0; r < n; ++r) {
    for (int32_t c = 0; c < count; ++c) {
      if (r == root) {
        for (int32_t ch : children[root]) ready[r].push_back(up[at(c, edge(ch))]);
      } else {
        ready[r].push_back(down[at(c, edge(r))]);
      }
    }
  }
}

// Broadcast from position 0 down `parents` (each parent before its children), chunks pipelined: chunk c
// goes to position p once it has reached p's parent and chunk c-1 has reached p.
Ready PipelinedBroadcast(TransferGraph& g, const Ranks& ranks, const std::vector<int32_t>& parents, int64_t bytes,
                         int32_t chunks, uint64_t key, const Ready& start) {
  const int32_t n = static_cast<int32_t>(ranks.size());
  Ready ready(n);
  ready[0] = StartOf(start, 0);
  std::vector<TransferIndex> arrived(n, kNoTransfer), deps;
  for (int32_t c = 0; c < chunks; ++c) {
    const int64_t size = SplitBytes(bytes, chunks, c);
    for (int32_t p = 1; p < n; ++p) {
      const int32_t parent = parents[p];
      deps = parent == 0 ? StartOf(start, 0) : std::vector<TransferIndex>{arrived[parent]};
      deps.push_back(arrived[p]);  // still chunk c-1: this rank's previous arrival
      for (TransferIndex s : StartOf(start, p)) deps.push_back(s);
      arrived[p] = g.Add(g.Path(ranks[parent], ranks[p], key), size, deps);
      ready[p].push_back(arrived[p]);
    }
  }
  return ready;
}

}  // namespace

int64_t SplitBytes(int64_t total, int64_t parts, int64_t i) { return total / parts + (i < total % parts ? 1 : 0); }

Ready AppendRing(TransferGraph& g, const Ranks& ranks, int64_t bytes, int32_t steps, int32_t chunks,
                 int32_t segment_offset, uint64_t flow_key, const Ready& start) {
  const int32_t n = static_cast<int32_t>(ranks.size());
  Ready ready(n);
  if (n < 2) {
    for (int32_t r = 0; r < n; ++r) ready[r] = StartOf(start, r);
    return ready;
  }
  std::vector<int32_t> path(n);
  for (int32_t r = 0; r < n; ++r) path[r] = g.Path(ranks[r], ranks[(r + 1) % n], flow_key);
  // prev[c][r]: rank r's send of chunk c in the previous step.
  std::vector<TransferIndex> prev(static_cast<size_t>(chunks) * n, kNoTransfer), cur(prev.size(), kNoTransfer);
  std::vector<TransferIndex> deps;
  for (int32_t k = 0; k < steps; ++k) {
    for (int32_t c = 0; c < chunks; ++c) {
      for (int32_t r = 0; r < n; ++r) {
        const int32_t seg = ((r + segment_offset - k) % n + n) % n;
        const int64_t size = SplitBytes(SplitBytes(bytes, n, seg), chunks, c);
        const size_t i = static_cast<size_t>(c) * n + r;
        if (k == 0) {
          deps.assign(StartOf(start, r).begin(), StartOf(start, r).end());
        } else {
          deps.assign({prev[static_cast<size_t>(c) * n + (r + n - 1) % n], prev[i]});
        }
        if (c > 0) deps.push_back(cur[i - n]);
        cur[i] = g.Add(path[r], size, deps);
      }
    }
    std::swap(prev, cur);
  }
  for (int32_t r = 0; r < n; ++r) {
    for (int32_t c = 0; c < chunks; ++c) ready[r].push_back(prev[static_cast<size_t>(c) * n + (r + n - 1) % n]);
  }
  return ready;
}

int64_t RingEdgeBytes(int64_t bytes, int32_t n, int32_t r, int32_t steps, int32_t segment_offset) {
  // Steps visit segments s, s-1, s-2, ... (mod n) from s = (r + offset) mod n: `full` whole laps send
  // every byte once each, and the last `rest` steps visit the cyclic window [s - rest + 1, s], whose
  // segments below bytes % n carry one byte more (SplitBytes).
  const int64_t full = steps / n, rest = steps % n;
  const int64_t base = bytes / n, larger = bytes % n;
  const int64_t s = ((int64_t{r} + segment_offset) % n + n) % n;
  auto below = [larger](int64_t lo, int64_t hi) {  // segments in [lo, hi] under `larger`
    return hi < lo ? 0 : std::max<int64_t>(0, std::min(hi, larger - 1) - lo + 1);
  };
  const int64_t lo = s - rest + 1;
  const int64_t extra = lo >= 0 ? below(lo, s) : below(0, s) + below(lo + n, n - 1);
  return full * bytes + rest * base + extra;
}

Ready AppendAggregatedRing(TransferGraph& g, const Ranks& ranks, int64_t bytes, int32_t steps, int32_t segment_offset,
                           uint64_t flow_key, const Ready& start) {
  const int32_t n = static_cast<int32_t>(ranks.size());
  Ready ready(n);
  if (n < 2 || steps <= 0) {
    for (int32_t r = 0; r < n; ++r) ready[r] = StartOf(start, r);
    return ready;
  }
  // A stepped ring of at least n - 1 steps ends at the latest start + steps x step time, whichever
  // rank starts last: waiting for every start loses nothing at the end.
  std::vector<TransferIndex> deps;
  for (int32_t r = 0; r < n; ++r) {
    for (TransferIndex t : StartOf(start, r)) deps.push_back(t);
  }
  const TransferIndex begin = deps.empty() ? kNoTransfer : g.AddJoin(deps);
  std::vector<TransferIndex> flows(n);
  for (int32_t r = 0; r < n; ++r) {
    flows[r] = g.Add(g.Path(ranks[r], ranks[(r + 1) % n], flow_key), RingEdgeBytes(bytes, n, r, steps, segment_offset),
                     {begin});
    g.SetLatencyRepeats(flows[r], steps);
  }
  const TransferIndex end = g.AddJoin(flows);
  for (int32_t r = 0; r < n; ++r) ready[r] = {end};
  return ready;
}

int32_t DoubleTreeDepth(int64_t n, std::span<const int32_t> node_sizes) {
  const auto ranks = static_cast<int32_t>(n);
  return std::max(Depth(TreeParentsOfRanks(ranks, 0, node_sizes)), Depth(TreeParentsOfRanks(ranks, 1, node_sizes)));
}

std::vector<std::pair<int32_t, int32_t>> DoubleTreeEdges(int32_t n, int32_t tree, std::span<const int32_t> node_sizes) {
  std::vector<std::pair<int32_t, int32_t>> edges;
  if (node_sizes.size() < 2) {  // in the binary tree's position order, as the ranks' own trees always listed them
    const std::vector<int32_t> parents = BinaryTreeParents(n);
    for (int32_t p = 0; p < n; ++p) {
      if (parents[p] >= 0) edges.emplace_back(TreeRank(n, tree, p), TreeRank(n, tree, parents[p]));
    }
    return edges;
  }
  const std::vector<int32_t> parents = TreeParentsOfRanks(n, tree, node_sizes);
  for (int32_t r = 0; r < n; ++r) {
    if (parents[r] >= 0) edges.emplace_back(r, parents[r]);
  }
  return edges;
}

Ready AppendDoubleTreeAllReduce(TransferGraph& g, const Ranks& ranks, int64_t bytes, int32_t chunks, uint64_t flow_key,
                                const Ready& start, bool aggregated, int32_t node_classes, bool timed_ends,
                                std::span<const int32_t> node_sizes) {
  const int32_t n = static_cast<int32_t>(ranks.size());
  Ready ready(n);
  if (n < 2) {
    for (int32_t r = 0; r < n; ++r) ready[r] = StartOf(start, r);
    return ready;
  }
  const std::array<RankTree, 2> trees = {TreeOfRanks(n, 0, node_sizes), TreeOfRanks(n, 1, node_sizes)};
  // A stand-in's start dependencies would be lost with its edges: classes only for a tree that starts
  // at once.
  const TreeStandIns stand_ins =
      NodeClassStandIns({trees[0].parents, trees[1].parents}, start.empty() ? node_classes : 0);
  for (int32_t t = 0; t < 2; ++t) {
    TreeAllReduce(g, ranks, trees[t], TreeSegments(SplitBytes(bytes, 2, t), chunks, aggregated, timed_ends),
                  flow_key * 2 + t, start, stand_ins[t], ready);
  }
  return ready;
}

Ready AppendChainBroadcast(TransferGraph& g, const Ranks& ranks, int64_t bytes, int32_t chunks, uint64_t flow_key,
                           const Ready& start) {
  std::vector<int32_t> parents(ranks.size());
  for (size_t p = 0; p < ranks.size(); ++p) parents[p] = static_cast<int32_t>(p) - 1;
  return PipelinedBroadcast(g, ranks, parents, bytes, chunks, flow_key, start);
}

int32_t HeapTreeDepth(int64_t n) {
  int32_t d = 0;
  while ((int64_t{2} << d) - 1 < n) ++d;
  return d;
}

Ready AppendTreeBroadcast(TransferGraph& g, const Ranks& ranks, int64_t bytes, int32_t chunks, uint64_t flow_key,
                          const Ready& start) {
  std::vector<int32_t> parents(ranks.size());
  for (size_t p = 0; p < ranks.size(); ++p) parents[p] = (static_cast<int32_t>(p) - 1) / 2;
  parents[0] = -1;
  return PipelinedBroadcast(g, ranks, parents, bytes, chunks, flow_key, start);
}

void AppendDirectAllToAll(TransferGraph& g, const Ranks& ranks, int64_t bytes, uint64_t flow_key, const Ready& start) {
  const int32_t n = static_cast<int32_t>(ranks.size());
  for (int32_t i = 0; i < n; ++i) {
    for (int32_t j = 0; j < n; ++j) {
      if (i != j) g.Add(g.Path(ranks[i], ranks[j], flow_key), SplitBytes(bytes, n, j), StartOf(start, i));
    }
  }
}

void AppendPairwiseAllToAll(TransferGraph& g, const Ranks& ranks, int64_t bytes, uint64_t flow_key,
                            const Ready& start) {
  const int32_t n = static_cast<int32_t>(ranks.size());
  // done[r]: what rank r waits for before round k: its own send and its receive of round k - 1.
  std::vector<std::array<TransferIndex, 2>> done(n, {kNoTransfer, kNoTransfer});
  std::vector<TransferIndex> sends(n, kNoTransfer);
  std::vector<TransferIndex> deps;
  for (int32_t k = 1; k < n; ++k) {
    for (int32_t r = 0; r < n; ++r) {
      const int32_t to = (r + k) % n;
      // Rendezvous: the bytes move once both the sender and the receiver have reached round k.
      deps.clear();
      for (int32_t side : {r, to}) {
        if (k == 1) {
          deps.insert(deps.end(), StartOf(start, side).begin(), StartOf(start, side).end());
        } else {
          deps.insert(deps.end(), done[side].begin(), done[side].end());
        }
      }
      std::sort(deps.begin(), deps.end());
      deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
      sends[r] = g.Add(g.Path(ranks[r], ranks[to], flow_key), SplitBytes(bytes, n, to), deps);
    }
    for (int32_t r = 0; r < n; ++r) done[r] = {sends[r], sends[(r - k + n) % n]};
  }
}

}  // namespace hetsim::collectives
