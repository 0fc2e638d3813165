// `hetsim import nemo`: a NeMo (1.x, Megatron-Core) training config, the Hydra YAML of
// examples/nlp/language_modeling/conf/megatron_*_config.yaml and the NeMo-Megatron launcher's
// conf/training/*.yaml, becomes a Model and a Plan. NeMo's model keys are Megatron's arguments under
// other names (tensor_model_parallel_size, encoder_seq_length, activations_checkpoint_granularity,
// optim.name distributed_fused_adam, ...): the YAML is parsed by yaml-cpp, its keys written as the
// Megatron flags they stand for, and the Megatron importer lays the plan out (megatron_import.h).
// OmegaConf interpolations that name another key (${.encoder_seq_length},
// ${training.model.tensor_model_parallel_size}) are followed. docs/megatron.md lists the keys.
#ifndef HETSIM_SERVICE_INTEROP_NEMO_IMPORT_H_
#define HETSIM_SERVICE_INTEROP_NEMO_IMPORT_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/hetsim.pb.h"
#include "service/interop/megatron_import.h"

namespace hetsim::interop {

// The model config of the checkpoint a config restores (`hetsim import nemo CONFIG --model FILE`): a .nemo file's
// model_config.yaml (its keys at the top) or a training config's model section. Empty: none.
struct NemoBaseModel {
  absl::string_view yaml;
  absl::string_view source;
};

// `request`'s nodes and GPUs per node default to the config's trainer.num_nodes and trainer.devices.
// With `base_model`, the config's model keys are merged over it, as NeMo-Aligner (load_and_override_model_config)
// and NeMo's fine-tuning merge a config over its checkpoint's. A NeMo-Aligner DPO config (trainer.dpo) gets
// Plan.reference_policy with its CPU weight swap, its batch sizes read as sequences (two a pair).
// A malformed file, a key of the wrong type, an interpolation that cannot be followed, or what the
// Megatron importer refuses: InvalidArgument naming `source`, the key and the problem.
absl::StatusOr<MegatronImport> ImportNemo(absl::string_view yaml_text, const hetsim::v1::Cluster& cluster,
                                          const MegatronImportRequest& request, absl::string_view source,
                                          const NemoBaseModel& base_model = {});

}  // namespace hetsim::interop

#endif  // HETSIM_SERVICE_INTEROP_NEMO_IMPORT_H_
