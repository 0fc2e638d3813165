// `hetsim collective --cluster C --op OP --bytes SIZE --gpus LIST [--algo A] [--sizes MIN:MAX]`:
// simulates one collective on the cluster's network and prints nccl-tests' time, algbw and busbw.
#include <chrono>
#include <cstdio>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "app/cli/cli.h"
#include "app/cli/gpu_list.h"
#include "app/cli/ideal_option.h"
#include "app/cli/network_option.h"
#include "base/status_macros.h"
#include "base/units.h"
#include "proto/validate_cluster.h"
#include "service/driver/collective_command.h"
#include "sim/collectives/layout.h"
#include "sim/collectives/nccl_model.h"
#include "sim/collectives/simulate.h"
#include "topology/device_graph.h"
#include "topology/routing.h"

namespace hetsim::cli {
namespace {

const CommandInfo kCollectiveInfo = {
    "collective",
    "hetsim collective --cluster CLUSTER --op OP (--bytes SIZE | --sizes MIN:MAX) --gpus LIST [--algo A]\n"
    "       [--inter-node ring|tree|auto] [--channels N] [--chunks N] [--network max-min-fair|contention-free]\n"
    "       [--ring-steps auto|stepped|aggregated] [--proto auto|LL|LL128|Simple] [--representative] [--exact]\n"
    "       [--ideal] [--max-wall-seconds S]",
    "Simulates one collective alone on the cluster's flow-level network and prints, like nccl-tests, the\n"
    "simulated time, the algorithm bandwidth (size / time) and the bus bandwidth (algbw x 2(n-1)/n for\n"
    "all-reduce, (n-1)/n for all-gather, reduce-scatter and all-to-all, 1 for broadcast and send-recv).\n"
    "OP: all-reduce, all-gather, reduce-scatter, all-to-all, broadcast (root: first GPU), send-recv\n"
    "(two GPUs). SIZE: bytes with an optional suffix K, M, G, T (or KiB, MiB, GiB, TiB; powers of 1024)\n"
    "or KB, MB, GB, TB (powers of 1000). --sizes MIN:MAX doubles the size from MIN to MAX, one row each.\n"
    "LIST: global GPU ids (islands, nodes, GPUs in order) as ranges, e.g. 0-511 or 0-7,16-23.\n"
    "A: ring, tree, hier (intra-node reduce-scatter, inter-node all-reduce, intra-node all-gather),\n"
    "direct, pairwise, nvls (all-reduce, all-gather or reduce-scatter on one node whose node type has\n"
    "nvlink_sharp: NVLink SHARP, each GPU's buffer sent once to the NVSwitch and the sum received once, or\n"
    "its shard multicast), collnet (all-reduce, all-gather or reduce-scatter across nodes of an island with\n"
    "infiniband_sharp: NCCL's CollNetDirect, each GPU's segment reduced or gathered once in the InfiniBand\n"
    "switches, pipelined by chunks), nvlstree (all-reduce across nodes whose node type has nvlink_sharp:\n"
    "NCCL's NVLSTree, NVLS inside each node and trees across the nodes' GPU i, pipelined), collnetchain\n"
    "(all-reduce across nodes of an island with infiniband_sharp: NCCL's CollNetChain, each node's GPUs in\n"
    "a chain to a NIC into the switches, pipelined), or auto (default): the fastest by\n"
    "the alpha-beta estimate on the actual links, a tree only where NCCL's tuner would run one too.\n"
    "--ring-steps: stepped simulates every ring step and tree chunk as flows; aggregated moves each ring\n"
    "edge's bytes of all steps as one flow that pays every step's latency (exact for a ring alone on its\n"
    "links), and each tree edge's chunks as three flows per direction (first, middle, last chunk; within 1%\n"
    "of stepped, docs/decisions.md); auto (default) aggregates rings of more than 128 ranks, and trees\n"
    "and hierarchies of more than 65,536 stepped flows. Aggregated rows say \"ring-agg\", \"tree-agg\" or "
    "\"hier-agg\".\n"
    "--representative (an opt-in approximation; rows say \"-rep\"): channels that are rotations of each other\n"
    "(as many channels as GPUs per node) run one channel, a hierarchy one rail, a direct all-to-all 4 strata\n"
    "of node shifts, as weighted flows (a flat tree keeps the edges inside a node for one node per class of\n"
    "nodes placed alike in both trees, and times each edge's first and last chunk without a flow); a node's\n"
    "links carry exactly the full collective's load, a fabric switch's the expected busiest link of ECMP\n"
    "hashing (docs/decisions.md, \"Representative collectives\": 0 at full bisection, -0.7% for a flat\n"
    "tree; where hashing decides, up to 3.4% for all-to-all, 15% for rings).\n"
    "By default an aggregated flat double tree (tree-agg) over whole NVSwitch nodes of one island joined by\n"
    "one switch or a full-bisection fat tree runs as its representative with every chunk a flow (rows say\n"
    "\"tree-agg-rep\" and a line names it): measured within 0.5% of the full simulation (0 on 16 of 17\n"
    "shapes, -0.14% on one; docs/decisions.md, \"Representative trees by default\"). --exact turns it off.\n"
    "Links run at the bandwidth NCCL reaches on their fabric, and each collective pays NCCL's launch and\n"
    "per-step latencies of its protocol (LL, LL128, Simple; --proto auto picks the fastest estimate, as\n"
    "NCCL's tuner does; docs/network.md). --ideal (or the cluster's `ideal: true`) gives line rate and no\n"
    "protocol latency."};

// The sizes to simulate: --bytes SIZE alone, or --sizes MIN:MAX doubling from MIN.
absl::StatusOr<std::vector<int64_t>> ParseSizes(absl::string_view bytes_text, absl::string_view sizes_text) {
  if (bytes_text.empty() == sizes_text.empty()) {
    return absl::InvalidArgumentError("give exactly one of --bytes and --sizes");
  }
  std::vector<int64_t> sizes;
  if (!bytes_text.empty()) {
    HETSIM_ASSIGN_OR_RETURN(const int64_t b, ParseSize(bytes_text, "--bytes"));
    sizes.push_back(b);
    return sizes;
  }
  std::vector<std::string> ends = absl::StrSplit(sizes_text, ':');
  if (ends.size() != 2) return absl::InvalidArgumentError("--sizes: expected MIN:MAX, e.g. 1KiB:4GiB");
  HETSIM_ASSIGN_OR_RETURN(const int64_t lo, ParseSize(ends[0], "--sizes"));
  HETSIM_ASSIGN_OR_RETURN(const int64_t hi, ParseSize(ends[1], "--sizes"));
  if (lo <= 0 || hi < lo) return absl::InvalidArgumentError("--sizes: MIN must be positive and at most MAX");
  for (int64_t size = lo; size <= hi; size *= 2) sizes.push_back(size);
  return sizes;
}

// One line of the table: the shape chosen, simulated time, bandwidths, estimate, flows, wall time.
void PrintRow(int64_t size, const collectives::CollectiveResult& r, double wall_ms) {
  const bool hier = r.shape.algorithm == collectives::CollectiveAlgorithm::kHierarchical;
  const std::string algo = absl::StrCat(collectives::AlgorithmName(r.shape.algorithm), r.shape.aggregated ? "-agg" : "",
                                        r.shape.representative ? "-rep" : "");
  std::printf("%14lld %-8s %-5s %3d %6d %-6s %14.2f %12.2f %12.2f %14.2f %10llu %9.1f\n", static_cast<long long>(size),
              algo.c_str(), hier ? collectives::AlgorithmName(r.shape.inter_node).data() : "-", r.shape.channels,
              r.shape.chunks, collectives::ProtocolName(r.shape.protocol).data(), TimeToSeconds(r.time) * 1e6,
              r.algbw_bytes_per_s / 1e9, r.busbw_bytes_per_s / 1e9, r.shape.estimated_seconds.value() * 1e6,
              static_cast<unsigned long long>(r.flows), wall_ms);
}

// The flags of `hetsim collective`.
struct CollectiveFlags {
  std::string cluster_path, op_name, bytes_text, sizes_text, gpus_text,
      algo_name = "auto", inter_name = "auto", network_name, ring_steps_name = "auto", proto_name = "auto";
  int32_t channels = 0, chunks = 0;
  double max_wall_seconds = 0;
  bool ideal = false, representative = false, exact = false;
};

void AddCollectiveOptions(po::options_description& options, CollectiveFlags& f) {
  options.add_options()("cluster,c", po::value(&f.cluster_path)->required()->value_name("CLUSTER"), "cluster file")(
      "op", po::value(&f.op_name)->required()->value_name("OP"), "collective operation")(
      "bytes", po::value(&f.bytes_text)->value_name("SIZE"), "size (nccl-tests convention)")(
      "sizes", po::value(&f.sizes_text)->value_name("MIN:MAX"), "table of sizes, doubling")(
      "gpus", po::value(&f.gpus_text)->required()->value_name("LIST"), "group of global GPU ids")(
      "algo", po::value(&f.algo_name)->value_name("A"), "algorithm (default auto)")(
      "inter-node", po::value(&f.inter_name)->value_name("A"), "hier: ring, tree or auto across nodes")(
      "channels", po::value(&f.channels)->value_name("N"), "parallel rings/trees (0 = NICs per node)")(
      "chunks", po::value(&f.chunks)->value_name("N"), "pipeline chunks (0 = chosen by the estimate)")(
      "ring-steps", po::value(&f.ring_steps_name)->value_name("MODE"), "auto (default), stepped or aggregated")(
      "proto", po::value(&f.proto_name)->value_name("P"), "NCCL protocol: auto (default), LL, LL128 or Simple")(
      "representative", po::bool_switch(&f.representative), "simulate symmetric parts once (approximation)")(
      "exact", po::bool_switch(&f.exact), "no default approximation (the full simulation)")(
      "max-wall-seconds", po::value(&f.max_wall_seconds)->value_name("S"), "stop and exit 2 after S seconds");
  AddIdealOption(options, &f.ideal);
  AddNetworkOption(options, &f.network_name);
}

// The request the flags name (its bytes are set per size), or the usage error's exit code.
std::variant<collectives::CollectiveRequest, int> RequestOf(const CollectiveFlags& f) {
  collectives::CollectiveRequest req;
  auto op = ParseCollectiveOp(f.op_name);
  if (!op.ok()) return UsageError(kCollectiveInfo, absl::StrCat("--", op.status().message()));
  req.op = *op;
  auto algo = collectives::ParseAlgorithm(f.algo_name);
  if (!algo.ok()) return UsageError(kCollectiveInfo, absl::StrCat("--", algo.status().message()));
  req.algorithm = *algo;
  auto inter = collectives::ParseAlgorithm(f.inter_name);
  if (!inter.ok()) return UsageError(kCollectiveInfo, absl::StrCat("--inter-node: ", inter.status().message()));
  req.inter_node = *inter;
  return req;
}

// The rest of the request, after the network mode (checked in between, as the flags are listed).
std::optional<int> CompleteRequest(const CollectiveFlags& f, collectives::CollectiveRequest& req) {
  auto ring_steps = collectives::ParseRingSteps(f.ring_steps_name);
  if (!ring_steps.ok()) return UsageError(kCollectiveInfo, absl::StrCat("--", ring_steps.status().message()));
  req.ring_steps = *ring_steps;
  auto protocol = collectives::ParseProtocol(f.proto_name);
  if (!protocol.ok()) return UsageError(kCollectiveInfo, absl::StrCat("--", protocol.status().message()));
  req.protocol = *protocol;
  req.channels = f.channels;
  req.chunks = f.chunks;
  if (f.exact && f.representative) {
    return UsageError(kCollectiveInfo, "--exact and --representative exclude each other (--exact: no approximation)");
  }
  req.representative = f.representative;
  req.representative_by_default = !f.exact;
  auto gpus = ParseGpuList(f.gpus_text, "--gpus");
  if (!gpus.ok()) return UsageError(kCollectiveInfo, gpus.status().message());
  req.gpus = *gpus;
  return std::nullopt;
}

void PrintHeader(const collectives::CollectiveRequest& req, const topology::Topology& topo,
                 const std::string& cluster_name, network::NetworkMode mode) {
  const size_t nodes = collectives::GroupByNode(topo, req.gpus).size();
  std::printf("# hetsim collective: %s on %zu GPUs (%zu nodes) of cluster %s (%d GPUs); network %s; %s\n",
              CollectiveOpName(req.op).data(), req.gpus.size(), nodes, cluster_name.c_str(), topo.num_gpus(),
              network::NetworkModeName(mode), topo.nccl_model() ? "NCCL achieved bandwidth" : "ideal (line rate)");
  std::printf("# algbw = size / time; busbw = algbw x %.4f (nccl-tests); GB/s = 1e9 bytes/s\n",
              collectives::BusBandwidthFactor(req.op, static_cast<int64_t>(req.gpus.size())));
  std::printf("%14s %-8s %-5s %3s %6s %-6s %14s %12s %12s %14s %10s %9s\n", "size(B)", "algo", "inter", "ch", "chunks",
              "proto", "time(us)", "algbw(GB/s)", "busbw(GB/s)", "estimate(us)", "flows", "wall(ms)");
}

// One row per size; with one size and the automatic choice, every algorithm's estimate after it.
int PrintRows(driver::CollectiveSession& session, const std::vector<int64_t>& sizes) {
  for (int64_t size : sizes) {
    const auto wall_start = std::chrono::steady_clock::now();
    auto r = session.Simulate(size);
    const double wall_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - wall_start).count();
    if (!r.ok()) {
      const absl::Status s = absl::IsInvalidArgument(r.status())
                                 ? absl::InvalidArgumentError(absl::StrCat("--", r.status().message()))
                                 : r.status();
      return ReportFailure(kCollectiveInfo, s);
    }
    PrintRow(size, *r, wall_ms);
    if (r->shape.representative_by_default) {
      std::printf(
          "#   approximation: representative tree channels (within 0.5%% of the full simulation on the measured "
          "fabrics, docs/decisions.md); --exact turns it off\n");
    }
    if (session.request().algorithm == collectives::CollectiveAlgorithm::kAuto && sizes.size() == 1) {
      for (const auto& e : r->estimates) {
        std::printf("#   estimate %-8s %-6s %14.2f us%s\n", collectives::AlgorithmName(e.algorithm).data(),
                    collectives::ProtocolName(e.protocol).data(), e.seconds.value() * 1e6,
                    e.algorithm == r->shape.algorithm ? "  (chosen)" : "");
      }
    }
  }
  return kExitOk;
}

int Collective(const Args& args) {
  po::options_description options("options");
  CollectiveFlags f;
  AddCollectiveOptions(options, f);
  po::positional_options_description positional;
  po::variables_map vm;
  if (auto exit = ParseCommandLine(kCollectiveInfo, args, options, positional, &vm)) return *exit;

  std::variant<collectives::CollectiveRequest, int> parsed = RequestOf(f);
  if (const int* exit = std::get_if<int>(&parsed)) return *exit;
  collectives::CollectiveRequest& req = std::get<collectives::CollectiveRequest>(parsed);
  auto mode = ParseNetworkOption(f.network_name);
  if (!mode.ok()) return UsageError(kCollectiveInfo, mode.status().message());
  if (auto exit = CompleteRequest(f, req)) return *exit;
  if (auto exit = CheckRunLimitFlags(kCollectiveInfo, 0, f.max_wall_seconds)) return *exit;
  absl::StatusOr<std::vector<int64_t>> parsed_sizes = ParseSizes(f.bytes_text, f.sizes_text);
  if (!parsed_sizes.ok()) return UsageError(kCollectiveInfo, parsed_sizes.status().message());
  const std::vector<int64_t>& sizes = *parsed_sizes;

  auto cluster = proto::LoadCluster(f.cluster_path);
  if (!cluster.ok()) return ReportFailure(kCollectiveInfo, cluster.status());
  const std::string cluster_name = cluster->name().empty() ? f.cluster_path : cluster->name();
  absl::StatusOr<driver::CollectiveSession> session =
      driver::CollectiveSession::Open({.cluster = *std::move(cluster),
                                       .cluster_file = f.cluster_path,
                                       .ideal = f.ideal,
                                       .request = req,
                                       .mode = *mode,
                                       .max_wall_seconds = f.max_wall_seconds});
  if (!session.ok()) return ReportFailure(kCollectiveInfo, session.status());
  if (absl::Status s = session->Check(sizes.front()); !s.ok()) {
    return ReportFailure(kCollectiveInfo, absl::InvalidArgumentError(absl::StrCat("--", s.message())));
  }
  PrintHeader(session->request(), session->topology(), cluster_name, *mode);
  return PrintRows(*session, sizes);
}

}  // namespace

absl::StatusOr<int64_t> ParseSize(absl::string_view text, absl::string_view flag) {
  struct Suffix {
    const char* name;
    int64_t scale;
  };
  static constexpr Suffix kSuffixes[] = {{"KiB", kKiB}, {"MiB", kMiB},   {"GiB", kGiB},      {"TiB", kTiB},
                                         {"KB", 1000},  {"MB", 1000000}, {"GB", 1000000000}, {"TB", 1000000000000},
                                         {"K", kKiB},   {"M", kMiB},     {"G", kGiB},        {"T", kTiB},
                                         {"B", 1}};
  int64_t scale = 1;
  absl::string_view digits = text;
  for (const Suffix& s : kSuffixes) {
    if (absl::EndsWith(text, s.name)) {
      scale = s.scale;
      digits = text.substr(0, text.size() - absl::string_view(s.name).size());
      break;
    }
  }
  uint64_t value = 0;
  const bool all_digits = !digits.empty() && digits.find_first_not_of("0123456789") == absl::string_view::npos;
  if (all_digits && !absl::SimpleAtoi(digits, &value)) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: %s overflows (the limit is 1 PiB)", flag, text));
  }
  if (!absl::SimpleAtoi(digits, &value)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: \"%s\" is not a size (e.g. 1048576, 64KiB, 1GiB)", flag, text));
  }
  if (value > static_cast<uint64_t>(collectives::kMaxCollectiveBytes) / static_cast<uint64_t>(scale)) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: %s is larger than the 1 PiB limit", flag, text));
  }
  return static_cast<int64_t>(value) * scale;
}

int RunCollective(const Args& args) {
  return RunGuarded(kCollectiveInfo, [&] { return Collective(args); });
}

}  // namespace hetsim::cli
