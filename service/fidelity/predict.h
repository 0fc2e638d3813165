// Predicting one case of a validation set (fidelity_set.h) with hetsim, in the unit it was measured in:
//   training run  simulate one iteration of the plan on the cluster (as `hetsim run`), then
//                 predicted TFLOP/s per GPU = FLOPs per iteration / (iteration seconds x GPUs), the
//                 FLOPs counted as the measurement counted them (MEGATRON_EQ3, MODEL_FLOPS or
//                 MODEL_FLOPS_CAUSAL, the attention core at half);
//   collective    simulate the collective alone (as `hetsim collective`, automatic algorithm) and
//                 report nccl-tests' bus bandwidth in GB/s.
// A new kind of case is a new `ValidationCase.measurement` member and one Predict function here.
#ifndef HETSIM_SERVICE_FIDELITY_PREDICT_H_
#define HETSIM_SERVICE_FIDELITY_PREDICT_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/hetsim.pb.h"

namespace hetsim::fidelity {

// Narayanan et al. SC'21 Eq. 3: 96 B s l h^2 (1 + s/(6h) + V/(16 l h)) FLOPs per iteration, B the
// global batch, s the sequence, l the blocks, h the hidden size, V the vocabulary.
double MegatronEq3Flop(double batch, double seq, double blocks, double hidden, double vocab);

// What to predict besides the case itself.
struct PredictOptions {
  // Training runs: also simulate the calibration probes (two more simulations per case), so that the
  // set's calibration from a few runs can be evaluated (calibration.h).
  bool calibration_probes = false;
  // Training runs simulated exactly (`hetsim fidelity --exact`); else at the fidelity `hetsim run`
  // chooses (service/driver/fidelity_choice.h: exact while affordable, which every bundled set is).
  bool exact = false;
};

// The case predicted: every FidelityCase field set (error_percent from predicted and measured; the
// probe fields only with options.calibration_probes).
// `where` names the case in errors ("set.pbtxt: cases[3]"); a plan, cluster or collective the
// simulator refuses is an InvalidArgument naming `where`, the field and the file's own problem.
absl::StatusOr<hetsim::v1::FidelityCase> PredictCase(const hetsim::v1::ValidationCase& validation_case,
                                                     absl::string_view where, const PredictOptions& options = {});

}  // namespace hetsim::fidelity

#endif  // HETSIM_SERVICE_FIDELITY_PREDICT_H_
