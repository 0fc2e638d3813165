// Megatron-LM's split of --num-layers transformer blocks over the pipeline stages, in both directions:
// the flags' split (import) and the flags that give a plan's split (export).
//
//   even                                  L / PP blocks a stage
//   --decoder-first-pipeline-num-layers F  the first stage F blocks, the last L (with --decoder-last...),
//   --decoder-last-pipeline-num-layers L   the other stages share the rest evenly
//   --account-for-embedding-in-pipeline-split / --account-for-loss-in-pipeline-split
//                                          the embedding (the loss) counts as one layer: (L + 1 or 2) / PP
//                                          layers a stage, so the first (last) stage holds one block fewer
//
// Megatron refuses a split that does not come out even, and the uneven and the accounting flags together.
#ifndef HETSIM_SERVICE_INTEROP_MEGATRON_SPLIT_H_
#define HETSIM_SERVICE_INTEROP_MEGATRON_SPLIT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace hetsim::interop {

struct MegatronSplit {
  int64_t first_blocks = -1;  // --decoder-first-pipeline-num-layers; -1 = not given
  int64_t last_blocks = -1;   // --decoder-last-pipeline-num-layers; -1 = not given
  bool account_embedding = false;
  bool account_loss = false;
  // --pipeline-model-parallel-layout: hetsim's layers of each virtual stage (k = chunk x PP + stage),
  // the embedding and the head counted; empty without the flag.
  std::vector<int64_t> layout_layers;

  bool uneven() const { return first_blocks >= 0 || last_blocks >= 0; }
  // Flags only Megatron-LM's 2024 releases know, whose defaults a line using them takes.
  bool later_releases() const { return uneven() || account_embedding || account_loss || !layout_layers.empty(); }
  // The layers a stage holds in Megatron's count when the split is even or accounted: L (+1) (+1) / PP.
  int64_t LayersPerStage(int64_t num_layers, int64_t pp) const {
    return (num_layers + account_embedding + account_loss) / pp;
  }
};

// Transformer blocks of each of the `pp` stages; InvalidArgument naming the flags when Megatron would
// refuse the split (the message has no file prefix).
absl::StatusOr<std::vector<int64_t>> StageBlocks(const MegatronSplit& split, int64_t num_layers, int64_t pp);

// The flags that give `blocks` (a plan's blocks per stage) cut into `chunks` model chunks a stage as
// hetsim cuts them (sim/pipeline VirtualStageLayers): the even split, then the accounting flags (whose
// chunks count the embedding and the loss), then first/last counts (every stage's blocks divide);
// nullopt when none does.
std::optional<MegatronSplit> SplitOf(const std::vector<int64_t>& blocks, int64_t num_layers, int64_t chunks = 1);

// The launch-line flags of `split` ("" for the even split).
std::string SplitFlags(const MegatronSplit& split);

}  // namespace hetsim::interop

#endif  // HETSIM_SERVICE_INTEROP_MEGATRON_SPLIT_H_
