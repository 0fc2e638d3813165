// Small random planning instances for the planner tests: explicit layer-list models and two-island
// clusters whose GPUs, memory and cross-island bandwidth vary with the seed; and the planner's views of
// hand-built messages, resolved as the edge resolves them.
#ifndef HETSIM_TESTS_PLANNER_TEST_UTIL_H_
#define HETSIM_TESTS_PLANNER_TEST_UTIL_H_

#include <memory>
#include <random>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "base/status_macros.h"
#include "planner/cluster_model.h"
#include "proto/hetsim.pb.h"
#include "proto/resolve_cluster.h"
#include "service/driver/plan_messages.h"
#include "tests/topology/topology_clusters.h"

namespace hetsim::testing {

inline v1::Model RandomLayerListModel(std::mt19937& rng, int layers) {
  std::uniform_real_distribution<double> gflop(20, 200), params(1e8, 8e8), act(1e8, 8e8), out(1e6, 2e8);
  v1::Model m;
  m.set_name("random");
  m.set_dtype(v1::BF16);
  v1::LayerList* list = m.mutable_layer_list();
  list->set_seq_length(1024);
  for (int i = 0; i < layers; ++i) {
    v1::Layer* l = list->add_layers();
    l->set_name("l" + std::to_string(i));
    l->set_forward_gflop_per_sample(gflop(rng));
    l->set_param_count(static_cast<uint64_t>(params(rng)));
    l->set_activation_bytes_per_sample(static_cast<uint64_t>(act(rng)));
    l->set_output_bytes_per_sample(static_cast<uint64_t>(out(rng)));
  }
  return m;
}

// Islands "a" and "b" of 2-GPU nodes (1 or 2 nodes each) joined by one Ethernet link.
inline v1::Cluster RandomTwoIslandCluster(std::mt19937& rng) {
  std::uniform_real_distribution<double> tflops(100, 1000), hbm(12, 48), link(1, 100);
  std::uniform_int_distribution<int> nodes(1, 2);
  v1::Cluster c;
  c.set_name("random");
  AddGpuType(c, "ga", tflops(rng), hbm(rng), 2000);
  AddGpuType(c, "gb", tflops(rng), hbm(rng), 1500);
  AddNodeType(c, "na", "ga", 2, 2400, 1000);
  AddNodeType(c, "nb", "gb", 2, 1200, 1000);
  IslandSpec a{.name = "a", .node_type = "na", .nodes = nodes(rng), .nics = 1, .nic_gbps = 200};
  a.nic_latency_ns = 1000;
  a.switch_latency_ns = 130;
  IslandSpec b = a;
  b.name = "b";
  b.node_type = "nb";
  b.nodes = nodes(rng);
  AddIsland(c, a);
  AddIsland(c, b);
  AddInterIslandLink(c, "a", "b", link(rng), 50000);
  return c;
}

// Two islands of one 1-GPU node each, GPU types "ga" and "gb" (gb `speedup` times ga's FLOP/s and memory
// bandwidth; ga `ga_gib` of memory), ideal (no overheads), joined by one 100 Gb/s link.
inline v1::Cluster TwoGpuTypes(double speedup, double ga_gib = 80) {
  v1::Cluster c;
  c.set_name("two-types");
  c.set_ideal(true);
  AddGpuType(c, "ga", 200, ga_gib, 2000);
  AddGpuType(c, "gb", 200 * speedup, 80, 2000 * speedup);
  AddNodeType(c, "na", "ga", 1, 2400, 1000);
  AddNodeType(c, "nb", "gb", 1, 2400, 1000);
  AddIslandsOfNodeTypes(c, {{"na", 1}, {"nb", 1}}, 1, 100, 1000, 0);
  AddInterIslandLink(c, "na", "nb", 100, 1000);
  return c;
}

// The planner's cluster model of a hand-built (valid) Cluster message.
// A tied 2-block FP16 transformer (V = 32000, h = 1024; 4 layers: embedding, 2 blocks, head).
inline v1::Model TiedModel() {
  v1::Model m;
  m.set_name("tied");
  m.set_dtype(v1::FP16);
  v1::Transformer* t = m.mutable_transformer();
  t->set_num_layers(2);
  t->set_hidden_size(1024);
  t->set_num_attention_heads(16);
  t->set_seq_length(1024);
  t->set_vocab_size(32000);
  t->set_tied_embeddings(true);
  return m;
}

inline absl::StatusOr<std::unique_ptr<planner::ClusterModel>> ClusterModelOf(const v1::Cluster& cluster,
                                                                             spec::DType dtype) {
  HETSIM_ASSIGN_OR_RETURN(spec::ClusterSpec resolved, proto::ResolveCluster(cluster, ""));
  return planner::ClusterModel::Create(std::move(resolved), dtype);
}

// `settings`' plan of `model` on `cluster`, written as `hetsim plan` writes it (the model inline).
inline absl::StatusOr<driver::Planned> PlanOf(const v1::Model& model, const v1::Cluster& cluster,
                                              const planner::PlanRequest& settings) {
  return driver::PlanOnMessages({.model = model, .cluster = cluster}, settings);
}

}  // namespace hetsim::testing

#endif  // HETSIM_TESTS_PLANNER_TEST_UTIL_H_
