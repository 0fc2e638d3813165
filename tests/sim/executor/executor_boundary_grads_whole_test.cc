// Plan.boundary_grads_whole (DeepSpeed's pipeline engine of the AMP artifact): the backward's boundary
// flows carry the whole gradient from every TP rank, where Megatron's scatter/gather sends 1/TP each.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "sim/executor/setup.h"

namespace {

using hetsim::executor::BoundaryFlow;
using hetsim::executor::ReshardFlows;
using hetsim::executor::StageLayout;

// One replica of TP 2 on GPUs first, first + 1.
StageLayout Tp2Stage(int first) {
  StageLayout l;
  l.gpus = hetsim::GpuIds({first, first + 1});
  l.tensor_parallel = 2;
  return l;
}

int64_t TotalBytes(const std::vector<BoundaryFlow>& flows) {
  int64_t total = 0;
  for (const BoundaryFlow& f : flows) total += f.bytes;
  return total;
}

}  // namespace

TEST_CASE("boundary_grads_whole: every TP rank sends the whole gradient back", "[executor][amp]") {
  const StageLayout a = Tp2Stage(0), b = Tp2Stage(4);
  // 2 samples of 1000 bytes: split, 1000 bytes a rank; whole, 2000 a rank, TP x the bytes in all.
  const std::vector<BoundaryFlow> split = ReshardFlows(b, a, 2, 1000);
  const std::vector<BoundaryFlow> whole = ReshardFlows(b, a, 2, 1000, true);
  REQUIRE(split.size() == 2);
  REQUIRE(whole.size() == 2);
  for (size_t j = 0; j < 2; ++j) {
    CHECK(split[j].bytes == 1000);
    CHECK(whole[j].bytes == 2000);
    CHECK(whole[j].src == split[j].src);
    CHECK(whole[j].dst == split[j].dst);
  }
  CHECK(TotalBytes(whole) == 2 * TotalBytes(split));
}
