#include "proto/chakra_groups.h"

#include <algorithm>
#include <cmath>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/stubs/logging.h"
#include "google/protobuf/util/json_util.h"

namespace hetsim::proto {
namespace {

// Numeric names first in numeric order, then the others in byte order.
bool NameLess(const std::string& a, const std::string& b) {
  int64_t x = 0, y = 0;
  const bool na = absl::SimpleAtoi(a, &x), nb = absl::SimpleAtoi(b, &y);
  if (na && nb) return x != y ? x < y : a < b;
  if (na != nb) return na;
  return a < b;
}

}  // namespace

absl::StatusOr<std::vector<ChakraCommGroup>> ParseChakraCommGroups(absl::string_view json, absl::string_view file) {
  const google::protobuf::LogSilencer silence_protobuf_logs;
  google::protobuf::Struct root;
  google::protobuf::util::JsonParseOptions options;
  if (auto s = google::protobuf::util::JsonStringToMessage(std::string(json), &root, options); !s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: not a JSON object of groups {\"<pg_name>\": [ranks]}: %s", file, s.message().ToString()));
  }
  std::vector<ChakraCommGroup> groups;
  for (const auto& [name, value] : root.fields()) {
    const std::string where = absl::StrFormat("%s: \"%s\"", file, name);
    if (value.kind_case() != google::protobuf::Value::kListValue) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": not a list of ranks"));
    }
    ChakraCommGroup group{name, {}};
    absl::flat_hash_set<int64_t> seen;
    for (int i = 0; i < value.list_value().values_size(); ++i) {
      const google::protobuf::Value& v = value.list_value().values(i);
      const double d = v.number_value();
      if (v.kind_case() != google::protobuf::Value::kNumberValue || d < 0 || d > 1e9 || std::floor(d) != d) {
        return absl::InvalidArgumentError(absl::StrFormat("%s[%d]: not a rank (a non-negative integer)", where, i));
      }
      const auto rank = static_cast<int64_t>(d);
      if (!seen.insert(rank).second) {
        return absl::InvalidArgumentError(absl::StrFormat("%s[%d]: rank %d listed twice", where, i, rank));
      }
      group.ranks.push_back(rank);
    }
    if (group.ranks.empty()) return absl::InvalidArgumentError(absl::StrCat(where, ": empty group"));
    groups.push_back(std::move(group));
  }
  std::sort(groups.begin(), groups.end(),
            [](const ChakraCommGroup& a, const ChakraCommGroup& b) { return NameLess(a.name, b.name); });
  return groups;
}

std::string ChakraCommGroupsJson(const std::vector<ChakraCommGroup>& groups) {
  std::string out = "{";
  for (size_t g = 0; g < groups.size(); ++g) {
    absl::StrAppend(&out, g == 0 ? "\n" : ",\n", "  \"", groups[g].name, "\": [", absl::StrJoin(groups[g].ranks, ", "),
                    "]");
  }
  absl::StrAppend(&out, groups.empty() ? "}\n" : "\n}\n");
  return out;
}

}  // namespace hetsim::proto
