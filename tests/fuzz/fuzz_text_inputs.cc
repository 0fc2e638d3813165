// libFuzzer target: the text inputs people paste (issue 42's new doors). The bytes are read as a
// Megatron-LM launch line (HETSIM_FUZZ_TEXT=0: split, flags read, imported against the fuzz cluster
// with --island fast), as an nccl-tests log (1: parsed, checked against an island), as a torchtitan
// TOML config (2: parsed by toml++, imported on island fast) or as a NeMo YAML config (3: yaml-cpp). Every input
// must end in a plan, a log or an error status: a crash, a hang or a sanitizer report is the finding.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "proto/io.h"
#include "service/calibrate/nccl_cluster_match.h"
#include "service/calibrate/nccl_log.h"
#include "service/interop/megatron_flags.h"
#include "service/interop/megatron_import.h"
#include "service/interop/nemo_import.h"
#include "service/interop/torchtitan_import.h"
#include "tests/fuzz/fuzz_cluster.h"

namespace {

void FuzzLaunchLine(absl::string_view text) {
  absl::StatusOr<hetsim::interop::MegatronFlags> flags = hetsim::interop::ParseMegatronLaunchLine(text, "fuzz.sh");
  if (!flags.ok()) return;
  hetsim::interop::MegatronImportRequest request;
  request.island = "fast";
  request.nodes = 1;
  (void)hetsim::interop::ImportMegatron(*flags, FuzzCluster(), request, "fuzz.sh");
}

void FuzzTorchtitan(absl::string_view text) {
  hetsim::interop::MegatronImportRequest request;
  request.island = "fast";
  request.nodes = 1;
  (void)hetsim::interop::ImportTorchtitan(text, FuzzCluster(), request, "fuzz.toml");
}

void FuzzNemo(absl::string_view text) {
  hetsim::interop::MegatronImportRequest request;
  request.island = "fast";
  request.nodes = 1;
  (void)hetsim::interop::ImportNemo(text, FuzzCluster(), request, "fuzz.yaml");
}

// Every run of the file, as calibrate reads it (one run: ParseNcclLog's result).
void FuzzNcclLog(absl::string_view text) {
  absl::StatusOr<hetsim::calibrate::NcclLogRuns> runs = hetsim::calibrate::ParseNcclLogRuns(text, "fuzz.log");
  if (!runs.ok()) return;
  std::vector<std::string> warnings;
  for (const hetsim::calibrate::NcclLog& log : runs->runs) {
    (void)hetsim::calibrate::RunName(log);
    (void)hetsim::calibrate::CheckLogAgainstIsland(log, FuzzCluster(), 0, warnings);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // As ReadInputFile hands text to its readers: byte-order mark dropped, CRLF as LF.
  const std::string text = hetsim::proto::NormalizeTextInput(std::string(reinterpret_cast<const char*>(data), size));
  if (HETSIM_FUZZ_TEXT == 0) {
    FuzzLaunchLine(text);
  } else if (HETSIM_FUZZ_TEXT == 1) {
    FuzzNcclLog(text);
  } else if (HETSIM_FUZZ_TEXT == 2) {
    FuzzTorchtitan(text);
  } else {
    FuzzNemo(text);
  }
  return 0;
}
