// hetsim as a library for other languages (the Python package `hetsim`, app/python/): every call takes
// its inputs as file paths or serialized messages of proto/hetsim.proto and returns a serialized
// message, so a binding passes bytes and needs no C++ type. Errors are the CLI's: InvalidArgument
// "<file>: <field path>: <problem>", where a message passed in memory is named by its argument
// ("plan", "cluster", "plans[2]"). Calls are independent and thread-safe (no shared state).
#ifndef HETSIM_APP_API_API_H_
#define HETSIM_APP_API_API_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace hetsim::api {

// A file path, or a serialized message named `name` in error messages.
struct Input {
  std::string name;   // "plan", "cluster", ...
  std::string path;   // set: read the file (format from its extension)
  std::string bytes;  // else: the binary message
  bool is_path = false;
};

struct RunOptions {
  std::string network = "max-min";  // or "contention-free"
  bool ideal = false;               // peak FLOP/s and line rate (`--ideal`)
  uint64_t max_events = 0;          // 0 = no limit
  double max_wall_seconds = 0;
};

// `hetsim run`: the Report of one simulated iteration (no wall time, so identical inputs give identical
// bytes). A plan passed as a message carries its model inline or a model_path relative to the working
// directory.
absl::StatusOr<std::string> Run(const Input& plan, const Input& cluster, const RunOptions& options);

struct PlanOptions {
  std::string planner = "hapt";
  uint64_t global_batch_size = 128;
  uint64_t micro_batch_size = 0;  // 0 = searched
  int layers = 0;
  int threads = 1;
  std::string prediction;            // "", "hetsim" or "naive": stored in Plan.prediction
  int context_parallel = 1;          // Plan.context_parallel of every stage; 0 = searched
  std::string cp_comm_type = "p2p";  // Plan.cp_comm_type: "p2p", "all_gather" or "a2a"
  bool grad_reduce_in_fp32 = false;  // Plan.grad_reduce_in_fp32
};

// `hetsim plan`: the plan (model inline).
absl::StatusOr<std::string> Plan(const Input& model, const Input& cluster, const PlanOptions& options);

// `hetsim validate` on plans that carry predictions: the PlanValidationReport.
absl::StatusOr<std::string> Validate(const std::vector<Input>& plans, const Input& cluster, bool chart);

struct CollectiveOptions {
  std::string op = "all-reduce";
  int64_t bytes = 0;
  std::vector<int64_t> gpus;
  std::string algorithm = "auto";
  std::string network = "max-min";
  bool ideal = false;
};

// `hetsim collective`: one size, as a CollectiveReport.
absl::StatusOr<std::string> Collective(const Input& cluster, const CollectiveOptions& options);

// `hetsim sweep`: a SweepResult (every point in point order, with its report). A sweep passed as a
// message names its files relative to the working directory.
absl::StatusOr<std::string> Sweep(const Input& sweep, int jobs);

// `hetsim check`: the summary of a valid cluster, model, plan, sweep, faults file or report (type
// detected for files; "cluster", "model", "plan", "sweep", "faults", "report" for a message), the same
// text for a file and for its message; a plan and a faults file need `cluster`.
absl::StatusOr<std::string> Check(const Input& file, const std::string& type, const Input* cluster);

}  // namespace hetsim::api

#endif  // HETSIM_APP_API_API_H_
