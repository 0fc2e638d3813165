// Shared by the sweep_* tests: the bundled examples written to a fresh folder, sweep files written
// beside them, and a fake PointEvaluator whose report is a closed-form function of the point's
// inputs (with failing and OOM points), optionally slow and uneven so that threads finish out of order.
#ifndef HETSIM_TESTS_SWEEP_TEST_UTIL_H_
#define HETSIM_TESTS_SWEEP_TEST_UTIL_H_

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>

#include <catch2/catch.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "app/cli/examples.h"
#include "proto/io.h"
#include "service/sweep/point.h"
#include "service/sweep/runner.h"

namespace hetsim::testing {

// A new empty folder holding the bundled examples in text format.
inline std::string SweepFolder(const std::string& tag) {
  static std::atomic<int> counter{0};
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / absl::StrFormat("hetsim-%s-%d-%d", tag, ::getpid(), counter++);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  for (const cli::Example& e : cli::BundledExamples(proto::FileFormat::kText)) {
    REQUIRE(proto::Save((dir / (e.name + ".pbtxt")).string(), *e.message).ok());
  }
  return dir.string();
}

// Writes `text` (a Sweep in text format) to dir/name and returns its path.
inline std::string WriteFile(const std::string& dir, const std::string& name, const std::string& text) {
  const std::string path = (std::filesystem::path(dir) / name).string();
  REQUIRE(proto::WriteFileAtomically(path, text).ok());
  return path;
}

inline std::string ReadFile(const std::string& path) {
  absl::StatusOr<std::string> s = proto::ReadFileToString(path);
  REQUIRE(s.ok());
  return *s;
}

// The hetsim command run with `args`, stdout and stderr into files of `dir`: exit code and stderr.
struct Ran {
  int exit_code;
  std::string err;
};

inline Ran Hetsim(const std::string& dir, const std::string& args) {
  const std::string err = dir + "/stderr.txt";
  const int status = std::system(absl::StrCat(HETSIM_BINARY, " ", args, " >", dir, "/stdout.txt 2>", err).c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, ReadFile(err)};
}

// 8 bandwidths x 3 schedules over the HAPT case-study plan: 24 points.
inline const char* kBandwidthScheduleSweep = R"pb(
  name: "test"
  cluster_path: "cluster-hapt-case.pbtxt"
  plan_path: "plan-hapt-case.pbtxt"
  axes { path: "cluster.inter_island_links[0].bandwidth_gbps" from: 3 to: 10 step: 1 }
  axes {
    path: "plan.schedule"
    values: [ "ONE_F_ONE_B", "EAGER_1F1B", "H_1F1B" ]
  }
)pb";

// iteration time = 1000 / bandwidth + schedule number; bandwidth 7 with Eager-1F1B has no plan,
// bandwidth 9 runs out of memory on stage 1. `delay_ms` > 0 sleeps 1 to 3 times that, depending on
// the point, so that with several threads points finish out of order.
class FakeEvaluator : public sweep::PointEvaluator {
 public:
  explicit FakeEvaluator(int delay_ms = 0) : delay_ms_(delay_ms) {}

  absl::StatusOr<hetsim::v1::Report> Evaluate(const sweep::PointInputs& p) const override {
    calls_.fetch_add(1);
    if (delay_ms_ > 0) std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms_ * (1 + (p.point * 7) % 3)));
    const double bw = p.inputs.cluster.inter_island_links(0).bandwidth_gbps();
    const hetsim::v1::Schedule schedule = p.inputs.plan.schedule();
    if (bw == 7 && schedule == hetsim::v1::EAGER_1F1B) {
      return absl::FailedPreconditionError("no plan fits\nstage 1 needs 3 GiB more");
    }
    hetsim::v1::Report r;
    r.set_schedule(hetsim::v1::Schedule_Name(schedule));
    r.set_iteration_time_ms(1000.0 / bw + static_cast<int>(schedule));
    r.set_tokens_per_s(1e6 / r.iteration_time_ms());
    r.set_mfu(0.25);
    r.set_bubble_ratio(1.0 / 3);
    r.set_eta(0.5);
    r.set_num_gpus(6);
    r.set_num_stages(p.inputs.plan.stages_size());
    r.set_num_microbatches(static_cast<uint32_t>(p.inputs.microbatches));
    for (int s = 0; s < p.inputs.plan.stages_size(); ++s) {
      hetsim::v1::StageReport* st = r.add_stages();
      st->set_index(s);
      st->set_island(p.inputs.plan.stages(s).mesh().island());
      st->set_peak_memory_gib(10 + s);
      st->set_memory_capacity_gib(40);
      if (bw == 9 && s == 1) {
        st->set_oom(true);
        st->set_peak_memory_gib(45.5);
        r.set_oom(true);
      }
    }
    return r;
  }

  int calls() const { return calls_.load(); }

 private:
  int delay_ms_;
  mutable std::atomic<int> calls_{0};
};

inline sweep::SweepJob Job(const std::string& sweep, const std::string& out, int jobs = 1) {
  sweep::SweepJob job;
  job.sweep_path = sweep;
  job.output_path = out;
  job.jobs = jobs;
  return job;
}

}  // namespace hetsim::testing

#endif  // HETSIM_TESTS_SWEEP_TEST_UTIL_H_
