// ZeRO-3 across pipelines (Plan.pipelines, every range at zero_stage 3; layer_range_sync.h): every all-gather
// of a layer range is one collective over all its holders, matched per call (NCCL pairs each member's n-th
// call on a communicator), so it starts when the last holder calls it. A pass calls the gathers of every
// range its layers belong to when it is ready (its DAG predecessors have ended; FSDP's forward and backward
// prefetch issue a unit's all-gather before its compute, each range on its own communicator), and each of
// its layers waits for its own gather: the pass starts once every holder of the range of its first layer (in
// pass order) has made the same-numbered call of that range, and reaches the first layer of each later range
// no earlier than that range's same call (its holders' last call made, or joined) plus the pass's time before
// that layer (PassEnd; a layer range's layers share its calls' start, all issued at once). Its duration (its
// gathers timed alone, setup.cc RangeGathers) otherwise runs as before. A holder whose passes over a range
// are all done joins the range's remaining calls at once (PyTorch's Join: a rank out of inputs shadows the
// others' collectives, docs/heterogeneous.md "Different microbatch counts under ZeRO-3"). The tied matrix's
// gathers (Plan.tied_embedding_grad_sync) are not matched (gather_calls.cc, Matched, says why).
#ifndef HETSIM_SIM_EXECUTOR_GATHER_CALLS_H_
#define HETSIM_SIM_EXECUTOR_GATHER_CALLS_H_

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/time.h"
#include "sim/executor/layer_range_sync.h"
#include "sim/executor/setup.h"

namespace hetsim::executor {

// The ranges of `groups` whose gathers match per call: at ZeRO-3, shard groups of more than one GPU, more
// than one holder, not the tied matrix (gather_calls.cc, Matched, says why). Per pipeline (setups[p]), per
// DAG node: those its pass gathers (indices into `groups`, in order); empty for every other node.
std::vector<std::vector<std::vector<int>>> MatchedGatherRanges(const std::vector<const ExecutionSetup*>& setups,
                                                               const std::vector<LayerRangeGroup>& groups);

// Where in a pass of `vs` (a backward one: `backward`) the first layer of `group` (in pass order) comes: the
// time of the layers before it, each its compute (its own when the stage has per-layer times, else an equal
// part of the pass's) and its exposed gather. Forward passes run the layers first to last, backward ones
// last to first. The pass waits there for the range's gather call.
Time GatherCallOffset(const LayerRangeGroup& group, const VirtualStageCost& vs, bool backward);

class GatherCalls {
 public:
  using Admit = std::function<void(int run, int node)>;
  // The ranges of `groups` at ZeRO-3 whose shard groups hold more than one GPU and that more than one
  // stage holds; setups[p] is pipeline p's (its DAG's compute nodes are the passes).
  GatherCalls(const std::vector<const ExecutionSetup*>& setups, const std::vector<LayerRangeGroup>& groups);

  // No range's passes wait for another holder's.
  bool empty() const { return holders_.empty(); }
  // Run `run`'s compute node `node` is ready at `now`: its calls are made. Whether it may start (the
  // calls of its first layer's range matched); if not, `admit` is called for it once they are. Others it
  // releases get `admit`.
  bool Ready(int run, int node, Time now, const Admit& admit);
  // Its pass, started at `start`, has run its duration to `end`: when it ends, each later range's layers
  // reached no earlier than that range's call started (its time before them in the pass after the call);
  // nullopt while a later call is not matched yet: the `admit` of Ready or Done is called for it once it
  // is (ask again then).
  std::optional<Time> PassEnd(int run, int node, Time start, Time end);
  // Whether PassEnd may hold run `run`'s compute node `node`: it gathers a range after its first layer's.
  bool MayHold(int run, int node) const;
  // Run `run`'s compute node `node` has ended at `now`: a holder done with its passes over a range joins
  // the rest.
  void Done(int run, int node, Time now, const Admit& admit);
  // After a run that did not complete: the first pass still waiting and the holder it waits for, or "".
  std::string Stuck(const std::vector<const ExecutionSetup*>& setups) const;

 private:
  struct Holder {
    int calls = 0;           // its passes over the range
    int done = 0;            // passes over the range ended
    std::vector<Time> made;  // when each of its calls so far was made
    Time joined = kNoTime;   // when its last pass over the range ended
  };
  struct Call {
    int range = 0;    // index into holders_ and ranges_
    int holder = 0;   // its holder's index in the range
    int index = 0;    // which of the holder's calls (set when made)
    Time offset = 0;  // the pass's time before the range's first layer (0: the pass starts with the range)
  };
  // When call `c` started: every holder's same call made, or the holder joined; nullopt: not yet.
  std::optional<Time> StartOf(const Call& c) const;
  // Whether every call of `calls` (those at offset 0 only: `first`) has started.
  bool Satisfied(const std::vector<Call>& calls, bool first) const;
  void AdmitWaiting(const Admit& admit);

  std::vector<const LayerRangeGroup*> ranges_;         // the gating ranges
  std::vector<std::vector<Holder>> holders_;           // per gating range, per holder
  std::vector<std::vector<std::vector<Call>>> calls_;  // [run][node]: the calls its pass makes
  std::vector<std::pair<int, int>> waiting_;           // (run, node) ready, not yet admitted, in arrival order
  std::vector<std::pair<int, int>> ending_;            // (run, node) at its end, a later call not yet matched
};

}  // namespace hetsim::executor

#endif  // HETSIM_SIM_EXECUTOR_GATHER_CALLS_H_
