// proto/validate_faults: every problem of a faults file at once, each with the file and field path;
// the bad-input corpus (tests/bad_inputs/faults_*) covers each check through `hetsim check`.
#include <catch2/catch.hpp>

#include <string>

#include "google/protobuf/text_format.h"
#include "proto/validate_cluster.h"
#include "proto/validate_faults.h"
#include "tests/proto/validate_test_util.h"

namespace {

namespace v1 = hetsim::v1;

using hetsim::testing::HaptCluster;

absl::Status Validate(const std::string& text) {
  v1::Faults f;
  REQUIRE(google::protobuf::TextFormat::ParseFromString(text, &f));
  return hetsim::proto::ValidateFaults(f, HaptCluster(), "f.pbtxt");
}

}  // namespace

TEST_CASE("validate faults: a valid file of every kind passes", "[faults][validate]") {
  const absl::Status s = Validate(R"pb(
    faults { gpu: 5 kind: SLOW factor: 1.5 at_ms: 2 duration_ms: 10 }
    faults {
      node { island: "v100" node: 0 }
      kind: SLOW
      factor: 0.5
    }
    faults { link_class: "INFINIBAND" kind: SLOW factor: 4 }
    faults { link: "a100/gateway0->v100/gateway0" kind: FLAP period_ms: 5 down_ms: 1 }
    faults { inter_island_link: 0 kind: FAIL at_ms: 30 }
    jitter { seed: 9 distribution: LOGNORMAL spread: 0.05 gpus: 0 gpus: 5 })pb");
  INFO(s.message());
  CHECK(s.ok());
  CHECK(hetsim::proto::ClusterGpuCount(HaptCluster()) == 6);
}

TEST_CASE("validate faults: every problem, with file and field path", "[faults][validate]") {
  const absl::Status s = Validate(R"pb(
    faults { gpu: 6 kind: SLOW factor: 2 }
    faults { gpu: 1 kind: FAIL factor: 2 duration_ms: 3 }
    faults { link_class: "ETHERNET" kind: FLAP period_ms: 2 }
    faults { gpu: 1 }
    jitter { seed: 1 spread: -0.1 gpus: 9 })pb");
  REQUIRE_FALSE(s.ok());
  const std::string m(s.message());
  for (const char* line :
       {"f.pbtxt: faults[0].gpu: GPU 6 is outside the cluster's 6 GPUs",
        "f.pbtxt: faults[1].factor: only SLOW faults take a factor",
        "f.pbtxt: faults[1].duration_ms: a FAIL fault is permanent", "f.pbtxt: faults[2].down_ms: required for FLAP",
        "f.pbtxt: faults[3].kind: required", "f.pbtxt: jitter.distribution: required",
        "f.pbtxt: jitter.spread: -0.1 is outside [0, 1)", "f.pbtxt: jitter.gpus[0]: GPU 9 is outside"}) {
    CHECK_THAT(m, Catch::Contains(line));
  }
}
