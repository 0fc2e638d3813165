// Plan.tied_embedding_grad_sync (issue 40): DeepSpeed's pipeline engine all-reduces the tied embedding's
// gradients between the first stage (embedding) and the last (head) after the last backward, before the
// data-parallel reduction and the optimizer step, both stages waiting for it (ReduceTiedGrads).
#include <catch2/catch.hpp>

#include <algorithm>

#include "base/time.h"
#include "sim/executor/setup.h"
#include "tests/base/time_io.h"
#include "tests/proto/model_shapes.h"
#include "tests/sim/executor/executor_test_util.h"

namespace {

namespace v1 = hetsim::v1;
using hetsim::network::NetworkMode;

constexpr uint64_t kVocab = 32000;
constexpr uint64_t kHidden = 1024;

// A tied 2-block transformer (FP16) as two stages of one GPU each: stage 0 (embedding, block 1) on the
// V100 island, stage 1 (block 2, head) on the A100 island, joined by one Ethernet link of `gbps`.
hetsim::proto::PlanInputs TiedTwoStages(double gbps, bool sync) {
  v1::Plan p;
  p.set_name("tied");
  v1::Model* m = p.mutable_model();
  m->set_name("tied");
  m->set_dtype(v1::FP16);
  auto* t =
      hetsim::testing::SetTransformer(*m, {.layers = 2, .hidden = kHidden, .heads = 16, .seq = 1024, .vocab = kVocab});
  t->set_tied_embeddings(true);
  p.set_global_batch_size(4);
  p.set_micro_batch_size(1);
  p.set_schedule(v1::ONE_F_ONE_B);
  p.set_tied_embedding_grad_sync(sync);
  hetsim::testing::AddSlowFastStages(p, 2);
  return hetsim::testing::MakeInputs(hetsim::testing::TwoIslandCluster(1, 1, gbps, 0), p);
}

}  // namespace

TEST_CASE("tied embedding sync: the all-reduce of V h FP16 gradients over the link joining the two stages",
          "[executor][framework]") {
  const double gbps = 10;
  const auto with = hetsim::testing::MakeSetup(TiedTwoStages(gbps, true), NetworkMode::kMaxMinFair);
  const auto without = hetsim::testing::MakeSetup(TiedTwoStages(gbps, false), NetworkMode::kMaxMinFair);
  // A ring of two ranks moves S/2 each way twice: S / B on the 10 Gb/s link (ideal, no latency).
  const double bytes = static_cast<double>(kVocab * kHidden * 2);
  const double expected_s = bytes / (gbps * 1e9 / 8);
  REQUIRE(with->stages[0].tied_grad_sync_time == with->stages[1].tied_grad_sync_time);
  CHECK(hetsim::TimeToSeconds(with->stages[0].tied_grad_sync_time) == Approx(expected_s).epsilon(1e-6));
  CHECK(without->stages[0].tied_grad_sync_time == 0);

  // Both stages start it when the later of their last backwards ends (stage 0's, in 1F1B), then step.
  const auto a = hetsim::testing::MakeRun(*with);
  const auto b = hetsim::testing::MakeRun(*without);
  CHECK(a.last_backward_end == b.last_backward_end);
  const hetsim::Time start = std::max(a.last_backward_end[0], a.last_backward_end[1]);
  for (int s = 0; s < 2; ++s) {
    INFO("stage " << s);
    CHECK(a.optimizer_start[s] == start + with->stages[s].tied_grad_sync_time);
    CHECK(a.stage_end[s] == a.optimizer_start[s] + with->stages[s].optimizer_time);
    CHECK(b.optimizer_start[s] == b.last_backward_end[s]);
  }
  CHECK(a.iteration_time == b.iteration_time + with->stages[0].tied_grad_sync_time);
}

TEST_CASE("tied embedding sync: half the link, twice the time", "[executor][framework]") {
  const auto fast = hetsim::testing::MakeSetup(TiedTwoStages(20, true), NetworkMode::kMaxMinFair);
  const auto slow = hetsim::testing::MakeSetup(TiedTwoStages(10, true), NetworkMode::kMaxMinFair);
  CHECK(hetsim::TimeToSeconds(slow->stages[0].tied_grad_sync_time) ==
        Approx(2 * hetsim::TimeToSeconds(fast->stages[0].tied_grad_sync_time)).epsilon(1e-6));
}
