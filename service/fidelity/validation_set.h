// Validation sets (validation/*.pbtxt, the ValidationSet message): published measurements that
// `hetsim fidelity` predicts. Loading checks every field once, so prediction never meets a malformed
// case; file paths inside a set are resolved against the set file's folder here.
#ifndef HETSIM_SERVICE_FIDELITY_VALIDATION_SET_H_
#define HETSIM_SERVICE_FIDELITY_VALIDATION_SET_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/hetsim.pb.h"

namespace hetsim::fidelity {

// A set as loaded: the message with every plan and cluster path made relative to the working folder.
// What a set's cases measure, as reports and charts name it.
inline constexpr char kTflopsUnit[] = "TFLOP/s per GPU";
inline constexpr char kTokensUnit[] = "tokens/s per GPU";
inline constexpr char kBusBandwidthUnit[] = "GB/s bus bandwidth";

struct LoadedValidationSet {
  std::string path;
  hetsim::v1::ValidationSet set;
  std::string unit;  // what its cases measure: "TFLOP/s per GPU", "tokens/s per GPU", "GB/s bus bandwidth"
};

// Reads and validates one set file: a ValidationSet in any encoding, or (a .csv file) the nccl-tests
// list of validation/nccl/measured.csv, whose rows become collective cases with no bounds (CSV errors
// name the line and column: "measured.csv:7: bytes: ..."). Every problem is reported at once, as
// "<file>: cases[3].training_run.measured_tflops_per_gpu: required (...)": cases are required, names
// unique, each case has one measurement with its fields set, all cases of a set are of one kind
// (their measurements are ranked together), bounds are finite and in [0, 1000] percent.
absl::StatusOr<LoadedValidationSet> LoadValidationSet(absl::string_view path);

// The bundled sets: every *.pbtxt directly in the source tree's validation/ folder, sorted by name.
absl::StatusOr<std::vector<std::string>> BundledValidationFiles();

// The sets of `files` (none: the bundled ones), every one read and checked before anything is
// simulated, so a typo in the last file costs nothing: `hetsim fidelity FILES` and the API alike.
absl::StatusOr<std::vector<LoadedValidationSet>> LoadValidationSets(std::vector<std::string> files);

}  // namespace hetsim::fidelity

#endif  // HETSIM_SERVICE_FIDELITY_VALIDATION_SET_H_
