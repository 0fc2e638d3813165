// Pipeline schedules as per-stage operation orders: the sequence of F(microbatch, chunk) and
// B(microbatch, chunk) each stage executes, derived from the warm-up forward counts.
//
// Every 1F1B-style schedule runs, on stage i, N_i forwards (warm-up), then alternates one backward
// and one forward while forwards remain (steady phase), then drains the remaining backwards. N_i
// counts every forward launched before the stage's first backward (HAPT's convention: classic 1F1B
// has N_i = S - i + 1 for 1-based i, so the last stage alternates from the start):
//   GPIPE             N_i = m (all forwards, then all backwards)
//   ONE_F_ONE_B       N_i = S - i + 1
//   EAGER_1F1B        N_i = 2 (S - i) + 1
//   H_1F1B            N_S = 1, N_i = N_{i+1} + delta_i, delta_i from HAPT Eq. 2
//   INTERLEAVED_1F1B  Megatron's interleaved schedule over v model chunks per stage:
//                     N_i = 2 (S - i) + (v - 1) S + 1 chunk-forwards (m must be a multiple of S)
// All counts are capped at the number of (chunk-)microbatches; explicit counts override them.
// Microbatches and stages are 0-based in the API; the formulas above use HAPT's 1-based i.
#ifndef HETSIM_SIM_PIPELINE_SCHEDULE_H_
#define HETSIM_SIM_PIPELINE_SCHEDULE_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/spec/model.h"
#include "base/spec/plan.h"
#include "base/time.h"

namespace hetsim::pipeline {

enum class OpKind : uint8_t { kForward, kBackward };

struct PipelineOp {
  OpKind kind;
  int32_t microbatch;  // 0-based
  int32_t chunk;       // model chunk on the stage, 0 unless interleaved; virtual stage = chunk*S + stage
};

// Inputs of H-1F1B's Eq. 2: per-microbatch communication cost between stage i and i+1 (one entry per
// boundary, S - 1 of them) and t_max, the largest per-stage compute cost (forward + backward).
struct H1F1BInputs {
  std::vector<Time> boundary_comm;
  Time t_max = 0;
  double epsilon = spec::kDefaultH1f1bEpsilon;  // the plan's h1f1b_epsilon
};

// HAPT Eq. 2: 1 when c <= epsilon * t_max (c == 0 included), 2 when c <= t_max / 2, else 3
// (3 also beyond t_max, where no launch count hides the transfer completely).
int H1F1BDelta(Time comm, Time t_max, double epsilon);

struct ScheduleSpec {
  spec::ScheduleKind kind = spec::ScheduleKind::kOneFOneB;
  int num_stages = 1;
  int num_microbatches = 1;
  int virtual_stages = 1;  // INTERLEAVED_1F1B only
  // Explicit warm-up forward counts per stage (the plan's Stage.warmup_forwards); empty, or one per
  // stage with 0 meaning "derive". Counts above the number of (chunk-)microbatches are an error.
  std::vector<int> warmup_forwards;
  H1F1BInputs h1f1b;  // H_1F1B only
};

// The warm-up counts N_i of every stage (explicit ones applied), checked: 1 <= N_i <= forwards on the
// stage. `where` prefixes error messages ("plan.pbtxt").
absl::StatusOr<std::vector<int>> WarmupForwards(const ScheduleSpec& spec, absl::string_view where);

struct PipelineSchedule {
  spec::ScheduleKind kind = spec::ScheduleKind::kOneFOneB;
  int num_stages = 0;
  int num_microbatches = 0;
  int virtual_stages = 1;
  std::vector<int> warmup_forwards;          // per stage, as executed
  std::vector<std::vector<PipelineOp>> ops;  // per stage, in execution order
  // A stage's next operation waits for the send its previous operation issued (Plan.blocking_p2p).
  bool blocking_p2p = false;
  // Every transfer a rendezvous in DeepSpeed's TrainSchedule step order (Plan.p2p_rendezvous): one
  // model chunk per stage and ONE_F_ONE_B's warm-up counts only (the plan's validation checks it).
  bool p2p_rendezvous = false;

  int num_virtual_stages() const { return num_stages * virtual_stages; }
};

absl::StatusOr<PipelineSchedule> BuildSchedule(const ScheduleSpec& spec, absl::string_view where);

// The spec of a plan: schedule kind, stage count, microbatches (global_batch_size / micro_batch_size),
// virtual stages, explicit warm-up counts and epsilon. H_1F1B also needs the measured or modelled
// costs: `boundary_comm[i]` the per-microbatch transfer time between stage i and i+1 (activations one
// way; HAPT's c_i) and `t_max` the largest per-stage forward + backward time (HAPT's t_max). Both are
// ignored by the other schedules.
ScheduleSpec ScheduleSpecFromPlan(const spec::PlanSpec& plan, std::vector<Time> boundary_comm = {}, Time t_max = 0);

// INTERLEAVED_1F1B: which model layers each virtual stage k = chunk * S + stage runs. The model's
// layer sequence is dealt to virtual stages in order 0, 1, ..., K-1, and physical stage s keeps its
// plan's layer count. As in Megatron-LM, a stage's blocks (its layers other than the embedding and the
// head, `edges`) are cut into `chunks` equal chunks; the embedding rides with the first chunk of stage
// 0 (virtual stage 0) and the head with the last chunk of the last stage (virtual stage K-1). GPT-3
// 175B on 8 stages of 3 chunks: 24 chunks of 4 blocks, the first with the embedding in front, the last
// with the head behind. When the blocks do not divide but the stage's layers do, the embedding and
// the head count as layers (Megatron-LM's --account-for-embedding-in-pipeline-split and
// --account-for-loss-in-pipeline-split): Llama 3.1 405B on 8 stages of 8 chunks, 16 layers a stage,
// every chunk 2 layers, stage 0's first the embedding and one block. Blocks that do not divide
// otherwise (the validator refuses them; unvalidated callers may pass them) give near-equal chunks,
// the first blocks % chunks one block longer. Without
// interleaving (chunks == 1) this is the plan's own ranges. A chunk's layers are a range as a stage's
// are: the spec's LayerRange.
using LayerRange = spec::LayerRange;
std::vector<LayerRange> VirtualStageLayers(const std::vector<int>& stage_num_layers, int chunks,
                                           spec::EdgeLayers edges = {});
// The plan's own layout (Plan.virtual_stage_layers): virtual stage k takes the next sizes[k] layers.
std::vector<LayerRange> DealtVirtualStageLayers(const std::vector<int>& sizes);

// Per stage, the largest number of microbatches (chunk-microbatches when interleaved) whose forward
// has run and whose backward has not, walking the stage's operation order: the activations the
// stage holds at its peak.
std::vector<int> PeakInFlight(const PipelineSchedule& schedule);

absl::string_view ScheduleName(spec::ScheduleKind kind);

}  // namespace hetsim::pipeline

#endif  // HETSIM_SIM_PIPELINE_SCHEDULE_H_
