// Flow-level network: directed links with a capacity and a latency, and flows of bytes along routes
// (lists of link ids). Knows nothing about GPUs or topologies; the topology module builds the links
// and the routes.
//
// A flow first waits for the sum of its route's per-hop latencies, then transmits. In the max-min
// mode every transmitting flow gets its max-min fair share of every directed link on its route
// (progressive filling). Rates are recomputed incrementally: a flow starting or ending marks its links
// dirty, and one recompute per simulated instant re-rates the flows on the dirty links whose rate is at
// or above the lowest level the change can move, then, while some flow on the links it touched has
// lost its bottleneck, the flows around it (the whole component through links that can saturate after
// a few rounds), moving their completion events on the engine (details, proof and reasons in
// docs/decisions.md). In the contention-free mode each flow behaves as if alone:
// latency + bytes / bottleneck capacity.
#ifndef HETSIM_SIM_NETWORK_NETWORK_H_
#define HETSIM_SIM_NETWORK_NETWORK_H_

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/ids.h"
#include "base/time.h"
#include "base/units.h"
#include "sim/engine/event.h"
#include "sim/engine/simulator.h"

namespace hetsim::network {

// Names a flow: slot in the low 32 bits, slot generation in the high 32 bits (never 0).
using FlowId = uint64_t;

struct LinkSpec {
  Bandwidth capacity;  // > 0
  Time latency = 0;    // >= 0, paid once per hop before the bytes flow
};

enum class NetworkMode {
  kMaxMinFair,      // flows share links by max-min fairness (progressive filling)
  kContentionFree,  // analytical: each flow alone, latency + bytes / bottleneck capacity
};
// "max-min-fair" or "contention-free": the names reports and command-line flags use.
const char* NetworkModeName(NetworkMode mode);
absl::StatusOr<NetworkMode> ParseNetworkMode(absl::string_view name);

// Told when a flow has delivered its last byte. Runs inside the engine at the completion time
// (Simulator::now()); the flow is already gone, and the observer may start new flows.
class FlowObserver {
 public:
  virtual ~FlowObserver() = default;
  virtual void OnFlowCompleted(FlowId flow, uint64_t tag) = 0;
  // A hint, just before the network updates the links of a flow about to complete: the observer may
  // ask for the memory its OnFlowCompleted will read, so that those misses overlap the links' (a large
  // run's collectives read a successor list and a dependency count per flow). Changes no state.
  virtual void PrefetchCompletion(uint64_t /*tag*/) const {}
};

struct LinkCounters {
  int64_t bytes = 0;   // bytes of completed flows that crossed the link
  uint64_t flows = 0;  // completed flows that crossed the link
  Time busy_time = 0;  // time during which at least one flow was transmitting on the link
};

struct NetworkStats {
  uint64_t flows_started = 0;
  uint64_t flows_completed = 0;
  uint64_t recomputations = 0;      // max-min recomputes (at most one per simulated instant)
  uint64_t flows_rerated = 0;       // flow rates changed by recomputes (completion events moved)
  uint64_t flows_visited = 0;       // flows in recomputed components, summed over recomputes
  uint64_t component_closures = 0;  // recomputes that re-rated a whole component after local rounds
  uint64_t flows_merged = 0;        // weighted starts folded into an identical flow (StartWeightedFlow)
  size_t max_active_flows = 0;      // most flows transmitting at once
  uint64_t rate_checks = 0;         // recomputes cross-checked against a from-scratch solve (set_check_rates)
};

class Network : private engine::EventHandler {
 public:
  // Checks every link (capacity > 0 and finite, latency >= 0); errors name `links[i].field`.
  static absl::StatusOr<std::unique_ptr<Network>> Create(engine::Simulator* simulator, std::vector<LinkSpec> links,
                                                         NetworkMode mode);
  ~Network() override;
  Network(const Network&) = delete;
  Network& operator=(const Network&) = delete;

  // Starts moving `bytes` (>= 0) along `route` at Simulator::now(). Every id in `route` must be a
  // link of this network, at most once (routes come from the topology, which guarantees it; a bad id
  // aborts as an internal error). An empty route or zero bytes completes after the route's latency.
  // `observer` may be null; `tag` is handed back to it untouched.
  FlowId StartFlow(std::span<const LinkId> route, int64_t bytes, FlowObserver* observer, uint64_t tag);
  // What StartFlow reads from a route's links (its latency, its tightest link), for a caller that
  // starts flows on one route many times (a collective's path: a ring's step after step). Starting a
  // flow with it reads no link record, which is most of a start's cost on a large cluster. It stays
  // valid across capacity changes: a summary older than the last SetLinkCapacities is recomputed.
  struct RouteSummary {
    Time latency = 0;
    LinkId tightest_link;
    double tightest_capacity = 0;  // bytes/s; 0 for an empty route
    uint64_t capacities_version = 0;
  };
  RouteSummary SummarizeRoute(std::span<const LinkId> route) const;
  // StartFlow with `summary` = SummarizeRoute(route), computed earlier.
  FlowId StartFlow(std::span<const LinkId> route, const RouteSummary& summary, int64_t bytes, FlowObserver* observer,
                   uint64_t tag);
  // A flow that stands for `weights[i]` flows on link route[i] (each > 0 and finite), for an opt-in
  // approximation that simulates one flow of a symmetric group: on every link it takes its max-min
  // share per unit of weight (the rate it gets) and consumes rate x weight of the link; the link's
  // counters grow by bytes x weight. Weights of 1 give exactly StartFlow.
  //
  // Weighted flows started at one instant on the same route with the same bytes and weights are one
  // flow of the summed weights (max-min gives identical flows identical rates, so k of weight w are
  // one of weight k w, up to rounding): the call returns the first one's id and its completion
  // notifies every caller, in the order they started it. Representatives often coincide (a class's
  // parts meet on its canonical links), and each merge is a flow less to re-rate.
  FlowId StartWeightedFlow(std::span<const LinkId> route, std::span<const double> weights, int64_t bytes,
                           FlowObserver* observer, uint64_t tag);

  // Room for `flows` more flows without growing (a caller about to start many at one instant: growing
  // moves every flow record, a third of a 4,608-flow all-to-all's time).
  void ReserveFlows(size_t flows);

  // Changes link capacities at Simulator::now() (what-if faults: a degraded or flapping link); a
  // capacity of 0 (>= 0, finite) takes a link down: its flows stall at rate 0 until it comes back.
  // Every flow crossing a changed link gets its new cap; transmitting ones are re-rated at this
  // instant (max-min: with the flows they share binding links with; contention-free: each alone) and
  // their completion events move; flows still waiting for latency start with the new capacities.
  void SetLinkCapacities(std::span<const std::pair<LinkId, double>> changes);
  void SetLinkCapacity(LinkId link, double bytes_per_s) {
    const std::pair<LinkId, double> change{link, bytes_per_s};
    SetLinkCapacities({&change, 1});
  }

  // Debug mode: after every max-min recompute, solve max-min from scratch over every transmitting flow
  // (plain progressive filling, flat arrays, nothing kept between recomputes) and abort unless every
  // flow's rate agrees with the incremental one within 1e-9 relative (a stalled flow: 1e-12 of its
  // cap). Slow (a full solve per recompute); for tests and for checking a run by hand. On by default
  // when the environment has HETSIM_CHECK_MAX_MIN set to anything but "" or "0".
  void set_check_rates(bool on) { check_rates_ = on; }
  bool check_rates() const { return check_rates_; }

  // SetLinkCapacities calls that changed a capacity (RouteSummary::capacities_version).
  uint64_t capacities_version() const { return capacities_version_; }
  NetworkMode mode() const { return mode_; }
  const char* mode_name() const { return NetworkModeName(mode_); }
  size_t num_links() const { return links_.size(); }
  const LinkSpec& link(LinkId id) const { return link_specs_[id.value()]; }
  // Counters up to Simulator::now() (busy time includes a busy period still open).
  LinkCounters link_counters(LinkId id) const;
  // Zeroes a link's counters; the link must carry no flow (a network reused for another run).
  void ResetLinkCounters(LinkId id);

  // Flows started and not yet completed (waiting for latency or transmitting).
  size_t active_flows() const { return active_flows_; }
  bool IsActive(FlowId flow) const;
  // Current rate in bytes/s of a transmitting flow; 0 while it waits for latency or once it is done.
  // In max-min mode rates settle at the end of the current instant (after the pending recompute).
  double FlowRate(FlowId flow) const;
  // What a link's transmitting flows take now: the sum of rate x weight, and of their weights (each
  // plain flow 1). In max-min mode, as FlowRate, the rates of the current instant's pending recompute
  // are not in yet.
  struct LinkUse {
    double bytes_per_s = 0;
    double weight = 0;
  };
  LinkUse link_use(LinkId id) const;
  // False while a recompute is pending at this instant: rates (FlowRate, link_use) are about to change.
  bool rates_settled() const { return !recompute_scheduled_; }
  const NetworkStats& stats() const { return stats_; }

 private:
  enum EventKind : uint64_t { kActivate = 0, kComplete = 1, kRecompute = 2 };
  enum class FlowState : uint8_t { kFree, kWaitingLatency, kTransmitting };

  struct Hop {
    LinkId link;
    uint32_t position;  // index of this flow's entry in links_[link.value()].flows
  };
  struct LinkEntry {
    uint32_t flow;  // flow slot
    uint32_t hop;   // index into that flow's hops
  };
  // A weighted flow that stands for several identical ones started at one instant: its weights are
  // the parts' sums; the links count each part's bytes and flows as if it had run alone.
  struct MergedParts {
    std::vector<double> part_weights;                        // every part's (they are identical)
    std::vector<std::pair<FlowObserver*, uint64_t>> riders;  // the parts after the first, in start order
  };
  struct Flow {
    uint32_t generation = 1;
    FlowState state = FlowState::kFree;
    uint32_t next_free = 0;
    LinkId tightest_link;  // lowest capacity on the route (lowest id among equals); flow_cap_
    int64_t bytes = 0;
    double remaining_bytes = 0;  // as of rate_since; updated only when the rate changes
    double rate = 0;             // bytes/s while transmitting
    Time rate_since = 0;
    engine::EventId event;  // activation while waiting, completion while transmitting
    FlowObserver* observer = nullptr;
    uint64_t tag = 0;
    // Inline for routes of up to 6 hops (every route of a two-level fabric): one cache miss less per
    // hop on join and leave, and no allocation per flow.
    absl::InlinedVector<Hop, 6> hops;
    std::vector<double> weights;  // per hop (StartWeightedFlow); empty: 1 on every hop
    // Identical weighted flows merged into this one (StartWeightedFlow); null when none.
    std::unique_ptr<MergedParts> merged;
  };
  // Two cache lines: the first holds what a flow's start and end touch on every link of its route
  // (the capacity, up to two flow entries inline: most links carry one flow at a time, so joining and
  // leaving touch no other memory), the second the counters' rest and the recompute's scratch, which
  // only binding links use. 115 K links of the 16K-GPU cluster at 136 bytes each were two to three
  // cache misses per hop of every flow (perf: 40% of the exact run in Join, Leave and StartFlow).
  struct alignas(64) Link {
    double capacity = 0;                      // bytes/s, as link_specs_ (the recompute reads it with the flows)
    absl::InlinedVector<LinkEntry, 2> flows;  // transmitting flows on this link
    // Counter: the time during which the link carried a transmitting flow, less the start of the
    // current busy period while it carries one (one field, so that a flow's start and end touch one line).
    Time busy_time_less_since = 0;
    int64_t bytes = 0;             // counter: bytes of completed flows
    uint64_t completed_flows = 0;  // counter
    uint32_t weighted_flows = 0;   // flows on the link started by StartWeightedFlow
    // Recompute scratch.
    bool dirty = false;
    bool binds = false;  // its flows' caps add up to more than its capacity
    // Second line.
    uint32_t visit_epoch = 0;
    uint32_t level_epoch = 0;  // saturation level already taken into this recompute's floor
    uint32_t others = 0;       // flows on the link outside the component (frozen or not re-rated)
    // Bottleneck check of a recompute round: the link's load and its flows' largest share.
    uint32_t check_epoch = 0;
    // A link of this recompute's component (scan_stamp_), at this index of component_links_ and
    // scanned_links_; the filling's own values are there, not here.
    uint32_t scan_stamp = 0;
    uint32_t scan_index = 0;
    double check_load = 0;
    double check_top_share = 0;
  };
  static_assert(sizeof(Link) == 128, "a link is two cache lines");
  struct ShareEntry {
    double share;
    uint32_t index;  // a link id, or a flow slot when is_flow (the flow's cap)
    bool is_flow;
  };

  Network(engine::Simulator* simulator, std::vector<LinkSpec> links, NetworkMode mode);

  void OnEvent(uint64_t payload) override;
  uint32_t AllocateFlow();
  void FreeFlow(uint32_t slot);
  uint32_t SlotOf(FlowId flow) const;  // kNoFlow when stale
  void Activate(uint32_t slot);
  void Complete(uint32_t slot);
  void Join(uint32_t slot);
  void Leave(uint32_t slot);
  void MarkDirty(LinkId link);
  // Asks for the first line of every link record on the flow's route at once: the hops' misses then
  // overlap instead of coming one per loop iteration (most of Join's and Leave's time on a large run).
  void PrefetchLinks(const Flow& f) const {
    for (const Hop& hop : f.hops) __builtin_prefetch(&links_[hop.link.value()], 1);
  }
  void Recompute();
  double CollectSeeds();
  void NextEpoch();
  bool AddToComponent(uint32_t slot) {  // false if already in
    if (flow_epoch_[slot] == epoch_) return false;
    flow_epoch_[slot] = epoch_;
    component_flows_.push_back(slot);
    return true;
  }
  void LowerFloorForNewFlows();
  double SaturationLevel(const Link& link);
  void ScanComponentLinks();
  void ScanFlowHops(uint32_t position, size_t old_links);
  struct ScannedLink;
  ScannedLink ScanLink(Link& link);
  void FillProgressively();
  void FixFlow(uint32_t slot, double rate);
  bool AddFlowsWithoutBottleneck();
  void RefreshBottlenecks(double threshold);
  double CurrentRate(uint32_t slot) const;  // this round's filling for the component, else the last rate
  bool HasBottleneck(uint32_t slot);        // CheckBottleneck, once per flow and round
  bool CheckBottleneck(uint32_t slot);
  bool IsBottleneckOf(LinkId link, double rate);
  bool MoveBottleneck(uint32_t slot, LinkId id);
  bool CloseComponent(double threshold);
  void ApplyNewRates();
  void RefreshCap(uint32_t slot);
  // The cross-check (set_check_rates, network_check.cc).
  static bool CheckRatesFromEnvironment();
  void SolveFromScratch(std::vector<uint32_t>& slots, std::vector<double>& rates);
  void CheckRates();
  // A weighted flow started at this instant, still waiting for its latency, with this route, bytes and
  // weights; kNoFlow if none.
  uint32_t IdenticalWaitingFlow(uint64_t key, std::span<const LinkId> route, std::span<const double> weights,
                                int64_t bytes);  // tightest link and cap from the current capacities
  static double HopWeight(const Flow& f, uint32_t hop) { return f.weights.empty() ? 1.0 : f.weights[hop]; }
  // The weight of a link's entry: 1 on a link without weighted flows (no look into the flow).
  double EntryWeight(const Link& link, const LinkEntry& entry) const {
    return link.weighted_flows == 0 ? 1.0 : HopWeight(flows_[entry.flow], entry.hop);
  }

  static constexpr uint32_t kNoFlow = 0xffffffffu;

  engine::Simulator* simulator_;
  NetworkMode mode_;
  std::vector<LinkSpec> link_specs_;  // as created, with the current capacities
  std::vector<Link> links_;
  std::vector<Flow> flows_;
  // Per flow slot, the two marks the recompute's inner loops test for every flow of a link, kept
  // apart from Flow (176 bytes) so that scanning a link with hundreds of flows stays in cache.
  std::vector<uint32_t> flow_epoch_;  // component search: visited in recompute number flow_epoch_
  std::vector<uint8_t> flow_fixed_;   // progressive filling: rate decided in this recompute
  // The flow's max-min rate as of the last recompute; infinity until its first one. Flows below the
  // recompute's floor keep their rate without being visited.
  std::vector<double> flow_rate_;
  std::vector<double> flow_new_rate_;  // progressive filling's result, for the flows it re-rates
  // Bottleneck checks of a recompute round: checked in round flow_check_epoch_, with this result.
  std::vector<uint32_t> flow_check_epoch_;
  std::vector<uint8_t> flow_check_result_;
  // The link whose saturation fixed the flow's rate at its last filling, or kAtCap.
  static constexpr LinkId kAtCap{0xffffffffu};
  std::vector<LinkId> flow_bottleneck_;
  std::vector<uint32_t> moved_records_;                 // flows whose record a check of this recompute moved
  static constexpr double kBottleneckSlack = 1 - 1e-9;  // rounding of sums and shares in the checks
  // The capacity of the flow's tightest link: no allocation can give it more. Kept here, not in Flow,
  // for the binding test's sum over a link's flows.
  std::vector<double> flow_cap_;
  // Which of the flow's hops cross a binding link: bit h for hop h < 63, kFarHops for a route of more
  // hops (its hops from 63 on are tested one by one). Set at Join, kept by CollectSeeds as links start
  // or stop binding. The recompute's hop loops look only at the links that bind (a third of a large
  // run's hops), without reading the others' records.
  std::vector<uint64_t> flow_binding_hops_;
  static constexpr uint32_t kNearHops = 63;
  static constexpr uint64_t kFarHops = uint64_t{1} << kNearHops;
  // Calls visit(h) for every hop h of the flow whose link binds, in hop order.
  template <typename Visit>
  void ForBindingHops(uint32_t slot, Visit&& visit) const {
    const uint64_t mask = flow_binding_hops_[slot];
    for (uint64_t near = mask & ~kFarHops; near != 0; near &= near - 1) {
      visit(static_cast<uint32_t>(__builtin_ctzll(near)));
    }
    if ((mask & kFarHops) == 0) return;
    const Flow& f = flows_[slot];
    for (uint32_t h = kNearHops; h < f.hops.size(); ++h) {
      if (links_[f.hops[h].link.value()].binds) visit(h);
    }
  }
  uint64_t capacities_version_ = 0;  // SetLinkCapacities calls that changed a capacity
  uint32_t free_flow_ = kNoFlow;
  size_t active_flows_ = 0;
  size_t transmitting_flows_ = 0;
  NetworkStats stats_;

  // Incremental max-min state and reusable scratch (no allocation once grown).
  bool recompute_scheduled_ = false;
  // No flow whose rate is below this level can change at the next recompute (docs/decisions.md,
  // "Incremental max-min"): the lowest rate of the flows that left since the last one, lowered by
  // the level at which a new flow's link saturates, 0 after a capacity change.
  static constexpr double kNoFloor = std::numeric_limits<double>::infinity();
  double refill_floor_ = kNoFloor;
  uint32_t epoch_ = 0;
  // Rounds of bottleneck checks a recompute tries before it re-rates the whole component.
  static constexpr int kMaxLocalRounds = 4;
  std::vector<LinkId> dirty_links_;
  std::vector<uint32_t> new_flows_;  // started transmitting since the last recompute
  std::vector<LinkId> component_links_;
  // The local rounds of a recompute only add flows to the component, and nothing a scan reads (flow
  // lists, capacities, binding, the other flows' rates) changes within a recompute: a round's scan
  // redoes only the links the added flows cross, and keeps the others' values as the last scan left
  // them. component_flows_[0, scanned_flows_) are the flows of the last scan (0: scan them all);
  // the links of this recompute's scans carry scan_stamp_; scanned_links_[i] is what the last scan
  // computed for component_links_[i].
  size_t scanned_flows_ = 0;
  uint32_t scan_stamp_ = 0;
  // A component link as the scan leaves it: the capacity the flows outside the component leave, and
  // the count and weight of the component's flows on it. The filling works on a copy (fill_links_),
  // indexed like component_links_, and reads no link record but the flow lists of links it saturates.
  struct ScannedLink {
    double residual;        // capacity not yet given to fixed or frozen flows
    double unfixed_weight;  // weights of the flows whose rate is not decided yet (= unfixed without weighted flows)
    uint32_t unfixed;       // flows on the link whose rate is not decided yet
    uint32_t others;        // flows on the link outside the component
  };
  std::vector<ScannedLink> scanned_links_;
  std::vector<ScannedLink> fill_links_;
  std::vector<uint32_t> rescanned_;  // indices into component_links_ of old links that added flows cross
  // Per position in component_flows_ (the scan's), what the filling needs of a flow without reading its
  // record: its binding hops as indices into component_links_ (with the hop, for a weight), in hop order.
  struct ScannedFlow {
    uint32_t begin;  // into scanned_hops_
    uint32_t count;
    bool weighted;
    bool cap_entry;  // the filling queues its cap (weighted, or its tightest link does not bind)
  };
  struct ScannedHop {
    uint32_t link;  // index into component_links_
    uint32_t hop;   // index into the flow's hops
  };
  std::vector<ScannedFlow> scanned_flows_info_;
  std::vector<ScannedHop> scanned_hops_;
  std::vector<uint32_t> flow_position_;  // per flow slot: its index in component_flows_ (the last scan's)
  std::vector<uint32_t> component_flows_;
  std::vector<LinkId> stack_;
  std::vector<uint32_t> violators_;  // flows found without a bottleneck (AddFlowsWithoutBottleneck)
  // The filling's initial entries as sort keys: a ShareEntry in one 128-bit integer (ShareKeyOf), so
  // that the sort compares without a branch on ties, in a total order (equal shares: flows' caps
  // first, then by index) that no sort algorithm can change.
  __extension__ typedef unsigned __int128 ShareKey;
  std::vector<ShareKey> sorted_shares_;
  std::vector<ShareEntry> share_heap_;
  std::vector<std::pair<double, double>> level_scratch_;  // (rate, weight) of a link's flows
  bool check_rates_ = false;
  std::vector<uint32_t> check_local_link_;  // the cross-check's link ids to its own indices (kNoFlow: none)
  // Weighted flows started at merge_instant_, by a hash of route, bytes and weights (StartWeightedFlow).
  Time merge_instant_ = kNoTime;
  // Value: the flow slot.
  absl::flat_hash_map<uint64_t, uint32_t> merge_index_;
};

}  // namespace hetsim::network

#endif  // HETSIM_SIM_NETWORK_NETWORK_H_
