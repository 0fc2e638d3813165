#include "sim/pipeline/schedule.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "base/spec/defaults.h"

namespace hetsim::pipeline {
namespace {

// Parameters named `spec` (a ScheduleSpec) hide the namespace.
using Kind = hetsim::spec::ScheduleKind;

bool IsInterleaved(const ScheduleSpec& spec) { return spec.kind == Kind::kInterleaved1F1B; }

int ChunksOf(const ScheduleSpec& spec) { return IsInterleaved(spec) ? std::max(1, spec.virtual_stages) : 1; }

absl::Status CheckShape(const ScheduleSpec& spec, absl::string_view where) {
  if (spec.num_stages < 1) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: stages: a pipeline needs at least one stage", where));
  }
  if (spec.num_microbatches < 1) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: global_batch_size / micro_batch_size: %d microbatches, need at least one", where, spec.num_microbatches));
  }
  if (IsInterleaved(spec)) {
    if (spec.virtual_stages < 0) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: virtual_stages: %d must be >= 1", where, spec.virtual_stages));
    }
    if (spec.num_microbatches % spec.num_stages != 0) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: schedule: INTERLEAVED_1F1B needs the number of microbatches (%d) to be a multiple of "
                          "the number of stages (%d)",
                          where, spec.num_microbatches, spec.num_stages));
    }
  }
  // Node ids of the DAG are int32: 4 m K nodes must fit.
  const int64_t nodes = 4 * int64_t{spec.num_microbatches} * spec.num_stages *
                        (IsInterleaved(spec) ? std::max(1, spec.virtual_stages) : 1);
  if (nodes > int64_t{1} << 30) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: %d microbatches x %d stages is too large a pipeline (over 2^30 DAG nodes)", where,
                        spec.num_microbatches, spec.num_stages));
  }
  if (!spec.warmup_forwards.empty() && static_cast<int>(spec.warmup_forwards.size()) != spec.num_stages) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: stages[].warmup_forwards: %d counts for %d stages", where,
                                                      spec.warmup_forwards.size(), spec.num_stages));
  }
  if (spec.kind == Kind::kH1F1B) {
    if (static_cast<int>(spec.h1f1b.boundary_comm.size()) != spec.num_stages - 1) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: H_1F1B needs the communication cost of each of the %d stage boundaries, got %d", where,
                          spec.num_stages - 1, spec.h1f1b.boundary_comm.size()));
    }
    if (!(spec.h1f1b.epsilon >= 0) || !std::isfinite(spec.h1f1b.epsilon)) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: h1f1b_epsilon: %g must be a finite number >= 0", where, spec.h1f1b.epsilon));
    }
  }
  return absl::OkStatus();
}

// Which (microbatch, chunk) the k-th forward or backward of a stage works on: chunks of S
// microbatches, chunk 0 first for forwards and the last chunk first for backwards (Megatron).
PipelineOp NthOp(OpKind kind, int k, int num_stages, int chunks) {
  if (chunks == 1) return {kind, k, 0};
  const int group = num_stages * chunks;
  int chunk = (k % group) / num_stages;
  if (kind == OpKind::kBackward) chunk = chunks - 1 - chunk;
  return {kind, (k / group) * num_stages + k % num_stages, chunk};
}

// Walks every stage's order as far as its dependencies allow; fails if some stage can never proceed
// (a launch pattern that deadlocks, e.g. a stage launching fewer warm-up forwards than the next).
absl::Status CheckRunsToCompletion(const PipelineSchedule& s, absl::string_view where) {
  const int S = s.num_stages, K = s.num_virtual_stages(), m = s.num_microbatches;
  std::vector<char> forward_done(static_cast<size_t>(m) * K, 0), backward_done(forward_done.size(), 0);
  std::vector<size_t> next(S, 0);
  size_t remaining = 0;
  for (const auto& ops : s.ops) remaining += ops.size();
  while (remaining > 0) {
    bool progress = false;
    for (int stage = 0; stage < S; ++stage) {
      while (next[stage] < s.ops[stage].size()) {
        const PipelineOp& op = s.ops[stage][next[stage]];
        const int k = op.chunk * S + stage;
        const size_t at = static_cast<size_t>(op.microbatch) * K + k;
        bool ready;
        if (op.kind == OpKind::kForward) {
          ready = k == 0 || forward_done[at - 1];
        } else {
          ready = forward_done[at] && (k == K - 1 || backward_done[at + 1]);
        }
        if (!ready) break;
        (op.kind == OpKind::kForward ? forward_done : backward_done)[at] = 1;
        ++next[stage];
        --remaining;
        progress = true;
      }
    }
    if (!progress) {
      for (int stage = 0; stage < S; ++stage) {
        if (next[stage] < s.ops[stage].size()) {
          const PipelineOp& op = s.ops[stage][next[stage]];
          return absl::InvalidArgumentError(absl::StrFormat(
              "%s: stages[%d].warmup_forwards: the schedule deadlocks (stage %d waits forever at "
              "%s of microbatch %d); warm-up counts must not increase from one stage to the next",
              where, stage, stage, op.kind == OpKind::kForward ? "the forward" : "the backward", op.microbatch));
        }
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

int H1F1BDelta(Time comm, Time t_max, double epsilon) {
  const double c = TimeToPicosecondsDouble(comm);
  const double t = TimeToPicosecondsDouble(t_max);
  if (c <= epsilon * t) return 1;  // also c == 0
  if (c <= t / 2) return 2;
  return 3;
}

absl::StatusOr<std::vector<int>> WarmupForwards(const ScheduleSpec& spec, absl::string_view where) {
  if (absl::Status st = CheckShape(spec, where); !st.ok()) return st;
  const int S = spec.num_stages;
  const int chunks = ChunksOf(spec);
  const int forwards = spec.num_microbatches * chunks;  // forward operations per stage
  std::vector<int> n(S);
  for (int s = S - 1; s >= 0; --s) {
    const int after = S - 1 - s;  // stages after this one
    switch (spec.kind) {
      case Kind::kGpipe: n[s] = forwards; break;
      case Kind::kEager1F1B: n[s] = 2 * after + 1; break;
      case Kind::kH1F1B: {
        const double eps = hetsim::spec::H1f1bEpsilonOr(spec.h1f1b.epsilon);
        n[s] = s == S - 1 ? 1 : n[s + 1] + H1F1BDelta(spec.h1f1b.boundary_comm[s], spec.h1f1b.t_max, eps);
        break;
      }
      case Kind::kInterleaved1F1B: n[s] = 2 * after + (chunks - 1) * S + 1; break;
      case Kind::kOneFOneB: n[s] = after + 1; break;
    }
  }
  for (int s = 0; s < S; ++s) n[s] = std::min(n[s], forwards);
  for (int s = 0; s < S && !spec.warmup_forwards.empty(); ++s) {
    const int given = spec.warmup_forwards[s];
    if (given == 0) continue;
    if (given < 0 || given > forwards) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: stages[%d].warmup_forwards: %d is outside [1, %d] (forwards the stage runs)", where, s,
                          given, forwards));
    }
    n[s] = given;
  }
  return n;
}

absl::StatusOr<PipelineSchedule> BuildSchedule(const ScheduleSpec& spec, absl::string_view where) {
  absl::StatusOr<std::vector<int>> warmup = WarmupForwards(spec, where);
  if (!warmup.ok()) return warmup.status();
  PipelineSchedule s;
  s.kind = spec.kind;
  s.num_stages = spec.num_stages;
  s.num_microbatches = spec.num_microbatches;
  s.virtual_stages = ChunksOf(spec);
  s.warmup_forwards = *std::move(warmup);
  s.ops.resize(s.num_stages);
  const int total = s.num_microbatches * s.virtual_stages;
  for (int stage = 0; stage < s.num_stages; ++stage) {
    std::vector<PipelineOp>& ops = s.ops[stage];
    ops.reserve(2 * static_cast<size_t>(total));
    int next_forward = 0, next_backward = 0;
    while (next_forward < s.warmup_forwards[stage]) {
      ops.push_back(NthOp(OpKind::kForward, next_forward++, s.num_stages, s.virtual_stages));
    }
    while (next_backward < total) {
      ops.push_back(NthOp(OpKind::kBackward, next_backward++, s.num_stages, s.virtual_stages));
      if (next_forward < total) {
        ops.push_back(NthOp(OpKind::kForward, next_forward++, s.num_stages, s.virtual_stages));
      }
    }
  }
  if (absl::Status st = CheckRunsToCompletion(s, where); !st.ok()) return st;
  return s;
}

ScheduleSpec ScheduleSpecFromPlan(const hetsim::spec::PlanSpec& plan, std::vector<Time> boundary_comm, Time t_max) {
  ScheduleSpec spec;
  spec.kind = plan.schedule;
  spec.num_stages = static_cast<int>(plan.stages.size());
  spec.num_microbatches = static_cast<int>(plan.microbatches);
  spec.virtual_stages = plan.virtual_stages;
  spec.warmup_forwards.reserve(plan.stages.size());
  for (const hetsim::spec::StageSpec& stage : plan.stages) spec.warmup_forwards.push_back(stage.warmup_forwards);
  spec.h1f1b.boundary_comm = std::move(boundary_comm);
  spec.h1f1b.t_max = t_max;
  spec.h1f1b.epsilon = plan.h1f1b_epsilon;
  return spec;
}

std::vector<LayerRange> VirtualStageLayers(const std::vector<int>& stage_num_layers, int chunks,
                                           spec::EdgeLayers edges) {
  const int S = static_cast<int>(stage_num_layers.size());
  chunks = std::max(1, chunks);
  std::vector<LayerRange> ranges(static_cast<size_t>(S) * chunks);
  if (S == 0) return ranges;
  // The embedding layers stage 0 holds and the head layers the last stage holds.
  std::vector<int> lead(S, 0), tail(S, 0);
  lead[0] = std::clamp(edges.embedding, 0, stage_num_layers[0]);
  tail[S - 1] = std::clamp(edges.head, 0, stage_num_layers[S - 1] - lead[S - 1]);
  int next = 0;
  for (int c = 0; c < chunks; ++c) {
    for (int s = 0; s < S; ++s) {
      const int blocks = stage_num_layers[s] - lead[s] - tail[s];
      // Blocks that do not divide, in layers that do: the embedding and the head count as layers.
      const bool edges_count = blocks % chunks != 0 && stage_num_layers[s] % chunks == 0;
      const int size = edges_count ? stage_num_layers[s] / chunks
                                   : blocks / chunks + (c < blocks % chunks ? 1 : 0) + (c == 0 ? lead[s] : 0) +
                                         (c == chunks - 1 ? tail[s] : 0);
      ranges[static_cast<size_t>(c) * S + s] = {next, size};
      next += size;
    }
  }
  return ranges;
}

std::vector<LayerRange> DealtVirtualStageLayers(const std::vector<int>& sizes) {
  std::vector<LayerRange> ranges;
  ranges.reserve(sizes.size());
  int next = 0;
  for (int size : sizes) {
    ranges.push_back({next, size});
    next += size;
  }
  return ranges;
}

std::vector<int> PeakInFlight(const PipelineSchedule& schedule) {
  std::vector<int> peak(schedule.num_stages, 0);
  for (int stage = 0; stage < schedule.num_stages; ++stage) {
    int live = 0;
    for (const PipelineOp& op : schedule.ops[stage]) {
      live += op.kind == OpKind::kForward ? 1 : -1;
      peak[stage] = std::max(peak[stage], live);
    }
  }
  return peak;
}

absl::string_view ScheduleName(hetsim::spec::ScheduleKind kind) {
  switch (kind) {
    case Kind::kGpipe: return "GPipe";
    case Kind::kOneFOneB: return "1F1B";
    case Kind::kEager1F1B: return "Eager-1F1B";
    case Kind::kH1F1B: return "H-1F1B";
    case Kind::kInterleaved1F1B: return "interleaved 1F1B";
  }
  return "1F1B";
}

}  // namespace hetsim::pipeline
