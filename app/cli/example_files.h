// The text of the bundled examples, examples/*.pbtxt, embedded at build time: the top CMakeLists.txt
// lists them in the order `hetsim example` writes them and cmake/embed_examples.cmake generates the
// definition. examples.h turns them into messages.
#ifndef HETSIM_APP_CLI_EXAMPLE_FILES_H_
#define HETSIM_APP_CLI_EXAMPLE_FILES_H_

#include <span>

#include "absl/strings/string_view.h"

namespace hetsim::cli {

struct ExampleFile {
  absl::string_view name;  // the file stem: "cluster-512gpu", "plan-512gpu", ...
  absl::string_view text;  // the file's bytes, a message in protobuf text format
};

std::span<const ExampleFile> ExampleFiles();

}  // namespace hetsim::cli

#endif  // HETSIM_APP_CLI_EXAMPLE_FILES_H_
