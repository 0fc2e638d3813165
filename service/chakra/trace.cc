#include "service/chakra/trace.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <system_error>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/status_macros.h"
#include "proto/io.h"
#include "service/chakra/attributes_internal.h"
#include "service/chakra/export.h"

namespace hetsim::chakra {
namespace {

using ChakraProtoMsg::AttributeProto;
using ChakraProtoMsg::Node;

constexpr int64_t kMaxCommBytes = int64_t{1} << 50;

absl::Status NodeError(absl::string_view file, uint64_t id, absl::string_view problem) {
  return absl::InvalidArgumentError(absl::StrFormat("%s: node %d: %s", file, id, problem));
}

// The node's attributes by name (the first of a repeated name wins), and the names hetsim ignores.
struct Attributes {
  absl::flat_hash_map<std::string, const AttributeProto*> known;
  std::set<std::string> unknown;
};

const std::set<std::string, std::less<>>& KnownNames() {
  static const auto* names =
      new std::set<std::string, std::less<>>{std::string(kCommType), std::string(kCommSize),   std::string(kCommSrc),
                                             std::string(kCommDst),  std::string(kCommTag),    std::string(kPgName),
                                             std::string(kNumOps),   std::string(kTensorSize), std::string(kIsCpuOp)};
  return *names;
}

Attributes ReadAttributes(const Node& node) {
  Attributes a;
  for (const AttributeProto& attr : node.attr()) {
    if (KnownNames().count(attr.name()) == 0) {
      a.unknown.insert(attr.name());
    } else {
      a.known.emplace(attr.name(), &attr);
    }
  }
  return a;
}

// An integer attribute: nullopt when absent; an error when present but not an integer.
absl::StatusOr<std::optional<int64_t>> OptionalInt(const Attributes& a, absl::string_view name, absl::string_view file,
                                                   uint64_t id) {
  auto it = a.known.find(std::string(name));
  if (it == a.known.end()) return std::optional<int64_t>();
  std::optional<int64_t> v = IntegerValue(*it->second);
  if (!v) return NodeError(file, id, absl::StrCat("attribute ", name, ": not an integer"));
  return v;
}

absl::StatusOr<int64_t> RequiredInt(const Attributes& a, absl::string_view name, absl::string_view file, uint64_t id,
                                    absl::string_view type) {
  HETSIM_ASSIGN_OR_RETURN(std::optional<int64_t> v, OptionalInt(a, name, file, id));
  if (!v) return NodeError(file, id, absl::StrCat(type, " without the attribute ", name));
  return *v;
}

absl::StatusOr<int32_t> RankAttr(const Attributes& a, absl::string_view name, absl::string_view file, uint64_t id,
                                 absl::string_view type, int num_ranks) {
  HETSIM_ASSIGN_OR_RETURN(int64_t v, RequiredInt(a, name, file, id, type));
  if (v < 0 || v >= num_ranks) {
    return NodeError(file, id, absl::StrFormat("%s %d is not a rank (0..%d)", name, v, num_ranks - 1));
  }
  return static_cast<int32_t>(v);
}

// The communicator group of a COMM_COLL node. As ASTRA-sim's Workload::extract_comm_group reads it, a
// missing, empty or "0" pg_name is the default group of every rank (unless the groups file names a
// group "0"): hetsim adds it to `groups` as "(all ranks)", once, with a warning.
absl::StatusOr<std::string> GroupName(const Attributes& a, absl::string_view file, uint64_t id, int num_ranks,
                                      std::vector<proto::ChakraCommGroup>* groups, std::vector<std::string>* warnings) {
  auto pg = a.known.find(std::string(kPgName));
  std::string name;
  if (pg == a.known.end()) {
    name = "";
  } else if (pg->second->value_case() == AttributeProto::kStringVal) {
    name = pg->second->string_val();
  } else if (std::optional<int64_t> v = IntegerValue(*pg->second)) {
    name = absl::StrCat(*v);
  } else {
    return NodeError(file, id, "attribute pg_name: not a string");
  }
  const auto named = [&](const std::string& n) {
    return std::any_of(groups->begin(), groups->end(), [&](const auto& g) { return g.name == n; });
  };
  if ((name != "" && name != "0") || named(name)) return name;
  const std::string all = "(all ranks)";
  if (!named(all)) {
    proto::ChakraCommGroup every{all, {}};
    for (int r = 0; r < num_ranks; ++r) every.ranks.push_back(r);
    groups->push_back(std::move(every));
    warnings->push_back(absl::StrFormat(
        "%s: node %d: COMM_COLL_NODE %s: assumed to run over every rank (0..%d), ASTRA-sim's default group", file, id,
        pg == a.known.end() ? std::string("without pg_name") : absl::StrFormat("with pg_name \"%s\"", name),
        num_ranks - 1));
  }
  return all;
}

absl::Status ReadCommunication(const Attributes& a, absl::string_view file, int rank, int num_ranks,
                               std::vector<proto::ChakraCommGroup>* groups, std::vector<std::string>* warnings,
                               TraceNode& n) {
  const bool send = n.type == TraceNodeType::kSend;
  const absl::string_view type =
      n.type == TraceNodeType::kCollective ? "COMM_COLL_NODE" : (send ? "COMM_SEND_NODE" : "COMM_RECV_NODE");
  HETSIM_ASSIGN_OR_RETURN(n.comm_bytes, RequiredInt(a, kCommSize, file, n.id, type));
  if (n.comm_bytes < 0 || n.comm_bytes > kMaxCommBytes) {
    return NodeError(file, n.id, absl::StrFormat("comm_size %d is outside 0..2^50 bytes", n.comm_bytes));
  }
  if (n.type == TraceNodeType::kCollective) {
    HETSIM_ASSIGN_OR_RETURN(int64_t comm_type, RequiredInt(a, kCommType, file, n.id, type));
    absl::StatusOr<CollectiveOp> op = CollectiveOpOf(comm_type);
    if (!op.ok()) return NodeError(file, n.id, op.status().message());
    n.op = *op;
    HETSIM_ASSIGN_OR_RETURN(const std::string name, GroupName(a, file, n.id, num_ranks, groups, warnings));
    auto g = std::find_if(groups->begin(), groups->end(), [&](const auto& x) { return x.name == name; });
    if (g == groups->end()) {
      return NodeError(
          file, n.id,
          absl::StrFormat("pg_name \"%s\" is not a group of the communicator-group file (<prefix>.comm_groups.json "
                          "beside the rank files, or run --comm-groups FILE: the JSON ASTRA-sim takes "
                          "with --comm-group-configuration)",
                          name));
    }
    if (std::find(g->ranks.begin(), g->ranks.end(), rank) == g->ranks.end()) {
      return NodeError(file, n.id, absl::StrFormat("pg_name \"%s\": rank %d is not a member of the group", name, rank));
    }
    n.group = static_cast<int32_t>(g - groups->begin());
    // comm_size is each rank's input (attributes.h); hetsim's bytes are the gathered output.
    const std::optional<int64_t> bytes =
        CollectiveBytesOf(n.op, n.comm_bytes, static_cast<int>(g->ranks.size()), kMaxCommBytes);
    if (!bytes) {
      return NodeError(file, n.id,
                       absl::StrFormat("all-gather of comm_size %d over %d ranks gathers more than 2^50 bytes",
                                       n.comm_bytes, g->ranks.size()));
    }
    n.comm_bytes = *bytes;
    return absl::OkStatus();
  }
  HETSIM_ASSIGN_OR_RETURN(std::optional<int64_t> tag, OptionalInt(a, kCommTag, file, n.id));
  n.tag = tag.value_or(0);
  // The peer is required; this rank's own end may be left out, but must be this rank when given.
  const absl::string_view peer = send ? kCommDst : kCommSrc, self = send ? kCommSrc : kCommDst;
  HETSIM_ASSIGN_OR_RETURN(int32_t other, RankAttr(a, peer, file, n.id, type, num_ranks));
  HETSIM_ASSIGN_OR_RETURN(std::optional<int64_t> mine, OptionalInt(a, self, file, n.id));
  if (mine && *mine != rank) {
    return NodeError(file, n.id, absl::StrFormat("%s %d is not this file's rank %d", self, *mine, rank));
  }
  if (other == rank) return NodeError(file, n.id, absl::StrFormat("%s %d is this rank itself", peer, other));
  n.src = send ? rank : other;
  n.dst = send ? other : rank;
  return absl::OkStatus();
}

// Kahn's algorithm; on a cycle, walks back along unfinished dependencies to print one.
absl::Status CheckAcyclic(const RankTrace& t) {
  const size_t n = t.nodes.size();
  std::vector<int32_t> pending(n, 0);
  std::vector<std::vector<int32_t>> succ(n);
  for (size_t i = 0; i < n; ++i) {
    for (int32_t d : t.nodes[i].deps) {
      succ[d].push_back(static_cast<int32_t>(i));
      ++pending[i];
    }
  }
  std::vector<int32_t> ready;
  for (size_t i = 0; i < n; ++i) {
    if (pending[i] == 0) ready.push_back(static_cast<int32_t>(i));
  }
  size_t done = 0;
  while (!ready.empty()) {
    const int32_t i = ready.back();
    ready.pop_back();
    ++done;
    for (int32_t s : succ[i]) {
      if (--pending[s] == 0) ready.push_back(s);
    }
  }
  if (done == n) return absl::OkStatus();
  int32_t at = -1;
  for (size_t i = 0; i < n && at < 0; ++i) {
    if (pending[i] > 0) at = static_cast<int32_t>(i);
  }
  std::vector<int32_t> path;
  std::vector<int32_t> seen_at(n, -1);
  while (seen_at[at] < 0) {
    seen_at[at] = static_cast<int32_t>(path.size());
    path.push_back(at);
    for (int32_t d : t.nodes[at].deps) {
      if (pending[d] > 0) {
        at = d;
        break;
      }
    }
  }
  std::vector<std::string> ids;
  for (size_t k = seen_at[at]; k < path.size(); ++k) ids.push_back(absl::StrCat(t.nodes[path[k]].id));
  ids.push_back(absl::StrCat(t.nodes[at].id));
  std::reverse(ids.begin(), ids.end());
  // A cycle through a million nodes was a 10 MB message: its first nodes and its last, and how many.
  constexpr size_t kShown = 16;
  const size_t cycle = ids.size() - 1;
  if (ids.size() > kShown + 2) {
    ids.erase(ids.begin() + kShown, ids.end() - 2);
    ids.insert(ids.begin() + kShown, absl::StrFormat("... (%d nodes in all)", cycle));
  }
  return NodeError(
      t.file, t.nodes[at].id,
      absl::StrFormat("dependency cycle: %s (each depends on the one before)", absl::StrJoin(ids, " -> ")));
}

TraceNodeType TypeOf(int type) {
  switch (type) {
    case ChakraProtoMsg::COMP_NODE: return TraceNodeType::kCompute;
    case ChakraProtoMsg::COMM_SEND_NODE: return TraceNodeType::kSend;
    case ChakraProtoMsg::COMM_RECV_NODE: return TraceNodeType::kRecv;
    case ChakraProtoMsg::COMM_COLL_NODE: return TraceNodeType::kCollective;
    default: return TraceNodeType::kNoOp;
  }
}

// What a rank file holds that hetsim does not read, for its warnings.
struct Unread {
  std::set<std::string> attributes;
  std::set<int> no_op_types;
  bool fields = false;
};

// The node's dependencies as indices into the rank's nodes. A data dependency on a node not in the file
// is an error; a control dependency on a node not in the file, or on the node itself, is dropped and
// counted: Chakra's feeder (mlcommons/chakra src/feeder/et_feeder.cpp) resolves data_deps only, and
// traces converted from PyTorch carry control dependencies on host operations the converter left out.
absl::Status ReadDeps(const Node& node, const absl::flat_hash_map<uint64_t, int32_t>& index, absl::string_view file,
                      TraceNode& n, RankTrace& t) {
  for (uint64_t d : node.ctrl_deps()) {
    auto it = index.find(d);
    if (it == index.end() || d == node.id()) {
      ++(d == node.id() ? t.skipped_self_ctrl_deps : t.skipped_ctrl_deps);
      continue;
    }
    n.deps.push_back(it->second);
  }
  for (uint64_t d : node.data_deps()) {
    auto it = index.find(d);
    if (it == index.end()) return NodeError(file, n.id, absl::StrFormat("data_deps: node %d is not in this file", d));
    n.deps.push_back(it->second);
  }
  std::sort(n.deps.begin(), n.deps.end());
  n.deps.erase(std::unique(n.deps.begin(), n.deps.end()), n.deps.end());
  return absl::OkStatus();
}

// When the dependencies form a cycle that the data dependencies alone do not, the file's control
// dependencies are dropped, all of them, as Chakra's feeder (which reads data_deps only) drops them:
// Chakra's PyTorch converter orders a host op after the GPU kernel it launches. `cycle` is the error
// kept when there is no control dependency to drop.
absl::Status DropControlDeps(const proto::ChakraStream& stream, const absl::flat_hash_map<uint64_t, int32_t>& index,
                             RankTrace& t, const absl::Status& cycle) {
  int64_t kept = 0;
  for (const Node& node : stream.nodes) {
    for (uint64_t d : node.ctrl_deps()) kept += d != node.id() && index.contains(d);
  }
  if (kept == 0) return cycle;
  for (size_t i = 0; i < t.nodes.size(); ++i) {
    std::vector<int32_t>& deps = t.nodes[i].deps;
    deps.clear();
    for (uint64_t d : stream.nodes[i].data_deps()) deps.push_back(index.at(d));
    std::sort(deps.begin(), deps.end());
    deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
  }
  t.skipped_cyclic_ctrl_deps = kept;
  return CheckAcyclic(t);
}

absl::Status ReadCompute(const Attributes& a, absl::string_view file, TraceNode& n) {
  HETSIM_ASSIGN_OR_RETURN(std::optional<int64_t> cpu, OptionalInt(a, kIsCpuOp, file, n.id));
  n.is_cpu_op = cpu.value_or(0) != 0;
  HETSIM_ASSIGN_OR_RETURN(std::optional<int64_t> size, OptionalInt(a, kTensorSize, file, n.id));
  n.tensor_size = size.value_or(0);
  if (auto it = a.known.find(std::string(kNumOps)); it != a.known.end()) {
    std::optional<double> ops = NumberValue(*it->second);
    if (!ops || *ops < 0) return NodeError(file, n.id, "attribute num_ops: not a non-negative number");
    n.num_ops = *ops;
  }
  if (n.tensor_size < 0) return NodeError(file, n.id, "attribute tensor_size: negative");
  return absl::OkStatus();
}

// A communication node on the CPU without comm_size: the host side of a collective (c10d::allreduce_
// and the like) that Chakra's PyTorch converter keeps beside the GPU kernel that does the transfer.
bool IsCpuCommWithoutSize(const Attributes& a, TraceNodeType type) {
  if (type != TraceNodeType::kSend && type != TraceNodeType::kRecv && type != TraceNodeType::kCollective) return false;
  auto cpu = a.known.find(std::string(kIsCpuOp));
  return cpu != a.known.end() && IntegerValue(*cpu->second).value_or(0) != 0 &&
         a.known.find(std::string(kCommSize)) == a.known.end();
}

void AddRankWarnings(const RankTrace& t, const Unread& unread, std::vector<std::string>* warnings) {
  const absl::string_view file = t.file;
  if (!unread.attributes.empty()) {
    warnings->push_back(absl::StrFormat("%s: attributes hetsim does not read, ignored: %s", file,
                                        absl::StrJoin(unread.attributes, ", ")));
  }
  if (unread.fields) {
    warnings->push_back(absl::StrFormat("%s: fields outside the 0.0.4 schema (a later Chakra?), ignored", file));
  }
  for (int type : unread.no_op_types) {
    warnings->push_back(absl::StrFormat("%s: %s nodes take no time (hetsim has no memory model for them)", file,
                                        ChakraProtoMsg::NodeType_Name(static_cast<ChakraProtoMsg::NodeType>(type))));
  }
  if (t.skipped_ctrl_deps + t.skipped_self_ctrl_deps > 0) {
    warnings->push_back(absl::StrFormat(
        "%s: %d control dependencies on nodes not in this file and %d on the node itself: ignored, as Chakra's feeder "
        "ignores them",
        file, t.skipped_ctrl_deps, t.skipped_self_ctrl_deps));
  }
  if (t.skipped_cyclic_ctrl_deps > 0) {
    warnings->push_back(absl::StrFormat(
        "%s: the control dependencies close cycles that the data dependencies do not: all %d dropped, as Chakra's "
        "feeder (data_deps only) drops them",
        file, t.skipped_cyclic_ctrl_deps));
  }
  if (t.skipped_cpu_comm_ops > 0) {
    warnings->push_back(absl::StrFormat(
        "%s: %d CPU-side communication nodes without comm_size (the host side of a collective): skipped, taking no "
        "time; their GPU kernels carry the transfer",
        file, t.skipped_cpu_comm_ops));
  }
  // Host compute nodes and no node with a duration (nor num_ops or tensor_size for --retime-compute),
  // no communication: the rank times nothing. Chakra's PyTorch converter writes such a file when
  // chakra_trace_link matched no operator of the Kineto trace (one without "Record function id", as
  // mlcommons/chakra#83 reports of PyTorch 2.2, or one of another run): host operations only, no durations.
  int64_t compute = 0, timed = 0, comm = 0, host = 0;
  for (const TraceNode& n : t.nodes) {
    compute += n.type == TraceNodeType::kCompute;
    host += n.type == TraceNodeType::kCompute && n.is_cpu_op;
    timed += n.type == TraceNodeType::kCompute && (n.duration > 0 || n.num_ops > 0 || n.tensor_size > 0);
    comm += n.type == TraceNodeType::kSend || n.type == TraceNodeType::kRecv || n.type == TraceNodeType::kCollective;
  }
  if (host > 0 && timed == 0 && comm == 0) {  // hetsim's idle-GPU trace is one GPU node of no time: silent
    warnings->push_back(absl::StrFormat(
        "%s: none of its %d compute nodes has a duration (nor num_ops or tensor_size) and it communicates nothing: "
        "this rank takes no time. A trace of host operations only is what chakra_converter writes when "
        "chakra_trace_link linked no GPU kernel of the Kineto trace (a Kineto trace without \"Record function id\", "
        "or of another run): link the host and device traces of one run",
        file, compute));
  }
  // GPU kernels that nothing depends on: several of them is the mark of a trace that lost its stream
  // order; they run one at a time on the rank's compute stream, and the rank ends after them.
  std::vector<bool> has_succ(t.nodes.size(), false);
  for (const TraceNode& n : t.nodes) {
    for (int32_t d : n.deps) has_succ[d] = true;
  }
  std::vector<uint64_t> loose;
  for (size_t i = 0; i < t.nodes.size(); ++i) {
    if (!has_succ[i] && t.nodes[i].type == TraceNodeType::kCompute && !t.nodes[i].is_cpu_op)
      loose.push_back(t.nodes[i].id);
  }
  if (loose.size() > 1) {
    warnings->push_back(absl::StrFormat(
        "%s: %d GPU kernels no node depends on (first: node %d): assumed to run one at a time on the rank's compute "
        "stream in issue order, the rank ending when the last one ends",
        file, loose.size(), loose[0]));
  }
}

// "0.0.4" reads silently; other 0.x and 1.x versions read with the 0.0.4 layout and a warning;
// a later major version is refused.
absl::Status CheckVersion(const std::string& version, absl::string_view file, std::vector<std::string>* warnings) {
  if (version == kSchemaVersion) return absl::OkStatus();
  std::vector<absl::string_view> parts = absl::StrSplit(version, '.');
  int major = 0;
  if (!version.empty() && absl::SimpleAtoi(parts[0], &major) && major >= 2) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: GlobalMetadata.version: \"%s\" is a schema hetsim does not read (it reads 0.0.4, the v1.0.0 layout)", file,
        version));
  }
  warnings->push_back(absl::StrFormat("%s: GlobalMetadata.version \"%s\" is not %s: read with the %s layout", file,
                                      version, kSchemaVersion, kSchemaVersion));
  return absl::OkStatus();
}

// Why `path` holds no trace to run: not a folder, or a folder without <prefix>.<rank>.et; a JSON trace
// given instead (a file, or the folder's *.json other than the groups file) is named as such.
absl::Status NotATraceFolder(const std::filesystem::path& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::vector<fs::path> candidates;
  const bool folder = fs::is_directory(path, ec);
  if (!folder && fs::is_regular_file(path, ec)) candidates.push_back(path);
  if (folder) {
    for (const fs::directory_entry& e : fs::directory_iterator(path, ec)) {
      const std::string name = e.path().filename().string();
      if (absl::EndsWith(name, ".json") && !absl::EndsWith(name, ".comm_groups.json")) candidates.push_back(e.path());
    }
    std::sort(candidates.begin(), candidates.end());
  }
  for (const fs::path& file : candidates) {
    absl::StatusOr<std::string> bytes = proto::ReadInputFile(file.string(), proto::InputKind::kChakraTrace);
    if (!bytes.ok()) continue;
    if (std::optional<std::string> json = proto::DescribeJsonTrace(*bytes)) {
      return absl::InvalidArgumentError(absl::StrFormat("%s: %s (docs/chakra.md)", file.string(), *json));
    }
  }
  return absl::InvalidArgumentError(
      absl::StrCat(path.string(), folder ? ": no <prefix>.<rank>.et file" : ": not a folder"));
}

}  // namespace

absl::StatusOr<RankTrace> ConvertRank(const proto::ChakraStream& stream, absl::string_view file, int rank,
                                      int num_ranks, std::vector<proto::ChakraCommGroup>* groups,
                                      std::vector<std::string>* warnings) {
  HETSIM_RETURN_IF_ERROR(CheckVersion(stream.metadata.version(), file, warnings));
  if (static_cast<int64_t>(stream.nodes.size()) > kMaxNodesPerRank) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: %d nodes, more than the limit of %d", file, stream.nodes.size(), kMaxNodesPerRank));
  }
  RankTrace t;
  t.file = std::string(file);
  absl::flat_hash_map<uint64_t, int32_t> index;
  for (const Node& node : stream.nodes) {
    if (!index.emplace(node.id(), static_cast<int32_t>(index.size())).second) {
      return NodeError(file, node.id(), "a second node with this id");
    }
  }
  Unread unread;
  unread.fields = !stream.metadata.GetReflection()->GetUnknownFields(stream.metadata).empty();
  for (const Node& node : stream.nodes) {
    TraceNode n;
    n.id = node.id();
    n.name = node.name();
    const int type = node.type();
    if (type <= ChakraProtoMsg::INVALID_NODE || type > ChakraProtoMsg::COMM_COLL_NODE) {
      return NodeError(file, n.id,
                       absl::StrFormat("type %d (%s) is not a node type hetsim can run", type,
                                       type == 0 ? "INVALID_NODE" : "not in the 0.0.4 schema"));
    }
    n.type = TypeOf(type);
    if (n.type == TraceNodeType::kNoOp) unread.no_op_types.insert(type);
    unread.fields = unread.fields || !node.GetReflection()->GetUnknownFields(node).empty();
    HETSIM_RETURN_IF_ERROR(ReadDeps(node, index, file, n, t));
    if (node.duration_micros() > kMaxDurationMicros) {
      return NodeError(file, n.id,
                       absl::StrFormat("duration_micros %d exceeds the limit of 2^40", node.duration_micros()));
    }
    const Attributes a = ReadAttributes(node);
    unread.attributes.insert(a.unknown.begin(), a.unknown.end());
    if (n.type == TraceNodeType::kCompute) {
      n.duration = MicrosecondsToTime(node.duration_micros());
      HETSIM_RETURN_IF_ERROR(ReadCompute(a, file, n));
    } else if (IsCpuCommWithoutSize(a, n.type)) {
      n.type = TraceNodeType::kNoOp;
      ++t.skipped_cpu_comm_ops;
    } else if (n.type != TraceNodeType::kNoOp) {
      HETSIM_RETURN_IF_ERROR(ReadCommunication(a, file, rank, num_ranks, groups, warnings, n));
    }
    t.nodes.push_back(std::move(n));
  }
  if (absl::Status acyclic = CheckAcyclic(t); !acyclic.ok()) {
    HETSIM_RETURN_IF_ERROR(DropControlDeps(stream, index, t, acyclic));
  }
  AddRankWarnings(t, unread, warnings);
  return t;
}

namespace {

// The sends and the recvs of one (src, dst, tag) carry the same sizes: NCCL's recv takes the count its
// send sends (a 64-byte send received as 128 bytes replayed without a word, session 33). Compared as
// sorted lists, since the files need not list them in the order they run.
absl::Status CheckMessageSizes(const ChakraWorkload& w, int32_t src, int32_t dst, int64_t tag,
                               std::vector<std::pair<int64_t, uint64_t>> sends,
                               std::vector<std::pair<int64_t, uint64_t>> recvs) {
  std::sort(sends.begin(), sends.end());
  std::sort(recvs.begin(), recvs.end());
  for (size_t i = 0; i < sends.size() && i < recvs.size(); ++i) {
    if (sends[i].first == recvs[i].first) continue;
    return NodeError(w.ranks[dst].file, recvs[i].second,
                     absl::StrFormat("a recv of %d bytes from rank %d with tag %d, but the sends of %s with that tag "
                                     "carry other sizes (node %d: %d bytes): a recv takes what its send sends",
                                     recvs[i].first, src, tag, w.ranks[src].file, sends[i].second, sends[i].first));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckMatching(const ChakraWorkload& w) {
  // (src, dst, tag) -> sends minus recvs, with the first node of each side.
  struct Side {
    int64_t count = 0;
    int rank = -1;
    uint64_t id = 0;
    std::vector<std::pair<int64_t, uint64_t>> sizes;  // bytes and node id of each
  };
  std::map<std::tuple<int32_t, int32_t, int64_t>, std::pair<Side, Side>> messages;
  std::vector<std::vector<int64_t>> issued(w.groups.size(), std::vector<int64_t>(w.ranks.size(), 0));
  for (size_t r = 0; r < w.ranks.size(); ++r) {
    for (const TraceNode& n : w.ranks[r].nodes) {
      if (n.type == TraceNodeType::kCollective) ++issued[n.group][r];
      if (n.type != TraceNodeType::kSend && n.type != TraceNodeType::kRecv) continue;
      auto& entry = messages[{n.src, n.dst, n.tag}];
      Side& side = n.type == TraceNodeType::kSend ? entry.first : entry.second;
      side.sizes.emplace_back(n.comm_bytes, n.id);
      if (side.count++ == 0) {
        side.rank = static_cast<int>(r);
        side.id = n.id;
      }
    }
  }
  for (auto& [key, sides] : messages) {
    const auto& [src, dst, tag] = key;
    if (sides.first.count == sides.second.count) {
      HETSIM_RETURN_IF_ERROR(CheckMessageSizes(w, src, dst, tag, sides.first.sizes, sides.second.sizes));
      continue;
    }
    const bool more_sends = sides.first.count > sides.second.count;
    const Side& s = more_sends ? sides.first : sides.second;
    return NodeError(
        w.ranks[s.rank].file, s.id,
        absl::StrFormat("%d %s from rank %d to rank %d with tag %d but %d %s in %s", s.count,
                        more_sends ? "sends" : "recvs", src, dst, tag,
                        more_sends ? sides.second.count : sides.first.count,
                        more_sends ? "matching recvs" : "matching sends", w.ranks[more_sends ? dst : src].file));
  }
  for (size_t g = 0; g < w.groups.size(); ++g) {
    const auto& members = w.groups[g].ranks;
    for (int64_t r : members) {
      if (r >= static_cast<int64_t>(w.ranks.size())) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "communicator group \"%s\": rank %d has no trace file (%d ranks)", w.groups[g].name, r, w.ranks.size()));
      }
    }
    for (int64_t r : members) {
      if (issued[g][r] == issued[g][members[0]]) continue;
      const int64_t a = members[0];
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: %d collectives on group \"%s\" but %s issues %d: the group would wait forever",
                          w.ranks[r].file, issued[g][r], w.groups[g].name, w.ranks[a].file, issued[g][a]));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<ChakraWorkload> LoadChakraDir(absl::string_view dir, int num_gpus, absl::string_view groups_file) {
  namespace fs = std::filesystem;
  const fs::path root{std::string(dir)};
  std::error_code ec;
  if (!fs::is_directory(root, ec)) return NotATraceFolder(root);
  std::map<std::string, std::set<int64_t>> by_prefix;
  for (const fs::directory_entry& e : fs::directory_iterator(root, ec)) {
    const std::string name = e.path().filename().string();
    if (name.size() < 4 || name.substr(name.size() - 3) != ".et") continue;
    const std::string stem = name.substr(0, name.size() - 3);
    const size_t dot = stem.rfind('.');
    int64_t rank = 0;
    if (dot == std::string::npos || !absl::SimpleAtoi(stem.substr(dot + 1), &rank) || rank < 0 || rank >= kMaxRanks) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: not a rank file name <prefix>.<rank>.et", (root / name).string()));
    }
    by_prefix[stem.substr(0, dot)].insert(rank);
  }
  if (ec) return absl::InvalidArgumentError(absl::StrFormat("%s: cannot list the folder: %s", dir, ec.message()));
  if (by_prefix.empty()) return NotATraceFolder(root);
  if (by_prefix.size() > 1) {
    std::vector<std::string> names;
    for (const auto& [p, r] : by_prefix) names.push_back(absl::StrCat("\"", p, "\""));
    return absl::InvalidArgumentError(absl::StrFormat("%s: rank files of several traces (prefixes %s): one per folder",
                                                      dir, absl::StrJoin(names, ", ")));
  }
  const std::string prefix = by_prefix.begin()->first;
  const std::set<int64_t>& ranks = by_prefix.begin()->second;
  const int n = static_cast<int>(*ranks.rbegin()) + 1;
  for (int r = 0; r < n; ++r) {
    if (ranks.count(r) == 0) {
      return absl::InvalidArgumentError(absl::StrFormat("%s: missing (rank files go from 0 to %d without a gap)",
                                                        (root / RankFileName(prefix, r)).string(), n - 1));
    }
  }
  ChakraWorkload w;
  if (n > num_gpus) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: rank %d: %d rank files but the cluster has %d GPUs",
                                                      (root / RankFileName(prefix, n - 1)).string(), n - 1, n,
                                                      num_gpus));
  }
  if (n < num_gpus) {
    w.warnings.push_back(absl::StrFormat("%s: %d rank files for a cluster of %d GPUs: GPUs %d..%d assumed idle", dir, n,
                                         num_gpus, n, num_gpus - 1));
  }
  const fs::path groups_path =
      groups_file.empty() ? root / CommGroupsFileName(prefix) : fs::path(std::string(groups_file));
  if (!groups_file.empty() || fs::exists(groups_path, ec)) {
    HETSIM_ASSIGN_OR_RETURN(std::string json, proto::ReadInputFile(groups_path.string(), proto::InputKind::kText));
    HETSIM_ASSIGN_OR_RETURN(w.groups, proto::ParseChakraCommGroups(json, groups_path.string()));
    for (const proto::ChakraCommGroup& g : w.groups) {
      for (int64_t r : g.ranks) {
        if (r >= n) {
          return absl::InvalidArgumentError(
              absl::StrFormat("%s: \"%s\": rank %d has no trace file (%d ranks)", groups_path.string(), g.name, r, n));
        }
      }
    }
  }
  std::string first_version;
  for (int r = 0; r < n; ++r) {
    const std::string file = (root / RankFileName(prefix, r)).string();
    HETSIM_ASSIGN_OR_RETURN(proto::ChakraStream stream, proto::ReadChakraStream(file));
    if (r == 0) {
      first_version = stream.metadata.version();
      for (const AttributeProto& a : stream.metadata.attr()) {
        if (a.name() == "dtype" && a.value_case() == AttributeProto::kStringVal) w.dtype = a.string_val();
      }
    } else if (stream.metadata.version() != first_version) {
      w.warnings.push_back(
          absl::StrFormat("%s: GlobalMetadata.version \"%s\" differs from rank 0's \"%s\": each file read as it says",
                          file, stream.metadata.version(), first_version));
    }
    HETSIM_ASSIGN_OR_RETURN(RankTrace t, ConvertRank(stream, file, r, n, &w.groups, &w.warnings));
    w.ranks.push_back(std::move(t));
  }
  HETSIM_RETURN_IF_ERROR(CheckMatching(w));
  return w;
}

}  // namespace hetsim::chakra
