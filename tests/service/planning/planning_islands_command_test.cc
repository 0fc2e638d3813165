// service/planning/islands_command: `hetsim islands` as one typed request, its checks in the command
// line's words, the formation and the table it prints.
#include <string>

#include <catch2/catch.hpp>

#include "service/planning/islands_command.h"

namespace {

using hetsim::planning::CheckIslandsRequest;
using hetsim::planning::FormIslands;
using hetsim::planning::IslandsRequest;

IslandsRequest Example(const std::string& name) {
  IslandsRequest r;
  r.cluster = hetsim::proto::Source::File(std::string(HETSIM_SOURCE_DIR) + "/examples/" + name + ".pbtxt");
  return r;
}

}  // namespace

TEST_CASE("islands command: tolerances below 0 and a merge factor below 1 are refused as the CLI words them",
          "[planning]") {
  IslandsRequest r = Example("cluster-mixed-cloud");
  CHECK(CheckIslandsRequest(r).ok());
  r.thresholds.memory = -0.5;
  CHECK(CheckIslandsRequest(r).message() == "--tau-m: -0.5 must be >= 0");
  r.thresholds.memory = 0.2;
  r.thresholds.merge_factor = 0.9;
  CHECK(CheckIslandsRequest(r).message() == "--merge-factor: 0.9 must be >= 1");
  CHECK(!FormIslands(r).ok());  // checked again by the service
}

TEST_CASE("islands command: the mixed cloud's two GPU types stay two islands, in the table", "[planning]") {
  const auto formed = FormIslands(Example("cluster-mixed-cloud"));
  REQUIRE(formed.ok());
  CHECK(formed->formation.islands.size() == 2);
  CHECK(formed->table.rfind("cluster mixed-cloud: 2 sub-clusters, 2 initial islands, 2 GPU islands", 0) == 0);
  // A V100 has no BF16 peak: it is compared at its FP16 peak (125 TFLOP/s), apart from the A100s.
  const auto v100 = FormIslands(Example("cluster-hapt-case"));
  REQUIRE(v100.ok());
  CHECK(v100->formation.islands.size() == 2);
}
