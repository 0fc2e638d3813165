// Megatron's --pipeline-model-parallel-layout grammar (service/interop/megatron_layout.h) against Megatron's
// own rewrites: commas dropped, "(group)*N" expanded first, then "x*N", '|' between virtual stages.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "service/interop/megatron_layout.h"

namespace {

using hetsim::interop::FormatPipelineLayout;
using hetsim::interop::LayoutStage;
using hetsim::interop::ParsePipelineLayout;

// The layout written out again, repetitions expanded.
std::string Expanded(const std::string& layout) {
  absl::StatusOr<std::vector<LayoutStage>> stages = ParsePipelineLayout(layout);
  INFO(layout);
  REQUIRE(stages.ok());
  return FormatPipelineLayout(*stages);
}

std::string Error(const std::string& layout) {
  absl::StatusOr<std::vector<LayoutStage>> stages = ParsePipelineLayout(layout);
  INFO(layout);
  REQUIRE_FALSE(stages.ok());
  return std::string(stages.status().message());
}

TEST_CASE("pipeline layout: Megatron's rewrites, in Megatron's order", "[interop][layout]") {
  CHECK(Expanded("Et|(tt|)*3mL") == "Et|tt|tt|tt|mL");      // DeepSeek-V3's shape: MTP and loss alone
  CHECK(Expanded("Et*3|(tt|)*2,m|L") == "Ettt|tt|tt|m|L");  // Megatron's own example, shortened
  CHECK(Expanded("(t*2|)*2L") == "tt|tt|L");                // a letter's count inside a group
  CHECK(Expanded("E|t*0|L") == "E||L");                     // no block: an empty virtual stage
  CHECK(Expanded("Et|") == "Et|");                          // a trailing '|' ends with an empty one
  const std::vector<LayoutStage> s = *ParsePipelineLayout("Et|tt|tmL");
  REQUIRE(s.size() == 3);
  CHECK(s[0].embedding == 1);
  CHECK(s[0].embedding_first);
  CHECK(s[2].blocks == 1);
  CHECK(s[2].mtp == 1);
  CHECK(s[2].loss_last);
  CHECK(s[2].Layers() == 2);  // the MTP module rides in the head's layer
}

TEST_CASE("pipeline layout: what Megatron refuses, named", "[interop][layout]") {
  // Megatron rewrites "t*2" once; the "*2" left is not a letter.
  CHECK(Error("Et*2*2|L") == "--pipeline-model-parallel-layout Et*2*2|L: '*' is not a layer letter (E, t, m, L)");
  CHECK(Error("Et t|L") == "--pipeline-model-parallel-layout Et t|L: ' ' is not a layer letter (E, t, m, L)");
  CHECK(Error("E(tt|L") == "--pipeline-model-parallel-layout E(tt|L: '(' is not a layer letter (E, t, m, L)");
  CHECK(Error("Et|mtL") ==
        "--pipeline-model-parallel-layout Et|mtL: the blocks (t) must come before the MTP modules (m)");
  CHECK(Error("Et|x") == "--pipeline-model-parallel-layout Et|x: 'x' is not a layer letter (E, t, m, L)");
  // Huge repetitions stop at a bound, and the message quotes what was written, not its expansion.
  CHECK(Error("(t*|)*100000") ==
        "--pipeline-model-parallel-layout (t*|)*100000: '*' is not a layer letter (E, t, m, L)");
  CHECK(Error("Et*99999999999999999999|L") ==
        "--pipeline-model-parallel-layout Et*99999999999999999999|L: too long once its repetitions are written out");
}

}  // namespace
