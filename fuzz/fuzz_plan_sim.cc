// libFuzzer target: a cluster and a plan (with its model inline), both in text format, separated by a
// line "----". They go through ValidatePlanInputs, the executor's setup and a short simulation capped
// by max_events and max_wall_seconds, exactly as `hetsim run` takes them.
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "proto/file_format.h"
#include "proto/inputs.h"
#include "proto/io.h"
#include "sim/executor/executor.h"
#include "sim/executor/setup.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::string_view contents(reinterpret_cast<const char*>(data), size);
  size_t split = contents.find("\n----\n");
  if (split == absl::string_view::npos) return 0;
  hetsim::proto::PlanInputs inputs;
  inputs.cluster_path = "cluster.pbtxt";
  inputs.plan_path = "plan.pbtxt";
  using hetsim::proto::FileFormat;
  if (!hetsim::proto::ParseMessage(contents.substr(0, split), FileFormat::kText, inputs.cluster_path,
                                   &inputs.cluster).ok() ||
      !hetsim::proto::ParseMessage(contents.substr(split + 6), FileFormat::kText, inputs.plan_path,
                                   &inputs.plan).ok()) {
    return 0;
  }
  if (!inputs.plan.has_model()) return 0;  // a model_path would read the disk
  inputs.model = inputs.plan.model();
  if (!hetsim::proto::ValidatePlanInputs(inputs).ok()) return 0;
  auto setup = hetsim::sim::executor::BuildExecutionSetup(inputs, hetsim::sim::NetworkMode::kMaxMinFair);
  if (!setup.ok()) return 0;
  hetsim::sim::executor::ExecutorOptions options;
  options.max_events = 200'000;
  options.max_wall_seconds = 5;
  (void)hetsim::sim::executor::Execute(**setup, options);
  return 0;
}
