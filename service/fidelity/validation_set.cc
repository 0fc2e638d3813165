#include "service/fidelity/validation_set.h"

#include <algorithm>
#include <filesystem>
#include <set>
#include <system_error>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"
#include "proto/inputs.h"
#include "proto/io.h"
#include "proto/validate_problems.h"
#include "sim/collectives/collective.h"

// The top CMakeLists.txt sets it to the source tree's validation/ folder.
#ifndef HETSIM_VALIDATION_DIR
#define HETSIM_VALIDATION_DIR "validation"
#endif

namespace hetsim::fidelity {
namespace {

namespace v1 = hetsim::v1;

// Largest measured value accepted: far above any GPU's TFLOP/s or any fabric's GB/s, far below overflow.
constexpr double kMaxMeasured = 1e7;
// Smallest: every error divides by the measurement, and a denormal one made it infinite.
constexpr double kMinMeasured = 1e-6;

// A measured figure in (0, kMaxMeasured] and not below kMinMeasured.
void CheckMeasured(proto::Problems& p, const std::string& path, double value) {
  if (!proto::CheckPositive(p, path, value, kMaxMeasured)) return;
  if (value < kMinMeasured) {
    p.Add(path, "%g is below %g: no measurement is that small (errors divide by it)", value, kMinMeasured);
  }
}
constexpr int kMaxCases = 10000;

void RequirePath(proto::Problems& p, const std::string& at, const std::string& value) {
  if (value.empty()) p.Add(at, "required (a file, relative to the validation file's folder)");
}

void CheckTrainingRun(proto::Problems& p, const std::string& at, const v1::ValidationTrainingRun& run) {
  RequirePath(p, at + "plan", run.plan());
  RequirePath(p, at + "cluster", run.cluster());
  if (run.measured_tokens_per_second_per_gpu() != 0) {
    CheckMeasured(p, at + "measured_tokens_per_second_per_gpu", run.measured_tokens_per_second_per_gpu());
    if (run.measured_tflops_per_gpu() != 0) {
      p.Add(at + "measured_tflops_per_gpu", "set with measured_tokens_per_second_per_gpu: give one measurement");
    }
    if (run.flop_count() != v1::VALIDATION_FLOP_COUNT_UNSPECIFIED) {
      p.Add(at + "flop_count", "set with measured_tokens_per_second_per_gpu, which counts no FLOPs");
    }
    return;
  }
  CheckMeasured(p, at + "measured_tflops_per_gpu", run.measured_tflops_per_gpu());
  if (run.flop_count() == v1::VALIDATION_FLOP_COUNT_UNSPECIFIED) {
    p.Add(at + "flop_count",
          "required (MEGATRON_EQ3, MODEL_FLOPS or MODEL_FLOPS_CAUSAL: how the measured TFLOP/s count FLOPs)");
  }
}

void CheckCollective(proto::Problems& p, const std::string& at, const v1::ValidationCollective& c) {
  RequirePath(p, at + "cluster", c.cluster());
  if (c.op().empty()) {
    p.Add(at + "op", "required (all-reduce, all-gather, reduce-scatter, ...)");
  } else if (absl::StatusOr<hetsim::CollectiveOp> op = hetsim::ParseCollectiveOp(c.op()); !op.ok()) {
    p.Add(at + "op", op.status().message());
  }
  if (c.bytes() == 0) p.Add(at + "bytes", "required (the collective's size, nccl-tests' convention)");
  if (c.num_gpus() < 2) p.Add(at + "num_gpus", "%d, but a collective needs at least 2 GPUs", c.num_gpus());
  CheckMeasured(p, at + "measured_bus_bandwidth_gbytes_per_s", c.measured_bus_bandwidth_gbytes_per_s());
}

void CheckBounds(proto::Problems& p, const v1::ValidationBounds& b) {
  proto::CheckRange(p, "bounds.max_mape_percent", b.max_mape_percent(), 0, 1000);
  proto::CheckRange(p, "bounds.max_abs_error_percent", b.max_abs_error_percent(), 0, 1000);
  proto::CheckRange(p, "bounds.max_calibrated_mape_percent", b.max_calibrated_mape_percent(), 0, 1000);
  proto::CheckRange(p, "bounds.min_top1_agreement", b.min_top1_agreement(), 0, 1);
  proto::CheckRange(p, "bounds.max_mean_regret_percent", b.max_mean_regret_percent(), 0, 100);
}

// A training run measured in tokens per second rather than TFLOP/s: another quantity.
bool CountsTokens(const v1::ValidationCase& c) {
  return c.has_training_run() && c.training_run().measured_tokens_per_second_per_gpu() != 0;
}

absl::Status ValidateSet(const v1::ValidationSet& set, absl::string_view file) {
  proto::Problems p(file);
  CheckBounds(p, set.bounds());
  if (set.cases().empty()) p.Add("cases", "required: at least one case");
  if (set.cases_size() > kMaxCases) p.Add("cases", "%d cases, more than %d", set.cases_size(), kMaxCases);
  std::set<std::string> names;
  for (int i = 0; i < set.cases_size() && i < kMaxCases; ++i) {
    const v1::ValidationCase& c = set.cases(i);
    const std::string at = absl::StrFormat("cases[%d].", i);
    if (c.name().empty()) {
      p.Add(at + "name", "required");
    } else if (!names.insert(c.name()).second) {
      p.Add(at + "name", "duplicate name \"%s\"", c.name());
    }
    switch (c.measurement_case()) {
      case v1::ValidationCase::kTrainingRun: CheckTrainingRun(p, at + "training_run.", c.training_run()); break;
      case v1::ValidationCase::kCollective: CheckCollective(p, at + "collective.", c.collective()); break;
      case v1::ValidationCase::MEASUREMENT_NOT_SET:
        p.Add(at + "training_run", "required: a training_run or a collective measurement");
        break;
    }
    if (i > 0 && c.measurement_case() != v1::ValidationCase::MEASUREMENT_NOT_SET &&
        set.cases(0).measurement_case() != v1::ValidationCase::MEASUREMENT_NOT_SET &&
        (c.measurement_case() != set.cases(0).measurement_case() || CountsTokens(c) != CountsTokens(set.cases(0)))) {
      p.Add(at.substr(0, at.size() - 1),
            "a different kind of measurement than cases[0]: a set's cases are ranked "
            "together, so they measure one quantity (put other kinds in another file)");
    }
  }
  return p.ToStatus();
}

// Plan and cluster paths as seen from the working folder.
void ResolvePaths(v1::ValidationSet& set, absl::string_view file) {
  for (v1::ValidationCase& c : *set.mutable_cases()) {
    if (c.has_training_run()) {
      v1::ValidationTrainingRun* run = c.mutable_training_run();
      run->set_plan(proto::ResolveRelativeTo(file, run->plan()));
      run->set_cluster(proto::ResolveRelativeTo(file, run->cluster()));
    } else if (c.has_collective()) {
      c.mutable_collective()->set_cluster(proto::ResolveRelativeTo(file, c.collective().cluster()));
    }
  }
}

// The colleague format of validation/nccl/measured.csv (validation/README.md): '#' comments, a header
// naming the columns, then cluster,op,bytes,gpus,busbw_gbytes_per_s,source rows, gpus a range "a-b"
// or one id. Each row becomes a collective case named "<cluster file stem> <op> <bytes> B <gpus>".
absl::Status ParseCollectiveCsv(absl::string_view path, v1::ValidationSet* set) {
  absl::StatusOr<std::string> text = proto::ReadInputFile(path, proto::InputKind::kMessage);
  if (!text.ok()) return text.status();
  const std::vector<std::string> kColumns = {"cluster", "op", "bytes", "gpus", "busbw_gbytes_per_s", "source"};
  bool header = false;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(*text, '\n')) {
    ++line_number;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || absl::StartsWith(line, "#")) continue;
    const std::vector<std::string> fields = absl::StrSplit(line, ',');
    auto bad = [&](absl::string_view column, absl::string_view problem) {
      return absl::InvalidArgumentError(absl::StrFormat("%s:%d: %s: %s", path, line_number, column, problem));
    };
    if (!header) {
      if (fields != kColumns) return bad("header", absl::StrCat("expected \"", absl::StrJoin(kColumns, ","), "\""));
      header = true;
      continue;
    }
    if (fields.size() != kColumns.size()) {
      return bad("row", absl::StrFormat("%d fields, expected %d", fields.size(), kColumns.size()));
    }
    v1::ValidationCase* c = set->add_cases();
    v1::ValidationCollective* col = c->mutable_collective();
    col->set_cluster(fields[0]);
    col->set_op(fields[1]);
    uint64_t bytes = 0;
    if (!absl::SimpleAtoi(fields[2], &bytes))
      return bad("bytes", absl::StrCat("\"", fields[2], "\" is not a size in bytes"));
    col->set_bytes(bytes);
    const std::vector<std::string> ends = absl::StrSplit(fields[3], absl::MaxSplits('-', 1));
    uint32_t first = 0, last = 0;
    if (!absl::SimpleAtoi(ends[0], &first) || (ends.size() == 2 && !absl::SimpleAtoi(ends[1], &last))) {
      return bad("gpus", absl::StrCat("\"", fields[3], "\" is not a GPU id or a range a-b"));
    }
    if (ends.size() == 1) last = first;
    if (last < first) return bad("gpus", absl::StrCat("\"", fields[3], "\" is an empty range"));
    col->set_first_gpu(first);
    col->set_num_gpus(last - first + 1);
    double busbw = 0;
    if (!absl::SimpleAtod(fields[4], &busbw)) {
      return bad("busbw_gbytes_per_s", absl::StrCat("\"", fields[4], "\" is not a number"));
    }
    col->set_measured_bus_bandwidth_gbytes_per_s(busbw);
    c->set_source(fields[5]);
    c->set_name(absl::StrFormat("%s %s %d B %s", std::filesystem::path(fields[0]).stem().string(), fields[1], bytes,
                                fields[3]));
  }
  if (!header) return absl::InvalidArgumentError(absl::StrCat(path, ": no header line"));
  set->set_name(std::filesystem::path(std::string(path)).parent_path().filename().string());
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<LoadedValidationSet> LoadValidationSet(absl::string_view path) {
  LoadedValidationSet out;
  out.path = std::string(path);
  if (absl::EndsWith(path, ".csv")) {
    if (absl::Status s = ParseCollectiveCsv(path, &out.set); !s.ok()) return s;
  } else if (absl::Status s = proto::Load(path, &out.set); !s.ok()) {
    return s;
  }
  if (absl::Status s = ValidateSet(out.set, path); !s.ok()) return s;
  ResolvePaths(out.set, path);
  const v1::ValidationCase& first = out.set.cases(0);
  out.unit = first.has_collective() ? kBusBandwidthUnit : CountsTokens(first) ? kTokensUnit : kTflopsUnit;
  return out;
}

absl::StatusOr<std::vector<std::string>> BundledValidationFiles() {
  const absl::string_view folder = HETSIM_VALIDATION_DIR;
  std::vector<std::string> files;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(folder), error)) {
    if (entry.is_regular_file() && entry.path().extension() == ".pbtxt") files.push_back(entry.path().string());
  }
  if (error)
    return absl::NotFoundError(absl::StrCat(folder, ": cannot list the bundled validation sets: ", error.message()));
  if (files.empty()) return absl::NotFoundError(absl::StrCat(folder, ": no validation set (*.pbtxt) found"));
  std::sort(files.begin(), files.end());
  return files;
}

absl::StatusOr<std::vector<LoadedValidationSet>> LoadValidationSets(std::vector<std::string> files) {
  if (files.empty()) {
    HETSIM_ASSIGN_OR_RETURN(files, BundledValidationFiles());
  }
  std::vector<LoadedValidationSet> sets;
  for (const std::string& file : files) {
    HETSIM_ASSIGN_OR_RETURN(LoadedValidationSet loaded, LoadValidationSet(file));
    sets.push_back(std::move(loaded));
  }
  return sets;
}

}  // namespace hetsim::fidelity
