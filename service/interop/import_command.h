// `hetsim import megatron|torchtitan|nemo` as a request and its response, for the command line and the
// API alike: a launch line or training config read (at most 4 MiB), imported onto the cluster's island,
// and the notes of every flag or key not applied; --strict makes the unknown and not-modelled ones an
// error. The caller writes the plan and prints the notes.
#ifndef HETSIM_SERVICE_INTEROP_IMPORT_COMMAND_H_
#define HETSIM_SERVICE_INTEROP_IMPORT_COMMAND_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "proto/hetsim.pb.h"
#include "proto/inputs.h"
#include "service/interop/megatron_import.h"

namespace hetsim::interop {

struct ImportRequest {
  std::string format;  // "megatron", "torchtitan" or "nemo"
  std::string file;    // the launch line's file or the training config
  std::string line;    // else the launch line itself (megatron)
  proto::Source cluster;
  // The model of a line that builds its own (megatron: a hetsim Model), or the model config of the checkpoint a
  // NeMo config restores (nemo: NemoBaseModel); empty: none.
  std::string model_path;
  MegatronImportRequest layout;  // nodes, GPUs per node, island, name (its model: model_path's)
  bool strict = false;
};

// InvalidArgument for a request the command line refuses as a usage error: an unknown format, --line
// or --model with a torchtitan config, neither or both of file and line, a negative count.
absl::Status CheckImportRequest(const ImportRequest& request);

struct ImportResponse {
  hetsim::v1::Plan plan;
  std::vector<std::string> notes;  // every flag or key not applied, as the importer words it
  std::string source;              // the file, or "--line"
  // Every file read but the cluster: the launch line's or config's file, --model, a DeepSpeed config.
  std::vector<std::string> files_read;
};

// Reads, imports and (strict) refuses what was not applied.
absl::StatusOr<ImportResponse> ImportPlan(const ImportRequest& request);

}  // namespace hetsim::interop

#endif  // HETSIM_SERVICE_INTEROP_IMPORT_COMMAND_H_
