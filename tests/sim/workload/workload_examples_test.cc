// The bundled plans price with the cost model, and splitting a microbatch over DP and TP loses no
// FLOPs: per-GPU model FLOPs x GPUs, summed over stages, equal the model's FLOPs per microbatch.
#include <catch2/catch.hpp>

#include <string>

#include "proto/inputs.h"
#include "sim/workload/gpu_compute.h"
#include "sim/workload/model_cost.h"
#include "sim/workload/stage_cost.h"
#include "tests/base/spec/spec_test_util.h"
#include "tests/base/time_io.h"

namespace {

using namespace hetsim::workload;

const hetsim::v1::GpuType& GpuOfIsland(const hetsim::v1::Cluster& cluster, const std::string& island) {
  for (const auto& is : cluster.islands()) {
    if (is.name() != island) continue;
    for (const auto& nt : cluster.node_types()) {
      if (nt.name() != is.node_type()) continue;
      for (const auto& g : cluster.gpu_types()) {
        if (g.name() == nt.gpu_type()) return g;
      }
    }
  }
  FAIL("no GPU type for island " << island);
  return cluster.gpu_types(0);
}

}  // namespace

TEST_CASE("bundled plans: every stage prices, FLOPs are conserved across DP x TP", "[workload][examples]") {
  for (const char* name : {"512gpu", "hapt-case"}) {
    const std::string dir = HETSIM_SOURCE_DIR "/examples/";
    auto in = hetsim::proto::LoadPlanInputs(dir + "plan-" + name + ".pbtxt", dir + "cluster-" + name + ".pbtxt");
    REQUIRE(in.ok());
    auto model = hetsim::testing::ModelCostOf(in->model, "model");
    REQUIRE(model.ok());
    REQUIRE(model->num_layers() == in->layer_count);
    double flop = 0;
    for (int s = 0; s < in->plan.stages_size(); ++s) {
      const hetsim::v1::Stage& stage = in->plan.stages(s);
      auto gpu = hetsim::testing::GpuComputeOf(GpuOfIsland(in->cluster, stage.mesh().island()), model->dtype(), "gpu");
      REQUIRE(gpu.ok());
      const StageConfig config =
          StageConfigOf(hetsim::proto::ResolveStage(stage, "stage"), in->plan.micro_batch_size());
      auto cost = ComputeStageCost(*model, config, *gpu, "stage");
      INFO(name << " stage " << s);
      REQUIRE(cost.ok());
      CHECK(cost->forward_time > 0);
      // The backward's GEMMs have other shapes (input gradient m x k over n, weight gradient k x n
      // over m), so they fill the SMs' waves differently: about, not exactly, twice the forward
      // (exactly twice on ideal hardware: workload_stage_test.cc).
      CHECK(TimeToPicosecondsDouble(cost->backward_time) >= 1.8 * TimeToPicosecondsDouble(cost->forward_time));
      CHECK(TimeToPicosecondsDouble(cost->backward_time) <= 2.6 * TimeToPicosecondsDouble(cost->forward_time));
      flop += cost->model_flop_per_gpu * config.tensor_parallel * config.data_parallel;
    }
    CHECK(flop ==
          Approx(model->ModelFlopPerSample() * static_cast<double>(in->plan.micro_batch_size())).epsilon(1e-12));
  }
}
