#include "app/cli/examples.h"

#include "absl/strings/str_cat.h"
#include "proto/hetsim.pb.h"

namespace hetsim::app {
namespace {

using namespace hetsim::v1;  // NOLINT: the schema's message names read best unqualified here

void AddGpu(Cluster* c, const char* name, const char* preset) {
  GpuType* g = c->add_gpu_types();
  g->set_name(name);
  g->set_preset(preset);  // datasheet figures and default efficiency, see docs/hardware.md
}

// NVLink/NVSwitch node; `nvlink_gbps` is per GPU and direction (A100: 300 GB/s = 2400 Gb/s).
void AddNode(Cluster* c, const char* name, const char* gpu, int gpus, double nvlink_gbps) {
  NodeType* n = c->add_node_types();
  n->set_name(name);
  n->set_gpu_type(gpu);
  n->set_gpus_per_node(gpus);
  n->set_intra_node_fabric(NVSWITCH);
  n->set_intra_node_bandwidth_gbps(nvlink_gbps);
  n->set_intra_node_latency_ns(1000);
}

Island* AddInfinibandIsland(Cluster* c, const char* name, const char* node, int nodes, int nics, double nic_gbps) {
  Island* is = c->add_islands();
  is->set_name(name);
  is->set_node_type(node);
  is->set_node_count(nodes);
  is->set_fabric(INFINIBAND);
  is->set_nics_per_node(nics);
  is->set_nic_bandwidth_gbps(nic_gbps);
  is->set_nic_latency_ns(1000);
  is->set_switch_latency_ns(130);  // HDR/NDR switch port-to-port
  return is;
}

void AddEthernetLink(Cluster* c, const char* a, const char* b, double gbps, int count, int64_t latency_ns) {
  InterIslandLink* l = c->add_inter_island_links();
  l->set_island_a(a);
  l->set_island_b(b);
  l->set_fabric(ETHERNET);
  l->set_bandwidth_gbps(gbps);
  l->set_latency_ns(latency_ns);
  l->set_count(count);
}

// 32 DGX A100 (80 GB) and 32 DGX H100, each island a non-blocking InfiniBand fat tree with four
// 200 Gb/s NICs per node; the two islands joined by four 100 Gb/s Ethernet links.
Cluster Cluster512() {
  Cluster c;
  c.set_name("a100-h100-512gpu");
  AddGpu(&c, "a100-80gb", "A100-80GB");
  AddGpu(&c, "h100-sxm", "H100-SXM");
  AddNode(&c, "dgx-a100", "a100-80gb", 8, 2400);  // NVLink 3: 600 GB/s both directions
  AddNode(&c, "dgx-h100", "h100-sxm", 8, 3600);   // NVLink 4: 900 GB/s both directions
  for (auto [name, node] : {std::pair{"a100", "dgx-a100"}, std::pair{"h100", "dgx-h100"}}) {
    Island* is = AddInfinibandIsland(&c, name, node, 32, 4, 200);
    is->set_topology(FAT_TREE);
    is->set_oversubscription(1);
    is->set_nodes_per_leaf(8);
  }
  AddEthernetLink(&c, "a100", "h100", 100, 4, 10'000);
  return c;
}

// GPT-39B as in Alpa and HAPT: 48 blocks, hidden 8192, 64 heads, 1K context, 51200-token vocabulary.
Model Gpt39b() {
  Model m;
  m.set_name("gpt-39b");
  m.set_dtype(BF16);
  Transformer* t = m.mutable_transformer();
  t->set_num_layers(48);
  t->set_hidden_size(8192);
  t->set_ffn_hidden_size(4 * 8192);
  t->set_num_attention_heads(64);
  t->set_seq_length(1024);
  t->set_vocab_size(51200);
  t->set_tied_embeddings(true);
  t->set_granularity(BLOCK);
  return m;
}

Stage MakeStage(int first_layer, int num_layers, const char* island, int first_node, int nodes, int gpus, int tp) {
  Stage s;
  s.set_first_layer(first_layer);
  s.set_num_layers(num_layers);
  Mesh* mesh = s.mutable_mesh();
  mesh->set_island(island);
  mesh->set_first_node(first_node);
  mesh->set_node_count(nodes);
  mesh->set_first_gpu(0);
  mesh->set_gpus_per_node(gpus);
  s.set_tensor_parallel(tp);
  s.set_data_parallel(nodes * gpus / tp);
  return s;
}

// GPT-39B's 50 layers (embedding, 48 blocks, head) on 8 stages of 8 nodes each, TP 8 inside a node and
// DP 8 across nodes. The A100 island has 24% of the peak BF16 FLOP/s (312 vs 989.5 TFLOP/s per GPU),
// so it gets 12 of the 50 layers, the H100 island 38.
Plan Plan512(const std::string& model_path) {
  Plan p;
  p.set_name("gpt39b-on-512gpu-h1f1b");
  p.set_model_path(model_path);
  p.set_global_batch_size(1024);
  p.set_micro_batch_size(8);  // 128 microbatches; one sample per data-parallel replica
  p.set_schedule(H_1F1B);
  p.set_overlap_grad_reduce(true);
  const int a100_layers[] = {3, 3, 3, 3};
  const int h100_layers[] = {10, 10, 9, 9};  // the last stage also holds the LM head
  int layer = 0;
  for (int i = 0; i < 4; ++i) {
    *p.add_stages() = MakeStage(layer, a100_layers[i], "a100", 8 * i, 8, 8, 8);
    layer += a100_layers[i];
  }
  for (int i = 0; i < 4; ++i) {
    *p.add_stages() = MakeStage(layer, h100_layers[i], "h100", 8 * i, 8, 8, 8);
    layer += h100_layers[i];
  }
  return p;
}

// HAPT Sec. 2.2.2: two nodes of 2 A100 on 200 Gb/s InfiniBand, one node of 2 V100, a single 5 Gb/s
// Ethernet link between the two sub-clusters. NVLink figures from HAPT Table 2 (300 and 150 GB/s).
Cluster ClusterHaptCase() {
  Cluster c;
  c.set_name("hapt-case-study");
  AddGpu(&c, "a100", "A100-40GB");
  AddGpu(&c, "v100", "V100-32GB");
  AddNode(&c, "a100x2", "a100", 2, 2400);
  AddNode(&c, "v100x2", "v100", 2, 1200);
  AddInfinibandIsland(&c, "a100", "a100x2", 2, 1, 200)->set_topology(SINGLE_SWITCH);
  AddInfinibandIsland(&c, "v100", "v100x2", 1, 1, 200)->set_topology(SINGLE_SWITCH);
  AddEthernetLink(&c, "v100", "a100", 5, 1, 50'000);
  return c;
}

// HAPT Table 1, #L = 128: a GPT cut into 128 layers of nearly equal work (126 blocks plus embedding and
// head), stage 1 on mesh_V100(1,2) with layers 1-22, stages 2 and 3 on mesh_A100(1,2) with 53 layers
// each (the table's 23-76 / 76-128). FP16 because V100 has no BF16; 128 microbatches as in the text.
Plan PlanHaptCase() {
  Plan p;
  p.set_name("hapt-table1-128-layers");
  Model* m = p.mutable_model();
  m->set_name("gpt-hapt-case");
  m->set_dtype(FP16);
  Transformer* t = m->mutable_transformer();
  t->set_num_layers(126);
  t->set_hidden_size(2048);
  t->set_num_attention_heads(16);
  t->set_seq_length(1024);
  t->set_vocab_size(51200);
  t->set_tied_embeddings(true);
  t->set_granularity(BLOCK);
  p.set_global_batch_size(128);
  p.set_micro_batch_size(1);
  p.set_schedule(H_1F1B);
  *p.add_stages() = MakeStage(0, 22, "v100", 0, 1, 2, 2);
  *p.add_stages() = MakeStage(22, 53, "a100", 0, 1, 2, 2);
  *p.add_stages() = MakeStage(75, 53, "a100", 1, 1, 2, 2);
  return p;
}

// Narayanan et al. (SC'21), Sec. 5.1: 64 DGX A100 nodes (8 A100-80GB on NVSwitch, eight 200 Gb/s HDR
// InfiniBand NICs each) on a non-blocking fat tree, as on Selene.
Cluster ClusterA100x512() {
  Cluster c;
  c.set_name("dgx-a100-512gpu");
  AddGpu(&c, "a100-80gb", "A100-80GB");
  AddNode(&c, "dgx-a100", "a100-80gb", 8, 2400);
  Island* is = AddInfinibandIsland(&c, "a100", "dgx-a100", 64, 8, 200);
  is->set_topology(FAT_TREE);
  is->set_oversubscription(1);
  is->set_nodes_per_leaf(8);
  return c;
}

// Megatron-LM's GPT 39.1B row of Narayanan et al., Table 1: 48 layers, hidden 8192, 64 heads, 2048
// tokens, 51200-token vocabulary; TP 8 x PP 2 x DP 32 on 512 A100, global batch 1536; FP16 with full
// activation recomputation, gradients all-reduced after the pipeline (no ZeRO, no sequence
// parallelism: both came later). Four samples per data-parallel replica per microbatch (128 per
// pipeline microbatch, 12 microbatches) and the plain 1F1B schedule with blocking point-to-point
// transfers, as the paper's artifact script (examples/sc21/run_table_1.sh) and Megatron-LM of 2021
// ran it. The same case is in the validation set (validation/, docs/validation.md).
Plan PlanMegatron39b() {
  Plan p;
  p.set_name("megatron-gpt-39b-tp8-pp2-dp32");
  Model* m = p.mutable_model();
  m->set_name("gpt-39.1b-megatron");
  m->set_dtype(FP16);
  Transformer* t = m->mutable_transformer();
  t->set_num_layers(48);
  t->set_hidden_size(8192);
  t->set_ffn_hidden_size(4 * 8192);
  t->set_num_attention_heads(64);
  t->set_seq_length(2048);
  t->set_vocab_size(51200);
  t->set_tied_embeddings(true);
  t->set_granularity(BLOCK);
  p.set_global_batch_size(1536);
  p.set_micro_batch_size(128);
  p.set_schedule(ONE_F_ONE_B);
  p.set_blocking_p2p(true);
  // 50 layers (embedding, 48 blocks, LM head): 24 blocks per stage, as Megatron splits them.
  *p.add_stages() = MakeStage(0, 25, "a100", 0, 32, 8, 8);
  *p.add_stages() = MakeStage(25, 25, "a100", 32, 32, 8, 8);
  for (Stage& s : *p.mutable_stages()) s.set_recompute(RECOMPUTE_FULL);
  return p;
}

// Meta's Llama 3 training cluster as "The Llama 3 Herd of Models" (2024), Sec. 3.3.1 describes it:
// 2,048 nodes of 8 H100 (SXM, 80 GB, NVLink 4) with eight 400 Gb/s RoCE NICs, one per GPU; a
// three-tier Clos: 2 nodes (16 GPUs) per ToR, 192 racks (3,072 GPUs) per pod at full bisection,
// pods joined by the aggregation tier at 1:7 oversubscription. 16,384 GPUs fill five pods and a
// third of a sixth.
Cluster ClusterH100x16k() {
  Cluster c;
  c.set_name("llama3-16k-h100-roce");
  AddGpu(&c, "h100-sxm", "H100-SXM");
  AddNode(&c, "h100-node", "h100-sxm", 8, 3600);  // NVLink 4: 900 GB/s both directions
  Island* is = c.add_islands();
  is->set_name("h100");
  is->set_node_type("h100-node");
  is->set_node_count(2048);
  is->set_fabric(ROCE);
  is->set_topology(CLOS);
  is->set_nics_per_node(8);
  is->set_nic_bandwidth_gbps(400);
  is->set_nic_latency_ns(1000);
  is->set_switch_latency_ns(600);  // Minipack2-class Ethernet switch, port to port
  ClosFabric* clos = is->mutable_clos();
  clos->set_nodes_per_rack(2);
  clos->set_racks_per_pod(192);
  clos->set_pod_switches(8);
  clos->set_aggregation_switches(8);
  clos->set_aggregation_oversubscription(7);
  return c;
}

// Llama 3 405B (the paper's Table 3): 126 blocks, hidden 16384, SwiGLU FFN 53248, 128 query heads
// with 8 key/value heads (GQA), 128,256-token vocabulary, untied embeddings, BF16, FlashAttention.
Model Llama3_405b(uint64_t seq_length) {
  Model m;
  m.set_name(seq_length == 8192 ? "llama3-405b" : absl::StrCat("llama3-405b-seq", seq_length));
  m.set_dtype(BF16);
  Transformer* t = m.mutable_transformer();
  t->set_num_layers(126);
  t->set_hidden_size(16384);
  t->set_ffn_hidden_size(53248);
  t->set_num_attention_heads(128);
  t->set_num_kv_heads(8);
  t->set_seq_length(seq_length);
  t->set_vocab_size(128256);
  t->set_gated_mlp(true);
  t->set_attention(ATTENTION_FLASH);
  t->set_granularity(BLOCK);
  return m;
}

// Llama 3 405B pre-training on 16,384 H100 as the paper's Table 4 lists it: TP 8, PP 16, 16M tokens
// per batch, 16 sequences per data-parallel group per batch. Short context: seq 8192, DP 128, 2,048
// sequences. Long context: seq 131072, CP 16, DP 8, 128 sequences. Each of the 16 stages runs on 128
// consecutive nodes; interleaved 1F1B with 4 model chunks per stage (the paper gives the first and
// last stage one block less, to balance the embedding and the head: 8 layers a stage, chunks of 2
// layers with the embedding and the head counted as layers, as Megatron's
// --account-for-embedding/loss-in-pipeline-split; the paper does not give the chunk count, 2-layer
// chunks are NVIDIA's Llama 3.1 405B recipes', docs/llama3.md), one sequence per replica per
// microbatch (16 microbatches), sequence parallelism, TP communication overlapped with the GEMMs,
// ZeRO-1 over the DP (x CP) ranks with the gradient reduce-scatter overlapped with the backward in
// 1 GiB buckets. Long context all-gathers K and V (the paper's Sec. 3.3.2), exposed.
Plan PlanLlama3_405b(bool long_context) {
  Plan p;
  const int cp = long_context ? 16 : 1;
  const int dp = 128 / cp;
  p.set_name(long_context ? "llama3-405b-16k-h100-tp8-cp16-pp16-dp8-seq131072" : "llama3-405b-16k-h100-tp8-pp16-dp128");
  *p.mutable_model() = Llama3_405b(long_context ? 131072 : 8192);
  p.set_global_batch_size(16 * dp);
  p.set_micro_batch_size(dp);
  p.set_schedule(INTERLEAVED_1F1B);
  p.set_virtual_stages(4);
  p.set_overlap_grad_reduce(true);
  p.set_grad_bucket_bytes(uint64_t{1} << 30);
  p.set_tp_comm_overlap(true);
  if (long_context) {
    p.set_context_parallel(cp);
    p.set_cp_comm_type(CP_COMM_ALL_GATHER);
  }
  // Layers: stage 0 the embedding and 7 blocks, stages 1-14 8 blocks, stage 15 7 blocks and the head.
  int layer = 0;
  for (int s = 0; s < 16; ++s) {
    const int layers = 8;
    Stage st = MakeStage(layer, layers, "h100", 128 * s, 128, 8, 8);
    layer += layers;
    st.set_data_parallel(dp);
    st.set_sequence_parallel(true);
    st.set_zero_stage(1);
    *p.add_stages() = st;
  }
  return p;
}

// HAPT Sec. 6.3 / Fig. 10 in shape: iteration time against cross-cluster bandwidth, per schedule.
Sweep SweepBandwidth(const char* ext) {
  Sweep s;
  s.set_name("hapt-case-bandwidth-x-schedule");
  s.set_cluster_path(absl::StrCat("cluster-hapt-case", ext));
  s.set_plan_path(absl::StrCat("plan-hapt-case", ext));
  SweepAxis* bw = s.add_axes();
  bw->set_path("cluster.inter_island_links[0].bandwidth_gbps");
  bw->set_from(3);
  bw->set_to(10);
  bw->set_step(1);
  SweepAxis* schedule = s.add_axes();
  schedule->set_path("plan.schedule");
  for (const char* v : {"ONE_F_ONE_B", "EAGER_1F1B", "H_1F1B"}) schedule->add_values(v);
  return s;
}

// Throughput as H100 nodes are added beside the fixed 32-node A100 island; each point is planned.
Sweep SweepAddH100(const char* ext) {
  Sweep s;
  s.set_name("gpt39b-add-h100-nodes");
  s.set_cluster_path(absl::StrCat("cluster-512gpu", ext));
  s.set_model_path(absl::StrCat("model-gpt39b", ext));
  s.set_planner("hapt");
  SweepAxis* nodes = s.add_axes();
  nodes->set_path("cluster.islands[1].node_count");
  nodes->set_from(8);  // the H100 fat tree has 8 nodes per leaf switch: fewer is not a valid island
  nodes->set_to(32);
  nodes->set_step(4);
  return s;
}

// What-if faults for the HAPT case study (docs/faults.md): a V100 of stage 0 1.5x slower from 500 ms
// for 2 s, the Ethernet link between the islands down 20 ms of every second from 100 ms, the
// InfiniBand fabric at half speed, and 3% lognormal compute jitter.
Faults FaultsStraggler() {
  Faults f;
  Fault* slow = f.add_faults();
  slow->set_gpu(4);
  slow->set_kind(SLOW);
  slow->set_factor(1.5);
  slow->set_at_ms(500);
  slow->set_duration_ms(2000);
  Fault* flap = f.add_faults();
  flap->set_inter_island_link(0);
  flap->set_kind(FLAP);
  flap->set_at_ms(100);
  flap->set_period_ms(1000);
  flap->set_down_ms(20);
  Fault* fabric = f.add_faults();
  fabric->set_link_class("INFINIBAND");
  fabric->set_kind(SLOW);
  fabric->set_factor(2);
  Jitter* jitter = f.mutable_jitter();
  jitter->set_seed(2026);
  jitter->set_distribution(LOGNORMAL);
  jitter->set_spread(0.03);
  return f;
}

template <typename T>
std::shared_ptr<const google::protobuf::Message> Share(T message) {
  return std::make_shared<T>(std::move(message));
}

}  // namespace

const char* ExampleExtension(proto::FileFormat format) {
  switch (format) {
    case proto::FileFormat::kBinary: return ".pb";
    case proto::FileFormat::kJson: return ".json";
    case proto::FileFormat::kText: return ".pbtxt";
  }
  return ".pbtxt";
}

std::vector<Example> BundledExamples(proto::FileFormat format) {
  const char* ext = ExampleExtension(format);
  return {
      {"cluster-512gpu", Share(Cluster512())},
      {"model-gpt39b", Share(Gpt39b())},
      {"plan-512gpu", Share(Plan512(absl::StrCat("model-gpt39b", ext)))},
      {"cluster-hapt-case", Share(ClusterHaptCase())},
      {"plan-hapt-case", Share(PlanHaptCase())},
      {"sweep-bandwidth", Share(SweepBandwidth(ext))},
      {"sweep-add-h100", Share(SweepAddH100(ext))},
      {"cluster-a100-512", Share(ClusterA100x512())},
      {"plan-megatron-39b", Share(PlanMegatron39b())},
      {"faults-straggler", Share(FaultsStraggler())},
      {"cluster-16k-h100", Share(ClusterH100x16k())},
      {"plan-llama3-405b", Share(PlanLlama3_405b(false))},
      {"plan-llama3-405b-128k", Share(PlanLlama3_405b(true))},
  };
}

}  // namespace hetsim::app
