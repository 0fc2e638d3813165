#include "service/calibrate/nccl_cluster_match.h"

#include <algorithm>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "service/calibrate/csv_table_internal.h"

namespace hetsim::calibrate {
namespace {

std::vector<std::string> NameTokens(absl::string_view name) {
  return absl::StrSplit(absl::AsciiStrToUpper(name), absl::ByAnyChar(" -_/"), absl::SkipEmpty());
}

// "80GB" in "NVIDIA A100-SXM4-80GB" and "A100-80GB"; "" without one.
std::string MemoryTag(absl::string_view name) {
  for (const std::string& t : NameTokens(name)) {
    if (t.size() > 2 && absl::EndsWith(t, "GB") && absl::ascii_isdigit(t[0])) return t;
  }
  return "";
}

// SXM, PCIE or NVL; "" without one.
std::string FormTag(absl::string_view name) {
  for (const std::string& t : NameTokens(name)) {
    if (absl::StartsWith(t, "SXM")) return "SXM";
    if (t == "PCIE" || t == "NVL") return t;
  }
  return "";
}

struct IslandHardware {
  std::string island;    // its name
  std::string gpu;       // the GPU type's preset, or its name without one
  std::string gpu_type;  // the GPU type's name
  int nodes = 0;
  int gpus_per_node = 0;
};

IslandHardware HardwareOf(const hetsim::v1::Cluster& cluster, int island) {
  const hetsim::v1::Island& isl = cluster.islands(island);
  IslandHardware hw{isl.name(), "", "", static_cast<int>(isl.node_count()), 0};
  for (const hetsim::v1::NodeType& nt : cluster.node_types()) {
    if (nt.name() == isl.node_type()) {
      hw.gpus_per_node = static_cast<int>(nt.gpus_per_node());
      hw.gpu_type = nt.gpu_type();
    }
  }
  hw.gpu = hw.gpu_type;
  for (const hetsim::v1::GpuType& g : cluster.gpu_types()) {
    if (g.name() == hw.gpu_type && !g.preset().empty()) hw.gpu = g.preset();
  }
  return hw;
}

absl::Status CheckGpuModel(const NcclLog& log, const IslandHardware& hw, std::vector<std::string>& warnings) {
  const std::string ours = GpuFamily(hw.gpu), theirs = GpuFamily(log.gpu_model);
  if (log.gpu_model.empty()) {
    warnings.push_back(
        absl::StrFormat("%s:%d: the log names no GPU (no Rank lines; %d GPUs on %d hosts from %s): assumed island "
                        "\"%s\"'s \"%s\" (%s)",
                        log.file, log.rank_line, log.ranks, log.hosts, log.shape_from, hw.island, hw.gpu_type, hw.gpu));
    return absl::OkStatus();
  }
  if (ours.empty() || theirs.empty()) {
    warnings.push_back(absl::StrFormat(
        "%s:%d: cannot tell whether \"%s\" is island \"%s\"'s GPU type \"%s\" (%s): no GPU family in the name",
        log.file, log.rank_line, log.gpu_model, hw.island, hw.gpu_type, hw.gpu));
    return absl::OkStatus();
  }
  // A GPU type named after the log's GPU whose preset stands in for it (validation/clusters/clariden-gh200-32:
  // type "gh200", preset H100-SXM) is that GPU: the name says what the cluster's author describes.
  if (ours != theirs && GpuFamily(hw.gpu_type) == theirs) {
    warnings.push_back(absl::StrFormat(
        "%s:%d: the log ran on \"%s\", island \"%s\"'s GPU type \"%s\" is priced as preset %s: fitted to the "
        "type its name says",
        log.file, log.rank_line, log.gpu_model, hw.island, hw.gpu_type, hw.gpu));
    return absl::OkStatus();
  }
  if (ours != theirs) {
    return LineError(log.file, log.rank_line,
                     absl::StrFormat("the log ran on \"%s\" (%s), island \"%s\" has GPU type \"%s\" (%s): another "
                                     "GPU's fabric would be fitted into this one (the wrong --cluster or --island?)",
                                     log.gpu_model, theirs, hw.island, hw.gpu_type, hw.gpu));
  }
  const std::string mem = MemoryTag(hw.gpu), form = FormTag(hw.gpu);
  const std::string log_mem = MemoryTag(log.gpu_model), log_form = FormTag(log.gpu_model);
  if ((!mem.empty() && !log_mem.empty() && mem != log_mem) ||
      (!form.empty() && !log_form.empty() && form != log_form)) {
    warnings.push_back(absl::StrFormat(
        "%s:%d: the log ran on \"%s\", island \"%s\"'s GPU type \"%s\" is %s: another %s variant, fitted anyway (the "
        "NCCL fabric is the node type's)",
        log.file, log.rank_line, log.gpu_model, hw.island, hw.gpu_type, hw.gpu, ours));
  }
  return absl::OkStatus();
}

absl::Status CheckHosts(const NcclLog& log, const IslandHardware& hw, std::vector<std::string>& warnings) {
  const int per_host = log.ranks / log.hosts;
  if (log.hosts > hw.nodes || per_host > hw.gpus_per_node) {
    return LineError(log.file, log.rank_line,
                     absl::StrFormat("%d ranks on %d hosts do not fit island \"%s\" (%d nodes of %d GPUs)", log.ranks,
                                     log.hosts, hw.island, hw.nodes, hw.gpus_per_node));
  }
  if (per_host < hw.gpus_per_node && log.op != hetsim::CollectiveOp::kSendRecv) {
    warnings.push_back(absl::StrFormat(
        "%s:%d: %d GPUs per host, island \"%s\"'s nodes have %d: the NCCL parameters are fitted from part of a node",
        log.file, log.rank_line, per_host, hw.island, hw.gpus_per_node));
  }
  return absl::OkStatus();
}

}  // namespace

std::string GpuFamily(absl::string_view name) {
  const std::vector<std::string> tokens = NameTokens(name);
  const auto digits = [](const std::string& t) { return std::all_of(t.begin(), t.end(), absl::ascii_isdigit); };
  for (size_t i = 0; i < tokens.size(); ++i) {
    const std::string& t = tokens[i];
    const size_t digit = t.find_first_of("0123456789");
    if (digit != 0 && digit != std::string::npos &&
        std::all_of(t.begin(), t.begin() + digit, [](char c) { return absl::ascii_isalpha(c); })) {
      return t;
    }
    // GeForce's series and number apart ("NVIDIA GeForce GTX 1080", "RTX 4090"): one family, GTX1080.
    if (digit == std::string::npos && i + 1 < tokens.size() && digits(tokens[i + 1]) && t != "NVIDIA") {
      return t + tokens[i + 1];
    }
  }
  return "";
}

absl::Status CheckLogAgainstIsland(const NcclLog& log, const hetsim::v1::Cluster& cluster, int island,
                                   std::vector<std::string>& warnings) {
  const IslandHardware hw = HardwareOf(cluster, island);
  if (absl::Status s = CheckGpuModel(log, hw, warnings); !s.ok()) return s;
  return CheckHosts(log, hw, warnings);
}

}  // namespace hetsim::calibrate
