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
    case hetsim::v1::Model::kLayerList:
      count = model.layer_list().layers_size();
      break;
    case hetsim::v1::Model::ARCHITECTURE_NOT_SET:
      break;
  }
  return static_cast<int>(std::min<int64_t>(count, INT_MAX));
}

}  // namespace hetsim::proto
