// calibrate::CalibrateRequest, the request `hetsim calibrate` and the API's calibrate() share: its checks,
// the files it reads, and the verdict on a poor fit (refused unless accepted, then its problems are
// warnings), on the hand-written DGX logs whose fit drives the LL and LL128 latencies to their bound.
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/algorithm/container.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "service/calibrate/calibrate_command.h"
#include "service/calibrate/report.h"

namespace hetsim::calibrate {
namespace {

const std::string kLogs = absl::StrCat(HETSIM_SOURCE_DIR, "/tests/calibrate_data/");

CalibrateRequest DgxRequest() {
  CalibrateRequest r;
  r.cluster_path = absl::StrCat(HETSIM_SOURCE_DIR, "/validation/nccl/cluster-dgx-a100-2node.pbtxt");
  r.logs = {kLogs + "all_reduce_perf_dgx_a100_1node.txt", kLogs + "all_reduce_perf_dgx_a100_2node.txt"};
  return r;
}

bool AnyStartsWith(const std::vector<std::string>& lines, const std::string& prefix) {
  return absl::c_any_of(lines, [&](const std::string& l) { return absl::StartsWith(l, prefix); });
}

TEST_CASE("a calibrate request is checked before anything is read", "[calibrate]") {
  CalibrateRequest r = DgxRequest();
  r.logs.clear();
  CHECK(LoadCalibration(r).status().message() ==
        "nothing to fit: give nccl-tests logs, --gemm CSV and/or --iterations CSV");
  r = DgxRequest();
  r.max_mape = 0;
  CHECK(LoadCalibration(r).status().message() == "--max-mape: 0 is not a positive percentage");
  r = DgxRequest();
  r.log_shape = {.ranks = 8, .hosts = 0};
  CHECK(LoadCalibration(r).status().message() == "--log-ranks 8 --log-hosts 0: give both, each at least 1");
  r = DgxRequest();
  r.cluster_path = kLogs + "missing.pbtxt";
  CHECK_FALSE(LoadCalibration(r).ok());
}

TEST_CASE("a calibrate request reads the cluster and every log, in order", "[calibrate]") {
  const CalibrateRequest r = DgxRequest();
  absl::StatusOr<LoadedCalibration> loaded = LoadCalibration(r);
  REQUIRE(loaded.ok());
  CHECK(loaded->input_files == std::vector<std::string>{r.cluster_path, r.logs[0], r.logs[1]});
  CHECK(loaded->sources.size() == 1);  // every nccl-tests run is one source
}

TEST_CASE("a poor fit is refused unless accepted, then its problems are warnings", "[calibrate]") {
  CalibrateRequest r = DgxRequest();
  absl::StatusOr<CalibrateResponse> refused = Calibrate(r);
  REQUIRE(refused.ok());
  CHECK(absl::StartsWith(refused->refusal.message(), "poor fit, nothing written (--accept-poor-fit writes it):\n"));
  CHECK_THAT(std::string(refused->refusal.message()),
             Catch::Contains("node_types[0].nccl.ll_step_latency_ns = 1 ns is at the fit's bound"));
  CHECK_FALSE(AnyStartsWith(refused->warnings, "poor fit: "));
  CHECK(refused->fit_report.empty());

  r.accept_poor_fit = true;
  absl::StatusOr<CalibrateResponse> accepted = Calibrate(r);
  REQUIRE(accepted.ok());
  CHECK(accepted->refusal.ok());
  CHECK(AnyStartsWith(accepted->warnings, "poor fit: node_types[0].nccl.ll_step_latency_ns"));
  CHECK(accepted->mape_percent == MeanAbsolutePercentError(accepted->fits));
  CHECK(accepted->fit_report == FormatFitReport(accepted->fits));
  CHECK(accepted->cluster.node_types(0).nccl().bandwidth_efficiency() > 0);
  CHECK(accepted->cluster.islands(0).nccl().launch_latency_ns() > 0);
}

}  // namespace
}  // namespace hetsim::calibrate
