// Calibration from a few runs, proven on the validation sets: for k = 1, 2, 3, every choice of k of a
// set's training runs calibrates the values a few runs can pin down (service/calibrate/overhead_fit.h,
// what `hetsim calibrate --iterations` fits), and the other runs are predicted with them. The set's
// FidelityCalibration rows say how accurate the held-out predictions are, which values the fits chose
// (medians) and how often a fit pinned a value at its bound or explained little.
#ifndef HETSIM_SERVICE_FIDELITY_CALIBRATION_H_
#define HETSIM_SERVICE_FIDELITY_CALIBRATION_H_

#include "proto/hetsim.pb.h"

namespace hetsim::fidelity {

inline constexpr int kMaxCalibrationRuns = 3;
// Choices of k runs tried at most; beyond it an evenly spaced sample of them (deterministic).
inline constexpr int kMaxCalibrationChoices = 20000;

// Fills set->calibrations for each k with at least k + 1 cases, when every case carries its
// calibration probes (PredictOptions::calibration_probes); leaves it empty otherwise.
void EvaluateCalibration(hetsim::v1::FidelitySet* set);

}  // namespace hetsim::fidelity

#endif  // HETSIM_SERVICE_FIDELITY_CALIBRATION_H_
