#include "traces/chrome_trace.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/counted.h"
#include "base/units.h"
#include "sim/pipeline/dag.h"
#include "traces/trace_events.h"

namespace hetsim::traces {
namespace {

using executor::ExecutionResult;
using executor::ExecutionSetup;
using executor::GradSyncStep;
using pipeline::NodeId;
using pipeline::NodeKind;

}  // namespace

absl::StatusOr<std::vector<bool>> SelectTracedGpus(const ExecutionSetup& setup, const TraceSelection& selection) {
  std::vector<bool> used(setup.topology->num_gpus(), false);
  for (const auto& st : setup.stages) {
    for (GpuId g : st.layout.gpus) used[g.value()] = true;
  }
  std::vector<bool> traced(used.size(), false);
  if (!selection.gpus.empty()) {
    for (GpuId g : selection.gpus) {
      if (g.value() < 0 || g.value() >= static_cast<int32_t>(used.size()) || !used[g.value()]) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "--trace-gpus: GPU %d is not used by the plan (its GPUs are listed by global id)", g.value()));
      }
      traced[g.value()] = true;
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
  // A mixed stage shows the replica of each of its groups: a lane per GPU type and share.
  auto trace = [&](const executor::StageLayout& l) {
    const int r = std::min(*replica, l.data_parallel - 1);
    for (int c = 0; c < l.context_parallel; ++c) {
      for (GpuId g : l.TensorGroup(r, c)) traced[g.value()] = true;
    }
  };
  for (const auto& st : setup.stages) {
    if (!st.layout.mixed()) trace(st.layout);
    for (const auto& group : st.layout.replica_groups) trace(group);
  }
  return traced;
}

std::vector<LinkId> TraceLinks(const ExecutionSetup& setup, const std::vector<bool>& traced) {
  const topology::Topology& topo = *setup.topology;
  std::vector<LinkId> links;
  for (GpuId g : IdsBelow<GpuId>(traced.size())) {
    if (!traced[g.value()]) continue;
    for (LinkId l : {topo.gpu_to_nic(g), topo.nic_to_gpu(g)}) {
      if (l != topology::kNoLink) links.push_back(l);
    }
  }
  for (size_t l = 0; l < topo.links().size(); ++l) {
    const topology::Link& link = topo.links()[l];
    if (topo.device(link.src).kind == topology::DeviceKind::kGateway &&
        topo.device(link.dst).kind == topology::DeviceKind::kGateway) {
      links.push_back(static_cast<LinkId>(l));
    }
  }
  std::sort(links.begin(), links.end());
  links.erase(std::unique(links.begin(), links.end()), links.end());
  return links;
}

Time TraceSamplePeriod(const ExecutionSetup& setup) {
  const Time critical = pipeline::AnalyzeLongestPath(*setup.dag, setup.durations).iteration_time;
  return std::max<Time>(critical / 200, kNanosecond);
}

namespace {

// The rows of a GPU: its compute stream, sends, receives and gradient synchronisation, each split
// into lanes when its operations overlap in time.
enum Track : int { kCompute = 0, kSend, kRecv, kSync, kNumTracks };
constexpr const char* kTrackNames[kNumTracks] = {"compute", "send", "recv", "grad sync"};

struct Slice {
  GpuId gpu;
  Track track;
  int64_t ts, dur;              // ticks
  std::string name, cat, args;  // args: a JSON object, or empty
  int lane = 0;
};

// A flow arrow from slice `from` (a send) to slice `to` (the compute that consumes the transfer).
struct Arrow {
  int from, to;
  std::string name;
};

struct TraceContent {
  std::vector<Slice> slices;
  std::vector<Arrow> arrows;
  std::vector<int> compute_slice;              // per DAG node: its first slice (one per traced GPU of its stage), or -1
  std::vector<std::vector<GpuId>> stage_gpus;  // traced GPUs of each stage
  // A pipeline of a plan of pipelines: its name and batch share in every pass's args (else empty).
  std::string pass_args;
};

void AddSlice(TraceContent& c, GpuId gpu, Track track, Time start, Time finish, std::string name, std::string cat,
              std::string args = "") {
  const int64_t ts = TraceTicks(start);
  c.slices.push_back({gpu, track, ts, TraceTicks(finish) - ts, std::move(name), std::move(cat), std::move(args)});
}

// Context parallelism: the pass's K/V ring (or all-gathers) on the GPU's send row, from the pass's
// start for the time its steps take on the fabric (clipped to the pass), with its exposed share.
void AddContextParallelExchange(const executor::VirtualStageCost& vs, spec::ContextParallelComm comm, bool forward,
                                const std::string& pass, Time start, Time finish, GpuId gpu, TraceContent& c) {
  const Time ring = forward ? vs.cp_forward_exchange_time : vs.cp_backward_exchange_time;
  if (ring <= 0) return;
  const Time exposed = forward ? vs.cp_forward_exposed_time : vs.cp_backward_exposed_time;
  AddSlice(
      c, gpu, kSend, start, start + std::min(ring, finish - start),
      absl::StrCat(spec::ContextParallelExchangeName(comm), " ", pass), "context_parallel",
      absl::StrFormat(R"({"ring_ms":%.6g,"exposed_ms":%.6g})", TimeToMilliseconds(ring), TimeToMilliseconds(exposed)));
}

// On a GPU of a mixed stage's replica group: how much shorter its own part of compute node `id` was than
// the stage's (it waited that long for the slowest group; as faults or jitter stretched them, GroupWaitIn)
// and the group's fields for the slice's args.
struct GroupPass {
  Time wait = 0;
  std::string args;  // ,"replica_group":..., or empty for a plain stage
};
GroupPass GroupPassOn(const ExecutionSetup& setup, const ExecutionResult& r, NodeId id, int s, GpuId g) {
  const auto& st = setup.stages[s];
  if (!st.layout.mixed()) return {};
  const auto it = std::find(st.layout.gpus.begin(), st.layout.gpus.end(), g);
  const int group = st.layout.GroupOfGpu(static_cast<size_t>(it - st.layout.gpus.begin()));
  GroupPass out;
  out.wait = executor::GroupWaitIn(setup, r, id, group);
  out.args = absl::StrFormat(R"(,"replica_group":%d,"gpu_type":"%s","micro_batch_share":%d,"wait_ms":%.6g)", group,
                             JsonEscape(st.replica_groups[group].gpu_type_name),
                             st.layout.replica_groups[group].micro_batch_share, TimeToMilliseconds(out.wait));
  // MoE: the layout the group gives the experts over its own GPUs.
  if (const auto& mine = st.layout.replica_groups[group]; mine.expert_parallel > 1) {
    absl::StrAppendFormat(&out.args, R"(,"expert_parallel":%d,"expert_tensor_parallel":%d)", mine.expert_parallel,
                          mine.ExpertTensorParallel());
  }
  return out;
}

// Forward and backward passes on the compute row of every traced GPU of their stage.
void AddCompute(const ExecutionSetup& setup, const ExecutionResult& r, TraceContent& c) {
  const auto& dag = *setup.dag;
  const int S = setup.num_stages();
  const bool interleaved = dag.num_virtual_stages() > S;
  for (int s = 0; s < S; ++s) {
    if (c.stage_gpus[s].empty()) continue;
    for (NodeId id : dag.stage_compute_order()[s]) {
      if (r.node_start[id] < 0) continue;  // a failure stopped the iteration before it
      const auto& node = dag.node(id);
      const bool forward = node.kind == NodeKind::kForward;
      const auto& vs = setup.virtual_stages[node.virtual_stage];
      const std::string name = absl::StrFormat("%s%d s%d%s", forward ? "F" : "B", node.microbatch, s,
                                               interleaved ? absl::StrCat(" c", node.virtual_stage / S) : "");
      const double gflop = (forward ? vs.cost.forward_flop_per_gpu : vs.cost.backward_flop_per_gpu) / 1e9;
      const std::string args =
          absl::StrFormat(R"({"microbatch":%d,"stage":%d,"chunk":%d,"layers":"%d-%d","gflop":%.6g})", node.microbatch,
                          s, node.virtual_stage / S, vs.first_layer, vs.first_layer + vs.num_layers - 1, gflop);
      c.compute_slice[id] = static_cast<int>(c.slices.size());
      // A pipeline's plain stage names its GPU type beside the pipeline's share (a mixed one, per group).
      const std::string type = c.pass_args.empty() || setup.stages[s].layout.mixed()
                                   ? ""
                                   : absl::StrFormat(R"(,"gpu_type":"%s")", JsonEscape(setup.stages[s].gpu_type_name));
      for (GpuId g : c.stage_gpus[s]) {
        const GroupPass pass = GroupPassOn(setup, r, id, s, g);
        const std::string more = absl::StrCat(c.pass_args, type, pass.args);
        AddSlice(c, g, kCompute, r.node_start[id], r.node_finish[id] - pass.wait, name,
                 forward ? "forward" : "backward",
                 more.empty() ? args : absl::StrCat(args.substr(0, args.size() - 1), more, "}"));
      }
      for (GpuId g : c.stage_gpus[s]) {
        AddContextParallelExchange(vs, setup.spec.plan.cp_comm, forward, name, r.node_start[id], r.node_finish[id], g,
                                   c);
      }
    }
  }
}

// The compute slice on GPU `g` of DAG node `id`, or -1 when it is not traced.
int ComputeSliceOn(const ExecutionSetup& setup, const TraceContent& c, NodeId id, GpuId g) {
  if (c.compute_slice[id] < 0) return -1;
  const auto& gpus = c.stage_gpus[setup.dag->node(id).stage];
  const auto it = std::find(gpus.begin(), gpus.end(), g);
  return it == gpus.end() ? -1 : c.compute_slice[id] + static_cast<int>(it - gpus.begin());
}

// Boundary transfers: a send on the source GPU, a receive on the destination, and an arrow from the
// send to the compute it feeds on the destination (F(i,k+1) for CF(i,k), B(i,k) for CB(i,k)). The
// arrow ends on the consumer, not on the receive, because the receive starts with the send: viewers
// that bind flow ends by timestamp (the DevTools engine) drop an arrow whose two ends share one.
// Transfers take their direction as category ("forward", "backward"), like the compute they link.
void AddTransfers(const ExecutionSetup& setup, const ExecutionResult& r, const std::vector<bool>& traced,
                  TraceContent& c) {
  const auto& dag = *setup.dag;
  for (NodeId id = 0; id < dag.num_nodes(); ++id) {
    const auto& node = dag.node(id);
    if (node.kind != NodeKind::kCommForward && node.kind != NodeKind::kCommBackward) continue;
    if (r.node_start[id] < 0) continue;
    const bool forward = node.kind == NodeKind::kCommForward;
    const auto& bt = setup.boundaries[node.virtual_stage];
    const auto& flows = forward ? bt.forward_flows : bt.backward_flows;
    const std::string name =
        absl::StrFormat("%s%d s%d>s%d", forward ? "CF" : "CB", node.microbatch, node.stage, node.peer_stage);
    const char* cat = forward ? "forward" : "backward";
    const NodeId consumer = forward ? dag.Forward(node.microbatch, node.virtual_stage + 1)
                                    : dag.Backward(node.microbatch, node.virtual_stage);
    for (size_t j = 0; j < flows.size(); ++j) {
      const auto& f = flows[j];
      if (!traced[f.src.value()] && !traced[f.dst.value()]) continue;
      const Time start = r.node_start[id];
      const Time finish = r.flow_finish.empty() ? r.node_finish[id] : r.flow_finish[r.flow_offset[id] + j];
      const std::string args = absl::StrFormat(R"({"microbatch":%d,"from_gpu":%d,"to_gpu":%d,"bytes":%d})",
                                               node.microbatch, f.src.value(), f.dst.value(), f.bytes);
      int send = -1;
      if (traced[f.src.value()]) {
        send = static_cast<int>(c.slices.size());
        AddSlice(c, f.src, kSend, start, finish, absl::StrCat("send ", name), cat, args);
      }
      if (traced[f.dst.value()]) AddSlice(c, f.dst, kRecv, start, finish, absl::StrCat("recv ", name), cat, args);
      const int to = traced[f.dst.value()] ? ComputeSliceOn(setup, c, consumer, f.dst) : -1;
      if (send >= 0 && to >= 0 && c.slices[to].ts > c.slices[send].ts) c.arrows.push_back({send, to, name});
    }
  }
}

// Gradient synchronisation (its own rows) and the optimizer step (on the compute row).
void AddGradSyncAndOptimizer(const ExecutionSetup& setup, const ExecutionResult& r, TraceContent& c) {
  for (const auto& g : r.grad_syncs) {
    std::string name = g.param_gather ? absl::StrFormat("param all-gather s%d", g.stage)
                                      : absl::StrFormat("grad sync s%d bucket %d", g.stage, g.step);
    // An MoE stage's expert buckets reduce over the expert-data-parallel groups.
    const std::vector<GradSyncStep>& buckets = setup.stages[g.stage].grad_buckets;
    if (!g.param_gather && g.step < static_cast<int>(buckets.size()) && buckets[g.step].bytes == 0) {
      absl::StrAppend(&name, " (experts)");
    }
    for (GpuId gpu : c.stage_gpus[g.stage]) AddSlice(c, gpu, kSync, g.start, g.finish, name, "grad_sync");
  }
  for (int s = 0; s < setup.num_stages(); ++s) {
    if (r.optimizer_start[s] < 0) continue;  // not reached before a failure
    for (GpuId gpu : c.stage_gpus[s]) {
      AddSlice(c, gpu, kCompute, r.optimizer_start[s], r.optimizer_start[s] + setup.stages[s].optimizer_time,
               absl::StrFormat("optimizer s%d", s), "optimizer");
    }
  }
}

// How one iteration's processes are numbered and named in a trace that may hold several (a plan of
// pipelines): pids after pid_base, flow arrow ids after arrow_base, process names after prefix.
struct TraceNames {
  int pid_base = 0;
  int arrow_base = 0;
  std::string prefix;
  std::string pass_args;  // TraceContent::pass_args
  // The fault transitions to draw as instants: the run's own; for pipelines of different shapes the
  // one shared run's, with the first pipeline only (null: none).
  const std::vector<faults::FaultEvent>* fault_events = nullptr;
};

// Where each GPU's rows go: its process (cluster node) and the first thread of each track.
struct GpuPlace {
  int pid = 0;
  int tid[kNumTracks] = {};
  int lanes[kNumTracks] = {};
};

struct TraceLayout {
  std::vector<GpuPlace> place;
  int network_pid = 0;
};

// Lanes per (GPU, track), then processes (one per node, one for the network) and threads, named.
TraceLayout LayOut(const ExecutionSetup& setup, const std::vector<bool>& traced, const TraceNames& names,
                   TraceContent& c, TraceEventList& out) {
  const topology::Topology& topo = *setup.topology;
  TraceLayout layout;
  layout.place.resize(traced.size());
  std::map<std::pair<GpuId, int>, std::vector<int>> groups;
  for (int i = 0; i < static_cast<int>(c.slices.size()); ++i) groups[{c.slices[i].gpu, c.slices[i].track}].push_back(i);
  for (const auto& [key, members] : groups) {
    std::vector<std::pair<int64_t, int64_t>> intervals;
    for (int i : members) intervals.emplace_back(c.slices[i].ts, c.slices[i].ts + c.slices[i].dur);
    const std::vector<int> lanes = AssignLanes(intervals);
    int& count = layout.place[key.first.value()].lanes[key.second];
    for (size_t j = 0; j < members.size(); ++j) {
      c.slices[members[j]].lane = lanes[j];
      count = std::max(count, lanes[j] + 1);
    }
  }
  std::vector<int> node_base(topo.num_islands() + 1, 0);
  for (int i = 0; i < topo.num_islands(); ++i) node_base[i + 1] = node_base[i] + topo.num_nodes(i);
  layout.network_pid = names.pid_base + node_base.back() + 1;
  std::vector<int> next_tid(names.pid_base + node_base.back() + 2, -1);  // -1: process not named yet
  for (GpuId g : IdsBelow<GpuId>(traced.size())) {
    if (!traced[g.value()]) continue;
    const topology::GpuLocation loc = *topo.Locate(g);
    GpuPlace& p = layout.place[g.value()];
    p.pid = names.pid_base + node_base[loc.island] + loc.node + 1;
    p.lanes[kCompute] = std::max(p.lanes[kCompute], 1);  // a GPU always shows its compute row
    if (next_tid[p.pid] < 0) {
      next_tid[p.pid] = 0;
      const spec::IslandSpec& island = topo.island(loc.island);
      const std::string name =
          absl::StrFormat("%s%s node %d (%s)", names.prefix, island.name, loc.node, island.gpu.short_name());
      out.AddMetadata(absl::StrFormat(R"({"name":"process_name","ph":"M","pid":%d,"tid":0,"args":{"name":"%s"}})",
                                      p.pid, JsonEscape(name)));
      out.AddMetadata(absl::StrFormat(
          R"({"name":"process_sort_index","ph":"M","pid":%d,"tid":0,"args":{"sort_index":%d}})", p.pid, p.pid));
    }
    for (int t = 0; t < kNumTracks; ++t) {
      p.tid[t] = next_tid[p.pid];
      for (int lane = 0; lane < p.lanes[t]; ++lane) {
        const int tid = next_tid[p.pid]++;
        const std::string suffix = lane == 0 ? "" : absl::StrFormat(" #%d", lane + 1);
        out.AddMetadata(absl::StrFormat(
            R"({"name":"thread_name","ph":"M","pid":%d,"tid":%d,"args":{"name":"GPU %d %s%s, global %d"}})", p.pid, tid,
            loc.local, kTrackNames[t], suffix, g.value()));
        out.AddMetadata(absl::StrFormat(
            R"({"name":"thread_sort_index","ph":"M","pid":%d,"tid":%d,"args":{"sort_index":%d}})", p.pid, tid, tid));
      }
    }
  }
  out.AddMetadata(absl::StrFormat(R"({"name":"process_name","ph":"M","pid":%d,"tid":0,"args":{"name":"%snetwork"}})",
                                  layout.network_pid, JsonEscape(names.prefix)));
  out.AddMetadata(absl::StrFormat(R"({"name":"process_sort_index","ph":"M","pid":%d,"tid":0,"args":{"sort_index":%d}})",
                                  layout.network_pid, layout.network_pid));
  return layout;
}

void EmitSlicesAndArrows(const TraceContent& c, const TraceLayout& layout, int arrow_base, TraceEventList& out) {
  auto thread_of = [&](const Slice& s) {
    const GpuPlace& p = layout.place[s.gpu.value()];
    return std::pair<int, int>{p.pid, p.tid[s.track] + s.lane};
  };
  for (const Slice& s : c.slices) {
    const auto [pid, tid] = thread_of(s);
    out.Add(s.ts, s.dur,
            absl::StrFormat(R"({"name":"%s","cat":"%s","ph":"X","ts":%s,"dur":%s,"pid":%d,"tid":%d%s})", s.name, s.cat,
                            FormatTicks(s.ts), FormatTicks(s.dur), pid, tid,
                            s.args.empty() ? "" : absl::StrCat(",\"args\":", s.args)));
  }
  // Each end at the start of its slice, on its thread, with its category: the binding rule shared by
  // catapult/Perfetto (enclosing slice; "bp":"e" for the end) and DevTools (equal ts, pid, tid, cat).
  for (size_t a = 0; a < c.arrows.size(); ++a) {
    const Slice& from = c.slices[c.arrows[a].from];
    const Slice& to = c.slices[c.arrows[a].to];
    const auto [from_pid, from_tid] = thread_of(from);
    const auto [to_pid, to_tid] = thread_of(to);
    out.Add(from.ts, 0,
            absl::StrFormat(R"({"name":"%s","cat":"%s","ph":"s","id":%d,"ts":%s,"pid":%d,"tid":%d})", c.arrows[a].name,
                            from.cat, arrow_base + static_cast<int>(a), FormatTicks(from.ts), from_pid, from_tid));
    out.Add(to.ts, 0,
            absl::StrFormat(R"({"name":"%s","cat":"%s","ph":"f","bp":"e","id":%d,"ts":%s,"pid":%d,"tid":%d})",
                            c.arrows[a].name, to.cat, arrow_base + static_cast<int>(a), FormatTicks(to.ts), to_pid,
                            to_tid));
  }
}

// Memory per traced GPU, as counters in the GPU's process.
void AddMemory(const ExecutionSetup& setup, const ExecutionResult& r, const TraceContent& c, const TraceLayout& layout,
               TraceEventList& out) {
  const topology::Topology& topo = *setup.topology;
  for (int s = 0; s < setup.num_stages(); ++s) {
    if (c.stage_gpus[s].empty()) continue;
    const auto& layout_s = setup.stages[s].layout;
    const auto stage_timeline = executor::MemoryTimeline(setup, r, s);
    for (GpuId gpu : c.stage_gpus[s]) {
      // A mixed stage's GPU holds its own replica group's states and activations.
      const auto at = std::find(layout_s.gpus.begin(), layout_s.gpus.end(), gpu);
      const auto timeline = layout_s.mixed()
                                ? executor::MemoryTimeline(
                                      setup, r, s, layout_s.GroupOfGpu(static_cast<size_t>(at - layout_s.gpus.begin())))
                                : stage_timeline;
      const topology::GpuLocation loc = *topo.Locate(gpu);
      for (size_t i = 0; i < timeline.size(); ++i) {
        const auto& [t, bytes] = timeline[i];
        // One sample per time: a free and an allocation at one instant print as the value after both.
        if (i + 1 < timeline.size() && TraceTicks(timeline[i + 1].first) == TraceTicks(t)) continue;
        out.Add(TraceTicks(t), 0,
                absl::StrFormat(R"({"name":"memory GPU %d","ph":"C","ts":%s,"pid":%d,"args":{"GiB":%.6f}})", loc.local,
                                FormatTicks(TraceTicks(t)), layout.place[gpu.value()].pid,
                                BytesToGib(static_cast<double>(bytes))));
      }
    }
  }
}

// Busy share of the sampled links between consecutive samples: one counter track per link, named
// with its id (parallel links between two gateways have the same ends).
void AddLinkSamples(const ExecutionSetup& setup, const ExecutionResult& r, const std::vector<LinkId>& sampled_links,
                    const std::vector<LinkId>* shown_links, int network_pid, TraceEventList& out) {
  const topology::Topology& topo = *setup.topology;
  const size_t L = sampled_links.size();
  for (size_t l = 0; l < L; ++l) {
    if (shown_links && !std::binary_search(shown_links->begin(), shown_links->end(), sampled_links[l])) continue;
    const topology::Link& link = topo.link(sampled_links[l]);
    const std::string name =
        absl::StrFormat("link %d %s > %s", sampled_links[l].value(), JsonEscape(topo.DeviceName(link.src)),
                        JsonEscape(topo.DeviceName(link.dst)));
    for (size_t i = 1; i < r.sample_times.size(); ++i) {
      const Time dt = r.sample_times[i] - r.sample_times[i - 1];
      if (dt <= 0) continue;
      const Time busy = r.link_busy[i * L + l] - r.link_busy[(i - 1) * L + l];
      const int64_t ts = TraceTicks(r.sample_times[i - 1]);
      out.Add(
          ts, 0,
          absl::StrFormat(R"({"name":"%s","ph":"C","ts":%s,"pid":%d,"args":{"busy %%":%.3f}})", name, FormatTicks(ts),
                          network_pid, 100.0 * TimeToPicosecondsDouble(busy) / TimeToPicosecondsDouble(dt)));
    }
  }
}

// Pipeline end, iteration end (or failure) and every fault transition, as global instants.
void AddMarkers(const ExecutionResult& r, int network_pid, const std::vector<faults::FaultEvent>* fault_events,
                TraceEventList& out) {
  // `cat` (with its comma) and `args` are empty for the milestones.
  auto instant = [&](Time t, const std::string& name, const std::string& cat, const std::string& args) {
    const int64_t ts = TraceTicks(t);
    out.Add(ts, 0,
            absl::StrFormat(R"({"name":"%s"%s,"ph":"i","s":"g","ts":%s,"pid":%d,"tid":0%s})", name, cat,
                            FormatTicks(ts), network_pid, args));
  };
  if (!r.faults.failed || r.pipeline_end > 0) instant(r.pipeline_end, "pipeline end", "", "");
  instant(r.iteration_time, r.faults.failed ? "iteration failed" : "iteration end", "", "");
  // What-if faults (docs/faults.md): each transition at its time.
  if (fault_events == nullptr) return;
  for (const auto& e : *fault_events) {
    instant(e.at, absl::StrFormat("fault %d %s", e.fault, JsonEscape(e.what)), R"(,"cat":"fault")",
            absl::StrFormat(R"(,"args":{"fault":%d})", e.fault));
  }
}

// Every event of one iteration into `out`, numbered and named by `names`; returns its flow arrows.
int AppendTrace(const ExecutionSetup& setup, const ExecutionResult& r, const std::vector<bool>& traced,
                const std::vector<LinkId>& sampled_links, const std::vector<LinkId>* shown_links,
                const TraceNames& names, TraceEventList& out) {
  TraceContent content;
  content.compute_slice.assign(setup.dag->num_nodes(), -1);
  content.stage_gpus.resize(setup.num_stages());
  content.pass_args = names.pass_args;
  for (int s = 0; s < setup.num_stages(); ++s) {
    for (GpuId g : setup.stages[s].layout.gpus) {
      if (traced[g.value()]) content.stage_gpus[s].push_back(g);
    }
  }
  AddCompute(setup, r, content);
  AddTransfers(setup, r, traced, content);
  AddGradSyncAndOptimizer(setup, r, content);
  const TraceLayout layout = LayOut(setup, traced, names, content, out);
  EmitSlicesAndArrows(content, layout, names.arrow_base, out);
  AddMemory(setup, r, content, layout, out);
  AddLinkSamples(setup, r, sampled_links, shown_links, layout.network_pid, out);
  AddMarkers(r, layout.network_pid, names.fault_events, out);
  return static_cast<int>(content.arrows.size());
}

}  // namespace

std::string ChromeTraceJson(const ExecutionSetup& setup, const ExecutionResult& r, const std::vector<bool>& traced,
                            const std::vector<LinkId>& sampled_links, const std::vector<LinkId>* shown_links) {
  TraceEventList out;
  TraceNames names;
  names.fault_events = &r.faults.events;
  AppendTrace(setup, r, traced, sampled_links, shown_links, names, out);
  return out.Finish();
}

std::string PipelinesTraceJson(const std::vector<PipelineTrace>& pipelines, const faults::FaultOutcome& faults) {
  TraceEventList out;
  TraceNames names;
  names.fault_events = &faults.events;
  for (const PipelineTrace& p : pipelines) {
    // Its share of the batch in its process names and its passes' args, as a mixed stage's groups give theirs.
    const spec::PlanSpec& plan = p.setup->spec.plan;
    names.prefix = absl::StrFormat("%s (%s in %s of %d): ", p.name, Counted(plan.global_batch_size, "sample"),
                                   Counted(p.setup->microbatches, "microbatch"), plan.micro_batch_size);
    names.pass_args =
        absl::StrFormat(R"(,"pipeline":"%s","batch_share":%d,"microbatches":%d,"micro_batch_size":%d)",
                        JsonEscape(p.name), plan.global_batch_size, p.setup->microbatches, plan.micro_batch_size);
    names.arrow_base += AppendTrace(*p.setup, *p.result, p.traced, p.sampled_links, &p.sampled_links, names, out);
    names.fault_events = nullptr;
    const topology::Topology& topo = *p.setup->topology;
    for (int i = 0; i < topo.num_islands(); ++i) names.pid_base += topo.num_nodes(i);
    names.pid_base += 2;  // the pid before the first node's, and the network's
  }
  return out.Finish();
}

}  // namespace hetsim::traces
