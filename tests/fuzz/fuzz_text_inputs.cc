// libFuzzer target: the text inputs people paste (issue 42's new doors). The bytes are read as a
// Megatron-LM launch line (HETSIM_FUZZ_TEXT=0: split, flags read, imported against the fuzz cluster
// with --island fast; a Megatron YAML file, ENV_VARS included, as the line it makes), as an nccl-tests
// log (1: parsed, checked against an island), as a torchtitan TOML config (2: parsed by toml++, imported
// on island fast), as a NeMo YAML config (3: yaml-cpp; after a line "# --model", the checkpoint's model
// config it is merged over), as the DeepSpeed JSON config a Megatron-DeepSpeed line names (4: parsed,
// folded into a fixed launch line as the file its script wrote, imported), or as the CSV tables
// `calibrate` reads (5: GEMM timings parsed and fitted to the fuzz cluster's A100; the same bytes read as
// measured iterations). Every input must end in a plan, a log, a fit or an error status: a crash, a hang
// or a sanitizer report is the finding.
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "proto/hetsim.pb.h"
#include "proto/io.h"
#include "service/calibrate/gemm_fit.h"
#include "service/calibrate/gemm_source.h"
#include "service/calibrate/iteration_source.h"
#include "service/calibrate/nccl_cluster_match.h"
#include "service/calibrate/nccl_log.h"
#include "service/interop/deepspeed_config.h"
#include "service/interop/megatron_flags.h"
#include "service/interop/megatron_import.h"
#include "service/interop/megatron_yaml.h"
#include "service/interop/nemo_import.h"
#include "service/interop/torchtitan_import.h"
#include "tests/fuzz/fuzz_cluster.h"

namespace {

// A YAML file of Megatron's (a functional-test config, ENV_VARS included, or a --yaml-cfg file) is read as
// `hetsim import megatron FILE.yaml` reads it; other text as a launch line or script.
void FuzzLaunchLine(absl::string_view text) {
  hetsim::interop::MegatronYamlRead yaml{std::string(text), {}, {}, {}};
  if (hetsim::interop::IsMegatronYaml(text)) {
    absl::StatusOr<hetsim::interop::MegatronYamlRead> read = hetsim::interop::MegatronYamlLine(text, "fuzz.yaml");
    if (!read.ok()) return;
    yaml = *std::move(read);
  }
  absl::StatusOr<hetsim::interop::MegatronFlags> flags = hetsim::interop::ParseMegatronLaunchLine(yaml.line, "fuzz.sh");
  if (!flags.ok()) return;
  hetsim::interop::ApplyMegatronYamlRead(yaml, *flags);
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

// A NeMo config; after a line "# --model", the checkpoint's model config it is merged over (`import nemo --model`).
void FuzzNemo(absl::string_view text) {
  constexpr absl::string_view kModelSeparator = "\n# --model\n";
  const size_t split = text.find(kModelSeparator);
  hetsim::interop::NemoBaseModel base;
  if (split != absl::string_view::npos) {
    base.yaml = text.substr(split + kModelSeparator.size());  // a view of the input, alive for the call
    base.source = "model_config.yaml";
    text = text.substr(0, split);
  }
  hetsim::interop::MegatronImportRequest request;
  request.island = "fast";
  request.nodes = 1;
  (void)hetsim::interop::ImportNemo(text, FuzzCluster(), request, "fuzz.yaml", base);
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

// The config as the file a Megatron-DeepSpeed script wrote in a here document, folded into its flags.
void FuzzDeepSpeedConfig(absl::string_view text) {
  if (!hetsim::interop::ParseDeepSpeedConfig(text, "ds.json").ok()) return;
  absl::StatusOr<hetsim::interop::MegatronFlags> flags = hetsim::interop::ParseMegatronLaunchLine(
      "deepspeed pretrain_gpt.py --deepspeed --deepspeed_config ds.json --num-layers 4 --hidden-size 256 "
      "--num-attention-heads 8 --seq-length 512 --max-position-embeddings 512 --tensor-model-parallel-size 2",
      "fuzz.sh");
  if (!flags.ok()) return;
  flags->launch.written_files["ds.json"] = std::string(text);
  hetsim::interop::MegatronImportRequest request;
  request.island = "fast";
  request.nodes = 2;
  (void)hetsim::interop::ImportMegatron(*flags, FuzzCluster(), request, "fuzz.sh");
}

void FuzzCalibrateCsv(absl::string_view text) {
  (void)hetsim::calibrate::ParseIterationCsv(text, "fuzz.csv");
  absl::StatusOr<std::vector<hetsim::calibrate::GemmTiming>> timings =
      hetsim::calibrate::ParseGemmCsv(text, "fuzz.csv");
  if (!timings.ok()) return;
  hetsim::v1::Cluster cluster = FuzzCluster();
  hetsim::calibrate::GemmSource source(*std::move(timings), "fuzz.csv", "a100");
  (void)source.Fit(cluster);
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
  } else if (HETSIM_FUZZ_TEXT == 3) {
    FuzzNemo(text);
  } else if (HETSIM_FUZZ_TEXT == 4) {
    FuzzDeepSpeedConfig(text);
  } else {
    FuzzCalibrateCsv(text);
  }
  return 0;
}
