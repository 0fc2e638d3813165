// The GPU groups of a stage's expert collectives under MoE parallel folding (sim/executor/setup.h):
// Megatron-LM lays the stage's TP x CP x DP GPUs out again for the experts in the order tp-ep-dp.
#include <catch2/catch.hpp>

#include <numeric>
#include <vector>

#include "sim/executor/setup.h"

namespace {

using hetsim::GpuId;
using hetsim::executor::GroupsOf;
using hetsim::executor::StageLayout;
using hetsim::workload::CollectiveGroup;
using Groups = std::vector<std::vector<GpuId>>;

// A stage of TP x CP x DP GPUs numbered 100, 101, ... in the mesh's order.
StageLayout Stage(int tp, int cp, int dp, int ep, int etp) {
  StageLayout l;
  for (int g = 0; g < tp * cp * dp; ++g) l.gpus.emplace_back(100 + g);
  l.tensor_parallel = tp;
  l.context_parallel = cp;
  l.data_parallel = dp;
  l.expert_parallel = ep;
  l.expert_tensor_parallel = etp;
  return l;
}

}  // namespace

TEST_CASE("expert groups: with ETP = TP, EP takes consecutive replicas at each TP rank", "[executor][experts]") {
  const StageLayout l = Stage(2, 1, 4, 2, 0);  // ETP 0: as TP
  CHECK(GroupsOf(l, CollectiveGroup::kExpert) == hetsim::GpuGroups({{100, 102}, {101, 103}, {104, 106}, {105, 107}}));
  CHECK(GroupsOf(l, CollectiveGroup::kExpertTensor) == GroupsOf(l, CollectiveGroup::kTensor));
}

TEST_CASE("expert groups: EP folds over TP, CP and DP when ETP is 1", "[executor][experts]") {
  // Qwen3-235B's shape in small: TP 2 x CP 2 x DP 2 = 8 GPUs, EP 8, ETP 1: one EP group of all of them.
  const StageLayout l = Stage(2, 2, 2, 8, 1);
  CHECK(GroupsOf(l, CollectiveGroup::kExpert) == hetsim::GpuGroups({{100, 101, 102, 103, 104, 105, 106, 107}}));
  CHECK(GroupsOf(l, CollectiveGroup::kExpertTensor).size() == 8);  // singletons: no collective runs
  // EP 4: two expert-data-parallel copies of the experts, each on 4 consecutive GPUs.
  CHECK(GroupsOf(Stage(2, 2, 2, 4, 1), CollectiveGroup::kExpert) ==
        hetsim::GpuGroups({{100, 101, 102, 103}, {104, 105, 106, 107}}));
}

TEST_CASE("expert groups: ETP consecutive GPUs share an expert, EP groups stride by ETP", "[executor][experts]") {
  // TP 4 x DP 4 = 16 GPUs with ETP 2 x EP 4: blocks of 8 GPUs hold the experts once.
  const StageLayout l = Stage(4, 1, 4, 4, 2);
  CHECK(GroupsOf(l, CollectiveGroup::kExpertTensor) ==
        hetsim::GpuGroups(
            {{100, 101}, {102, 103}, {104, 105}, {106, 107}, {108, 109}, {110, 111}, {112, 113}, {114, 115}}));
  CHECK(GroupsOf(l, CollectiveGroup::kExpert) ==
        hetsim::GpuGroups({{100, 102, 104, 106}, {101, 103, 105, 107}, {108, 110, 112, 114}, {109, 111, 113, 115}}));
}

TEST_CASE("expert groups: with CP, EP groups fold over the CP ranks as Megatron-LM does today", "[executor][experts]") {
  // TP 2 x CP 2 x DP 2, ETP = TP, EP 2: the mesh's order is tp-cp-dp, the experts' tp-ep-dp, so an EP
  // group is a TP rank's two CP ranks of one replica (before MoE parallel folding Megatron took EP
  // over the replicas only).
  const StageLayout l = Stage(2, 2, 2, 2, 0);
  CHECK(GroupsOf(l, CollectiveGroup::kExpert) == hetsim::GpuGroups({{100, 102}, {101, 103}, {104, 106}, {105, 107}}));
  CHECK(GroupsOf(l, CollectiveGroup::kExpertAndTensor) ==
        hetsim::GpuGroups({{100, 101, 102, 103}, {104, 105, 106, 107}}));
}

TEST_CASE("expert-data-parallel groups: the GPUs holding the same expert shard, ETP x EP apart",
          "[executor][experts]") {
  using hetsim::executor::SyncGroupsOf;
  // TP 2 x DP 8 = 16 GPUs, EP 8, ETP 1: each GPU holds its own experts, and GPU i shares them with
  // GPU i + 8 (Megatron's expert rank order tp-ep-dp: the expert-DP rank varies slowest).
  const StageLayout folded = Stage(2, 1, 8, 8, 1);
  CHECK(folded.expert_data_groups() == 8);
  CHECK(folded.expert_gradient_group_size() == 2);
  CHECK(folded.ExpertDataGroup(0) == hetsim::GpuIds({100, 108}));
  CHECK(folded.ExpertDataGroup(7) == hetsim::GpuIds({107, 115}));
  CHECK(SyncGroupsOf(folded, true).size() == 8);
  // The dense parameters keep their DP x CP group of each TP rank.
  CHECK(SyncGroupsOf(folded, false) == Groups{folded.DataGroup(0), folded.DataGroup(1)});
  CHECK(folded.DataGroup(0) == hetsim::GpuIds({100, 102, 104, 106, 108, 110, 112, 114}));
  // ETP = TP = 2, EP 2 over TP 2 x CP 2 x DP 2: blocks of 4 GPUs, each shard in 2 copies 4 apart.
  const StageLayout coupled = Stage(2, 2, 2, 2, 0);
  CHECK(SyncGroupsOf(coupled, true) == hetsim::GpuGroups({{100, 104}, {101, 105}, {102, 106}, {103, 107}}));
  // EP x ETP = the stage: every expert shard is on one GPU only, nothing to synchronise.
  CHECK(Stage(2, 2, 2, 8, 1).expert_gradient_group_size() == 1);
}

TEST_CASE("expert groups: the stage group is every GPU of the stage (FP8's amax reduction)", "[executor][experts]") {
  // Megatron's amax reduction group, TP x CP x DP: one group of all 8 GPUs.
  CHECK(GroupsOf(Stage(2, 2, 2, 4, 1), CollectiveGroup::kStage) ==
        hetsim::GpuGroups({{100, 101, 102, 103, 104, 105, 106, 107}}));
}
