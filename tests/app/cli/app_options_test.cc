// Options that more than one command takes have one parser each: --network (run, collective) and
// GPU lists (collective --gpus, run --trace-gpus).
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/strings/str_cat.h"

#include "app/cli/gpu_list.h"
#include "app/cli/network_option.h"
#include "tests/service/sweep/sweep_test_util.h"

namespace hetsim::cli {
namespace {

TEST_CASE("options: --network takes max-min-fair, max-min and contention-free, nothing else", "[cli][options]") {
  CHECK(ParseNetworkOption("max-min-fair").value() == network::NetworkMode::kMaxMinFair);
  CHECK(ParseNetworkOption("max-min").value() == network::NetworkMode::kMaxMinFair);
  CHECK(ParseNetworkOption("contention-free").value() == network::NetworkMode::kContentionFree);
  const absl::StatusOr<network::NetworkMode> bad = ParseNetworkOption("psychic");
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(std::string(bad.status().message()), Catch::StartsWith("--network: ") && Catch::Contains("psychic"));
}

TEST_CASE("options: GPU lists are ids and inclusive ranges, errors name the flag", "[cli][options]") {
  CHECK(ParseGpuList("0,1,8-11", "--gpus").value() == GpuIds({0, 1, 8, 9, 10, 11}));
  CHECK(ParseGpuList("3,,4", "--gpus").value() == GpuIds({3, 4}));
  CHECK(ParseGpuList("5-5", "--trace-gpus").value() == GpuIds({5}));
  for (const char* bad : {"", "x", "1-", "7-3", "-1", "0-99999999", "3000000000"}) {
    INFO(bad);
    const absl::StatusOr<std::vector<GpuId>> r = ParseGpuList(bad, "--trace-gpus");
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(std::string(r.status().message()), Catch::StartsWith("--trace-gpus: "));
  }
}

TEST_CASE("options: run and collective accept the same --network spellings", "[cli][options]") {
  const std::string dir = testing::SweepFolder("options");  // the bundled examples
  const std::string examples = dir + "/";
  for (const char* mode : {"max-min", "max-min-fair", "contention-free"}) {
    INFO(mode);
    const std::string cluster = examples + "cluster-hapt-case.pbtxt";
    const testing::Ran run = testing::Hetsim(
        dir, absl::StrCat("run ", examples, "plan-hapt-case.pbtxt --cluster ", cluster, " -q --network ", mode));
    CHECK(run.exit_code == 0);
    const testing::Ran collective = testing::Hetsim(
        dir,
        absl::StrCat("collective --cluster ", cluster, " --op all-reduce --bytes 1MiB --gpus 0-1 --network ", mode));
    CHECK(collective.exit_code == 0);
  }
}

}  // namespace
}  // namespace hetsim::cli
