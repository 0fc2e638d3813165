// A command's output files, written all or none. Each is staged with its bytes; Commit() writes every
// one to a temporary file beside its destination and, only when all were written and flushed, renames
// them into place. A failure (a missing folder, a full disk) removes the temporary files and leaves
// every destination as it was. An output that is one of the command's inputs, or named twice, is
// refused when it is staged, before anything is written.
#ifndef HETSIM_PROTO_OUTPUT_FILES_H_
#define HETSIM_PROTO_OUTPUT_FILES_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/message.h"

namespace hetsim::proto {

class OutputFiles {
 public:
  // `inputs`: every file the command read (empty names are skipped); no output may be one of them.
  explicit OutputFiles(std::vector<std::string> inputs = {});

  // Checks `path` (not an input, not already staged, its folder exists) without staging it: for
  // outputs a command writes later or as it goes, checked before the work starts.
  absl::Status Check(absl::string_view path) const;
  // Stages `bytes` for `path` (Check first). An empty path is skipped: an output not asked for.
  absl::Status Add(absl::string_view path, std::string bytes);
  // Stages `message` in the encoding of `path`'s extension.
  absl::Status AddMessage(absl::string_view path, const google::protobuf::Message& message);
  // Writes everything staged, all or none.
  absl::Status Commit();

 private:
  std::vector<std::string> inputs_;
  std::vector<std::pair<std::string, std::string>> staged_;  // path, bytes
  absl::flat_hash_set<std::string> staged_keys_;             // each staged path's canonical spelling
};

// One output file, never over one of `inputs`: OutputFiles with a single file.
absl::Status WriteOutputFile(absl::string_view path, std::string bytes, std::vector<std::string> inputs);
absl::Status SaveOutputFile(absl::string_view path, const google::protobuf::Message& message,
                            std::vector<std::string> inputs);

}  // namespace hetsim::proto

#endif  // HETSIM_PROTO_OUTPUT_FILES_H_
