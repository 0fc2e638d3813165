#include "service/chakra/replay_report.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace hetsim::chakra {
namespace {

std::string JsonEscape(absl::string_view s) {
  std::string out;
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(c);
    } else if (static_cast<unsigned char>(c) < 0x20) {
      absl::StrAppendFormat(&out, "\\u%04x", static_cast<int>(c));
    } else {
      out.push_back(c);
    }
  }
  return out;
}

// Picoseconds as microseconds with six decimals, from integers (no floating-point rounding).
std::string Micros(Time t) { return absl::StrFormat("%d.%06d", t / kMicrosecond, TimeToPicoseconds(t % kMicrosecond)); }

const char* TypeName(TraceNodeType t) {
  switch (t) {
    case TraceNodeType::kCompute: return "COMP";
    case TraceNodeType::kSend: return "COMM_SEND";
    case TraceNodeType::kRecv: return "COMM_RECV";
    case TraceNodeType::kCollective: return "COMM_COLL";
    case TraceNodeType::kNoOp: return "NOOP";
  }
  return "?";
}

}  // namespace

v1::Report BuildReplayReport(const ChakraWorkload& workload, const ReplayResult& result, absl::string_view trace_dir,
                             const v1::Cluster& cluster, network::NetworkMode mode, double wall_time_s) {
  v1::Report report;
  report.set_plan_name(absl::StrCat("chakra:", trace_dir));
  report.set_cluster_name(cluster.name());
  report.set_network_model(mode == network::NetworkMode::kMaxMinFair ? "flow (max-min fair)"
                                                                     : "analytical (contention-free)");
  report.set_num_gpus(static_cast<uint32_t>(workload.ranks.size()));
  report.set_iteration_time_ms(TimeToMilliseconds(result.iteration_time));
  report.set_pipeline_ms(TimeToMilliseconds(result.iteration_time));
  report.set_events_processed(result.events);
  report.set_flows(result.network_stats.flows_started);
  if (wall_time_s >= 0) report.set_wall_time_s(wall_time_s);
  return report;
}

std::string FormatReplaySummary(const ChakraWorkload& workload, const ReplayResult& result, const v1::Report& report) {
  int64_t nodes = 0;
  for (const RankTrace& t : workload.ranks) nodes += static_cast<int64_t>(t.nodes.size());
  std::string out;
  absl::StrAppendFormat(&out, "chakra traces %s on cluster %s: %d ranks, %d nodes\n", report.plan_name(),
                        report.cluster_name(), workload.ranks.size(), nodes);
  absl::StrAppendFormat(&out, "network: %s\n", report.network_model());
  absl::StrAppendFormat(&out, "iteration %.3f ms  %d collectives  %d flows  %d events\n", report.iteration_time_ms(),
                        result.collectives, report.flows(), report.events_processed());
  int64_t ctrl = 0, self = 0, cyclic = 0, cpu_comm = 0;
  for (const RankTrace& t : workload.ranks) {
    ctrl += t.skipped_ctrl_deps;
    self += t.skipped_self_ctrl_deps;
    cyclic += t.skipped_cyclic_ctrl_deps;
    cpu_comm += t.skipped_cpu_comm_ops;
  }
  if (ctrl + self + cyclic + cpu_comm > 0) {
    absl::StrAppendFormat(&out,
                          "skipped: %d control dependencies on nodes not in their file, %d on the node itself, %d "
                          "closing cycles; %d CPU-side communication nodes without comm_size\n",
                          ctrl, self, cyclic, cpu_comm);
  }
  if (!workload.ranks.empty()) {
    const auto slowest = std::max_element(result.rank_end.begin(), result.rank_end.end()) - result.rank_end.begin();
    Time busy_max = 0;
    double busy_sum_ms = 0;
    for (Time b : result.compute_busy) {
      busy_max = std::max(busy_max, b);
      busy_sum_ms += TimeToMilliseconds(b);
    }
    absl::StrAppendFormat(&out, "last rank to finish: %d at %.3f ms  GPU compute busy: max %.3f ms, mean %.3f ms\n",
                          slowest, TimeToMilliseconds(result.rank_end[slowest]), TimeToMilliseconds(busy_max),
                          busy_sum_ms / static_cast<double>(workload.ranks.size()));
  }
  return out;
}

std::string ReplayChromeTrace(const ChakraWorkload& workload, const ReplayResult& result) {
  std::string out = "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n";
  bool first = true;
  auto event = [&](const std::string& e) {
    absl::StrAppend(&out, first ? "" : ",\n", e);
    first = false;
  };
  for (size_t r = 0; r < workload.ranks.size(); ++r) {
    event(absl::StrFormat(R"({"ph":"M","pid":%d,"name":"process_name","args":{"name":"rank %d"}})", r, r));
    const char* threads[] = {"GPU compute", "CPU", "communication"};
    for (int t = 0; t < 3; ++t) {
      event(absl::StrFormat(R"({"ph":"M","pid":%d,"tid":%d,"name":"thread_name","args":{"name":"%s"}})", r, t,
                            threads[t]));
    }
    const auto& nodes = workload.ranks[r].nodes;
    for (size_t i = 0; i < nodes.size(); ++i) {
      const TraceNode& n = nodes[i];
      const Time start = result.node_start[r][i], finish = result.node_finish[r][i];
      if (start < 0 || finish < 0 || n.type == TraceNodeType::kNoOp) continue;
      const int tid = n.type == TraceNodeType::kCompute ? (n.is_cpu_op ? 1 : 0) : 2;
      event(absl::StrFormat(R"({"ph":"X","pid":%d,"tid":%d,"ts":%s,"dur":%s,"name":"%s","args":{"id":%d,"type":"%s"}})",
                            r, tid, Micros(start), Micros(finish - start), JsonEscape(n.name), n.id, TypeName(n.type)));
    }
  }
  absl::StrAppend(&out, "\n]}\n");
  return out;
}

}  // namespace hetsim::chakra
