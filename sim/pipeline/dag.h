// The execution DAG of one training iteration (HAPT Sec. 4.2.1), built from a schedule.
//
// Nodes, for microbatch i and virtual stage k (k = chunk * S + stage; k = stage without interleaving):
//   F(i,k)   forward compute on stage k % S
//   B(i,k)   backward compute on stage k % S
//   CF(i,k)  forward transfer of F(i,k)'s output, virtual stage k -> k+1          (k < K-1)
//   CB(i,k)  backward transfer of B(i,k+1)'s input gradient, virtual stage k+1 -> k (k < K-1)
//   sink     after every node without successors
// Edges:
//   E_comp   consecutive operations of a stage in schedule order
//   E_comm   consecutive transfers in one direction of one stage-to-stage link, in the order their
//            producers run on the sending stage (CF(.,s) in F order, CB(.,s) in B order)
//   E_dep    F(i,k) -> CF(i,k) -> F(i,k+1);  B(i,k+1) -> CB(i,k) -> B(i,k);  F(i,K-1) -> B(i,K-1)
//   E_sink   terminal nodes -> sink
//   E_sync   with blocking_p2p: a stage's transfer -> the stage's next compute node (the sender waits)
//   E_step   with p2p_rendezvous (DeepSpeed's TrainSchedule): each stage's transfers and passes in
//            the order of the schedule's steps, each after the one before: a transfer starts when
//            both its stages have reached it, and both wait for it to end
// Every edge u -> v means finish-to-start: start(v) >= start(u) + duration(u) (HAPT Eq. 3).
//
// Node ids are dense int32 indices with O(1) lookup by (kind, microbatch, virtual stage), so the
// executor can keep per-node state in flat arrays. Adjacency is a Boost.Graph
// compressed_sparse_row_graph (bidirectional), built once.
#ifndef HETSIM_SIM_PIPELINE_DAG_H_
#define HETSIM_SIM_PIPELINE_DAG_H_

#include <cstdint>
#include <span>
#include <vector>

#include <boost/graph/compressed_sparse_row_graph.hpp>

#include "absl/strings/string_view.h"
#include "sim/pipeline/schedule.h"

namespace hetsim::pipeline {

using NodeId = int32_t;

enum class NodeKind : uint8_t { kForward, kBackward, kCommForward, kCommBackward, kSink };
absl::string_view NodeKindName(NodeKind kind);  // "F", "B", "CF", "CB", "sink"

enum class EdgeKind : uint8_t { kComp, kComm, kDep, kSink, kSync, kStep };

struct DagNode {
  NodeKind kind;
  int32_t microbatch;     // -1 for the sink
  int32_t virtual_stage;  // k; for CF/CB the lower end of the link (k -> k+1 or k+1 -> k)
  // Physical stage that runs a compute node; for a transfer, the sending stage.
  int32_t stage;
  // Physical stage that receives a transfer (== stage for compute nodes and the sink).
  int32_t peer_stage;
};

struct DagEdgeProperty {
  EdgeKind kind;
};

class PipelineDag {
 public:
  using Graph = boost::compressed_sparse_row_graph<boost::bidirectionalS, boost::no_property, DagEdgeProperty,
                                                   boost::no_property, NodeId, NodeId>;

  explicit PipelineDag(const PipelineSchedule& schedule);

  int num_stages() const { return num_stages_; }
  int num_virtual_stages() const { return num_virtual_stages_; }
  int num_microbatches() const { return num_microbatches_; }
  int num_nodes() const { return static_cast<int>(nodes_.size()); }
  int num_edges() const;

  // O(1) ids; k is the virtual stage (CF/CB: 0 <= k < K-1).
  NodeId Forward(int microbatch, int k) const { return forward_base_ + microbatch * num_virtual_stages_ + k; }
  NodeId Backward(int microbatch, int k) const { return backward_base_ + microbatch * num_virtual_stages_ + k; }
  NodeId CommForward(int microbatch, int k) const {
    return comm_forward_base_ + microbatch * (num_virtual_stages_ - 1) + k;
  }
  NodeId CommBackward(int microbatch, int k) const {
    return comm_backward_base_ + microbatch * (num_virtual_stages_ - 1) + k;
  }
  NodeId sink() const { return sink_; }

  const DagNode& node(NodeId id) const { return nodes_[id]; }
  const std::vector<DagNode>& nodes() const { return nodes_; }

  // Successors / predecessors of a node, in a fixed order (CSR order).
  std::span<const NodeId> successors(NodeId id) const {
    return {succ_.data() + succ_offset_[id], succ_.data() + succ_offset_[id + 1]};
  }
  std::span<const NodeId> predecessors(NodeId id) const {
    return {pred_.data() + pred_offset_[id], pred_.data() + pred_offset_[id + 1]};
  }

  const Graph& graph() const { return graph_; }
  // A topological order of every node (Boost.Graph topological_sort), sink last.
  const std::vector<NodeId>& topological_order() const { return topological_order_; }

  // Compute nodes of each physical stage in execution order (the schedule's order), for the executor.
  const std::vector<std::vector<NodeId>>& stage_compute_order() const { return stage_compute_order_; }
  const PipelineSchedule& schedule() const { return schedule_; }

 private:
  PipelineSchedule schedule_;
  int num_stages_ = 0;
  int num_virtual_stages_ = 0;
  int num_microbatches_ = 0;
  NodeId forward_base_ = 0, backward_base_ = 0, comm_forward_base_ = 0, comm_backward_base_ = 0;
  NodeId sink_ = 0;
  std::vector<DagNode> nodes_;
  Graph graph_;
  std::vector<int32_t> succ_offset_, pred_offset_;
  std::vector<NodeId> succ_, pred_;
  std::vector<NodeId> topological_order_;
  std::vector<std::vector<NodeId>> stage_compute_order_;
};

// Node durations from per-virtual-stage costs: forward[k], backward[k] for compute,
// comm_forward[k] / comm_backward[k] for the transfers k -> k+1 and k+1 -> k (K-1 entries each).
struct UniformCosts {
  std::vector<Time> forward, backward, comm_forward, comm_backward;
};
std::vector<Time> NodeDurations(const PipelineDag& dag, const UniformCosts& costs);

// Static longest-path analysis: earliest start of every node when each starts as soon as all its
// predecessors have finished (HAPT Eq. 3 with equality on the binding edge).
struct LongestPath {
  std::vector<Time> earliest_start;   // per node
  Time iteration_time = 0;            // earliest start of the sink = finish of the last node
  std::vector<NodeId> critical_path;  // from a node with no predecessors to the sink
};
// `durations` has one entry per node (the sink's is ignored). `release`, empty or one entry per node: the
// earliest each node may start whatever its predecessors (a stage's first forward waiting for its
// parameters' all-gather at the iteration's start, Plan.overlap_param_gather); a node started by its
// release ends the critical path there.
LongestPath AnalyzeLongestPath(const PipelineDag& dag, std::span<const Time> durations,
                               std::span<const Time> release = {});

// 1 - (sum over stages of busy compute time) / (stages x iteration time): BubbleRatio of
// sim/pipeline/iteration_metrics.h over the DAG's forward and backward nodes.
double BubbleRatio(const PipelineDag& dag, std::span<const Time> durations, Time iteration_time);

}  // namespace hetsim::pipeline

#endif  // HETSIM_SIM_PIPELINE_DAG_H_
