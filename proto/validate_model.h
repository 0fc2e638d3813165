// Validation of a Model: an architecture is chosen, transformer hyper-parameters are consistent (heads
// divide the hidden size, KV heads divide the heads, MoE top-k within the experts) and every size stays
// within proto/limits.h.
#ifndef HETSIM_PROTO_VALIDATE_MODEL_H_
#define HETSIM_PROTO_VALIDATE_MODEL_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "proto/hetsim.pb.h"

namespace hetsim::proto {

// `prefix` goes before every field path: "model." when the model sits inline in a plan.
absl::Status ValidateModel(const hetsim::v1::Model& model, absl::string_view file, absl::string_view prefix = "");

// Parameters of the whole model (embedding, blocks, head; MoE experts counted in full): the validator's
// overflow guard and the `check` summary. Layer lists: the sum of their param_count.
double ModelParamCount(const hetsim::v1::Model& model);

}  // namespace hetsim::proto

#endif  // HETSIM_PROTO_VALIDATE_MODEL_H_
