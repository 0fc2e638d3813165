// The text tables `hetsim fidelity` prints: one per set, a row per case (measured, predicted, error),
// then MAPE, max |error|, Kendall's tau and the set's bounds with what breaks them.
#ifndef HETSIM_SERVICE_FIDELITY_TABLE_H_
#define HETSIM_SERVICE_FIDELITY_TABLE_H_

#include <string>

#include "proto/hetsim.pb.h"

namespace hetsim::fidelity {

std::string FormatFidelityTables(const hetsim::v1::FidelityReport& report);

}  // namespace hetsim::fidelity

#endif  // HETSIM_SERVICE_FIDELITY_TABLE_H_
