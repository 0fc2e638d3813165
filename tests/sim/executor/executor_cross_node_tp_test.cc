// Tensor parallelism across nodes (TP 16 on two 8-GPU DGX A100 nodes), Plan.tp_comm_overlap and
// Plan.tp_backward_overlap: the TP all-reduces run over the NICs at the closed form of the algorithm the
// estimate picks, the overlap hides them behind the pass's compute up to the compute time, and the
// asynchronous backward hides the input-gradient reductions behind the column-parallel weight gradients.
#include <algorithm>
#include <string>

#include <catch2/catch.hpp>

#include "sim/collectives/estimate.h"
#include "tests/base/time_io.h"
#include "tests/sim/executor/executor_test_util.h"
#include "tests/topology/topology_clusters.h"

namespace hetsim::executor {
namespace {

using testing::MakeInputs;
using testing::MakeSetup;

// One stage over both nodes, TP 16: a GPT block of hidden 4096, one sample of 2048 tokens.
v1::Plan CrossNodePlan(bool overlap, int tensor_parallel = 16, bool sequence_parallel = false) {
  v1::Plan plan;
  const std::string text = R"pb(
    name: "tp16"
    model {
      name: "gpt"
      dtype: BF16
      transformer { num_layers: 2 hidden_size: 4096 num_attention_heads: 32 seq_length: 2048 vocab_size: 51200 }
    }
    global_batch_size: 4
    micro_batch_size: 1
    schedule: GPIPE
    stages {
      first_layer: 0
      num_layers: 4
      tensor_parallel: 16
      data_parallel: 1
      mesh { island: "a100" node_count: 2 gpus_per_node: 8 }
    }
  )pb";
  REQUIRE(google::protobuf::TextFormat::ParseFromString(text, &plan));
  plan.set_tp_comm_overlap(overlap);
  v1::Stage& stage = *plan.mutable_stages(0);
  stage.set_tensor_parallel(static_cast<uint32_t>(tensor_parallel));
  stage.mutable_mesh()->set_node_count(static_cast<uint32_t>(tensor_parallel / 8));
  stage.set_sequence_parallel(sequence_parallel);
  return plan;
}

// Two DGX A100 nodes (tests/topology/topology_clusters.h). Ideal hardware: the closed forms are exact.
v1::Cluster DgxCluster() {
  v1::Cluster c = testing::DgxA100Cluster(2);
  c.set_ideal(true);
  return c;
}

// All-reduce of S bytes over the 16 GPUs, as the estimate chooses between the two closed forms:
// - ring, one channel per NIC: each channel's ring (S/8) crosses the node boundary through its own
//   200 Gb/s NIC, route latency 1000 + 1130 ns: 2(n-1) (a + S/8/n / 25 GB/s);
// - hierarchical: ring reduce-scatter and all-gather of S inside each node (300 GB/s, 700 ns), ring
//   all-reduce of S/8 across the two nodes per rail.
double AllReduceSeconds(double bytes) {
  const double nic = 25e9, nvlink = 300e9, a_nic = 2130e-9, a_nvl = 700e-9;
  const double ring = collectives::RingAllReduceSeconds(16, Bytes(bytes / 8), Bandwidth(nic), Seconds(a_nic)).value();
  const double hier = collectives::HierarchicalAllReduceSeconds(8, 2, Bytes(bytes), Bandwidth(nvlink), Seconds(a_nvl),
                                                                Bandwidth(nic), Seconds(a_nic))
                          .value();
  return std::min(ring, hier);
}

TEST_CASE("cross-node TP: TP 16 on two 8-GPU nodes all-reduces over the NICs", "[executor][tp]") {
  const auto setup = MakeSetup(MakeInputs(DgxCluster(), CrossNodePlan(false)), network::NetworkMode::kMaxMinFair);
  const executor::VirtualStageCost& vs = setup->virtual_stages.at(0);
  double expected = 0, all_nvlink = 0;
  int all_reduces = 0;
  for (const workload::StageCollective& c : vs.cost.forward_collectives) {
    REQUIRE(c.op == hetsim::CollectiveOp::kAllReduce);  // no sequence parallelism
    expected += c.count * AllReduceSeconds(static_cast<double>(c.bytes));
    all_nvlink += c.count * collectives::RingAllReduceSeconds(16, Bytes(static_cast<double>(c.bytes)), Bandwidth(300e9),
                                                              Seconds(700e-9))
                                .value();
    all_reduces += c.count;
  }
  CHECK(all_reduces >= 2 * 2);  // Megatron: one after attention, one after the MLP, per block (+ embedding, head)
  CHECK(TimeToSeconds(vs.forward_collective_time) == Approx(expected).epsilon(0.01));
  // Slower than if the 16 GPUs shared one NVSwitch: part of the traffic crosses the 25 GB/s NICs.
  CHECK(TimeToSeconds(vs.forward_collective_time) > 1.2 * all_nvlink);
  CHECK(vs.forward_hidden_comm_time == 0);
  CHECK(vs.forward_time() == vs.cost.forward_time + vs.forward_collective_time);
}

TEST_CASE("tp_comm_overlap hides the blocks' TP collectives behind the compute, up to the compute time",
          "[executor][tp]") {
  const auto plain = MakeSetup(MakeInputs(DgxCluster(), CrossNodePlan(false)), network::NetworkMode::kMaxMinFair);
  const auto overlapped = MakeSetup(MakeInputs(DgxCluster(), CrossNodePlan(true)), network::NetworkMode::kMaxMinFair);
  for (size_t k = 0; k < plain->virtual_stages.size(); ++k) {
    const executor::VirtualStageCost& a = plain->virtual_stages[k];
    const executor::VirtualStageCost& b = overlapped->virtual_stages[k];
    CHECK(b.forward_collective_time == a.forward_collective_time);
    // The blocks' all-reduces may hide (no SP: nothing is chunked, nothing stays exposed); the
    // embedding's and the head's are not Transformer Engine's and stay on the critical path.
    CHECK(b.forward_userbuffers_comm_time > 0);
    CHECK(b.forward_userbuffers_comm_time < b.forward_collective_time);
    CHECK(b.forward_userbuffers_comm_time == a.forward_userbuffers_comm_time);
    CHECK(b.forward_hidden_comm_time == std::min(a.forward_userbuffers_comm_time, a.cost.forward_time));
    CHECK(b.backward_hidden_comm_time == std::min(a.backward_userbuffers_comm_time, a.cost.backward_time));
    CHECK(b.forward_time() == a.cost.forward_time + a.forward_collective_time - b.forward_hidden_comm_time);
  }
}

// The weight gradients of the column-parallel GEMMs of layer `layer` of the TP plan (0 the embedding,
// 1-2 the blocks: QKV and FC1, 3 the vocabulary-parallel head): 2 x tokens x inputs x outputs / TP
// FLOPs, at peak on ideal hardware.
double ColumnWeightGradSeconds(int layer, int tensor_parallel) {
  const double tokens = 2048, h = 4096, vocab = 51200;
  const double outputs = layer == 0 ? 0 : layer == 3 ? vocab : 3 * h + 4 * h;
  return 2 * tokens * h * outputs / tensor_parallel / 312e12;  // A100 dense BF16
}

TEST_CASE("tp_backward_overlap hides each layer's input-gradient reductions behind its weight gradients",
          "[executor][tp]") {
  for (const bool sp : {false, true}) {
    for (const int tp : {8, 16}) {
      INFO("TP " << tp << (sp ? " with" : " without") << " sequence parallelism");
      v1::Plan plan = CrossNodePlan(false, tp, sp);
      const auto plain = MakeSetup(MakeInputs(DgxCluster(), plan), network::NetworkMode::kMaxMinFair);
      plan.set_tp_backward_overlap(true);
      const auto async = MakeSetup(MakeInputs(DgxCluster(), plan), network::NetworkMode::kMaxMinFair);
      const executor::VirtualStageCost& a = plain->virtual_stages.at(0);
      const executor::VirtualStageCost& b = async->virtual_stages.at(0);
      REQUIRE(b.cost.layer_column_weight_grad_s.size() == 4);
      for (int layer = 0; layer < 4; ++layer) {
        CHECK(b.cost.layer_column_weight_grad_s[layer] == Approx(ColumnWeightGradSeconds(layer, tp)).epsilon(1e-9));
      }
      // The reductions, written out: the input gradient of QKV and of FC1 in each block, and of the
      // head; all-reduces without SP, reduce-scatters with it, of one sample's 2048 x 4096 BF16 each.
      const double bytes = 2048.0 * 4096 * 2;
      const double one =
          sp        ? collectives::RingAllGatherSeconds(tp, Bytes(bytes), Bandwidth(300e9), Seconds(700e-9)).value()
          : tp == 8 ? collectives::RingAllReduceSeconds(8, Bytes(bytes), Bandwidth(300e9), Seconds(700e-9)).value()
                    : AllReduceSeconds(bytes);
      int reductions = 0;
      for (const workload::StageCollective& c : b.cost.backward_collectives) {
        if (!c.async_backward) continue;
        CHECK(c.op == (sp ? hetsim::CollectiveOp::kReduceScatter : hetsim::CollectiveOp::kAllReduce));
        CHECK(c.bytes == static_cast<int64_t>(bytes));
        reductions += c.count;
      }
      CHECK(reductions == 2 * 2 + 1);
      // Layer by layer: a block hides its two reductions (all of them, here), the head its one; the
      // head's surplus does not hide the blocks'.
      double expected = 0;
      for (int layer = 1; layer < 4; ++layer) {
        expected += std::min((layer == 3 ? 1 : 2) * one, ColumnWeightGradSeconds(layer, tp));
      }
      if (!sp || tp == 8) CHECK(TimeToSeconds(b.backward_hidden_comm_time) == Approx(expected).epsilon(0.01));
      CHECK(b.backward_hidden_comm_time > 0);
      if (sp) CHECK(b.backward_hidden_comm_time < b.backward_collective_time);  // the all-gathers stay
      CHECK(b.forward_hidden_comm_time == 0);
      CHECK(b.forward_time() == a.forward_time());
      CHECK(b.backward_time() == a.backward_time() - b.backward_hidden_comm_time);
    }
  }
}

TEST_CASE("tp_backward_overlap with a measured backward hides no more than the backward, nor than tp_comm_overlap",
          "[executor][tp]") {
  v1::Plan plan = CrossNodePlan(false, 16, false);
  plan.mutable_stages(0)->set_measured_forward_ms(0.1);
  plan.mutable_stages(0)->set_measured_backward_ms(0.1);
  plan.set_tp_backward_overlap(true);
  const auto async = MakeSetup(MakeInputs(DgxCluster(), plan), network::NetworkMode::kMaxMinFair);
  plan.set_tp_backward_overlap(false);
  plan.set_tp_comm_overlap(true);
  const auto full = MakeSetup(MakeInputs(DgxCluster(), plan), network::NetworkMode::kMaxMinFair);
  const executor::VirtualStageCost& b = async->virtual_stages.at(0);
  // The weight gradients scale with the measurement: 0.1 ms of backward against its modelled time.
  double modelled_wgrad = 0, scaled_wgrad = 0;
  for (int layer = 0; layer < 4; ++layer) {
    modelled_wgrad += ColumnWeightGradSeconds(layer, 16);
    scaled_wgrad += b.cost.layer_column_weight_grad_s[layer];
  }
  CHECK(scaled_wgrad < modelled_wgrad);
  CHECK(scaled_wgrad < 0.1e-3);
  CHECK(b.backward_hidden_comm_time > 0);
  CHECK(b.backward_hidden_comm_time <= b.cost.backward_time);
  CHECK(b.backward_hidden_comm_time <= full->virtual_stages.at(0).backward_hidden_comm_time);
}

}  // namespace
}  // namespace hetsim::executor
