// Context parallelism's ring of key/value blocks (Megatron-LM's context-parallel attention, after
// Liu et al., "Ring Attention", 2023), priced per virtual stage.
//
// Each GPU holds 1/CP of every sample's tokens. In an attention layer's forward it computes its
// queries against its own K/V block while that block travels to the next CP rank; in each of CP - 1
// steps it receives the previous rank's block and computes against it, so a step costs
// max(T_step, core/CP), where core is the layer's attention-core compute on this GPU and T_step the
// time of one step on the fabric (every CP group of the stage sending at once). The backward passes
// the K/V blocks and their gradients (twice the bytes) the same way; recompute replays the forward
// ring. Closed forms, per attention layer, with B the step's bytes and n = CP - 1 (docs/cost-model.md):
//   bytes sent per GPU = n B (forward) + 2 n B (backward) [+ n B under recompute]
//   exchange           = n T(B) (forward), n T(2B) [+ n T(B)] (backward)
//   exposed            = n max(0, T(B) - core_forward/CP), n max(0, T(2B) - core_backward/CP) [+ ...]
// Plan.cp_comm_type's other exchanges run on the same timer, exposed: the all-gathers (the ring's
// flows, K and V one collective each) and the all-to-alls (CpAllToAllFlows);
// sim/workload/context_parallel_ring.h has their closed forms.
#ifndef HETSIM_SIM_EXECUTOR_CP_RING_H_
#define HETSIM_SIM_EXECUTOR_CP_RING_H_

#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

#include "absl/status/statusor.h"
#include "base/time.h"
#include "sim/executor/setup.h"

namespace hetsim::executor {

// The flows of one ring step of a stage: CP rank c of every (replica, TP rank) sends `bytes` to CP
// rank c + 1 (mod CP) of the same replica and TP rank.
std::vector<BoundaryFlow> CpRingStepFlows(const StageLayout& layout, int64_t bytes);
// The flows of an all-to-all of `bytes` per GPU over every CP group of a stage at once (NCCL's: a send
// to every peer at the same time): CP rank c sends bytes / CP to each other CP rank of its replica and
// TP rank.
std::vector<BoundaryFlow> CpAllToAllFlows(const StageLayout& layout, int64_t bytes);

// Times ring steps of one stage on the network, once per step size.
class CpRingTimer {
 public:
  CpRingTimer(const topology::Topology& topology, topology::Router& router, network::NetworkMode mode)
      : router_(router), flows_(topology, mode) {}

  struct Step {
    Time time = 0;
    std::vector<LinkLoad> load;  // every group's step, sorted by link
  };
  absl::StatusOr<const Step*> StepOf(const StageLayout& layout, int64_t bytes);
  absl::StatusOr<const Step*> AllToAllOf(const StageLayout& layout, int64_t bytes);

 private:
  absl::StatusOr<const Step*> Timed(const StageLayout& layout, int64_t bytes, bool all_to_all);

  topology::Router& router_;
  PointFlowTimer flows_;
  std::map<std::tuple<const StageLayout*, int64_t, bool>, Step> cache_;
};

// Sets the virtual stage's cp_* times and bytes and adds the exchange's link load (no-op for CP 1):
// the ring; NCCL's ring all-gathers and reduce-scatters (ContextParallelComm::kAllGather), the same
// steps of the same flows, exposed; or the all-to-alls of a head split (kAllToAll), exposed
// (sim/workload/context_parallel_ring.h).
// `pytorch`: Plan.pytorch_context_parallel, PyTorch's all-gather rotater (with kAllGather).
absl::Status AddContextParallelExchange(CpRingTimer& timer, const StageLayout& layout, spec::ContextParallelComm comm,
                                        VirtualStageCost& vs, bool pytorch = false);

}  // namespace hetsim::executor

#endif  // HETSIM_SIM_EXECUTOR_CP_RING_H_
