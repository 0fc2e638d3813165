// Context parallelism (Plan.context_parallel) against closed forms: the K/V ring's bytes per step
// and per microbatch, its time on the fabric and the part the attention compute hides, the 1/CP of
// FLOPs and activation memory per GPU, ZeRO sharding over DP x CP, and the rank layout.
#include <catch2/catch.hpp>

#include <algorithm>

#include "base/units.h"
#include "sim/executor/cp_ring.h"
#include "sim/executor/setup.h"
#include "sim/workload/context_parallel_ring.h"
#include "sim/workload/gpu_compute.h"
#include "sim/workload/model_cost.h"
#include "sim/workload/stage_cost.h"
#include "tests/base/spec/spec_test_util.h"
#include "tests/base/time_io.h"
#include "tests/sim/executor/context_parallel_util.h"
#include "tests/sim/executor/executor_test_util.h"
#include "tests/topology/topology_clusters.h"
#include "traces/metrics.h"

namespace hetsim {
namespace {

using workload::StageConfig;
using workload::StageCost;

// A Llama-like model: 2 blocks, hidden 4096, 32 query heads and 8 K/V heads (GQA), seq 8192, BF16.
constexpr double kSeq = 8192, kHidden = 4096, kHeads = 32, kKvHeads = 8;

v1::Model Gqa() { return testing::GqaModel(2, 8192); }

StageCost BlocksCost(int tp, int dp, int cp, uint64_t b, int zero = 0) {
  auto model = hetsim::testing::ModelCostOf(Gqa(), "model.pbtxt");
  REQUIRE(model.ok());
  v1::GpuType g;
  g.set_name("h100");
  g.set_peak_tflops_bf16(989);
  g.set_hbm_gib(80);
  g.set_hbm_bandwidth_gbytes_per_s(3350);
  auto gpu = hetsim::testing::GpuComputeOf(g, v1::BF16, "cluster.pbtxt", /*ideal=*/true);
  REQUIRE(gpu.ok());
  StageConfig c;
  c.first_layer = 1;  // the two blocks, after the embedding
  c.num_layers = 2;
  c.tensor_parallel = tp;
  c.data_parallel = dp;
  c.context_parallel = cp;
  c.micro_batch_size = b;
  c.zero_stage = zero;
  auto cost = workload::ComputeStageCost(*model, c, *gpu, "plan.pbtxt: stages[0]");
  INFO(cost.status().message());
  REQUIRE(cost.ok());
  return *std::move(cost);
}

TEST_CASE("context parallel: ring step bytes, FLOPs and activations per GPU in closed form", "[cp][workload]") {
  const StageCost one = BlocksCost(2, 1, 1, 1);
  const StageCost four = BlocksCost(2, 1, 4, 1);
  CHECK(one.cp_attention.empty());
  REQUIRE(four.cp_attention.size() == 2);
  // K and V of this GPU's tokens: 2 tensors x s/CP tokens x (kv heads / TP) x head width x 2 bytes.
  const double step = 2 * (kSeq / 4) * (kKvHeads / 2) * (kHidden / kHeads) * 2;
  for (const auto& a : four.cp_attention) {
    CHECK(static_cast<double>(a.step_bytes) == step);
    CHECK(a.core_forward_s > 0);
    CHECK(a.core_backward_s > a.core_forward_s);
    CHECK_FALSE(a.recomputed);
  }
  // Each GPU computes 1/CP of every token's work and keeps 1/CP of the activations.
  CHECK(four.forward_flop_per_gpu * 4 == Approx(one.forward_flop_per_gpu).epsilon(1e-12));
  CHECK(four.model_flop_per_gpu * 4 == Approx(one.model_flop_per_gpu).epsilon(1e-12));
  CHECK(std::abs(static_cast<double>(four.memory.activation_bytes_per_microbatch) * 4 -
                 static_cast<double>(one.memory.activation_bytes_per_microbatch)) <= 4);
  // Weights are not split by CP; ZeRO-1 shards the optimizer over DP x CP ranks, as DP 4 would.
  CHECK(four.memory.param_bytes == one.memory.param_bytes);
  CHECK(four.grad_sync_bytes == one.grad_sync_bytes);
  CHECK(BlocksCost(2, 1, 4, 1, 1).memory.optimizer_bytes == BlocksCost(2, 4, 1, 4, 1).memory.optimizer_bytes);
}

proto::PlanInputs CpInputs() { return testing::CpStageInputs(2); }

// One ring step of the stage's K/V block (two attention layers) on a GPU's own 400 Gb/s NIC, in seconds.
double NicStepSeconds(const executor::VirtualStageCost& vs) {
  REQUIRE(vs.cost.cp_attention.size() == 2);
  return static_cast<double>(vs.cost.cp_attention[0].step_bytes) / GbpsToBytesPerSecond(400);
}

TEST_CASE("context parallel: the ring on the fabric, hidden behind attention, in the report", "[cp][executor]") {
  const auto setup = testing::MakeSetup(CpInputs(), network::NetworkMode::kMaxMinFair);
  const executor::StageLayout& l = setup->stages[0].layout;
  REQUIRE(l.context_parallel == 4);
  // Megatron's order: TP innermost, then CP: CP rank c of TP rank t is node c, GPU t.
  CHECK(l.Gpu(0, 1, 2) == GpuId(2 * 2 + 1));
  CHECK(l.TensorGroup(0, 3) == GpuIds({6, 7}));
  CHECK(l.DataGroup(1) == GpuIds({1, 3, 5, 7}));  // gradients reduce over DP x CP
  CHECK_FALSE(setup->stages[0].grad_buckets.empty());
  const auto flows = executor::CpRingStepFlows(l, 100);
  REQUIRE(flows.size() == 8);
  CHECK(flows[6].src == GpuId(6));
  CHECK(flows[6].dst == GpuId(0));  // the ring closes

  const executor::VirtualStageCost& vs = setup->virtual_stages[0];
  // Every GPU sends on its own NIC: one step of B bytes takes B / 400 Gb/s; CP - 1 = 3 steps per
  // layer forward, 3 of 2B backward.
  const double t_step = NicStepSeconds(vs);
  const int64_t step = vs.cost.cp_attention[0].step_bytes;
  CHECK(TimeToSeconds(vs.cp_forward_exchange_time) == Approx(2 * 3 * t_step).epsilon(1e-6));
  CHECK(TimeToSeconds(vs.cp_backward_exchange_time) == Approx(2 * 3 * 2 * t_step).epsilon(1e-6));
  CHECK(vs.cp_bytes == 2 * 3 * (step + 2 * step));
  double exposed_fwd = 0, exposed_bwd = 0;
  for (const auto& a : vs.cost.cp_attention) {
    exposed_fwd += 3 * std::max(0.0, t_step - a.core_forward_s / 4);
    exposed_bwd += 3 * std::max(0.0, 2 * t_step - a.core_backward_s / 4);
  }
  CHECK(TimeToSeconds(vs.cp_forward_exposed_time) == Approx(exposed_fwd).margin(1e-9));
  CHECK(TimeToSeconds(vs.cp_backward_exposed_time) == Approx(exposed_bwd).margin(1e-9));
  CHECK(vs.forward_time() ==
        vs.cost.forward_time + vs.forward_collective_time - vs.forward_hidden_comm_time + vs.cp_forward_exposed_time);

  const executor::ExecutionResult run = testing::MakeRun(*setup);
  const v1::Report built = traces::BuildReport(*setup, run);
  const v1::Report* report = &built;
  CHECK(report->context_parallel() == 4);
  REQUIRE(report->stages_size() == 1);
  CHECK(report->stages(0).context_parallel() == 4);
  CHECK(report->stages(0).cp_bytes_per_microbatch() == static_cast<uint64_t>(vs.cp_bytes));
  CHECK(report->stages(0).cp_exchange_ms() ==
        Approx(TimeToMilliseconds(vs.cp_forward_exchange_time + vs.cp_backward_exchange_time)));
  CHECK(report->num_gpus() == 8);
}

TEST_CASE("context parallel: the all-gather exchange is the same steps, all exposed", "[cp][executor]") {
  proto::PlanInputs in = CpInputs();
  const auto ring_setup = testing::MakeSetup(in, network::NetworkMode::kMaxMinFair);
  in.plan.set_cp_comm_type(v1::CP_COMM_ALL_GATHER);
  const auto setup = testing::MakeSetup(in, network::NetworkMode::kMaxMinFair);
  const executor::VirtualStageCost& ring = ring_setup->virtual_stages[0];
  const executor::VirtualStageCost& vs = setup->virtual_stages[0];
  // NCCL's ring all-gather of K and V: CP - 1 = 3 steps of B per layer in the forward; in the backward
  // K and V are gathered again and their gradients reduce-scattered, 2 x 3 steps of B. Nothing hides.
  const double t_step = NicStepSeconds(vs);
  CHECK(TimeToSeconds(vs.cp_forward_exchange_time) == Approx(2 * 3 * t_step).epsilon(1e-6));
  CHECK(TimeToSeconds(vs.cp_backward_exchange_time) == Approx(2 * 2 * 3 * t_step).epsilon(1e-6));
  CHECK(vs.cp_forward_exposed_time == vs.cp_forward_exchange_time);
  CHECK(vs.cp_backward_exposed_time == vs.cp_backward_exchange_time);
  // The same bytes leave every GPU as around the ring, and the ring hid more of them.
  CHECK(vs.cp_bytes == ring.cp_bytes);
  CHECK(vs.cp_forward_exposed_time > ring.cp_forward_exposed_time);
  CHECK(vs.forward_time() - ring.forward_time() == vs.cp_forward_exposed_time - ring.cp_forward_exposed_time);
  const executor::ExecutionResult run = testing::MakeRun(*setup);
  const v1::Report report = traces::BuildReport(*setup, run);
  CHECK(report.cp_comm_type() == v1::CP_COMM_ALL_GATHER);
  CHECK(report.stages(0).cp_exposed_ms() == Approx(report.stages(0).cp_exchange_ms()));
}

TEST_CASE("context parallel: under recompute an all-gather gathers K and V a third time, an a2a runs twice",
          "[cp][workload]") {
  workload::ContextParallelAttention a;
  a.core_forward_s = 1;  // far longer than a step: the ring would hide everything
  a.core_backward_s = 2;
  const Time step = 1000_ps;
  for (const bool recomputed : {false, true}) {
    a.recomputed = recomputed;
    workload::ContextParallelTime ring, gather, a2a;
    const workload::ContextParallelSteps steps{.kv = step, .kv_grad = 2 * step, .qkv_a2a = 5_ps, .context_a2a = 3_ps};
    workload::AddAttentionExchange(a, 8, spec::ContextParallelComm::kRing, steps, ring);
    workload::AddAttentionExchange(a, 8, spec::ContextParallelComm::kAllGather, steps, gather);
    workload::AddAttentionExchange(a, 8, spec::ContextParallelComm::kAllToAll, steps, a2a);
    CHECK(a2a.forward_exposed == 8_ps);  // Q, K and V in, the output back
    CHECK(a2a.backward_exposed == (recomputed ? 16_ps : 8_ps));
    CHECK(a2a.backward_exchange == a2a.backward_exposed);
    CHECK(ring.forward_exposed == 0);
    CHECK(ring.backward_exposed == 0);
    CHECK(gather.forward_exposed == 7 * step);
    CHECK(gather.backward_exposed == (recomputed ? 3 : 2) * 7 * step);
    CHECK(gather.backward_exchange == ring.backward_exchange);  // n T(2B) [+ n T(B)] at a linear step time
  }
}

TEST_CASE("context parallel: the all-to-all (Ulysses) exchange in closed form", "[cp][executor]") {
  proto::PlanInputs in = CpInputs();
  in.plan.set_cp_comm_type(v1::CP_COMM_ALL_TO_ALL);
  const auto setup = testing::MakeSetup(in, network::NetworkMode::kMaxMinFair);
  const executor::StageLayout& l = setup->stages[0].layout;
  CHECK(executor::CpAllToAllFlows(l, 400).size() == 2 * 4 * 3);  // TP ranks x CP ranks x peers
  CHECK(executor::CpAllToAllFlows(l, 400)[0].bytes == 100);
  const executor::VirtualStageCost& vs = setup->virtual_stages[0];
  NicStepSeconds(vs);  // two attention layers
  const workload::ContextParallelAttention& a = vs.cost.cp_attention[0];
  // This GPU's queries: s/CP tokens x (heads / TP) x head width x 2 bytes; the attention output likewise.
  CHECK(static_cast<double>(a.query_bytes) == (kSeq / 4) * (kHeads / 2) * (kHidden / kHeads) * 2);
  CHECK(a.context_bytes == a.query_bytes);
  // Each GPU keeps a quarter of each buffer and sends a quarter to each of its 3 peers, all on other
  // nodes, over its own NIC: 3/4 of the bytes at 400 Gb/s. Forward: Q, K and V, then the output; the
  // backward the same bytes the other way. Nothing hides.
  const double rate = GbpsToBytesPerSecond(400);
  const double pass = 2 * 0.75 * static_cast<double>(a.query_bytes + a.step_bytes + a.context_bytes) / rate;
  CHECK(TimeToSeconds(vs.cp_forward_exchange_time) == Approx(pass).epsilon(1e-6));
  CHECK(TimeToSeconds(vs.cp_backward_exchange_time) == Approx(pass).epsilon(1e-6));
  CHECK(vs.cp_forward_exposed_time == vs.cp_forward_exchange_time);
  CHECK(vs.cp_backward_exposed_time == vs.cp_backward_exchange_time);
  CHECK(vs.cp_bytes == 2 * 2 * 3 * ((a.query_bytes + a.step_bytes) / 4 + a.context_bytes / 4));
  const v1::Report report = traces::BuildReport(*setup, testing::MakeRun(*setup));
  CHECK(report.cp_comm_type() == v1::CP_COMM_ALL_TO_ALL);

  // Each CP rank takes a quarter of a TP rank's heads: 2 K/V heads over TP 2 leave one, which 4 cannot split.
  in.model.mutable_transformer()->set_num_kv_heads(2);
  const absl::Status s = proto::ValidatePlanInputs(in);
  REQUIRE_FALSE(s.ok());
  CHECK(std::string(s.message())
            .find("stages[0].tensor_parallel: 2 leaves 16 query and 1 key/value heads per TP "
                  "rank, which context_parallel 4 with cp_comm_type CP_COMM_ALL_TO_ALL must "
                  "divide") != std::string::npos);
}

TEST_CASE("context parallel: plans are validated against the model", "[cp][validate]") {
  proto::PlanInputs in = CpInputs();
  in.plan.set_context_parallel(3);  // 8192 is not a multiple of 6, and 2 x 3 x 1 != 8 GPUs
  const absl::Status s = proto::ValidatePlanInputs(in);
  REQUIRE_FALSE(s.ok());
  CHECK(std::string(s.message()).find("context_parallel") != std::string::npos);
}

}  // namespace
}  // namespace hetsim
