// Identifiers shared by the topology (which numbers GPUs and links), the network (which carries flows
// over links) and everything above: declared once so that a route goes from one to the other as it is.
#ifndef HETSIM_BASE_IDS_H_
#define HETSIM_BASE_IDS_H_

#include <cstdint>

namespace hetsim {

using GpuId = int32_t;    // global: islands in order, nodes in order, GPUs in order
using LinkId = uint32_t;  // index into the topology's link table (one direction of a cable)

}  // namespace hetsim

#endif  // HETSIM_BASE_IDS_H_
