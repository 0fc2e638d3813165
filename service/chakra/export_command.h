// `hetsim export chakra PLAN` as a request and its response, for the command line and the API alike:
// the plan's iteration exported (one setup, or one per pipeline of a plan of pipelines under ZeRO),
// written into a folder, and the line that says what was written.
#ifndef HETSIM_SERVICE_CHAKRA_EXPORT_COMMAND_H_
#define HETSIM_SERVICE_CHAKRA_EXPORT_COMMAND_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/inputs.h"
#include "service/chakra/export.h"

namespace hetsim::chakra {

struct ExportRequest {
  proto::Source plan;
  proto::Source cluster;
  std::string out_dir;  // created if missing
  std::string prefix;   // rank files' prefix (empty: DefaultExportPrefix of the plan)
};

// The plan file's name without its extension ("plans/a.pbtxt" -> "a"); a plan in memory: its name
// ("plan"). InvalidArgument when that is no file name prefix (empty, or holding a '/').
absl::StatusOr<std::string> ExportPrefix(const ExportRequest& request);

// The export of `inputs` (loaded from the file or message `plan_label`), refused when it would hold more
// than kMaxExportNodes nodes.
absl::StatusOr<ChakraExport> ExportPlanInputs(const proto::PlanInputs& inputs, absl::string_view plan_label);

struct ExportResponse {
  ChakraExport exported;
  std::string prefix;
  std::string summary;  // "wrote 8 rank traces (1234 nodes) and P.comm_groups.json to DIR\n"
};

// Loads the plan and cluster, exports and writes into request.out_dir.
absl::StatusOr<ExportResponse> ExportChakraFiles(const ExportRequest& request);

}  // namespace hetsim::chakra

#endif  // HETSIM_SERVICE_CHAKRA_EXPORT_COMMAND_H_
