#include "service/fidelity/predict.h"

#include "service/fidelity/validation_set.h"

#include <filesystem>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/wall_limit.h"
#include "proto/inputs.h"
#include "proto/resolve.h"
#include "proto/validate_cluster.h"
#include "proto/validate_plan.h"
#include "service/calibrate/overhead_probe.h"
#include "service/driver/cluster_topology.h"
#include "service/driver/simulate.h"
#include "sim/collectives/simulate.h"
#include "sim/workload/model_cost.h"
#include "traces/metrics.h"

namespace hetsim::fidelity {
namespace {

namespace v1 = hetsim::v1;

// "<where>.<field>: <the problem>", keeping the status code (bad input stays bad input).
absl::Status InCase(const absl::Status& s, absl::string_view where, absl::string_view field) {
  return Prefixed(s, absl::StrCat(where, ".", field, ": "));
}

// Eq. 3 counts a standard GPT block (4h MLP, multi-head attention, dense): refuse anything else
// rather than quietly converting with the wrong formula.
absl::StatusOr<double> Eq3Flop(const v1::Model& model, const v1::Plan& plan, absl::string_view where) {
  const std::string field = absl::StrCat(where, ".training_run.flop_count: MEGATRON_EQ3 ");
  if (!model.has_transformer()) return absl::InvalidArgumentError(field + "needs a transformer model");
  const v1::Transformer& t = model.transformer();
  const bool standard = proto::FfnHiddenSize(t) == 4 * uint64_t{t.hidden_size()} && !t.gated_mlp() &&
                        proto::KvHeads(t) == t.num_attention_heads() && t.num_experts() <= 1 && !t.has_mla() &&
                        (t.head_dim() == 0 || uint64_t{t.head_dim()} * t.num_attention_heads() == t.hidden_size());
  if (!standard) {
    return absl::InvalidArgumentError(
        field +
        "counts a standard GPT (4h MLP, no GQA or MLA, no gated MLP, no MoE, heads of h / a); "
        "use MODEL_FLOPS for this model");
  }
  return MegatronEq3Flop(static_cast<double>(plan.global_batch_size()), static_cast<double>(t.seq_length()),
                         t.num_layers(), static_cast<double>(t.hidden_size()), static_cast<double>(t.vocab_size()));
}

std::string TrainingSetup(const v1::Plan& plan, const v1::Report& report) {
  if (plan.stages().empty()) {  // Plan.pipelines: each pipeline its own shape
    return absl::StrFormat("%d GPUs in %d pipelines, %d mb%s", report.num_gpus(), plan.pipelines_size(),
                           report.num_microbatches(), report.oom() ? ", OOM" : "");
  }
  const v1::Stage& first = plan.stages(0);
  // A mixed stage's replicas: the largest TP of its groups, its replicas over all of them.
  uint32_t tp = std::max<uint32_t>(1, first.tensor_parallel()), dp = std::max<uint32_t>(1, first.data_parallel());
  if (first.replica_groups_size() > 0) tp = dp = 0;
  for (const v1::ReplicaGroup& g : first.replica_groups()) {
    tp = std::max<uint32_t>(tp, std::max<uint32_t>(1, g.tensor_parallel()));
    dp += std::max<uint32_t>(1, g.data_parallel());
  }
  std::string s = absl::StrFormat("%d GPUs: TP %d x PP %d", report.num_gpus(), tp, plan.stages_size());
  if (plan.context_parallel() > 1) absl::StrAppend(&s, " x CP ", plan.context_parallel());
  absl::StrAppendFormat(&s, " x DP %d%s, %d mb", dp, first.replica_groups_size() > 0 ? " (mixed)" : "",
                        report.num_microbatches());
  if (plan.virtual_stages() > 1) absl::StrAppend(&s, ", v ", plan.virtual_stages());
  if (report.oom()) absl::StrAppend(&s, ", OOM");
  return s;
}

// The group a case ranks in when its set names none: one model on one cluster.
std::string DefaultGroup(const v1::ValidationTrainingRun& run, const proto::PlanInputs& inputs) {
  const std::string model = !inputs.model_path.empty()     ? inputs.model_path
                            : !inputs.model.name().empty() ? inputs.model.name()
                                                           : inputs.plan_path;
  return absl::StrCat(std::filesystem::path(run.cluster()).filename().string(), " / ",
                      std::filesystem::path(model).filename().string());
}

// The probes of calibration.h: the measurement as an iteration time, and two more simulations.
absl::Status AddCalibrationProbes(const proto::PlanInputs& inputs, absl::string_view where, bool exact,
                                  v1::FidelityCase& out) {
  // Throughput is work over time, the same work measured and predicted.
  const double measured_s = out.predicted_time_ms() * 1e-3 * out.predicted() / out.measured();
  absl::StatusOr<calibrate::OverheadProbe> probe =
      calibrate::ProbeRun(inputs, out.predicted_time_ms() * 1e-3, measured_s, exact);
  if (!probe.ok()) return InCase(probe.status(), where, "training_run.plan");
  out.set_measured_time_ms(measured_s * 1e3);
  out.set_gemm_probe_time_ms(probe->gemm_probe * 1e3);
  out.set_pass_probe_time_ms(probe->pass_probe * 1e3);
  out.set_network_probe_time_ms(probe->network_probe * 1e3);
  out.set_kernel_probe_time_ms(probe->kernel_probe * 1e3);
  out.set_collective_probe_time_ms(probe->collective_probe * 1e3);
  const calibrate::OverheadBounds bounds = calibrate::BoundsOf(inputs.cluster);
  out.set_gemm_scale_min(bounds.gemm_min);
  out.set_iteration_overhead_ms(bounds.iteration_s * 1e3);
  out.set_pass_overhead_us(bounds.pass_s * 1e6);
  out.set_hbm_scale_min(bounds.hbm_min);
  out.set_collective_latency_us(bounds.collective_s * 1e6);
  return absl::OkStatus();
}

absl::StatusOr<v1::FidelityCase> PredictTrainingRun(const v1::ValidationTrainingRun& run, absl::string_view where,
                                                    const PredictOptions& options) {
  absl::StatusOr<proto::PlanInputs> inputs = proto::LoadPlanInputs(run.plan(), run.cluster());
  if (!inputs.ok()) return InCase(inputs.status(), where, "training_run.plan");
  v1::FidelityCase out;
  out.set_group(DefaultGroup(run, *inputs));
  absl::StatusOr<v1::Report> simulated = driver::SimulateReport(*inputs, driver::DefaultFidelity(options.exact));
  if (!simulated.ok()) return InCase(simulated.status(), where, "training_run.plan");
  const v1::Report& report = *simulated;
  if (!(report.iteration_time_ms() > 0)) {
    return absl::InvalidArgumentError(absl::StrCat(where, ".training_run.plan: the simulated iteration takes no time (",
                                                   report.iteration_time_ms(), " ms): nothing to compare"));
  }

  double flop = report.model_flop_per_iteration();
  if (run.flop_count() == v1::MODEL_FLOPS_CAUSAL) {
    // Half of every attention core's s^2 products, as Megatron-LM counts a causal mask since core_v0.12.0.
    const workload::ModelCost cost = workload::ModelCost::Create(proto::ResolveModel(inputs->model, run.plan()));
    flop -= 0.5 * cost.AttentionCoreFlopPerSample() * static_cast<double>(inputs->plan.global_batch_size());
  }
  if (run.flop_count() == v1::MEGATRON_EQ3) {
    absl::StatusOr<double> eq3 = Eq3Flop(inputs->model, inputs->plan, where);
    if (!eq3.ok()) return eq3.status();
    flop = *eq3;
  }
  out.set_setup(TrainingSetup(inputs->plan, report));
  out.set_predicted_time_ms(report.iteration_time_ms());
  if (run.measured_tokens_per_second_per_gpu() != 0) {
    const v1::Model& model = inputs->model;
    // Validated plans always have a sequence length (transformer or layer_list).
    const uint64_t seq = model.has_transformer() ? model.transformer().seq_length() : model.layer_list().seq_length();
    out.set_unit(kTokensUnit);
    out.set_measured(run.measured_tokens_per_second_per_gpu());
    out.set_predicted(static_cast<double>(inputs->plan.global_batch_size() * seq) /
                      (report.iteration_time_ms() * 1e-3 * report.num_gpus()));
  } else {
    out.set_unit(kTflopsUnit);
    out.set_measured(run.measured_tflops_per_gpu());
    out.set_predicted(flop / (report.iteration_time_ms() * 1e-3 * report.num_gpus()) / 1e12);
  }
  if (options.calibration_probes) {
    if (absl::Status s = AddCalibrationProbes(*inputs, where, options.exact, out); !s.ok()) return s;
  }
  return out;
}

absl::StatusOr<v1::FidelityCase> PredictCollective(const v1::ValidationCollective& c, absl::string_view where) {
  absl::StatusOr<v1::Cluster> cluster = proto::LoadCluster(c.cluster());
  if (!cluster.ok()) return InCase(cluster.status(), where, "collective.cluster");
  absl::StatusOr<driver::ClusterNetwork> network = driver::BuildClusterNetwork(*cluster, c.cluster());
  if (!network.ok()) return InCase(network.status(), where, "collective.cluster");
  collectives::CollectiveRequest request;
  request.op = *hetsim::ParseCollectiveOp(c.op());  // checked when the set was loaded
  request.bytes = static_cast<int64_t>(std::min<uint64_t>(c.bytes(), collectives::kMaxCollectiveBytes + 1));
  for (uint32_t g = 0; g < c.num_gpus(); ++g) request.gpus.push_back(static_cast<hetsim::GpuId>(c.first_gpu() + g));
  absl::StatusOr<collectives::CollectiveResult> r =
      collectives::SimulateCollective(*network->topology, *network->router, request);
  if (!r.ok()) return InCase(r.status(), where, "collective");
  v1::FidelityCase out;
  out.set_setup(absl::StrFormat("%s %d B, %d GPUs from %d", c.op(), c.bytes(), c.num_gpus(), c.first_gpu()));
  out.set_group(absl::StrCat(std::filesystem::path(c.cluster()).filename().string(), " / ", c.op()));
  out.set_unit(kBusBandwidthUnit);
  out.set_measured(c.measured_bus_bandwidth_gbytes_per_s());
  out.set_predicted(r->busbw_bytes_per_s / 1e9);
  out.set_predicted_time_ms(hetsim::TimeToSeconds(r->time) * 1e3);
  return out;
}

}  // namespace

double MegatronEq3Flop(double batch, double seq, double blocks, double hidden, double vocab) {
  return 96 * batch * seq * blocks * hidden * hidden * (1 + seq / (6 * hidden) + vocab / (16 * blocks * hidden));
}

absl::StatusOr<v1::FidelityCase> PredictCase(const v1::ValidationCase& validation_case, absl::string_view where,
                                             const PredictOptions& options) {
  absl::StatusOr<v1::FidelityCase> out;
  switch (validation_case.measurement_case()) {
    case v1::ValidationCase::kTrainingRun:
      out = PredictTrainingRun(validation_case.training_run(), where, options);
      break;
    case v1::ValidationCase::kCollective: out = PredictCollective(validation_case.collective(), where); break;
    case v1::ValidationCase::MEASUREMENT_NOT_SET:
      return absl::InvalidArgumentError(absl::StrCat(where, ": no measurement"));
  }
  if (!out.ok()) return out.status();
  out->set_name(validation_case.name());
  if (!validation_case.group().empty()) out->set_group(validation_case.group());
  out->set_error_percent((out->predicted() - out->measured()) / out->measured() * 100);
  return out;
}

}  // namespace hetsim::fidelity
