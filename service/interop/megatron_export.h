// `hetsim export megatron PLAN`: the Megatron-LM launch line (torchrun's node counts and the training
// flags) that runs a homogeneous plan, the inverse of megatron_import.h: importing the line on the same
// island gives the plan back. A plan Megatron's flags cannot say (stages of different GPU types, sizes,
// parallelism or layer counts, HAPT's schedules and warm-ups, a mesh outside Megatron's rank order,
// ZeRO-2/3, a layer-list model) is an error listing every such difference with its field path.
#ifndef HETSIM_SERVICE_INTEROP_MEGATRON_EXPORT_H_
#define HETSIM_SERVICE_INTEROP_MEGATRON_EXPORT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/inputs.h"

namespace hetsim::interop {

struct MegatronExport {
  std::string launch_line;         // "torchrun --nproc_per_node 8 --nnodes 2 pretrain_gpt.py \\\n  --num-layers ..."
  std::vector<std::string> notes;  // plan settings with no Megatron flag that do not change the layout
  std::vector<std::string> flags;  // the line's training flags, one or a few per string
  int64_t gpus_per_node = 0, nodes = 0;  // the launcher's
};

// The flags that describe `model` (its shape, MoE layout, attention kernel and dtype), appended to
// `flags` one or a few per string, as export writes them.
void ModelFlags(const hetsim::v1::Model& model, std::vector<std::string>& flags);

// Megatron pads --vocab-size up to a multiple of --make-vocab-size-divisible-by (default 128) x TP (NeMo's
// model.make_vocab_size_divisible_by alike): the largest divisor up to 128 that leaves `vocab` as it is
// (128: the default), or nullopt when none does (a vocabulary that TP does not divide).
std::optional<int64_t> VocabDivisor(int64_t vocab, int64_t tp);

// `inputs` validated. InvalidArgument: one "<plan file>: <field path>: <problem>" line per difference.
absl::StatusOr<MegatronExport> ExportMegatron(const proto::PlanInputs& inputs);

}  // namespace hetsim::interop

#endif  // HETSIM_SERVICE_INTEROP_MEGATRON_EXPORT_H_
