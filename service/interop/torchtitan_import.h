// `hetsim import torchtitan`: a torchtitan training config (the TOML files of its train_configs/,
// 2024-2026 releases, before the February 2026 move to Python config registries) becomes a Model and a
// Plan. The model is the config's named flavor (llama3 debugmodel, 8B, 70B, 405B; 2024's llama2 7B,
// 13B, 70B; as torchtitan defines them); the plan lays ranks out as torchtitan's device mesh does (["pp",
// "dp_replicate", "dp_shard", "cp", "tp"]: tensor parallel innermost, pipeline outermost, Megatron's order) and runs
// them as torchtitan does: FSDP2 (ZeRO-3, the next block's parameters prefetched, gradients
// reduce-scattered block by block during the backward, in FP32), PyTorch's pipeline schedules with
// non-blocking sends. docs/torchtitan.md lists the keys read and what each becomes.
#ifndef HETSIM_SERVICE_INTEROP_TORCHTITAN_IMPORT_H_
#define HETSIM_SERVICE_INTEROP_TORCHTITAN_IMPORT_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/hetsim.pb.h"
#include "service/interop/megatron_import.h"

namespace hetsim::interop {

struct TorchtitanImport {
  hetsim::v1::Model model;  // also inline in plan.model
  hetsim::v1::Plan plan;
  // What the import did not apply or assumed, one line each: keys without effect on an iteration's
  // cost, settings hetsim cannot model yet, unknown keys, defaults taken.
  std::vector<std::string> notes;
};

// `request` as for Megatron: the island, and the nodes (when data_parallel_shard_degree is -1, the
// world is the nodes given, else the island's; when every degree is given, their product). The TOML
// text is parsed by toml++; a malformed file, a key of the wrong type, a model or schedule hetsim
// cannot price, degrees that do not fit the island: InvalidArgument naming `source`, the key and the
// problem ("llama3_8b.toml: parallelism.tensor_parallel_degree: ...").
absl::StatusOr<TorchtitanImport> ImportTorchtitan(absl::string_view toml_text, const hetsim::v1::Cluster& cluster,
                                                  const MegatronImportRequest& request, absl::string_view source);

}  // namespace hetsim::interop

#endif  // HETSIM_SERVICE_INTEROP_TORCHTITAN_IMPORT_H_
