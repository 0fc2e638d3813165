// ZeRO-3 across pipelines (Plan.pipelines, every range at zero_stage 3; layer_range_sync.h): every all-gather
// of a layer range is one collective over all its holders, matched per call (NCCL pairs each member's n-th
// call on a communicator), so it starts when the last holder calls it. A pass calls the gathers of every
// range its layers belong to when it is ready (its DAG predecessors have ended; FSDP's forward and backward
// prefetch issue a unit's all-gather before its compute, each range on its own communicator), and starts
// once every holder of each of those ranges has made the same-numbered call of that range; its own
// duration (its gathers timed alone, setup.cc RangeGathers) then runs as before. A holder whose passes over
// a range are all done joins the range's remaining calls at once (PyTorch's Join: a rank out of inputs
// shadows the others' collectives, docs/heterogeneous.md "Different microbatch counts under ZeRO-3").
// Only a pass's first gather of a range waits: the later layers of the pass are not matched again. The tied
// matrix's gathers (Plan.tied_embedding_grad_sync) are not matched (gather_calls.cc, Matched, says why).
#ifndef HETSIM_SIM_EXECUTOR_GATHER_CALLS_H_
#define HETSIM_SIM_EXECUTOR_GATHER_CALLS_H_

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "sim/executor/layer_range_sync.h"
#include "sim/executor/setup.h"

namespace hetsim::executor {

// The ranges of `groups` whose gathers match per call: at ZeRO-3, shard groups of more than one GPU, more
// than one holder, not the tied matrix (gather_calls.cc, Matched, says why). Per pipeline (setups[p]), per
// DAG node: those its pass gathers (indices into `groups`, in order); empty for every other node.
std::vector<std::vector<std::vector<int>>> MatchedGatherRanges(const std::vector<const ExecutionSetup*>& setups,
                                                               const std::vector<LayerRangeGroup>& groups);

class GatherCalls {
 public:
  using Admit = std::function<void(int run, int node)>;
  // The ranges of `groups` at ZeRO-3 whose shard groups hold more than one GPU and that more than one
  // stage holds; setups[p] is pipeline p's (its DAG's compute nodes are the passes).
  GatherCalls(const std::vector<const ExecutionSetup*>& setups, const std::vector<LayerRangeGroup>& groups);

  // No range's passes wait for another holder's.
  bool empty() const { return holders_.empty(); }
  // Run `run`'s compute node `node` is ready now: its calls are made. Whether it may start; if not, `admit`
  // is called for it once every holder has made (or joined) its calls. Others it releases get `admit`.
  bool Ready(int run, int node, const Admit& admit);
  // Run `run`'s compute node `node` has ended: a holder done with its passes over a range joins the rest.
  void Done(int run, int node, const Admit& admit);
  // After a run that did not complete: the first pass still waiting and the holder it waits for, or "".
  std::string Stuck(const std::vector<const ExecutionSetup*>& setups) const;

 private:
  struct Holder {
    int calls = 0;  // its passes over the range
    int made = 0;   // calls made so far
    int done = 0;   // passes over the range ended
  };
  struct Call {
    int range = 0;   // index into holders_ and ranges_
    int holder = 0;  // its holder's index in the range
    int index = 0;   // which of the holder's calls (set when made)
  };
  bool Satisfied(const std::vector<Call>& calls) const;
  void AdmitWaiting(const Admit& admit);

  std::vector<const LayerRangeGroup*> ranges_;         // the gating ranges
  std::vector<std::vector<Holder>> holders_;           // per gating range, per holder
  std::vector<std::vector<std::vector<Call>>> calls_;  // [run][node]: the calls its pass makes
  std::vector<std::pair<int, int>> waiting_;           // (run, node) ready, not yet admitted, in arrival order
};

}  // namespace hetsim::executor

#endif  // HETSIM_SIM_EXECUTOR_GATHER_CALLS_H_
