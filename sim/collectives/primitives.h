// Building blocks that append a communication pattern to a TransferGraph: rings, double binary trees,
// broadcast chains and trees, all-to-all exchanges. Ranks are positions in `ranks` (GPU ids);
// `start[r]` lists the transfers rank r waits for before it takes part (empty = from the start), and
// each block returns, per rank, the transfers after which that rank holds its result.
#ifndef HETSIM_SIM_COLLECTIVES_PRIMITIVES_H_
#define HETSIM_SIM_COLLECTIVES_PRIMITIVES_H_

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "sim/collectives/transfer_graph_internal.h"

namespace hetsim::collectives {

using Ranks = std::vector<GpuId>;
using Ready = std::vector<std::vector<TransferIndex>>;

// Part `i` of `total` split into `parts` near-equal integers (the first total % parts get one more).
int64_t SplitBytes(int64_t total, int64_t parts, int64_t i);

// `steps` ring steps: at step k rank r sends segment (r + offset - k) mod n of `bytes` (split in n
// segments) to rank r+1, in `chunks` pipeline chunks. A send waits for the previous step's chunk to
// arrive and for the rank's own previous send. Reduce-scatter / all-gather: n-1 steps; all-reduce 2(n-1).
Ready AppendRing(TransferGraph& g, const Ranks& ranks, int64_t bytes, int32_t steps, int32_t chunks,
                 int32_t segment_offset, uint64_t flow_key, const Ready& start);

// The same ring as AppendRing with one chunk, its `steps` steps aggregated: one flow per ring edge
// carrying the bytes of every step over that edge and paying the edge's route latency `steps` times,
// between a join on every rank's start and a join on every flow (each rank's result is ready when the
// whole ring is). Exact for the ring's completion when each edge keeps one rate throughout (no traffic
// from outside the ring on its binding links); an approximation otherwise (docs/decisions.md).
Ready AppendAggregatedRing(TransferGraph& g, const Ranks& ranks, int64_t bytes, int32_t steps, int32_t segment_offset,
                           uint64_t flow_key, const Ready& start);
// Bytes rank r sends over `steps` ring steps of AppendRing: sum over k < steps of segment
// (r + segment_offset - k) mod n of `bytes` split in n.
int64_t RingEdgeBytes(int64_t bytes, int32_t n, int32_t r, int32_t steps, int32_t segment_offset);

// NCCL's double binary tree all-reduce: half of `bytes` on each of two trees; each chunk is reduced up to the root
// and broadcast back down, chunks pipelined. `node_sizes` says how `ranks` sit on nodes: that many consecutive ranks
// per node (ChannelOrder's order; their sum is the rank count). Across two nodes or more the trees are NCCL's: its
// binary tree over the nodes, the second mirrored (even node count) or shifted by one so that one tree's leaves are
// the other's inner nodes, and inside every node a chain from its first rank (the channel's NIC) through the others,
// the same chain in both trees; the child nodes hang under their parent node's first rank (src/graph/connect.cc,
// trees.cc). Empty, or one node: the binary trees over the ranks themselves (every rank a node; inside one node
// NCCL runs the chain, docs/network.md). `aggregated` (with chunks >= 3) moves each edge's chunks as three
// transfers per direction instead of `chunks`: the first chunk and the last, stepped through the tree as before,
// and the chunks between as one transfer that streams behind the first paying their chunks - 2 latencies. Exact
// when every edge keeps one rate per chunk step; an approximation otherwise (docs/decisions.md, "Aggregated tree
// chunks").
// `node_classes` > 1 (the representative approximation, representative.h; with `start` empty): `ranks` are nodes of
// that many consecutive ranks, and nodes whose ranks sit alike in both trees (depths, parents inside the node, children
// outside) form a class: only its first node's edges inside the node are simulated, standing for the others'; every
// edge between nodes is simulated. Exact when the class's nodes see the same timing at their edges to other nodes; an
// approximation otherwise (docs/decisions.md). `timed_ends` (aggregated only): each edge's first and last chunk are
// timed transfers (TransferGraph::SetTimed), the representative's: the pipeline's fill and drain without a flow each.
Ready AppendDoubleTreeAllReduce(TransferGraph& g, const Ranks& ranks, int64_t bytes, int32_t chunks, uint64_t flow_key,
                                const Ready& start, bool aggregated = false, int32_t node_classes = 0,
                                bool timed_ends = false, std::span<const int32_t> node_sizes = {});
// Depth (edges on the longest root-to-leaf path of either tree) of the trees AppendDoubleTreeAllReduce builds over
// `n` ranks on `node_sizes` (ceil(log2 N) over N nodes, plus the longest chain's g - 1 inside them).
int32_t DoubleTreeDepth(int64_t n, std::span<const int32_t> node_sizes = {});
// The (child, parent) rank positions of tree 0 or 1 of AppendDoubleTreeAllReduce; the flow key of
// tree t is flow_key * 2 + t.
std::vector<std::pair<int32_t, int32_t>> DoubleTreeEdges(int32_t n, int32_t tree,
                                                         std::span<const int32_t> node_sizes = {});

// Broadcast from ranks[0]: a pipelined chain through the ranks in order.
Ready AppendChainBroadcast(TransferGraph& g, const Ranks& ranks, int64_t bytes, int32_t chunks, uint64_t flow_key,
                           const Ready& start);
// Broadcast from ranks[0] down a binary heap tree (children of position p: 2p+1, 2p+2), pipelined.
Ready AppendTreeBroadcast(TransferGraph& g, const Ranks& ranks, int64_t bytes, int32_t chunks, uint64_t flow_key,
                          const Ready& start);
int32_t HeapTreeDepth(int64_t n);

// All-to-all: every rank sends SplitBytes(bytes, n, j) to rank j, all at once (direct) or in n-1
// rounds where round k pairs r with r+k (pairwise). A pairwise round's bytes move once both its sender
// and its receiver have finished round k - 1 (MPI's sendrecv of a message above the eager limit, or
// NCCL's send waiting for the peer's posted receive), so a rank never receives two rounds at once.
void AppendDirectAllToAll(TransferGraph& g, const Ranks& ranks, int64_t bytes, uint64_t flow_key, const Ready& start);
void AppendPairwiseAllToAll(TransferGraph& g, const Ranks& ranks, int64_t bytes, uint64_t flow_key, const Ready& start);

}  // namespace hetsim::collectives

#endif  // HETSIM_SIM_COLLECTIVES_PRIMITIVES_H_
