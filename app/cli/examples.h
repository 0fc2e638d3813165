// The bundled example inputs: the files of examples/, embedded at build time (example_files.h), so
// that `hetsim example` needs no data files.
#ifndef HETSIM_APP_CLI_EXAMPLES_H_
#define HETSIM_APP_CLI_EXAMPLES_H_

#include <memory>
#include <string>
#include <vector>

#include "google/protobuf/message.h"
#include "proto/file_format.h"

namespace hetsim::cli {

struct Example {
  std::string name;  // stable file stem: "cluster-512gpu", "plan-512gpu", ...
  std::shared_ptr<const google::protobuf::Message> message;
};

// The file extension `hetsim example` uses for a format: ".pbtxt", ".pb", ".json".
const char* ExampleExtension(proto::FileFormat format);

// Every example; paths inside them (a plan's model_path, a sweep's inputs) are relative and carry the
// extension of `format`, so a folder written in any one format is self-contained.
std::vector<Example> BundledExamples(proto::FileFormat format);

}  // namespace hetsim::cli

#endif  // HETSIM_APP_CLI_EXAMPLES_H_
