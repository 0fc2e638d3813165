// The report's figures on examples small enough to work out by hand: eta (HAPT Eq. 25), MFU and
// model TFLOP/s per GPU (Megatron's model FLOPs over the iteration time and the peak FLOP/s), the
// bubble ratio, throughput, and the NVLink bytes of tensor-parallel collectives timed in closed form.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "sim/collectives/simulate.h"
#include "sim/executor/collective_load.h"
#include "sim/pipeline/hapt_metrics.h"
#include "tests/service/driver/build_topology.h"
#include "tests/sim/executor/executor_test_util.h"
#include "traces/metrics.h"

namespace hetsim::testing {
namespace {

const v1::LinkClassReport& LinkClass(const v1::Report& r, const std::string& name) {
  for (const auto& l : r.links()) {
    if (l.link_class() == name) return l;
  }
  FAIL("no link class " << name);
  return r.links(0);
}

// No parameters (no optimizer step, nothing to synchronise), so the iteration is the pipeline alone.
void DropParameters(v1::Plan& plan) {
  for (v1::Layer& layer : *plan.mutable_model()->mutable_layer_list()->mutable_layers()) layer.set_param_count(0);
}

TEST_CASE("eta: HAPT Eq. 25 on hand-computed devices", "[traces][metrics]") {
  // td = {4, 2, 4} s, peak = {1, 3, 1}: td_max = 4; sum (td_max - td_i) P_i = 0 + 2*3 + 0 = 6;
  // td_max * sum P_i = 4 * 5 = 20; eta = 1 - 6/20 = 0.7.
  CHECK(hetsim::pipeline::Eta(std::vector<double>{4, 2, 4}, std::vector<double>{1, 3, 1}) ==
        Approx(0.7).epsilon(1e-15));
  // The same idle time on the slow device weighs less: P = {3, 1, 3}: 1 - 2*1/(4*7) = 13/14.
  CHECK(hetsim::pipeline::Eta(std::vector<double>{4, 2, 4}, std::vector<double>{3, 1, 3}) ==
        Approx(13.0 / 14.0).epsilon(1e-15));
  // Equal compute times: perfect balance, whatever the peaks; nothing computed at all counts as 1.
  CHECK(hetsim::pipeline::Eta(std::vector<double>{5, 5}, std::vector<double>{1, 9}) == 1.0);
  CHECK(hetsim::pipeline::Eta(std::vector<double>{0, 0}, std::vector<double>{1, 1}) == 1.0);
}

TEST_CASE("report: eta, MFU, bubble and throughput of a two-stage 1F1B run worked out by hand", "[traces][metrics]") {
  // Stage 0: one V100 at 100 TFLOP/s (FP16), f = 1 ms, b = 2 ms. Stage 1: one A100 at 300 TFLOP/s,
  // f = 2 ms, b = 4 ms. 4 microbatches of 1 sample; free transfers (0 bytes, 0 latency); 1F1B.
  v1::Cluster cluster = TwoIslandCluster(1, 1, 10, 0);
  cluster.mutable_gpu_types(0)->set_peak_tflops_fp16(300);  // a100
  cluster.mutable_gpu_types(1)->set_peak_tflops_fp16(100);  // v100
  v1::Plan plan =
      MakePlan({{"slow", 0, 0, 1, 1, 1, 1.0, 2.0, 1}, {"fast", 0, 0, 1, 1, 1, 2.0, 4.0, 1}}, 4, v1::ONE_F_ONE_B, 0);
  DropParameters(plan);
  const auto setup = MakeSetup(MakeInputs(cluster, plan), NetworkMode::kMaxMinFair);
  const v1::Report r = hetsim::traces::BuildReport(*setup, MakeRun(*setup));

  // Stage 1 is the bottleneck: F0 on stage 0 (1 ms), then stage 1 runs F,B four times back to back
  // (4 x 6 = 24 ms), then stage 0's last backward (2 ms): 27 ms.
  CHECK(r.iteration_time_ms() == Approx(27.0).epsilon(1e-12));
  // Busy: stage 0 4 x 3 = 12 ms, stage 1 4 x 6 = 24 ms. Bubble = 1 - 36 / (2 x 27) = 1/3.
  CHECK(r.bubble_ratio() == Approx(1.0 / 3.0).epsilon(1e-12));
  // eta = 1 - (24 - 12) x 1e14 / (24 x (1e14 + 3e14)) = 1 - 12/96 = 0.875.
  CHECK(r.eta() == Approx(0.875).epsilon(1e-12));
  // Model FLOPs: 2 layers x (100 + 200) GFLOP per sample x 4 samples = 2.4e12.
  CHECK(r.model_flop_per_iteration() == Approx(2.4e12).epsilon(1e-15));
  // MFU = 2.4e12 / (0.027 s x 4e14 FLOP/s) = 2/9; per GPU 2.4e12 / 0.027 / 2 = 44.44 TFLOP/s.
  CHECK(r.mfu() == Approx(2.0 / 9.0).epsilon(1e-12));
  CHECK(r.model_tflops_per_gpu() == Approx(2.4e12 / 0.027 / 2 / 1e12).epsilon(1e-12));
  // 4 samples of 1024 tokens in 27 ms.
  CHECK(r.samples_per_s() == Approx(4 / 0.027).epsilon(1e-12));
  CHECK(r.tokens_per_s() == Approx(4 * 1024 / 0.027).epsilon(1e-12));
  REQUIRE(r.stages_size() == 2);
  CHECK(r.stages(0).compute_busy_ms() == Approx(12.0).epsilon(1e-12));
  CHECK(r.stages(1).compute_busy_ms() == Approx(24.0).epsilon(1e-12));
  CHECK(r.stages(1).idle_ms() == Approx(3.0).epsilon(1e-12));
}

TEST_CASE("report: NVLink carries the tensor-parallel all-gathers timed in closed form", "[traces][metrics]") {
  // Two stages on two nodes, each TP 2 x DP 2 on its node's NVSwitch; microbatches of 2 samples, so
  // one sample per replica, whose 4 MB output the receiving TP pair all-gathers (forward, stage 1)
  // and whose gradient the sending pair all-gathers (backward, stage 0). Boundary flows go through
  // the NICs (PCIe and InfiniBand), no parameters: nothing else touches NVLink.
  const v1::Cluster cluster = TwoIslandCluster(2, 4, 10, 1000);
  v1::Plan plan = MakePlan({{"fast", 0, 0, 4, 2, 2, 1.0, 2.0, 1}, {"fast", 1, 0, 4, 2, 2, 1.0, 2.0, 1}}, 4,
                           v1::ONE_F_ONE_B, 4000000, 2);
  DropParameters(plan);
  const auto setup = MakeSetup(MakeInputs(cluster, plan), NetworkMode::kMaxMinFair);
  const v1::Report r = hetsim::traces::BuildReport(*setup, MakeRun(*setup));
  // One all-gather of B = 4e6 bytes over 2 GPUs: each sends B/2 = 2e6 to the other, across its
  // GPU->NVSwitch and the NVSwitch->GPU link: 2 x 2 x 2e6 = 8e6 link bytes. Per microbatch 2 replicas
  // x 2 stages, 4 microbatches: 8e6 x 2 x 2 x 4 = 128e6.
  const v1::LinkClassReport& nvlink = LinkClass(r, "NVLINK");
  CHECK(nvlink.bytes() == 128e6);
  CHECK(nvlink.mean_utilization() > 0);
  CHECK(nvlink.max_utilization() <= 1);
}

TEST_CASE("collective load: another replica's group gets the load it would have alone", "[traces][metrics]") {
  using hetsim::CollectiveOp;
  using hetsim::executor::CollectiveTimer;
  using hetsim::executor::LinkLoad;
  const v1::Cluster cluster = TwoIslandCluster(2, 4, 10, 1000);
  auto topo = hetsim::testing::BuildTopology(cluster);
  REQUIRE(topo.ok());
  auto same = [](const std::vector<LinkLoad>& a, const std::vector<LinkLoad>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (a[i].link != b[i].link || a[i].bytes != b[i].bytes || a[i].busy_time != b[i].busy_time) return false;
    }
    return true;
  };
  hetsim::topology::Router router(*topo);
  CollectiveTimer timer(*topo, router, NetworkMode::kMaxMinFair);
  // GPUs 0-7 are the fast island's two nodes, 8-11 the slow island's node (slower NVLink).
  const std::vector<std::vector<GpuId>> groups =
      GpuGroups({{0, 1, 2, 3}, {4, 5, 6, 7}, {2, 3, 0, 1}, {8, 9, 10, 11}, {1, 5}});
  for (const auto& g : groups) {
    INFO("group starting at GPU " << g[0]);
    auto mapped = timer.LoadOf(CollectiveOp::kAllReduce, g, 32 << 20);
    REQUIRE(mapped.ok());
    REQUIRE_FALSE(mapped->empty());
    hetsim::topology::Router fresh_router(*topo);
    CollectiveTimer fresh(*topo, fresh_router, NetworkMode::kMaxMinFair);
    auto alone = fresh.LoadOf(CollectiveOp::kAllReduce, g, 32 << 20);
    REQUIRE(alone.ok());
    CHECK(same(*mapped, *alone));
    // And the time is SimulateCollective's.
    hetsim::collectives::CollectiveRequest request;
    request.op = CollectiveOp::kAllReduce;
    request.gpus = g;
    request.bytes = 32 << 20;
    auto reference = hetsim::collectives::SimulateCollective(*topo, fresh_router, request);
    REQUIRE(reference.ok());
    CHECK(*timer.TimeOf(CollectiveOp::kAllReduce, g, 32 << 20) == reference->time);
  }
}

}  // namespace

}  // namespace hetsim::testing
