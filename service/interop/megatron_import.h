// `hetsim import megatron`: a Megatron-LM launch line (megatron_flags.h) on a cluster's island becomes a
// Model and a Plan laid out as Megatron lays out ranks: tensor parallel innermost, then context
// parallel, data parallel, pipeline parallel outermost, ranks filling nodes in order (rank r on GPU
// r % gpus_per_node of node r / gpus_per_node). docs/megatron.md gives the mapping flag by flag.
#ifndef HETSIM_SERVICE_INTEROP_MEGATRON_IMPORT_H_
#define HETSIM_SERVICE_INTEROP_MEGATRON_IMPORT_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/spec/framework.h"
#include "proto/hetsim.pb.h"
#include "service/interop/megatron_flags.h"

namespace hetsim::interop {

struct MegatronImportRequest {
  std::string island;         // "" = the cluster's only island
  int64_t nodes = 0;          // 0 = torchrun's --nnodes
  int64_t gpus_per_node = 0;  // 0 = torchrun's --nproc_per_node, else the island's node type
  std::string name;           // plan name; "" = "megatron-tpT-ppP-dpD"
  // The model of a line that does not describe one (a DeepSpeed or Hugging Face script that builds its
  // model from a name, `--model_name_or_path meta-llama/Llama-2-7b-hf`): its shape as Megatron's flags
  // (megatron_export.h's ModelFlags). A line that names its own shape and a model here is an error.
  std::optional<hetsim::v1::Model> model;
};

struct MegatronImport {
  hetsim::v1::Model model;  // also inline in plan.model
  hetsim::v1::Plan plan;
  // What the import did not apply, one line each, for the user to read: flags without effect on an
  // iteration's cost, flags hetsim cannot model yet, unknown flags, defaults it assumed.
  std::vector<std::string> notes;
  // Files read besides the launch line and the cluster (a DeepSpeed config the line names).
  std::vector<std::string> files_read;
};

// InvalidArgument naming `source` and the flag(s) for missing, malformed or contradictory flags, for a
// layout that does not fit the island, and for flags hetsim cannot model at all (a context-parallel
// size above 1). `cluster` has presets applied.
absl::StatusOr<MegatronImport> ImportMegatron(const MegatronFlags& flags, const hetsim::v1::Cluster& cluster,
                                              const MegatronImportRequest& request, absl::string_view source);

// Names `framework` on an imported plan whose behaviour fields are already set as the framework ran:
// every behaviour the profile would turn on and the plan leaves off goes to framework_off, so the plan
// runs as imported and the report says which framework it was. Plan.nccl_sm_contention, which no
// flag sets, is switched on first: every such framework runs NCCL beside its computation. Returns the
// profile.
const spec::FrameworkProfile& KeepBehavioursUnderFramework(hetsim::v1::Framework framework,
                                                           const hetsim::v1::Model& model, hetsim::v1::Plan& plan);

// An imported plan checked as `hetsim run` checks it (every importer's last step): problems name `source`.
absl::Status ValidateImported(const hetsim::v1::Cluster& cluster, const hetsim::v1::Model& model,
                              const hetsim::v1::Plan& plan, absl::string_view source);

}  // namespace hetsim::interop

#endif  // HETSIM_SERVICE_INTEROP_MEGATRON_IMPORT_H_
