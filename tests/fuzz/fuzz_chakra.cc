// libFuzzer target: the Chakra trace reader and replay. The input is cut at "\n--rank--\n": the first
// piece is the communicator-group JSON (empty: none), each further piece (at most 4) a rank file.
// Every piece goes through proto::ParseChakraStream / ParseChakraCommGroups and chakra::ConvertRank and
// CheckMatching, the code `run --chakra` runs; what passes is replayed on a 6-GPU cluster under an
// event limit. Any status is fine; a crash, a leak, undefined behaviour or a hang is a finding.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "base/check.h"
#include "google/protobuf/text_format.h"
#include "proto/chakra_groups.h"
#include "proto/chakra_stream.h"
#include "proto/gpu_presets.h"
#include "service/chakra/replay.h"
#include "service/chakra/trace.h"
#include "tests/fuzz/fuzz_cluster.h"
#include "tests/service/driver/build_topology.h"
#include "topology/device_graph.h"

namespace {

const hetsim::topology::Topology& Cluster() {
  static const hetsim::topology::Topology* topology = [] {
    auto t = hetsim::testing::BuildTopology(FuzzCluster());
    HETSIM_CHECK(t.ok(), "the fuzz cluster: %s", std::string(t.status().message()).c_str());
    return new hetsim::topology::Topology(*std::move(t));
  }();
  return *topology;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view input(reinterpret_cast<const char*>(data), size);
  std::vector<absl::string_view> pieces = absl::StrSplit(input, "\n--rank--\n");
  if (pieces.size() < 2 || pieces.size() > 5) return 0;
  hetsim::chakra::ChakraWorkload w;
  if (!pieces[0].empty()) {
    auto groups = hetsim::proto::ParseChakraCommGroups(pieces[0], "groups.json");
    if (!groups.ok()) return 0;
    w.groups = *std::move(groups);
  }
  const int n = static_cast<int>(pieces.size()) - 1;
  for (const auto& g : w.groups) {
    for (int64_t r : g.ranks) {
      if (r >= n) return 0;  // LoadChakraDir refuses these
    }
  }
  for (int r = 0; r < n; ++r) {
    const std::string file = absl::StrCat("t.", r, ".et");
    auto stream = hetsim::proto::ParseChakraStream(pieces[r + 1], file);
    if (!stream.ok()) return 0;
    auto rank = hetsim::chakra::ConvertRank(*stream, file, r, n, &w.groups, &w.warnings);
    if (!rank.ok()) return 0;
    w.ranks.push_back(*std::move(rank));
  }
  if (!hetsim::chakra::CheckMatching(w).ok()) return 0;
  hetsim::chakra::ReplayOptions options;
  options.max_events = 200000;
  options.retime_compute = (size & 1) != 0;
  auto result = hetsim::chakra::ReplayChakra(w, Cluster(), options);
  HETSIM_CHECK(!result.ok() || result->iteration_time >= 0, "a replay with a negative iteration time");
  return 0;
}
