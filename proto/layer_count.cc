#include "proto/layer_count.h"

#include <algorithm>
#include <climits>
#include <cstdint>

namespace hetsim::proto {

int LayerCount(const hetsim::v1::Model& model) {
  int64_t count = 0;
  switch (model.architecture_case()) {
    case hetsim::v1::Model::kTransformer: {
      const auto& t = model.transformer();
      const int64_t blocks = t.num_layers();
      count = t.granularity() == hetsim::v1::SUBLAYER ? 2 * blocks + 2 : blocks + 2;
      break;
    }
    case hetsim::v1::Model::kLayerList: count = model.layer_list().layers_size(); break;
    case hetsim::v1::Model::ARCHITECTURE_NOT_SET: break;
  }
  return static_cast<int>(std::min<int64_t>(count, INT_MAX));
}

EdgeLayers ModelEdgeLayers(const hetsim::v1::Model& model) {
  if (model.architecture_case() == hetsim::v1::Model::kTransformer) return {1, 1};
  return {};
}

int StageBlockLayers(const EdgeLayers& edges, int layer_count, int64_t first_layer, int64_t num_layers) {
  const int64_t end = first_layer + num_layers;
  // Overlap of [first_layer, end) with the embedding [0, e) and with the head [count - h, count).
  const int64_t embedding = std::max<int64_t>(0, std::min<int64_t>(end, edges.embedding) - first_layer);
  const int64_t head_start = int64_t{layer_count} - edges.head;
  const int64_t head = std::max<int64_t>(0, end - std::max<int64_t>(first_layer, head_start));
  return static_cast<int>(std::max<int64_t>(0, num_layers - embedding - head));
}

}  // namespace hetsim::proto
