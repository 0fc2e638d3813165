#include "sim/pipeline/dag.h"

#include <algorithm>
#include <iterator>
#include <utility>

#include <boost/graph/topological_sort.hpp>

#include "base/check.h"
#include "sim/pipeline/iteration_metrics.h"

namespace hetsim::pipeline {

absl::string_view NodeKindName(NodeKind kind) {
  switch (kind) {
    case NodeKind::kForward: return "F";
    case NodeKind::kBackward: return "B";
    case NodeKind::kCommForward: return "CF";
    case NodeKind::kCommBackward: return "CB";
    case NodeKind::kSink: return "sink";
  }
  return "?";
}

namespace {

// The edges of the DAG as Boost's CSR constructor takes them: (u, v) pairs and their kinds.
struct EdgeList {
  std::vector<std::pair<NodeId, NodeId>> edges;
  std::vector<DagEdgeProperty> kinds;
  void Add(NodeId u, NodeId v, EdgeKind kind) {
    edges.emplace_back(u, v);
    kinds.push_back({kind});
  }
};

// E_dep: the data path of every microbatch.
void AddDataPathEdges(const PipelineDag& dag, EdgeList& out) {
  const int K = dag.num_virtual_stages();
  for (int i = 0; i < dag.num_microbatches(); ++i) {
    for (int k = 0; k + 1 < K; ++k) {
      out.Add(dag.Forward(i, k), dag.CommForward(i, k), EdgeKind::kDep);
      out.Add(dag.CommForward(i, k), dag.Forward(i, k + 1), EdgeKind::kDep);
      out.Add(dag.Backward(i, k + 1), dag.CommBackward(i, k), EdgeKind::kDep);
      out.Add(dag.CommBackward(i, k), dag.Backward(i, k), EdgeKind::kDep);
    }
    out.Add(dag.Forward(i, K - 1), dag.Backward(i, K - 1), EdgeKind::kDep);
  }
}

// E_step (Plan.p2p_rendezvous): DeepSpeed's TrainSchedule (deepspeed/runtime/pipe/schedule.py) runs
// stage s's forward of microbatch i in step 2i + s and its backward of j in step 2j + 2S - 1 - s. A
// transfer happens at the start of the step after its producer's, the activation's before the
// gradient's, as a blocking exchange in the pair's group both stages wait for (pipe/p2p.py). So each
// stage runs its transfers and passes in (step, CF, CB, pass) order, every item after the previous.
void AddStepRendezvousEdges(const PipelineDag& dag, EdgeList& out) {
  const int S = dag.num_stages(), m = dag.num_microbatches();
  struct StepItem {
    int64_t key;  // step * 3 + rank in the step: 0 the activation, 1 the gradient, 2 the pass
    NodeId id;
  };
  std::vector<StepItem> items;
  for (int s = 0; s < S; ++s) {
    items.clear();
    const auto add = [&items](int64_t step, int rank, NodeId id) { items.push_back({step * 3 + rank, id}); };
    for (int i = 0; i < m; ++i) {
      add(2 * i + s, 2, dag.Forward(i, s));
      add(2 * i + 2 * S - 1 - s, 2, dag.Backward(i, s));
      if (s + 1 < S) {
        add(2 * i + s + 1, 0, dag.CommForward(i, s));
        add(2 * i + 2 * S - 1 - s, 1, dag.CommBackward(i, s));
      }
      if (s > 0) {
        add(2 * i + s, 0, dag.CommForward(i, s - 1));
        add(2 * i + 2 * S - s, 1, dag.CommBackward(i, s - 1));
      }
    }
    std::sort(items.begin(), items.end(), [](const StepItem& a, const StepItem& b) { return a.key < b.key; });
    for (size_t j = 1; j < items.size(); ++j) out.Add(items[j - 1].id, items[j].id, EdgeKind::kStep);
  }
}

// E_sink: every node without a successor finishes before the sink.
void AddSinkEdges(NodeId sink, EdgeList& out) {
  std::vector<char> has_successor(sink + 1, 0);
  for (const auto& e : out.edges) has_successor[e.first] = 1;
  for (NodeId u = 0; u < sink; ++u) {
    if (!has_successor[u]) out.Add(u, sink, EdgeKind::kSink);
  }
}

// Flat successor / predecessor arrays for the hot loops (same order as the Boost graph's).
void FlattenAdjacency(const PipelineDag::Graph& graph, int n, std::vector<int32_t>& succ_offset,
                      std::vector<NodeId>& succ, std::vector<int32_t>& pred_offset, std::vector<NodeId>& pred) {
  succ_offset.assign(n + 1, 0);
  pred_offset.assign(n + 1, 0);
  succ.reserve(boost::num_edges(graph));
  pred.reserve(boost::num_edges(graph));
  for (NodeId v = 0; v < n; ++v) {
    for (auto [it, end] = boost::out_edges(v, graph); it != end; ++it) {
      succ.push_back(static_cast<NodeId>(boost::target(*it, graph)));
    }
    succ_offset[v + 1] = static_cast<int32_t>(succ.size());
    for (auto [it, end] = boost::in_edges(v, graph); it != end; ++it) {
      pred.push_back(static_cast<NodeId>(boost::source(*it, graph)));
    }
    pred_offset[v + 1] = static_cast<int32_t>(pred.size());
  }
}

}  // namespace

PipelineDag::PipelineDag(const PipelineSchedule& schedule)
    : schedule_(schedule),
      num_stages_(schedule.num_stages),
      num_virtual_stages_(schedule.num_virtual_stages()),
      num_microbatches_(schedule.num_microbatches) {
  const int S = num_stages_, K = num_virtual_stages_, m = num_microbatches_;
  const int compute = m * K, comm = m * (K - 1);
  forward_base_ = 0;
  backward_base_ = compute;
  comm_forward_base_ = 2 * compute;
  comm_backward_base_ = 2 * compute + comm;
  sink_ = 2 * compute + 2 * comm;
  const int n = sink_ + 1;

  nodes_.resize(n);
  for (int i = 0; i < m; ++i) {
    for (int k = 0; k < K; ++k) {
      const int s = k % S;
      nodes_[Forward(i, k)] = {NodeKind::kForward, i, k, s, s};
      nodes_[Backward(i, k)] = {NodeKind::kBackward, i, k, s, s};
      if (k + 1 < K) {
        const int next = (k + 1) % S;
        nodes_[CommForward(i, k)] = {NodeKind::kCommForward, i, k, s, next};
        nodes_[CommBackward(i, k)] = {NodeKind::kCommBackward, i, k, next, s};
      }
    }
  }
  nodes_[sink_] = {NodeKind::kSink, -1, -1, -1, -1};

  EdgeList edges;
  edges.edges.reserve(static_cast<size_t>(compute) * 6 + static_cast<size_t>(comm) * 4);
  edges.kinds.reserve(edges.edges.capacity());

  // E_comp and E_comm, walking each stage's order. A stage's transfers to one peer go over one
  // direction of one link, in the order their producers run.
  stage_compute_order_.assign(S, {});
  std::vector<NodeId> last_transfer_to(S, -1);
  for (int s = 0; s < S; ++s) {
    std::fill(last_transfer_to.begin(), last_transfer_to.end(), -1);
    std::vector<NodeId>& order = stage_compute_order_[s];
    NodeId pending_send = -1;  // blocking_p2p: the transfer the stage's next operation waits for
    order.reserve(schedule.ops[s].size());
    for (const PipelineOp& op : schedule.ops[s]) {
      const int k = op.chunk * S + s;
      NodeId compute_node, transfer = -1;
      if (op.kind == OpKind::kForward) {
        compute_node = Forward(op.microbatch, k);
        if (k + 1 < K) transfer = CommForward(op.microbatch, k);
      } else {
        compute_node = Backward(op.microbatch, k);
        if (k > 0) transfer = CommBackward(op.microbatch, k - 1);
      }
      if (!order.empty()) edges.Add(order.back(), compute_node, EdgeKind::kComp);
      if (pending_send >= 0) edges.Add(pending_send, compute_node, EdgeKind::kSync);
      pending_send = schedule.blocking_p2p ? transfer : -1;
      order.push_back(compute_node);
      if (transfer >= 0) {
        NodeId& last = last_transfer_to[nodes_[transfer].peer_stage];
        if (last >= 0) edges.Add(last, transfer, EdgeKind::kComm);
        last = transfer;
      }
    }
  }

  AddDataPathEdges(*this, edges);
  if (schedule.p2p_rendezvous) AddStepRendezvousEdges(*this, edges);
  AddSinkEdges(sink_, edges);
  graph_ = Graph(boost::edges_are_unsorted_multi_pass, edges.edges.begin(), edges.edges.end(), edges.kinds.begin(),
                 static_cast<NodeId>(n));
  FlattenAdjacency(graph_, n, succ_offset_, succ_, pred_offset_, pred_);

  topological_order_.reserve(n);
  boost::topological_sort(graph_, std::back_inserter(topological_order_));
  std::reverse(topological_order_.begin(), topological_order_.end());
}

int PipelineDag::num_edges() const { return static_cast<int>(boost::num_edges(graph_)); }

std::vector<Time> NodeDurations(const PipelineDag& dag, const UniformCosts& costs) {
  std::vector<Time> d(dag.num_nodes(), 0);
  for (NodeId id = 0; id < dag.num_nodes(); ++id) {
    const DagNode& node = dag.node(id);
    switch (node.kind) {
      case NodeKind::kForward: d[id] = costs.forward.at(node.virtual_stage); break;
      case NodeKind::kBackward: d[id] = costs.backward.at(node.virtual_stage); break;
      case NodeKind::kCommForward: d[id] = costs.comm_forward.at(node.virtual_stage); break;
      case NodeKind::kCommBackward: d[id] = costs.comm_backward.at(node.virtual_stage); break;
      case NodeKind::kSink: break;
    }
  }
  return d;
}

LongestPath AnalyzeLongestPath(const PipelineDag& dag, std::span<const Time> durations, std::span<const Time> release) {
  const int n = dag.num_nodes();
  LongestPath result;
  result.earliest_start.assign(n, 0);
  if (!release.empty()) {
    HETSIM_CHECK(static_cast<int>(release.size()) == n, "one release per DAG node");
    result.earliest_start.assign(release.begin(), release.end());
  }
  std::vector<NodeId> binding(n, -1);  // the predecessor that decided each start
  for (NodeId u : dag.topological_order()) {
    const Time finish = result.earliest_start[u] + (u == dag.sink() ? 0 : durations[u]);
    for (NodeId v : dag.successors(u)) {
      Time& start = result.earliest_start[v];
      if (finish > start || (binding[v] < 0 && finish == start)) {
        start = finish;
        binding[v] = u;
      }
    }
  }
  result.iteration_time = result.earliest_start[dag.sink()];
  for (NodeId v = dag.sink(); v >= 0; v = binding[v]) result.critical_path.push_back(v);
  std::reverse(result.critical_path.begin(), result.critical_path.end());
  return result;
}

double BubbleRatio(const PipelineDag& dag, std::span<const Time> durations, Time iteration_time) {
  std::vector<double> busy(dag.num_stages(), 0);
  for (NodeId id = 0; id < dag.num_nodes(); ++id) {
    const NodeKind kind = dag.node(id).kind;
    if (kind == NodeKind::kForward || kind == NodeKind::kBackward) {
      busy[dag.node(id).stage] += TimeToPicosecondsDouble(durations[id]);
    }
  }
  return BubbleRatio(busy, TimeToPicosecondsDouble(iteration_time));
}

}  // namespace hetsim::pipeline
