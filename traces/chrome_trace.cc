#include "traces/chrome_trace.h"

#include <algorithm>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/units.h"
#include "sim/pipeline/dag.h"

namespace hetsim::traces {
namespace {

using sim::executor::ExecutionResult;
using sim::executor::ExecutionSetup;
using sim::pipeline::NodeId;
using sim::pipeline::NodeKind;

std::string Ts(Time t) { return absl::StrFormat("%d.%06d", t / 1000000, t % 1000000); }

std::string Escape(absl::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      absl::StrAppendFormat(&out, "\\u%04x", static_cast<int>(c));
    } else {
      out += c;
    }
  }
  return out;
}

class TraceWriter {
 public:
  TraceWriter() { out_ = "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n"; }
  void Add(const std::string& event) {
    if (!first_) out_ += ",\n";
    first_ = false;
    out_ += event;
  }
  std::string Finish() {
    out_ += "\n]}\n";
    return std::move(out_);
  }

 private:
  std::string out_;
  bool first_ = true;
};

// Where each GPU appears: its process (cluster node) and threads.
struct GpuPlace {
  int pid = 0;
  int compute_tid = 0;
  int comm_tid = 0;
};

}  // namespace

absl::StatusOr<std::vector<bool>> SelectTracedGpus(const ExecutionSetup& setup, const TraceSelection& selection) {
  std::vector<bool> used(setup.topology->num_gpus(), false);
  for (const auto& st : setup.stages) {
    for (GpuId g : st.layout.gpus) used[g] = true;
  }
  std::vector<bool> traced(used.size(), false);
  if (!selection.gpus.empty()) {
    for (GpuId g : selection.gpus) {
      if (g < 0 || g >= static_cast<GpuId>(used.size()) || !used[g]) {
        return absl::InvalidArgumentError(
            absl::StrFormat("--trace-gpus: GPU %d is not used by the plan (its GPUs are listed by global id)", g));
      }
      traced[g] = true;
    }
    return traced;
  }
  std::optional<int> replica = selection.replica;
  if (!replica && setup.num_gpus() > kTraceAllGpusLimit) replica = 0;
  if (!replica) return used;
  int max_dp = 0;
  for (const auto& st : setup.stages) max_dp = std::max(max_dp, st.layout.data_parallel);
  if (*replica < 0 || *replica >= max_dp) {
    return absl::InvalidArgumentError(
        absl::StrFormat("--trace-replica: %d is outside [0, %d) (the plan's largest data_parallel)", *replica, max_dp));
  }
  for (const auto& st : setup.stages) {
    const int r = std::min(*replica, st.layout.data_parallel - 1);
    for (GpuId g : st.layout.TensorGroup(r)) traced[g] = true;
  }
  return traced;
}

std::vector<LinkId> TraceLinks(const ExecutionSetup& setup, const std::vector<bool>& traced) {
  const topology::Topology& topo = *setup.topology;
  std::vector<LinkId> links;
  for (GpuId g = 0; g < static_cast<GpuId>(traced.size()); ++g) {
    if (!traced[g]) continue;
    for (LinkId l : {topo.gpu_to_nic(g), topo.nic_to_gpu(g)}) {
      if (l != topology::kNoLink) links.push_back(l);
    }
  }
  for (size_t l = 0; l < topo.links().size(); ++l) {
    const topology::Link& link = topo.links()[l];
    if (topo.devices()[link.src].kind == topology::DeviceKind::kGateway &&
        topo.devices()[link.dst].kind == topology::DeviceKind::kGateway) {
      links.push_back(static_cast<LinkId>(l));
    }
  }
  std::sort(links.begin(), links.end());
  links.erase(std::unique(links.begin(), links.end()), links.end());
  return links;
}

Time TraceSamplePeriod(const ExecutionSetup& setup) {
  const Time critical = sim::pipeline::AnalyzeLongestPath(*setup.dag, setup.durations).iteration_time;
  return std::max<Time>(critical / 200, kNanosecond);
}

namespace {

// Where each traced GPU's rows go: its process (node) and threads, the network's process, and the
// traced GPUs of each stage.
struct TraceLayout {
  std::vector<GpuPlace> place;
  int network_pid = 0;
  std::vector<std::vector<GpuId>> stage_gpus;
};

// Processes (one per node, one for the network) and threads (compute and comm per GPU), named.
TraceLayout AddProcessesAndThreads(const ExecutionSetup& setup, const std::vector<bool>& traced, TraceWriter& w) {
  const topology::Topology& topo = *setup.topology;
  const int S = setup.num_stages();
  TraceLayout layout;
  std::vector<int> node_base(topo.num_islands() + 1, 0);
  for (int i = 0; i < topo.num_islands(); ++i) node_base[i + 1] = node_base[i] + topo.num_nodes(i);
  layout.network_pid = node_base.back() + 1;
  const int network_pid = layout.network_pid;
  std::vector<GpuPlace>& place = layout.place;
  place.resize(traced.size());
  std::vector<bool> named_process(node_base.back() + 2, false);
  for (GpuId g = 0; g < static_cast<GpuId>(traced.size()); ++g) {
    if (!traced[g]) continue;
    const topology::GpuLocation loc = *topo.Locate(g);
    place[g] = {node_base[loc.island] + loc.node + 1, 2 * loc.local, 2 * loc.local + 1};
    if (!named_process[place[g].pid]) {
      named_process[place[g].pid] = true;
      const v1::GpuType& type = topo.gpu_type(loc.island);
      const std::string name = absl::StrFormat("%s node %d (%s)", topo.cluster().islands(loc.island).name(), loc.node,
                                               type.preset().empty() ? type.name() : type.preset());
      w.Add(absl::StrFormat(R"({"name":"process_name","ph":"M","pid":%d,"tid":0,"args":{"name":"%s"}})",
                            place[g].pid, Escape(name)));
      w.Add(absl::StrFormat(R"({"name":"process_sort_index","ph":"M","pid":%d,"tid":0,"args":{"sort_index":%d}})",
                            place[g].pid, place[g].pid));
    }
    for (int comm = 0; comm < 2; ++comm) {
      const int tid = comm ? place[g].comm_tid : place[g].compute_tid;
      w.Add(absl::StrFormat(R"j({"name":"thread_name","ph":"M","pid":%d,"tid":%d,"args":{"name":"GPU %d %s, global %d"}})j",
                            place[g].pid, tid, loc.local, comm ? "comm" : "compute", g));
      w.Add(absl::StrFormat(R"({"name":"thread_sort_index","ph":"M","pid":%d,"tid":%d,"args":{"sort_index":%d}})",
                            place[g].pid, tid, tid));
    }
  }
  w.Add(absl::StrFormat(R"({"name":"process_name","ph":"M","pid":%d,"tid":0,"args":{"name":"network"}})", network_pid));
  w.Add(absl::StrFormat(R"({"name":"process_sort_index","ph":"M","pid":%d,"tid":0,"args":{"sort_index":%d}})",
                        network_pid, network_pid));

  std::vector<std::vector<GpuId>>& stage_gpus = layout.stage_gpus;
  stage_gpus.resize(S);
  for (int s = 0; s < S; ++s) {
    for (GpuId g : setup.stages[s].layout.gpus) {
      if (traced[g]) stage_gpus[s].push_back(g);
    }
  }
  return layout;
}

// Forward and backward passes on the compute thread of every traced GPU of their stage.
void AddCompute(const ExecutionSetup& setup, const ExecutionResult& r, const TraceLayout& layout, TraceWriter& w) {
  const auto& dag = *setup.dag;
  const int S = setup.num_stages();
  const auto& place = layout.place;
  const auto& stage_gpus = layout.stage_gpus;
  const bool interleaved = dag.num_virtual_stages() > S;
  for (int s = 0; s < S; ++s) {
    if (stage_gpus[s].empty()) continue;
    for (NodeId id : dag.stage_compute_order()[s]) {
      if (r.node_start[id] < 0) continue;  // a failure stopped the iteration before it
      const auto& node = dag.node(id);
      const bool forward = node.kind == NodeKind::kForward;
      const auto& vs = setup.virtual_stages[node.virtual_stage];
      const std::string name = absl::StrFormat("%s%d s%d%s", forward ? "F" : "B", node.microbatch, s,
                                               interleaved ? absl::StrCat(" c", node.virtual_stage / S) : "");
      const double gflop = (forward ? vs.cost.forward_flop_per_gpu : vs.cost.backward_flop_per_gpu) / 1e9;
      for (GpuId g : stage_gpus[s]) {
        w.Add(absl::StrFormat(
            R"({"name":"%s","cat":"%s","ph":"X","ts":%s,"dur":%s,"pid":%d,"tid":%d,"args":{"microbatch":%d,"stage":%d,"chunk":%d,"layers":"%d-%d","gflop":%.6g}})",
            name, forward ? "forward" : "backward", Ts(r.node_start[id]), Ts(r.node_finish[id] - r.node_start[id]),
            place[g].pid, place[g].compute_tid, node.microbatch, s, node.virtual_stage / S, vs.first_layer,
            vs.first_layer + vs.num_layers - 1, gflop));
      }
    }
  }
}

// Boundary transfers: a send on the source GPU, a receive on the destination, an arrow between.
void AddTransfers(const ExecutionSetup& setup, const ExecutionResult& r, const std::vector<bool>& traced,
                  const TraceLayout& layout, TraceWriter& w) {
  const auto& dag = *setup.dag;
  const auto& place = layout.place;
  uint64_t arrow = 0;
  for (NodeId id = 0; id < dag.num_nodes(); ++id) {
    const auto& node = dag.node(id);
    if (node.kind != NodeKind::kCommForward && node.kind != NodeKind::kCommBackward) continue;
    if (r.node_start[id] < 0) continue;
    const bool forward = node.kind == NodeKind::kCommForward;
    const auto& bt = setup.boundaries[node.virtual_stage];
    const auto& flows = forward ? bt.forward_flows : bt.backward_flows;
    const std::string name = absl::StrFormat("%s%d s%d>s%d", forward ? "CF" : "CB", node.microbatch, node.stage,
                                             node.peer_stage);
    for (size_t j = 0; j < flows.size(); ++j) {
      const auto& f = flows[j];
      if (!traced[f.src] && !traced[f.dst]) continue;
      const Time start = r.node_start[id];
      const Time finish = r.flow_finish.empty() ? r.node_finish[id] : r.flow_finish[r.flow_offset[id] + j];
      const std::string args = absl::StrFormat(R"("args":{"microbatch":%d,"from_gpu":%d,"to_gpu":%d,"bytes":%d})",
                                               node.microbatch, f.src, f.dst, f.bytes);
      for (int end = 0; end < 2; ++end) {
        const GpuId g = end == 0 ? f.src : f.dst;
        if (!traced[g]) continue;
        w.Add(absl::StrFormat(R"({"name":"%s %s","cat":"transfer","ph":"X","ts":%s,"dur":%s,"pid":%d,"tid":%d,%s})",
                              end == 0 ? "send" : "recv", name, Ts(start), Ts(finish - start), place[g].pid,
                              place[g].comm_tid, args));
      }
      if (traced[f.src] && traced[f.dst] && finish > start) {
        w.Add(absl::StrFormat(R"({"name":"%s","cat":"transfer","ph":"s","id":%d,"ts":%s,"pid":%d,"tid":%d})", name,
                              arrow, Ts(start), place[f.src].pid, place[f.src].comm_tid));
        w.Add(absl::StrFormat(R"({"name":"%s","cat":"transfer","ph":"f","bp":"e","id":%d,"ts":%s,"pid":%d,"tid":%d})",
                              name, arrow, Ts(start), place[f.dst].pid, place[f.dst].comm_tid));
        ++arrow;
      }
    }
  }
}

// Gradient synchronisation and the optimizer step.
void AddGradSyncAndOptimizer(const ExecutionSetup& setup, const ExecutionResult& r, const TraceLayout& layout, TraceWriter& w) {
  const int S = setup.num_stages();
  const auto& place = layout.place;
  const auto& stage_gpus = layout.stage_gpus;
  for (const auto& g : r.grad_syncs) {
    const std::string name = g.param_gather ? absl::StrFormat("param all-gather s%d", g.stage)
                                            : absl::StrFormat("grad sync s%d bucket %d", g.stage, g.step);
    for (GpuId gpu : stage_gpus[g.stage]) {
      w.Add(absl::StrFormat(R"({"name":"%s","cat":"grad_sync","ph":"X","ts":%s,"dur":%s,"pid":%d,"tid":%d})", name,
                            Ts(g.start), Ts(g.finish - g.start), place[gpu].pid, place[gpu].comm_tid));
    }
  }
  for (int s = 0; s < S; ++s) {
    if (r.optimizer_start[s] < 0) continue;  // not reached before a failure
    for (GpuId gpu : stage_gpus[s]) {
      w.Add(absl::StrFormat(R"({"name":"optimizer s%d","cat":"optimizer","ph":"X","ts":%s,"dur":%s,"pid":%d,"tid":%d})",
                            s, Ts(r.optimizer_start[s]), Ts(setup.stages[s].optimizer_time), place[gpu].pid,
                            place[gpu].compute_tid));
    }
  }
}

// Memory per traced GPU, as counters.
void AddMemory(const ExecutionSetup& setup, const ExecutionResult& r, const TraceLayout& layout, TraceWriter& w) {
  const topology::Topology& topo = *setup.topology;
  const int S = setup.num_stages();
  const auto& place = layout.place;
  const auto& stage_gpus = layout.stage_gpus;
  for (int s = 0; s < S; ++s) {
    if (stage_gpus[s].empty()) continue;
    const auto timeline = sim::executor::MemoryTimeline(setup, r, s);
    for (GpuId gpu : stage_gpus[s]) {
      const topology::GpuLocation loc = *topo.Locate(gpu);
      for (const auto& [t, bytes] : timeline) {
        w.Add(absl::StrFormat(R"({"name":"memory GPU %d","ph":"C","ts":%s,"pid":%d,"args":{"GiB":%.6f}})", loc.local,
                              Ts(t), place[gpu].pid, BytesToGib(static_cast<double>(bytes))));
      }
    }
  }
}

// Busy share of the sampled links between consecutive samples.
void AddLinkSamples(const ExecutionSetup& setup, const ExecutionResult& r, const std::vector<LinkId>& sampled_links,
                    int network_pid, TraceWriter& w) {
  const topology::Topology& topo = *setup.topology;
  const size_t L = sampled_links.size();
  for (size_t l = 0; l < L; ++l) {
    const topology::Link& link = topo.links()[sampled_links[l]];
    const std::string name = absl::StrFormat("link %s > %s", Escape(topo.DeviceName(link.src)), Escape(topo.DeviceName(link.dst)));
    for (size_t i = 1; i < r.sample_times.size(); ++i) {
      const Time dt = r.sample_times[i] - r.sample_times[i - 1];
      if (dt <= 0) continue;
      const Time busy = r.link_busy[i * L + l] - r.link_busy[(i - 1) * L + l];
      w.Add(absl::StrFormat(R"({"name":"%s","ph":"C","ts":%s,"pid":%d,"args":{"busy %%":%.3f}})", name,
                            Ts(r.sample_times[i - 1]), network_pid,
                            100.0 * static_cast<double>(busy) / static_cast<double>(dt)));
    }
  }
}

// Pipeline end, iteration end (or failure) and every fault transition, as global instants.
void AddMarkers(const ExecutionResult& r, int network_pid, TraceWriter& w) {
  if (!r.faults.failed || r.pipeline_end > 0) {
    w.Add(absl::StrFormat(R"({"name":"pipeline end","ph":"i","s":"g","ts":%s,"pid":%d,"tid":0})", Ts(r.pipeline_end),
                          network_pid));
  }
  w.Add(absl::StrFormat(R"({"name":"%s","ph":"i","s":"g","ts":%s,"pid":%d,"tid":0})",
                        r.faults.failed ? "iteration failed" : "iteration end", Ts(r.iteration_time), network_pid));
  // What-if faults (docs/faults.md): each transition at its time.
  for (const auto& e : r.faults.events) {
    w.Add(absl::StrFormat(R"({"name":"fault %d %s","cat":"fault","ph":"i","s":"g","ts":%s,"pid":%d,"tid":0,"args":{"fault":%d}})",
                          e.fault, e.what, Ts(e.at), network_pid, e.fault));
  }
}

}  // namespace

std::string ChromeTraceJson(const ExecutionSetup& setup, const ExecutionResult& r, const std::vector<bool>& traced,
                            const std::vector<LinkId>& sampled_links) {
  TraceWriter w;
  const TraceLayout layout = AddProcessesAndThreads(setup, traced, w);
  AddCompute(setup, r, layout, w);
  AddTransfers(setup, r, traced, layout, w);
  AddGradSyncAndOptimizer(setup, r, layout, w);
  AddMemory(setup, r, layout, w);
  AddLinkSamples(setup, r, sampled_links, layout.network_pid, w);
  AddMarkers(r, layout.network_pid, w);
  return w.Finish();
}

}  // namespace hetsim::traces
