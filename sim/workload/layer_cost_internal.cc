#include "sim/workload/layer_cost_internal.h"

namespace hetsim::workload {

absl::string_view LayerKindName(LayerKind kind) {
  switch (kind) {
    case LayerKind::kEmbedding: return "embedding";
    case LayerKind::kBlock: return "block";
    case LayerKind::kAttention: return "attention";
    case LayerKind::kMlp: return "mlp";
    case LayerKind::kHead: return "head";
    case LayerKind::kCustom: return "custom";
  }
  return "unknown";
}

}  // namespace hetsim::workload
