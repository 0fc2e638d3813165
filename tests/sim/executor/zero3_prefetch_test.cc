// ZeRO-3 / FSDP with Plan.zero3_prefetch against its closed form: each layer's parameter all-gather
// hides behind the compute of the layer before it in pass order; the first gather of each pass
// stays on the critical path.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "sim/executor/collective_load.h"
#include "sim/executor/setup.h"
#include "tests/base/time_io.h"
#include "tests/proto/model_shapes.h"
#include "tests/sim/executor/executor_test_util.h"
#include "tests/topology/topology_clusters.h"

namespace hetsim {
namespace {

// Two nodes of one GPU (400 Gb/s NIC): a 4-block model with a large batch (compute >> gathers)
// on one stage of DP 2 under ZeRO-3.
proto::PlanInputs Zero3Inputs(bool prefetch) {
  v1::Cluster cluster = testing::H100Island(2, v1::SINGLE_SWITCH, 1);
  cluster.mutable_gpu_types(0)->set_preset("H100-SXM");  // the kernel model's fields (ideal: peak)
  v1::Plan plan = testing::SmallDp2Plan("zero3");
  plan.set_zero3_prefetch(prefetch);
  plan.mutable_stages(0)->set_zero_stage(3);
  return testing::MakeInputs(cluster, plan);
}

TEST_CASE("zero3 prefetch: each gather hides behind the compute of the layer before it", "[zero3][executor]") {
  const auto plain = testing::MakeSetup(Zero3Inputs(false), network::NetworkMode::kMaxMinFair);
  const auto prefetched = testing::MakeSetup(Zero3Inputs(true), network::NetworkMode::kMaxMinFair);
  const executor::VirtualStageCost& a = plain->virtual_stages[0];
  const executor::VirtualStageCost& b = prefetched->virtual_stages[0];
  REQUIRE(a.forward_gather_exposed_time > 0);

  // The gathers of every layer, as the setup splits the stage's gradient bytes by parameter count.
  executor::CollectiveTimer timer(*plain->topology, *plain->router, network::NetworkMode::kMaxMinFair);
  const auto& layout = plain->stages[0].layout;
  std::vector<std::vector<GpuId>> groups = {layout.DataGroup(0)};
  std::vector<double> weight;
  double total = 0;
  for (int i = 0; i < 6; ++i) {
    weight.push_back(static_cast<double>(plain->model->layer(i).param_count));
    total += weight.back();
  }
  const double all = static_cast<double>(a.cost.grad_sync_bytes);
  std::vector<Time> gather;
  double cumulative = 0;
  int64_t done = 0;
  for (double w : weight) {
    cumulative += w;
    const auto upto = static_cast<int64_t>(std::llround(all * cumulative / total));
    auto t = timer.ConcurrentTimeOf(CollectiveOp::kAllGather, groups, upto - done);
    REQUIRE(t.ok());
    gather.push_back(*t);
    done = upto;
  }
  Time sum = 0;
  for (Time g : gather) sum += g;
  CHECK(a.forward_gather_exposed_time == sum);
  CHECK(a.backward_gather_exposed_time == sum);

  // With prefetch, each gather after the first of its pass hides behind the previous layer's compute
  // (forward: layer i - 1; backward, last to first: layer i + 1).
  Time forward = gather.front(), backward = gather.back();
  const size_t n = gather.size();
  for (size_t i = 1; i < n; ++i) forward += std::max<Time>(0, gather[i] - SecondsToTime(b.cost.layer_forward_s[i - 1]));
  for (size_t i = 0; i + 1 < n; ++i) {
    backward += std::max<Time>(0, gather[i] - SecondsToTime(b.cost.layer_backward_s[i + 1]));
  }
  CHECK(b.forward_gather_exposed_time == forward);
  CHECK(b.backward_gather_exposed_time == backward);
  CHECK(forward < sum);  // the blocks' compute hides some of it
  CHECK(b.forward_time() == a.forward_time() - (sum - forward));
}

}  // namespace
}  // namespace hetsim
