// Shared inputs of the context-parallelism tests: a Llama-like GQA model and one CP stage on four
// two-GPU nodes.
#ifndef HETSIM_TESTS_CONTEXT_PARALLEL_UTIL_H_
#define HETSIM_TESTS_CONTEXT_PARALLEL_UTIL_H_

#include <cstdint>

#include "proto/hetsim.pb.h"
#include "tests/sim/executor/executor_test_util.h"
#include "tests/topology/topology_clusters.h"

namespace hetsim::testing {

// Hidden 4096, 32 query heads and 8 K/V heads (GQA), flash attention, BF16.
inline v1::Model GqaModel(int blocks, uint64_t seq) {
  v1::Model m;
  m.set_name("gqa");
  m.set_dtype(v1::BF16);
  v1::Transformer* t = m.mutable_transformer();
  t->set_num_layers(blocks);
  t->set_hidden_size(4096);
  t->set_num_attention_heads(32);
  t->set_num_kv_heads(8);
  t->set_seq_length(seq);
  t->set_vocab_size(32000);
  t->set_gated_mlp(true);
  t->set_attention(v1::ATTENTION_FLASH);
  t->set_granularity(v1::BLOCK);
  return m;
}

// 4 nodes of 2 GPUs (one 400 Gb/s NIC each, no latency, ideal): the whole model (seq 8192) as one
// stage of TP 2 x CP 4, micro-batch 1, two microbatches.
inline proto::PlanInputs CpStageInputs(int blocks) {
  v1::Cluster cluster = H100Island(4, v1::SINGLE_SWITCH, 2);
  cluster.mutable_islands(0)->set_nic_latency_ns(0);
  cluster.mutable_islands(0)->set_switch_latency_ns(0);
  cluster.mutable_gpu_types(0)->set_preset("H100-SXM");  // the kernel model's fields (ideal: peak)
  v1::Plan plan;
  plan.set_name("cp4");
  *plan.mutable_model() = GqaModel(blocks, 8192);
  plan.set_global_batch_size(2);
  plan.set_micro_batch_size(1);
  plan.set_schedule(v1::ONE_F_ONE_B);
  plan.set_context_parallel(4);
  v1::Stage* st = plan.add_stages();
  st->set_num_layers(blocks + 2);  // with the embedding and the head
  st->mutable_mesh()->set_island("a");
  st->mutable_mesh()->set_node_count(4);
  st->mutable_mesh()->set_gpus_per_node(2);
  st->set_tensor_parallel(2);
  st->set_data_parallel(1);
  return MakeInputs(cluster, plan);
}

}  // namespace hetsim::testing

#endif  // HETSIM_TESTS_CONTEXT_PARALLEL_UTIL_H_
