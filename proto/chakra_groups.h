// Chakra's communicator-group file: the JSON object ASTRA-sim reads with --comm-group-configuration,
// one entry per process group, `{"<pg_name>": [rank, ...], ...}`. A COMM_COLL node's `pg_name`
// attribute names its group.
#ifndef HETSIM_PROTO_CHAKRA_GROUPS_H_
#define HETSIM_PROTO_CHAKRA_GROUPS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace hetsim::proto {

struct ChakraCommGroup {
  std::string name;
  std::vector<int64_t> ranks;
};

// Parses the JSON text. Groups come out sorted by name (numerically when both names are numbers).
// Errors name `file` and the group: not an object, a value that is not a list of non-negative
// integers, an empty group, a rank listed twice.
absl::StatusOr<std::vector<ChakraCommGroup>> ParseChakraCommGroups(absl::string_view json, absl::string_view file);

// The JSON text of `groups`, in the order given, one group per line.
std::string ChakraCommGroupsJson(const std::vector<ChakraCommGroup>& groups);

}  // namespace hetsim::proto

#endif  // HETSIM_PROTO_CHAKRA_GROUPS_H_
