// Plan.zero_reduce_per_rank (issue 40): DeepSpeed ZeRO-1/2 reduces each gradient bucket as one NCCL Reduce per
// data-parallel rank (stage_1_and_2.py, average_tensor), ring chains pipelined in 512 KiB chunks a channel, so each
// bucket costs its reduce-scatter plus the calls' idle roots and fills (sim/executor/reduce_chains.h).
#include <catch2/catch.hpp>

#include <cstddef>

#include "base/collective_op.h"
#include "base/time.h"
#include "sim/executor/reduce_chains.h"
#include "sim/executor/setup.h"
#include "tests/sim/executor/executor_test_util.h"
#include "tests/topology/topology_clusters.h"

namespace {

namespace v1 = hetsim::v1;
using hetsim::network::NetworkMode;

// SmallDp2Plan's model (about 166 MB of BF16 gradients a GPU) on one ZeRO-1 stage of DP 4 over `nodes` nodes of
// island "a", reduced in 64 MiB buckets after the backward.
v1::Plan Dp4Plan(int nodes, bool per_rank) {
  v1::Plan plan = hetsim::testing::SmallDp2Plan("chains");
  v1::Stage* st = plan.mutable_stages(0);
  st->mutable_mesh()->set_node_count(nodes);
  st->mutable_mesh()->set_gpus_per_node(4 / nodes);
  st->set_data_parallel(4);
  st->set_zero_stage(1);
  plan.set_global_batch_size(16);
  plan.set_micro_batch_size(16);
  plan.set_grad_bucket_bytes(64 << 20);
  plan.set_zero_reduce_per_rank(per_rank);
  return plan;
}

}  // namespace

TEST_CASE("reduce chains: the idle roots and the fills of n chains against one reduce-scatter",
          "[executor][framework]") {
  // n = 4 ranks on 4 nodes, 1e9 bytes reduce-scattered in 1 s: a rank moves 3/4 x 1e9 B/s = 7.5e8 B/s. The roots
  // idle T / 3; a chain crosses 4 x 3/4 = 3 nodes, so each of the 4 calls fills over 2 hops of 2 x 512 KiB.
  const hetsim::Time t = hetsim::SecondsToTime(1.0);
  const double rate = 7.5e8;
  const double fill = 4 * 2 * 2 * 524288.0 / rate;
  CHECK(hetsim::TimeToSeconds(hetsim::executor::ReduceChainsExtraTime(t, 1'000'000'000, 4, 4)) ==
        Approx(1.0 / 3 + fill).epsilon(1e-9));
  // On 2 nodes a chain crosses 2 x 3/4 = 1.5: half a hop of fill a call.
  CHECK(hetsim::TimeToSeconds(hetsim::executor::ReduceChainsExtraTime(t, 1'000'000'000, 4, 2)) ==
        Approx(1.0 / 3 + 4 * 0.5 * 2 * 524288.0 / rate).epsilon(1e-9));
  // Inside one node no NIC hop fills: the idle roots alone.
  CHECK(hetsim::TimeToSeconds(hetsim::executor::ReduceChainsExtraTime(t, 1'000'000'000, 4, 1)) ==
        Approx(1.0 / 3).epsilon(1e-9));
  CHECK(hetsim::executor::ReduceChainsExtraTime(t, 1'000'000'000, 1, 1) == 0);
  CHECK(hetsim::executor::ReduceChainsExtraTime(0, 1'000'000'000, 4, 4) == 0);
}

TEST_CASE("reduce chains: each ZeRO-1 bucket runs its reduce-scatter and then its chains", "[executor][framework]") {
  for (const int nodes : {4, 1}) {
    INFO(nodes << " nodes");
    v1::Cluster cluster = hetsim::testing::H100Island(nodes, v1::SINGLE_SWITCH, 4 / nodes);
    cluster.mutable_gpu_types(0)->set_preset("H100-SXM");  // the kernels' rates (ideal: no NCCL latency)
    const auto with = hetsim::testing::MakeSetup(hetsim::testing::MakeInputs(cluster, Dp4Plan(nodes, true)),
                                                 NetworkMode::kMaxMinFair);
    const auto without = hetsim::testing::MakeSetup(hetsim::testing::MakeInputs(cluster, Dp4Plan(nodes, false)),
                                                    NetworkMode::kMaxMinFair);
    const auto a = hetsim::testing::MakeRun(*with);
    const auto b = hetsim::testing::MakeRun(*without);
    const auto& buckets = with->stages[0].grad_buckets;
    REQUIRE(buckets.size() >= 3);
    REQUIRE(a.grad_syncs.size() == buckets.size() + 1);  // the buckets, then the parameter all-gather
    REQUIRE(b.grad_syncs.size() == a.grad_syncs.size());
    hetsim::Time added = 0;
    for (size_t i = 0; i < buckets.size(); ++i) {
      INFO("bucket " << i);
      REQUIRE(buckets[i].op == hetsim::CollectiveOp::kReduceScatter);
      const hetsim::Time reduce_scatter = b.grad_syncs[i].finish - b.grad_syncs[i].start;
      const hetsim::Time chains = hetsim::executor::ReduceChainsExtraTime(reduce_scatter, buckets[i].bytes, 4, nodes);
      CHECK(chains > 0);
      CHECK(a.grad_syncs[i].finish - a.grad_syncs[i].start == reduce_scatter + chains);
      added += chains;
    }
    // The all-gather after the step is not a reduction: unchanged.
    const size_t gather = buckets.size();
    CHECK(a.grad_syncs[gather].finish - a.grad_syncs[gather].start ==
          b.grad_syncs[gather].finish - b.grad_syncs[gather].start);
    CHECK(a.iteration_time == b.iteration_time + added);
  }
}
