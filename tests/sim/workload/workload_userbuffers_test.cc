// Transformer Engine's userbuffers overlap in the cost model (Plan.tp_comm_overlap with sequence
// parallelism, docs/cost-model.md): which GEMMs run in chunks and how many, the compute time that adds
// (each chunk priced as its own GEMM, written out by hand here), and what stays exposed.
#include <catch2/catch.hpp>

#include <map>
#include <string>

#include "proto/gpu_presets.h"
#include "proto/resolve.h"
#include "sim/workload/gpu_compute.h"
#include "sim/workload/model_cost.h"
#include "sim/workload/stage_cost.h"
#include "tests/base/spec/spec_test_util.h"
#include "tests/base/time_io.h"

namespace {

using namespace hetsim::workload;

using hetsim::spec::TpCommOverlapSpec;
using hetsim::spec::TpOverlapMethod;

// Transformer Engine's pipelined reduce-scatters with no SMs held: the chunks alone.
TpCommOverlapSpec NoMargins() {
  TpCommOverlapSpec te;
  te.proj_fprop_sm_margin = te.fc2_fprop_sm_margin = 0;
  te.qkv_dgrad_sm_margin = te.qkv_wgrad_sm_margin = te.fc1_dgrad_sm_margin = te.fc1_wgrad_sm_margin = 0;
  return te;
}

StageConfig Overlapped(int tp, bool aggregate = false, TpCommOverlapSpec te = NoMargins()) {
  StageConfig c;
  c.tensor_parallel = tp;
  c.sequence_parallel = true;
  c.tp_comm_overlap = true;
  c.tp_comm_overlap_aggregate = aggregate;
  c.tp_comm_overlap_config = te;
  return c;
}

Gemm Linear(TeLinear role) {
  Gemm g{"linear", 1};
  g.m = g.n = g.k = 1024;
  g.split = role == TeLinear::kQkv || role == TeLinear::kFc1 ? TpSplit::kColumns : TpSplit::kRows;
  g.te_linear = role;
  return g;
}

ModelCost Llama(int experts = 0, uint64_t shared = 0, bool mla = false) {
  hetsim::v1::Model m = hetsim::testing::Llama70bBlocks(hetsim::v1::FP8, experts, shared);
  auto* t = m.mutable_transformer();
  if (mla) {
    t->set_num_kv_heads(0);
    t->mutable_mla()->set_kv_lora_rank(512);
    t->mutable_mla()->set_qk_head_dim(128);
    t->mutable_mla()->set_qk_pos_emb_head_dim(64);
    t->mutable_mla()->set_v_head_dim(128);
  }
  auto model = hetsim::testing::ModelCostOf(m, "model.pbtxt");
  REQUIRE(model.ok());
  return *std::move(model);
}

GpuCompute H100() { return hetsim::testing::PresetComputeOk("H100-SXM", hetsim::v1::FP8); }

// The cost of block 1 alone (one sample) with the overlap at TP `tp` and settings `te`.
StageCost BlockCost(const ModelCost& model, const GpuCompute& gpu, int tp, TpCommOverlapSpec te) {
  StageConfig c = Overlapped(tp, false, te);
  c.first_layer = 1;
  c.num_layers = 1;
  c.micro_batch_size = 1;
  auto cost = ComputeStageCost(model, c, gpu, "plan");
  REQUIRE(cost.ok());
  return *std::move(cost);
}

}  // namespace

TEST_CASE("userbuffers: the ring exchange chunks per shard, the reduce-scatter pipeline in four") {
  const UserbufferOverlap column = UserbufferOverlapOf(Linear(TeLinear::kQkv), Overlapped(8));
  CHECK(column.forward == 8);  // QKV, FC1: one chunk per arriving shard
  CHECK(column.input_grad == 1);
  const UserbufferOverlap row = UserbufferOverlapOf(Linear(TeLinear::kProj), Overlapped(8));
  CHECK(row.forward == kReduceScatterSplits);
  CHECK(row.input_grad == 8);  // the gathered output gradient arrives shard by shard
  // aggregate: pairs of shards.
  CHECK(UserbufferOverlapOf(Linear(TeLinear::kQkv), Overlapped(8, true)).forward == 4);
  CHECK(UserbufferOverlapOf(Linear(TeLinear::kProj), Overlapped(8, true)).input_grad == 4);
  CHECK(UserbufferOverlapOf(Linear(TeLinear::kQkv), Overlapped(3, true)).forward == 2);
}

TEST_CASE("userbuffers: whole GEMMs without the overlap, without SP, for experts, attention and the head") {
  StageConfig no_sp = Overlapped(8);
  no_sp.sequence_parallel = false;
  CHECK(UserbufferOverlapOf(Linear(TeLinear::kQkv), no_sp).forward == 1);
  StageConfig off = Overlapped(8);
  off.tp_comm_overlap = false;
  CHECK(UserbufferOverlapOf(Linear(TeLinear::kProj), off).forward == 1);
  CHECK(UserbufferOverlapOf(Linear(TeLinear::kProj), Overlapped(1)).forward == 1);
  // The layer builder marks only the dense sublayers' linears; experts, the head and the core are kNone.
  Gemm other = Linear(TeLinear::kQkv);
  other.te_linear = TeLinear::kNone;
  CHECK(UserbufferOverlapOf(other, Overlapped(8)).forward == 1);
}

TEST_CASE("userbuffers: which GEMM is which Transformer Engine linear") {
  auto roles = [](const ModelCost& model) {
    std::map<std::string, TeLinear> by_name;
    for (int l = 0; l < model.num_layers(); ++l) {
      for (const Gemm& g : model.layer(l).gemms) by_name[g.name] = g.te_linear;
    }
    return by_name;
  };
  const auto moe = roles(Llama(8, /*shared=*/1024));
  const std::map<std::string, TeLinear> expected = {
      {"qkv", TeLinear::kQkv},        {"proj", TeLinear::kProj},      {"flash_attn", TeLinear::kNone},
      {"router", TeLinear::kNone},    {"fc1", TeLinear::kNone},       {"fc2", TeLinear::kNone},  // routed experts
      {"shared_fc1", TeLinear::kFc1}, {"shared_fc2", TeLinear::kFc2}, {"lm_head", TeLinear::kNone}};
  CHECK(moe == expected);
  const auto dense = roles(Llama());
  CHECK(dense.at("fc1") == TeLinear::kFc1);
  CHECK(dense.at("fc2") == TeLinear::kFc2);
  // MLA's projections are not among the layers Transformer Engine's userbuffers serve; its output
  // projection is, and only that side's collectives hide.
  const ModelCost mla = Llama(0, 0, /*mla=*/true);
  for (const auto& [name, role] : roles(mla))
    CHECK(role == (name == "proj"  ? TeLinear::kProj
                   : name == "fc1" ? TeLinear::kFc1
                   : name == "fc2" ? TeLinear::kFc2
                                   : TeLinear::kNone));
  // MLA's block (SUBLAYER would separate them; BLOCK merges equal collectives): the latents' gather and
  // the input gradients' reduction are not userbuffers collectives, the b s h ones are.
  const double h_bytes = mla.layer(1).output_bytes_per_sample;  // b s h
  for (const LayerCollective& c : mla.layer(1).collectives_seq_par) {
    if (c.group != CollectiveGroup::kTensor) continue;
    CHECK(c.userbuffers == (c.bytes_per_sample == h_bytes));
  }
}

TEST_CASE("userbuffers: a block's compute grows by exactly its chunked GEMMs' extra time") {
  const ModelCost model = Llama();
  const GpuCompute gpu = H100();
  for (const bool aggregate : {false, true}) {
    const int tp = 8;
    StageConfig on = Overlapped(tp, aggregate);
    on.first_layer = 1;
    on.num_layers = 1;
    on.micro_batch_size = 1;
    StageConfig off = on;
    off.tp_comm_overlap = false;
    off.tp_comm_overlap_aggregate = false;
    auto with = ComputeStageCost(model, on, gpu, "plan");
    auto without = ComputeStageCost(model, off, gpu, "plan");
    REQUIRE(with.ok());
    REQUIRE(without.ok());
    const double ring = aggregate ? 4 : 8;
    double forward = 0, backward = 0;
    int linears = 0;
    for (const Gemm& g : model.layer(1).gemms) {
      const GpuCompute& run = g.fp8 ? gpu : gpu.SixteenBit();
      GemmShape f{g.m, g.n, g.k, g.batch};
      if (g.split == TpSplit::kColumns && !g.attention_core) {
        f.n /= tp;
        forward += ring * run.GemmSeconds(GemmShape{f.m / ring, f.n, f.k, 1}) - run.GemmSeconds(f);
        ++linears;
      } else if (g.split == TpSplit::kRows) {
        f.k /= tp;
        // The pipeline into the reduce-scatter cuts the output columns.
        forward += 4 * run.GemmSeconds(GemmShape{f.m, f.n / 4, f.k, 1}) - run.GemmSeconds(f);
        backward += ring * run.GemmSeconds(GemmShape{f.m / ring, f.k, f.n, 1}) - run.GemmSeconds({f.m, f.k, f.n, 1});
        ++linears;
      }
    }
    CHECK(linears == 4);  // QKV, projection, FC1, FC2
    CHECK(forward > 0);
    CHECK(TimeToPicosecondsDouble(with->forward_time - without->forward_time) == Approx(forward * 1e12).margin(2));
    CHECK(TimeToPicosecondsDouble(with->backward_time - without->backward_time) == Approx(backward * 1e12).margin(2));
  }
}

TEST_CASE("userbuffers: experts' GEMMs stay whole") {
  const ModelCost model = Llama(8);
  const GpuCompute gpu = H100();
  StageConfig on = Overlapped(4);
  on.first_layer = 1;
  on.num_layers = 1;
  on.micro_batch_size = 1;
  StageConfig off = on;
  off.tp_comm_overlap = false;
  auto with = ComputeStageCost(model, on, gpu, "plan");
  auto without = ComputeStageCost(model, off, gpu, "plan");
  REQUIRE(with.ok());
  REQUIRE(without.ok());
  // Only the attention half's QKV and projection are chunked.
  double forward = 0;
  for (const Gemm& g : model.layer(1).gemms) {
    if (g.per_expert || g.attention_core || g.split == TpSplit::kNone) continue;
    GemmShape f{g.m, g.n, g.k, 1};
    const double chunks = g.split == TpSplit::kColumns ? 4 : kReduceScatterSplits;
    if (g.split == TpSplit::kColumns) f.n /= 4;
    if (g.split == TpSplit::kRows) f.k /= 4;
    const GemmShape chunk =
        g.split == TpSplit::kRows ? GemmShape{f.m, f.n / chunks, f.k, 1} : GemmShape{f.m / chunks, f.n, f.k, 1};
    forward += chunks * gpu.GemmSeconds(chunk) - gpu.GemmSeconds(f);
  }
  CHECK(TimeToPicosecondsDouble(with->forward_time - without->forward_time) == Approx(forward * 1e12).margin(2));
}

TEST_CASE("userbuffers: the last reduce-scatter chunk, and with aggregate the first exchange, stay exposed") {
  // Forward: 16 of reduce-scatter, 21 of all-gather at TP 8: a quarter of the reduce-scatter (4);
  // with aggregate also one shard of the seven the ring all-gather exchanges (3).
  CHECK(UserbufferExposed(16_ps, 8_ps, 21_ps, 8, false, true, NoMargins()) == 4_ps);
  CHECK(UserbufferExposed(16_ps, 8_ps, 21_ps, 8, true, true, NoMargins()) == 4_ps + 3_ps);
  // Backward: the reduce-scatters are bulk overlaps beside whole GEMMs; only aggregate's first exchange.
  CHECK(UserbufferExposed(16_ps, 8_ps, 21_ps, 8, false, false, NoMargins()) == 0);
  CHECK(UserbufferExposed(16_ps, 8_ps, 21_ps, 8, true, false, NoMargins()) == 3_ps);
  // Of 40 TP collectives with 7 exposed: 33 hide behind ample compute; compute still caps what hides.
  CHECK(HiddenByUserbuffers(40_ps, 7_ps, 1000_ps) == 33_ps);
  CHECK(HiddenByUserbuffers(40_ps, 7_ps, 10_ps) == 10_ps);
  // No sequence parallelism, no userbuffers collectives: everything up to the compute, as before.
  CHECK(HiddenByUserbuffers(40_ps, UserbufferExposed(0, 0, 0, 8, true, true, NoMargins()), 1000_ps) == 40_ps);
}

TEST_CASE("userbuffers: only the dense sublayers' TP collectives are Transformer Engine's") {
  // A block with an MoE MLP and shared experts: the attention's and the shared experts' gather and
  // reduce-scatter are userbuffers collectives, the routed experts' (over the expert-TP group, after
  // the dispatch) are not.
  const ModelCost model = Llama(8);
  int userbuffers = 0, tensor = 0, routed = 0;
  for (const LayerCollective& c : model.layer(1).collectives_seq_par) {
    if (c.group == CollectiveGroup::kExpert) continue;
    if (c.group == CollectiveGroup::kExpertTensor) {
      CHECK_FALSE(c.userbuffers);
      routed += c.forward_count;
    } else {
      (c.userbuffers ? userbuffers : tensor) += c.forward_count;
    }
  }
  CHECK(userbuffers == 2);  // the attention's all-gather and reduce-scatter
  CHECK(tensor == 0);       // the routed MLP gathers nothing over TP
  CHECK(routed == 2);       // it gathers and reduce-scatters the dispatched tokens over the expert-TP group
}

TEST_CASE("userbuffers: a ring-exchange reduce-scatter cuts the tokens, one chunk per TP rank") {
  TpCommOverlapSpec te = NoMargins();
  te.fc2_fprop = TpOverlapMethod::kRingExchange;
  const UserbufferOverlap fc2 = UserbufferOverlapOf(Linear(TeLinear::kFc2), Overlapped(8, true, te));
  CHECK(fc2.forward == 8);  // aggregate pairs the all-gathers' shards only
  CHECK_FALSE(fc2.forward_cuts_columns);
  CHECK(fc2.input_grad == 4);
  const UserbufferOverlap proj = UserbufferOverlapOf(Linear(TeLinear::kProj), Overlapped(8, true, te));
  CHECK(proj.forward == kReduceScatterSplits);
  CHECK(proj.forward_cuts_columns);
  // Exposed in the forward: the last of TP chunks of FC2's (ring, 32 of the 64) and of 4 of the
  // projection's (pipeline, the other 32); an MoE block's MLP reduces nothing through userbuffers.
  CHECK(UserbufferExposed(64_ps, 32_ps, 0, 8, false, true, te) == 32_ps / 4 + 32_ps / 8);
  CHECK(UserbufferExposed(64_ps, 0, 0, 8, false, true, te) == 64_ps / 4);
  te.proj_fprop = TpOverlapMethod::kRingExchange;
  CHECK(UserbufferExposed(64_ps, 32_ps, 0, 8, false, true, te) == 64_ps / 8);
}

TEST_CASE("userbuffers: the SMs an overlap holds are the GEMM's: 16 of 132 held, 132/116 the waves") {
  const GpuCompute gpu = H100();
  REQUIRE(gpu.sm_count() == 132);
  // Every tile shape cuts this GEMM into a multiple of 132 x 116 tiles, so each needs exactly 132/116
  // times the waves on 116 SMs; compute-bound (1,024 FLOP per operand byte).
  const GemmShape shape{256.0 * 132 * 116, 512, 8192, 1};
  const TilePlan all = gpu.PlanTiles(shape), rest = gpu.PlanTiles(shape, 132 - 16);
  CHECK(rest.waves * 116 == all.waves * 132);
  const double launch = gpu.kernel_launch_s();
  CHECK(gpu.GemmSeconds(shape, 16) - launch == Approx((gpu.GemmSeconds(shape) - launch) * 132 / 116).epsilon(1e-12));
  CHECK(gpu.GemmSeconds(shape, 0) == gpu.GemmSeconds(shape));
}

TEST_CASE("userbuffers: Transformer Engine's default margins slow exactly the GEMMs beside the SM-bound overlaps") {
  const ModelCost model = Llama();
  const GpuCompute gpu = H100();
  const int tp = 8;
  const StageCost with = BlockCost(model, gpu, tp, TpCommOverlapSpec{});  // TE's defaults: 16 SMs, six GEMMs
  const StageCost without = BlockCost(model, gpu, tp, NoMargins());
  // Written out: the projection's and FC2's forward chunks (columns), the QKV's and FC1's input and
  // weight gradients, each on 116 SMs instead of 132.
  double forward = 0, backward = 0;
  for (const Gemm& g : model.layer(1).gemms) {
    GemmShape f{g.m, g.n, g.k, g.batch};
    if (g.te_linear == TeLinear::kProj || g.te_linear == TeLinear::kFc2) {
      f.k /= tp;
      const GemmShape chunk{f.m, f.n / 4, f.k, 1};
      forward += 4 * (gpu.GemmSeconds(chunk, 16) - gpu.GemmSeconds(chunk));
    } else if (g.te_linear == TeLinear::kQkv || g.te_linear == TeLinear::kFc1) {
      f.n /= tp;
      const GemmShape dgrad{f.m, f.k, f.n, 1}, wgrad{f.k, f.n, f.m, 1};
      backward +=
          gpu.GemmSeconds(dgrad, 16) - gpu.GemmSeconds(dgrad) + gpu.GemmSeconds(wgrad, 16) - gpu.GemmSeconds(wgrad);
    }
  }
  CHECK(forward > 0);
  CHECK(backward > 0);
  CHECK(TimeToPicosecondsDouble(with.forward_time - without.forward_time) == Approx(forward * 1e12).margin(2));
  CHECK(TimeToPicosecondsDouble(with.backward_time - without.backward_time) == Approx(backward * 1e12).margin(2));
}

TEST_CASE("userbuffers: margins that leave a GPU no SMs are refused, naming the field") {
  const ModelCost model = Llama();
  TpCommOverlapSpec te;
  te.fc1_wgrad_sm_margin = 132;
  StageConfig c = Overlapped(8, false, te);
  c.first_layer = 1;
  c.num_layers = 1;
  c.micro_batch_size = 1;
  auto cost = ComputeStageCost(model, c, H100(), "plan.pbtxt: stages[0]");
  REQUIRE_FALSE(cost.ok());
  CHECK_THAT(std::string(cost.status().message()),
             Catch::Contains("tp_comm_overlap_config.fc1_wgrad_sm_margin") && Catch::Contains("132"));
}

TEST_CASE("userbuffers: an absent setting is Transformer Engine's default") {
  hetsim::v1::Plan plan;
  plan.set_tp_comm_overlap(true);
  TpCommOverlapSpec te = hetsim::proto::ResolveTpCommOverlapConfig(plan);
  CHECK(te.proj_fprop == TpOverlapMethod::kPipeline);
  CHECK(te.proj_fprop_sm_margin == 16);
  CHECK(te.fc1_wgrad_sm_margin == 16);
  // Megatron-Bridge's FP8 Llama configs: ring-exchange reduce-scatters holding 1 SM, bulk overlaps
  // without a margin. A method changed alone keeps its GEMM's default 16 SMs, as Transformer Engine
  // overlays a configuration on the default method's settings.
  auto* c = plan.mutable_tp_comm_overlap_config();
  c->set_proj_fprop_method(hetsim::v1::TP_OVERLAP_RING_EXCHANGE);
  c->set_proj_fprop_sm_margin(1);
  c->set_fc2_fprop_method(hetsim::v1::TP_OVERLAP_RING_EXCHANGE);
  c->set_qkv_dgrad_sm_margin(0);
  te = hetsim::proto::ResolveTpCommOverlapConfig(plan);
  CHECK(te.proj_fprop == TpOverlapMethod::kRingExchange);
  CHECK(te.proj_fprop_sm_margin == 1);
  CHECK(te.fc2_fprop_sm_margin == 16);
  CHECK(te.qkv_dgrad_sm_margin == 0);
  CHECK(te.qkv_wgrad_sm_margin == 16);
}

TEST_CASE("userbuffers: a ring-exchange FC2 with SMs held: TP token chunks, each on the SMs left") {
  const ModelCost model = Llama();
  const GpuCompute gpu = H100();
  const int tp = 8;
  TpCommOverlapSpec te = NoMargins();
  te.fc2_fprop = TpOverlapMethod::kRingExchange;
  te.fc2_fprop_sm_margin = 16;
  const StageCost with = BlockCost(model, gpu, tp, te);
  const StageCost without = BlockCost(model, gpu, tp, NoMargins());
  double forward = 0;
  for (const Gemm& g : model.layer(1).gemms) {
    if (g.te_linear != TeLinear::kFc2) continue;
    const GemmShape f{g.m, g.n, g.k / tp, 1};
    forward += tp * gpu.GemmSeconds(GemmShape{f.m / tp, f.n, f.k, 1}, 16) - 4 * gpu.GemmSeconds({f.m, f.n / 4, f.k, 1});
  }
  CHECK(forward != 0);
  CHECK(TimeToPicosecondsDouble(with.forward_time - without.forward_time) == Approx(forward * 1e12).margin(2));
  CHECK(with.backward_time == without.backward_time);  // its input gradient was a ring exchange already
}

TEST_CASE("userbuffers: a collective hides behind its own GEMM only, what outlasts it stays exposed") {
  using Call = UserbufferTimes::PairedCall;
  using hetsim::CollectiveOp;
  TpCommOverlapSpec te = NoMargins();
  te.proj_fprop = te.fc2_fprop = TpOverlapMethod::kRingExchange;
  // Forward at TP 8: a reduce-scatter of 96 beside a GEMM of 60 leaves 96/8 = 12 exposed anyway (its
  // last chunk) and 96 - 12 - 60 = 24 more; a gather of 96 beside a GEMM of 200 leaves nothing.
  const Call scatter{96_ps, 60_ps, CollectiveOp::kReduceScatter, true};
  const Call gather{96_ps, 200_ps, CollectiveOp::kAllGather, false};
  CHECK(UserbufferOutlasting(std::vector<Call>{scatter}, 8, false, true, te) == 24_ps);
  CHECK(UserbufferOutlasting(std::vector<Call>{gather}, 8, false, true, te) == 0);
  // Backward: no last chunk; a gather of 96 beside an input-gradient GEMM of 40 leaves 56, with
  // aggregate's first exchange (96/7 = 13) counted once, not twice.
  const Call short_gemm{96_ps, 40_ps, CollectiveOp::kAllGather, false};
  CHECK(UserbufferOutlasting(std::vector<Call>{short_gemm}, 8, false, false, te) == 56_ps);
  CHECK(UserbufferOutlasting(std::vector<Call>{short_gemm}, 8, true, false, te) == 96_ps - 13_ps - 40_ps);

  // Two calls of one reduce-scatter entry (the projection's, then FC2's), 96 each, beside 60 and 500:
  // the pass hides 192 - 24 (the last chunks) - 24 (what outlasts the projection) = 144 of ample compute.
  hetsim::workload::StageCollective c{
      CollectiveOp::kReduceScatter, hetsim::workload::CollectiveGroup::kTensor, 1, 2, 0, false, true, 1};
  c.beside_gemm_s = {60e-12, 500e-12};
  UserbufferTimes times;
  times.Add(c, 192_ps);
  REQUIRE(times.paired.size() == 2);
  CHECK_FALSE(times.paired[0].fc2);
  CHECK(times.paired[1].fc2);
  CHECK(times.Hidden(8, false, true, 1000_ps, te) == 144_ps);
  // Without GEMMs beside them (no entries), the pass's compute alone bounds what hides, as before.
  c.beside_gemm_s.clear();
  UserbufferTimes unpaired;
  unpaired.Add(c, 192_ps);
  CHECK(unpaired.Hidden(8, false, true, 1000_ps, te) == 192_ps - 24_ps);
}

TEST_CASE("userbuffers: each call is paired with its linear's GEMM, and FP8 runs gather FP8") {
  const ModelCost model = Llama();
  const GpuCompute gpu = H100();
  const StageCost cost = BlockCost(model, gpu, 8, NoMargins());
  int gathers = 0, scatters = 0;
  int64_t gather_bytes = 0, scatter_bytes = 0;
  for (const auto* list : {&cost.forward_collectives, &cost.backward_collectives}) {
    for (const hetsim::workload::StageCollective& sc : *list) {
      if (!sc.userbuffers) {
        CHECK(sc.beside_gemm_s.empty());
        continue;
      }
      REQUIRE(sc.beside_gemm_s.size() == static_cast<size_t>(sc.count));
      for (double g : sc.beside_gemm_s) CHECK(g > 0);
      if (sc.op == hetsim::CollectiveOp::kAllGather) {
        gathers += sc.count;
        gather_bytes = sc.bytes;
      } else {
        scatters += sc.count;
        scatter_bytes = sc.bytes;
      }
    }
  }
  CHECK(gathers == 4);   // QKV's and FC1's inputs, the projection's and FC2's output gradients
  CHECK(scatters == 4);  // the projection's and FC2's outputs, QKV's and FC1's input gradients
  // Transformer Engine's all-gather overlaps have FP8 buffers (fp8_buf): half the reduce-scatters' bytes.
  CHECK(gather_bytes * 2 == scatter_bytes);
  // The forward gathers run beside QKV's and FC1's forward GEMMs: FC1's (gated, 2 x 28,672 wide) is the
  // longer one.
  for (const hetsim::workload::StageCollective& sc : cost.forward_collectives) {
    if (sc.userbuffers && sc.op == hetsim::CollectiveOp::kAllGather) {
      REQUIRE(sc.beside_gemm_s.size() == 2);
      CHECK(sc.beside_gemm_s[1] > sc.beside_gemm_s[0]);
    }
  }
}
