// Small clusters and plans written in code for the executor, report and trace tests: a LayerList
// model with measured stage times, so that compute costs are exact, and transfers whose size and
// links the test chooses.
#ifndef HETSIM_TESTS_EXECUTOR_TEST_UTIL_H_
#define HETSIM_TESTS_EXECUTOR_TEST_UTIL_H_

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "google/protobuf/text_format.h"
#include "proto/inputs.h"
#include "service/driver/build_setup.h"
#include "service/driver/simulate.h"
#include "sim/executor/executor.h"
#include "sim/executor/setup.h"
#include "tests/proto/model_shapes.h"
#include "tests/topology/topology_clusters.h"

namespace hetsim::testing {

// The words of the tests that live in this namespace: the setup MakeSetup builds, the result MakeRun
// returns and the network mode both take.
using executor::ExecutionResult;
using executor::ExecutionSetup;
using network::NetworkMode;

// Island "slow" (1 node) and island "fast" (`fast_nodes` nodes), `gpus` GPUs per node on NVSwitch,
// one IB switch per island, one Ethernet link of `ethernet_gbps` between them. `latency_ns` on every
// link (0 makes transfers of zero bytes free). Ideal hardware: the tests check closed forms.
inline v1::Cluster TwoIslandCluster(int fast_nodes, int gpus, double ethernet_gbps, int64_t latency_ns,
                                    int slow_nodes = 1) {
  const std::string text = absl::StrFormat(R"pb(
                                             name: "two-islands"
                                             ideal: true
                                             gpu_types { name: "a100" preset: "A100-80GB" }
                                             gpu_types { name: "v100" preset: "V100-32GB" }
                                             node_types {
                                               name: "fast"
                                               gpu_type: "a100"
                                               gpus_per_node: %d
                                               intra_node_fabric: NVSWITCH
                                               intra_node_bandwidth_gbps: 2400
                                               intra_node_latency_ns: %d
                                             }
                                             node_types {
                                               name: "slow"
                                               gpu_type: "v100"
                                               gpus_per_node: %d
                                               intra_node_fabric: NVSWITCH
                                               intra_node_bandwidth_gbps: 1200
                                               intra_node_latency_ns: %d
                                             }
                                             inter_island_links {
                                               island_a: "slow"
                                               island_b: "fast"
                                               fabric: ETHERNET
                                               bandwidth_gbps: %g
                                               latency_ns: %d
                                               count: 1
                                             }
                                           )pb",
                                           gpus, latency_ns, gpus, latency_ns, ethernet_gbps, latency_ns);
  v1::Cluster c;
  REQUIRE(google::protobuf::TextFormat::ParseFromString(text, &c));
  // Each island on one InfiniBand switch, one 200 Gb/s NIC per node.
  AddIslandsOfNodeTypes(c, {{"fast", fast_nodes}, {"slow", slow_nodes}}, 1, 200, latency_ns, latency_ns);
  return c;
}

// One replica group of a mixed stage (Stage.replica_groups) on one node of `island`.
struct ReplicaGroupSpec {
  std::string island;
  int first_gpu = 0;
  int gpus = 1;
  int tp = 1;
  int dp = 1;
  uint64_t share = 1;  // micro_batch_share
};

// `st` made a mixed stage of `groups`: its own mesh and degrees cleared.
inline void SetReplicaGroups(v1::Stage& st, const std::vector<ReplicaGroupSpec>& groups) {
  st.clear_mesh();
  st.clear_tensor_parallel();
  st.clear_data_parallel();
  for (const ReplicaGroupSpec& g : groups) {
    v1::ReplicaGroup* rg = st.add_replica_groups();
    rg->mutable_mesh()->set_island(g.island);
    rg->mutable_mesh()->set_node_count(1);
    rg->mutable_mesh()->set_first_gpu(g.first_gpu);
    rg->mutable_mesh()->set_gpus_per_node(g.gpus);
    rg->set_tensor_parallel(g.tp);
    rg->set_data_parallel(g.dp);
    rg->set_micro_batch_share(g.share);
  }
}

struct StageSpec {
  std::string island;
  int node = 0;
  int first_gpu = 0;
  int gpus = 1;
  int tp = 1;
  int dp = 1;
  double forward_ms = 1;
  double backward_ms = 2;
  int layers = 1;
};

// Two stages of `layers_per_stage` layers each on one GPU of TwoIslandCluster: stage 0 on "slow",
// stage 1 on "fast", so their boundary crosses the Ethernet link.
inline void AddSlowFastStages(v1::Plan& p, int layers_per_stage) {
  const char* islands[] = {"slow", "fast"};
  for (int s = 0; s < 2; ++s) {
    v1::Stage* st = p.add_stages();
    st->set_first_layer(layers_per_stage * s);
    st->set_num_layers(layers_per_stage);
    st->mutable_mesh()->set_island(islands[s]);
    st->mutable_mesh()->set_node_count(1);
    st->mutable_mesh()->set_gpus_per_node(1);
  }
}

// A LayerList model of sum(layers) layers, each handing `output_bytes_per_sample` to the next.
inline v1::Plan MakePlan(const std::vector<StageSpec>& stages, int microbatches, v1::Schedule schedule,
                         uint64_t output_bytes_per_sample, uint64_t micro_batch_size = 1, int virtual_stages = 1) {
  v1::Plan plan;
  plan.set_name("test-plan");
  plan.set_schedule(schedule);
  plan.set_micro_batch_size(micro_batch_size);
  plan.set_global_batch_size(micro_batch_size * microbatches);
  if (virtual_stages > 1) plan.set_virtual_stages(virtual_stages);
  v1::Model* model = plan.mutable_model();
  model->set_name("layers");
  model->set_dtype(v1::FP16);  // V100 has no BF16
  v1::LayerList* list = model->mutable_layer_list();
  list->set_seq_length(1024);
  uint32_t first = 0;
  for (const StageSpec& s : stages) {
    for (int l = 0; l < s.layers; ++l) {
      v1::Layer* layer = list->add_layers();
      layer->set_name(absl::StrFormat("layer%d", list->layers_size() - 1));
      layer->set_forward_gflop_per_sample(100);
      layer->set_param_count(1000000);
      layer->set_activation_bytes_per_sample(1 << 20);
      layer->set_output_bytes_per_sample(output_bytes_per_sample);
    }
    v1::Stage* st = plan.add_stages();
    st->set_first_layer(first);
    st->set_num_layers(s.layers);
    first += s.layers;
    st->mutable_mesh()->set_island(s.island);
    st->mutable_mesh()->set_first_node(s.node);
    st->mutable_mesh()->set_node_count(1);
    st->mutable_mesh()->set_first_gpu(s.first_gpu);
    st->mutable_mesh()->set_gpus_per_node(s.gpus);
    st->set_tensor_parallel(s.tp);
    st->set_data_parallel(s.dp);
    st->set_measured_forward_ms(s.forward_ms);
    st->set_measured_backward_ms(s.backward_ms);
  }
  return plan;
}

inline proto::PlanInputs MakeInputs(const v1::Cluster& cluster, const v1::Plan& plan) {
  proto::PlanInputs in;
  in.cluster = cluster;
  in.plan = plan;
  in.model = plan.model();
  in.plan_path = "test-plan.pbtxt";
  in.cluster_path = "test-cluster.pbtxt";
  const absl::Status s = proto::ValidatePlanInputs(in);
  INFO(s.message());
  REQUIRE(s.ok());
  return in;
}

inline std::unique_ptr<executor::ExecutionSetup> MakeSetup(const proto::PlanInputs& in, network::NetworkMode mode) {
  auto setup = driver::BuildSetup(in, mode);
  INFO(setup.status().message());
  REQUIRE(setup.ok());
  return *std::move(setup);
}

inline executor::ExecutionResult MakeRun(const executor::ExecutionSetup& setup,
                                         const executor::ExecutorOptions& options = {}) {
  auto result = executor::Execute(setup, options);
  INFO(result.status().message());
  REQUIRE(result.ok());
  return *std::move(result);
}

// A 2-block MoE model (hidden 1024, 16 heads, sequence 1024, `experts` experts, top 2, all-to-all
// dispatch, BF16) as a plan's inline model; its one stage holds 4 layers (embedding, 2 blocks, head).
inline void SetSmallMoeModel(v1::Plan& p, int experts) {
  v1::Model* m = p.mutable_model();
  m->set_name("moe-2l");
  m->set_dtype(v1::BF16);
  auto* t =
      hetsim::testing::SetTransformer(*m, {.layers = 2, .hidden = 1024, .heads = 16, .seq = 1024, .vocab = 32000});
  t->set_num_experts(experts);
  t->set_moe_top_k(2);
  t->set_moe_token_dispatcher(v1::MOE_DISPATCHER_ALL_TO_ALL);
  t->set_granularity(v1::BLOCK);
}

// A 4-block model (hidden 1024, 2,048 tokens, BF16) in one micro-batch of 16 on one stage of DP 2 over
// two one-GPU nodes of island "a", under 1F1B: the smallest plan whose backward overlaps a gradient or
// parameter collective across the network.
inline v1::Plan SmallDp2Plan(const std::string& name) {
  v1::Plan plan;
  plan.set_name(name);
  v1::Model* m = plan.mutable_model();
  m->set_name("small");
  m->set_dtype(v1::BF16);
  auto* t =
      hetsim::testing::SetTransformer(*m, {.layers = 4, .hidden = 1024, .heads = 16, .seq = 2048, .vocab = 32000});
  t->set_granularity(v1::BLOCK);
  plan.set_global_batch_size(16);
  plan.set_micro_batch_size(16);
  plan.set_schedule(v1::ONE_F_ONE_B);
  v1::Stage* st = plan.add_stages();
  st->set_num_layers(6);
  st->mutable_mesh()->set_island("a");
  st->mutable_mesh()->set_node_count(2);
  st->mutable_mesh()->set_gpus_per_node(1);
  st->set_data_parallel(2);
  return plan;
}

// A 16-block GPT on 2 stages of TP 8 x DP 16 (nodes 0-15 and 16-31 of island "a", 8 GPUs each), 8
// microbatches, ZeRO-1, gradient reduction overlapped with the backward in 64 MiB buckets, on
// `c` with its GPU type made an H100 preset (NCCL's achieved bandwidth and latencies): 256 GPUs, small
// enough to check an approximation against the full simulation.
inline proto::PlanInputs Gpt256(v1::Cluster c) {
  c.set_ideal(false);
  c.mutable_gpu_types(0)->set_preset("H100-SXM");
  v1::Plan p;
  p.set_name("gpt-256gpu");
  v1::Model* m = p.mutable_model();
  m->set_name("gpt-16l");
  m->set_dtype(v1::BF16);
  auto* t =
      hetsim::testing::SetTransformer(*m, {.layers = 16, .hidden = 4096, .heads = 32, .seq = 2048, .vocab = 51200});
  t->set_granularity(v1::BLOCK);
  p.set_micro_batch_size(16);
  p.set_global_batch_size(16 * 8);
  p.set_schedule(v1::ONE_F_ONE_B);
  p.set_overlap_grad_reduce(true);
  p.set_grad_bucket_bytes(64 << 20);
  for (int s = 0; s < 2; ++s) {
    v1::Stage* st = p.add_stages();
    st->set_first_layer(9 * s);
    st->set_num_layers(9);
    st->mutable_mesh()->set_island("a");
    st->mutable_mesh()->set_first_node(16 * s);
    st->mutable_mesh()->set_node_count(16);
    st->mutable_mesh()->set_gpus_per_node(8);
    st->set_tensor_parallel(8);
    st->set_data_parallel(16);
    st->set_zero_stage(1);
    st->set_sequence_parallel(true);
  }
  return MakeInputs(c, p);
}

// Setup, execution and report through the one entry point (service/driver/simulate.h), as `hetsim run` does.
inline driver::Simulation MakeSimulation(const proto::PlanInputs& in, const driver::SimulateOptions& options = {}) {
  absl::StatusOr<driver::Simulation> sim = driver::SimulatePlan(in, options);
  INFO(sim.status().message());
  REQUIRE(sim.ok());
  return *std::move(sim);
}

}  // namespace hetsim::testing

#endif  // HETSIM_TESTS_EXECUTOR_TEST_UTIL_H_
