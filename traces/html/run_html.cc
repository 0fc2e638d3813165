#include "traces/html/run_html.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/counted.h"
#include "base/time.h"
#include "base/units.h"
#include "proto/limits.h"
#include "topology/device_graph.h"
#include "traces/html/chart_internal.h"
#include "traces/html/gantt_internal.h"
#include "traces/html/page_internal.h"
#include "traces/html/svg_internal.h"
#include "traces/pipelines_report.h"
#include "traces/replica_group_report.h"

namespace hetsim::traces::html {
namespace {

using executor::ExecutionResult;
using executor::ExecutionSetup;

std::string Pct(double share) { return absl::StrFormat("%.1f%%", 100 * share); }

std::vector<Figure> HeaderFigures(const v1::Report& r) {
  std::vector<Figure> f = {
      {"iteration time", absl::StrFormat("%.1f ms", r.iteration_time_ms())},
      {"tokens/s", absl::StrFormat("%.0f", r.tokens_per_s())},
      {"samples/s", absl::StrFormat("%.1f", r.samples_per_s())},
      {"MFU", Pct(r.mfu())},
      {"TFLOP/s per GPU", absl::StrFormat("%.1f", r.model_tflops_per_gpu())},
      {"pipeline bubble", Pct(r.bubble_ratio())},
      {"eta (HAPT Eq. 25)", Pct(r.eta())},
      {"memory", r.oom() ? "OUT OF MEMORY" : "fits", r.oom()},
  };
  if (r.failed()) f.push_back({"iteration", absl::StrFormat("failed at %.1f ms", r.failed_at_ms()), true});
  return f;
}

// Memory of one GPU of each stage over the iteration against its capacity, as small multiples.
// `first_stage`: the report's index of the setup's stage 0 (a pipeline's of Plan.pipelines).
std::string MemoryCharts(const ExecutionSetup& setup, const ExecutionResult& r, const v1::Report& report,
                         int first_stage = 0) {
  std::string out = "<div class=\"multiples\">";
  for (int s = 0; s < setup.num_stages(); ++s) {
    const int at = first_stage + s;
    const double capacity = at < report.stages_size() ? report.stages(at).memory_capacity_gib() : 0;
    Series used{"memory per GPU", kBlue, SeriesStyle::kStep, {}};
    // A mixed stage's chart is its tightest replica group's, as the report's memory line is.
    for (const auto& [t, bytes] : executor::MemoryTimeline(setup, r, s, traces::TightestGroup(setup, r, s))) {
      used.points.push_back({TimeToMilliseconds(t), static_cast<double>(bytes) / kGiB});
    }
    if (!used.points.empty()) used.points.push_back({TimeToMilliseconds(r.iteration_time), used.points.back().y});
    Series cap{"capacity",
               kVermillion,
               SeriesStyle::kDashed,
               {{0, capacity}, {TimeToMilliseconds(r.iteration_time), capacity}}};
    const bool oom = at < report.stages_size() && report.stages(at).oom();
    ChartSpec spec(absl::StrFormat("stage %d%s", at, oom ? " (OOM)" : ""), "time (ms)", "GiB per GPU", 380, 210);
    spec.x_min = spec.y_min = 0;
    out += ChartSvg(spec, {used, cap});
  }
  return out + "</div>";
}

// Busy share over time of each link class, averaged over the class's links that carried traffic.
std::string LinkChart(const ExecutionSetup& setup, const ExecutionResult& r, const std::vector<LinkId>& links) {
  const size_t L = links.size();
  const size_t n = r.sample_times.size();
  if (L == 0 || n < 2) return "";
  const topology::Topology& topo = *setup.topology;
  std::vector<std::vector<size_t>> by_class(topology::kNumLinkClasses);
  for (size_t l = 0; l < L; ++l) {
    if (r.link_busy[(n - 1) * L + l] > 0) by_class[static_cast<int>(topo.link(links[l]).link_class)].push_back(l);
  }
  std::vector<Series> series;
  for (int c = 0; c < topology::kNumLinkClasses; ++c) {
    if (by_class[c].empty()) continue;
    Series s(absl::StrFormat("%s (%d links)", topology::LinkClassName(static_cast<topology::LinkClass>(c)),
                             by_class[c].size()),
             SeriesColor(c), SeriesStyle::kStep);
    for (size_t i = 1; i < n; ++i) {
      const Time dt = r.sample_times[i] - r.sample_times[i - 1];
      if (dt <= 0) continue;
      double busy = 0;
      for (size_t l : by_class[c])
        busy += TimeToPicosecondsDouble(r.link_busy[i * L + l] - r.link_busy[(i - 1) * L + l]);
      const double pct = std::min(100.0, 100.0 * busy / (TimeToPicosecondsDouble(dt) * by_class[c].size()));
      if (s.points.empty()) s.points.push_back({TimeToMilliseconds(r.sample_times[i - 1]), pct});
      s.points.push_back({TimeToMilliseconds(r.sample_times[i]), pct});
    }
    series.push_back(std::move(s));
  }
  ChartSpec spec("link utilisation per class", "time (ms)", "busy share of the links that carried traffic (%)", 1160,
                 300);
  spec.x_min = spec.y_min = 0;
  spec.y_max = 100;
  return ChartSvg(spec, series);
}

// ZeRO-3 in a plan of pipelines: a column of each stage's waits for its layer ranges' other holders' gather
// calls (StageReport.gather_call_wait_ms) after "sync+opt ms", only when some stage waited.
void AddGatherCallWaitColumn(const v1::Report& r, Table& t) {
  const bool any = std::any_of(r.stages().begin(), r.stages().end(),
                               [](const v1::StageReport& s) { return s.gather_call_wait_ms() > 0; });
  if (!any) return;
  const auto at = std::find(t.header.begin(), t.header.end(), "sync+opt ms") - t.header.begin() + 1;
  t.header.insert(t.header.begin() + at, "gather call wait ms");
  for (int i = 0; i < r.stages_size(); ++i) {
    t.rows[i].insert(t.rows[i].begin() + at, absl::StrFormat("%.1f", r.stages(i).gather_call_wait_ms()));
  }
}

Table StageTable(const v1::Report& r) {
  Table t{{"stage", "layers", "GPU type", "GPUs", "TP x DP", "warm-up", "fwd ms", "bwd ms", "busy ms", "comm ms",
           "sync+opt ms", "idle ms", "peak GiB", "capacity GiB", "OOM"},
          {},
          true,
          "stages"};
  for (const v1::StageReport& s : r.stages()) {
    t.rows.push_back(
        {absl::StrCat(s.index()), absl::StrFormat("%d-%d", s.first_layer(), s.first_layer() + s.num_layers() - 1),
         s.gpu_type(), absl::StrCat(s.num_gpus()), absl::StrFormat("%d x %d", s.tensor_parallel(), s.data_parallel()),
         absl::StrCat(s.warmup_forwards()), absl::StrFormat("%.2f", s.forward_ms_per_microbatch()),
         absl::StrFormat("%.2f", s.backward_ms_per_microbatch()), absl::StrFormat("%.1f", s.compute_busy_ms()),
         absl::StrFormat("%.1f", s.exposed_comm_ms()), absl::StrFormat("%.1f", s.grad_sync_ms() + s.optimizer_ms()),
         absl::StrFormat("%.1f", s.idle_ms()), absl::StrFormat("%.2f", s.peak_memory_gib()),
         absl::StrFormat("%.0f", s.memory_capacity_gib()),
         s.oom() ? absl::StrFormat("by %.2f GiB", s.oom_excess_gib()) : "no"});
  }
  AddGatherCallWaitColumn(r, t);
  return t;
}

// A mixed stage's replica groups (Stage.replica_groups): each group's GPU type, share, passes, idle time
// behind the slowest group and memory against its own GPU's capacity, as the text report's group lines.
Table ReplicaGroupTable(const v1::Report& r) {
  Table t{{"stage", "GPU type", "island", "TP x DP", "samples per replica", "fwd ms", "bwd ms", "busy ms", "idle ms",
           "peak GiB", "OOM"},
          {},
          true,
          "replica groups"};
  // MoE: each group's own expert layout after its TP x DP (dense models' tables as before).
  bool moe = false;
  for (const v1::StageReport& s : r.stages()) {
    for (const v1::ReplicaGroupReport& g : s.replica_groups()) moe |= g.expert_parallel() > 0;
  }
  if (moe) t.header.insert(t.header.begin() + 4, "EP x ETP");
  for (const v1::StageReport& s : r.stages()) {
    for (const v1::ReplicaGroupReport& g : s.replica_groups()) {
      std::vector<std::string>& row = t.rows.emplace_back(std::vector<std::string>{
          absl::StrCat(s.index()), g.gpu_type(), g.island(),
          absl::StrFormat("%d x %d", g.tensor_parallel(), g.data_parallel()), absl::StrCat(g.micro_batch_share()),
          absl::StrFormat("%.2f", g.forward_ms_per_microbatch()),
          absl::StrFormat("%.2f", g.backward_ms_per_microbatch()), absl::StrFormat("%.1f", g.compute_busy_ms()),
          absl::StrFormat("%.1f", g.idle_ms()), absl::StrFormat("%.2f", g.peak_memory_gib()), g.oom() ? "yes" : "no"});
      if (moe) row.insert(row.begin() + 4, absl::StrFormat("%d x %d", g.expert_parallel(), g.expert_tensor_parallel()));
    }
  }
  return t;
}

Table BoundaryTable(const v1::Report& r) {
  Table t{{"boundary", "MB per microbatch", "transfer ms", "hidden behind compute", "slowest link"},
          {},
          true,
          "boundaries"};
  for (const v1::BoundaryReport& b : r.boundaries()) {
    t.rows.push_back({absl::StrFormat("%d -> %d", b.from_stage(), b.to_stage()),
                      absl::StrFormat("%.2f", static_cast<double>(b.bytes_per_microbatch()) / 1e6),
                      absl::StrFormat("%.3f", b.transfer_ms()), Pct(b.overlap_ratio()), b.link_class()});
  }
  return t;
}

Table LinkTable(const v1::Report& r) {
  Table t{{"link class", "links", "GB moved", "mean utilisation", "max utilisation"}, {}, false, "links"};
  for (const v1::LinkClassReport& l : r.links()) {
    t.rows.push_back({l.link_class(), absl::StrCat(l.links()), absl::StrFormat("%.2f", l.bytes() / 1e9),
                      Pct(l.mean_utilization()), Pct(l.max_utilization())});
  }
  return t;
}

// The plan's framework profile (docs/frameworks.md): each behaviour as the run had it, and its source.
Table FrameworkTable(const v1::Report& r) {
  Table t{{"behaviour", "in this run", "set by", "profile", "source"}, {}, false, "framework"};
  for (const v1::FrameworkBehaviourReport& b : r.framework_behaviours()) {
    t.rows.push_back({b.field(), b.on() ? "on" : "off", b.set_by(), b.profile(), b.source()});
  }
  return t;
}

// A plan of pipelines: each pipeline's schedule and memory, titled with its share and GPU types.
void AddPipelineCharts(const std::vector<PipelineHtmlInputs>& pipelines, const faults::FaultOutcome* faults,
                       const v1::Report& report, Page& page) {
  const std::vector<faults::FaultEvent> none;
  page.AddRaw(GanttLegendHtml());
  for (size_t p = 0; p < pipelines.size(); ++p) {
    const PipelineHtmlInputs& in = pipelines[p];
    std::string types;
    for (int s = 0; s < in.setup->num_stages(); ++s) {
      const int at = in.first_stage + s;
      const std::string& t = at < report.stages_size() ? report.stages(at).gpu_type() : "";
      if (types.find(t) == std::string::npos) types += (types.empty() ? "" : ", ") + t;
    }
    const v1::PipelineReport* pr = p < static_cast<size_t>(report.pipelines_size()) ? &report.pipelines(p) : nullptr;
    page.AddHeading(absl::StrFormat("Pipeline %s", in.name));
    page.AddParagraph(absl::StrFormat(
        "%s of the batch in %s of %d, %s (report stages %d-%d) on %s; its last backward at "
        "%.1f ms. One row per stage; hover for times.",
        Counted(pr ? pr->batch_share() : 0, "sample"), Counted(pr ? pr->num_microbatches() : 0, "microbatch"),
        pr ? pr->micro_batch_size() : 0, Counted(in.setup->num_stages(), "stage"), in.first_stage,
        in.first_stage + in.setup->num_stages() - 1, types, pr ? pr->pipeline_ms() : 0));
    page.AddRaw(GanttSvg(*in.setup, *in.result, faults != nullptr ? faults->events : none));
    page.AddRaw(MemoryCharts(*in.setup, *in.result, report, in.first_stage));
  }
}

// The pipelines and their layer ranges' gradient all-reduces.
void AddPipelineTables(const v1::Report& r, Page& page) {
  page.AddHeading("Pipelines");
  Table t{
      {"pipeline", "batch share", "micro-batch", "stages", "GPUs", "microbatches", "pipeline ms", "end ms", "bubble"},
      {},
      false,
      "pipelines"};
  for (const v1::PipelineReport& p : r.pipelines()) {
    t.rows.push_back({p.name(), absl::StrCat(p.batch_share()), absl::StrCat(p.micro_batch_size()),
                      absl::StrCat(p.num_stages()), absl::StrCat(p.num_gpus()), absl::StrCat(p.num_microbatches()),
                      absl::StrFormat("%.1f", p.pipeline_ms()), absl::StrFormat("%.1f", p.end_ms()),
                      Pct(p.bubble_ratio())});
  }
  page.AddTable(t);
  const int zero_stage = traces::LayerRangeZeroStage(r);
  const bool zero = zero_stage == 1 || zero_stage == 2;  // a gather after the steps (ZeRO-3's are in the passes)
  std::string title = traces::LayerRangeSyncTitle(r);
  title[0] = absl::ascii_toupper(title[0]);
  page.AddHeading(title);
  Table g{{"layers", "held by", "GPUs per shard group", "shards", "MB per GPU", "start ms", "end ms"},
          {},
          false,
          "gradient groups"};
  if (zero) {
    for (const char* c : {"gather MB per GPU", "gather start ms", "gather end ms"}) g.header.push_back(c);
  }
  if (zero_stage == 3) g.header.push_back("gathered MB per GPU a pass");
  for (const v1::GradientGroupReport& gg : r.gradient_groups()) {
    const std::string holders = traces::GradientGroupHolders(gg, ", ");
    const std::string layers = gg.tied_embedding()
                                   ? std::string("tied embedding")
                                   : absl::StrFormat("%d-%d", gg.first_layer(), gg.first_layer() + gg.num_layers() - 1);
    g.rows.push_back({layers, holders, absl::StrCat(gg.num_gpus()), absl::StrCat(gg.shards()),
                      absl::StrFormat("%.1f", static_cast<double>(gg.bytes_per_gpu()) / 1e6),
                      absl::StrFormat("%.1f", gg.start_ms()), absl::StrFormat("%.1f", gg.end_ms())});
    if (zero) {
      for (double v : {static_cast<double>(gg.param_bytes_per_gpu()) / 1e6, gg.param_gather_start_ms(),
                       gg.param_gather_end_ms()}) {
        g.rows.back().push_back(absl::StrFormat("%.1f", v));
      }
    }
    if (zero_stage == 3)
      g.rows.back().push_back(absl::StrFormat("%.1f", static_cast<double>(gg.param_bytes_per_gpu()) / 1e6));
  }
  page.AddTable(g);
}

// The schedule, memory and link charts: they need the simulated iteration.
void AddCharts(const ExecutionSetup& setup, const ExecutionResult& r, const v1::Report& report,
               const std::vector<LinkId>& sampled_links, Page& page) {
  page.AddHeading("Pipeline schedule");
  page.AddParagraph(absl::StrFormat(
      "One row per stage (every GPU of a stage runs the same schedule). Blocks are numbered by microbatch; hover for "
      "times. Wheel to zoom, drag to pan, double-click to reset. Pipeline ends at %.1f ms, iteration at %.1f ms.",
      report.pipeline_ms(), report.iteration_time_ms()));
  page.AddRaw(GanttLegendHtml());
  page.AddRaw(GanttSvg(setup, r, r.faults.events));
  page.AddHeading("Memory per stage");
  page.AddParagraph("One GPU of each stage: model states, plus activations from a forward until its backward ends.");
  page.AddRaw(MemoryCharts(setup, r, report));
  const std::string links = LinkChart(setup, r, sampled_links);
  if (!links.empty()) {
    page.AddHeading("Link utilisation over time");
    page.AddParagraph(
        "Pipeline transfers and gradient synchronisation as simulated flows; tensor-parallel collectives "
        "(timed in closed form) count in the table below, not in this chart.");
    page.AddRaw(links);
  }
}

}  // namespace

namespace {

// The path of the first double or float field of `m` (recursively) that is NaN or infinite.
std::optional<std::string> FirstNonFiniteField(const google::protobuf::Message& m, const std::string& prefix) {
  namespace pb = google::protobuf;
  const pb::Reflection* r = m.GetReflection();
  std::vector<const pb::FieldDescriptor*> fields;
  r->ListFields(m, &fields);
  for (const pb::FieldDescriptor* f : fields) {
    const int n = f->is_repeated() ? r->FieldSize(m, f) : 1;
    for (int i = 0; i < n; ++i) {
      const std::string at =
          f->is_repeated() ? absl::StrFormat("%s%s[%d]", prefix, f->name(), i) : absl::StrCat(prefix, f->name());
      if (f->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE) {
        const pb::Message& sub = f->is_repeated() ? r->GetRepeatedMessage(m, f, i) : r->GetMessage(m, f);
        if (std::optional<std::string> bad = FirstNonFiniteField(sub, at + ".")) return bad;
      } else if (f->cpp_type() == pb::FieldDescriptor::CPPTYPE_DOUBLE) {
        if (!std::isfinite(f->is_repeated() ? r->GetRepeatedDouble(m, f, i) : r->GetDouble(m, f))) return at;
      } else if (f->cpp_type() == pb::FieldDescriptor::CPPTYPE_FLOAT) {
        if (!std::isfinite(f->is_repeated() ? r->GetRepeatedFloat(m, f, i) : r->GetFloat(m, f))) return at;
      }
    }
  }
  return std::nullopt;
}

}  // namespace

absl::Status CheckSavedReport(const v1::Report& report, absl::string_view file) {
  if (report.num_stages() == 0 || report.stages_size() != static_cast<int>(report.num_stages())) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: stages: %d stages for num_stages %d: not a report of `hetsim run --report`", file,
                        report.stages_size(), report.num_stages()));
  }
  // A run never writes NaN, an infinity, a negative headline figure or an iteration past the int64
  // picoseconds it simulates in: such a file was edited, and its page would print the figure as a result.
  if (std::optional<std::string> field = FirstNonFiniteField(report, "")) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: %s: not a finite number: not a report of `hetsim run --report`", file, *field));
  }
  const std::pair<const char*, double> headline[] = {{"iteration_time_ms", report.iteration_time_ms()},
                                                     {"tokens_per_s", report.tokens_per_s()},
                                                     {"samples_per_s", report.samples_per_s()},
                                                     {"mfu", report.mfu()},
                                                     {"bubble_ratio", report.bubble_ratio()}};
  for (const auto& [name, value] : headline) {
    if (value < 0) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: %s: %g is negative: not a report of `hetsim run --report`", file, name, value));
    }
  }
  if (report.iteration_time_ms() * 1e9 > proto::limits::kMaxSimulatedPs) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: iteration_time_ms: %g is past what hetsim simulates (%g ms): not a report of `hetsim run "
                        "--report`",
                        file, report.iteration_time_ms(), proto::limits::kMaxSimulatedPs / 1e9));
  }
  return absl::OkStatus();
}

std::string RunReportHtml(const RunHtmlInputs& in) {
  const v1::Report& report = *in.report;
  Page page(
      absl::StrFormat("hetsim: %s", report.plan_name()),
      absl::StrFormat("model %s on cluster %s: %s, %s, %s, %s schedule; network %s", report.model_name(),
                      report.cluster_name(), Counted(report.num_gpus(), "GPU"), Counted(report.num_stages(), "stage"),
                      Counted(report.num_microbatches(), "microbatch"), report.schedule(), report.network_model()));
  page.AddFigures(HeaderFigures(report));
  if (report.has_approximation_choice())
    page.AddParagraph(absl::StrCat("Fidelity: ", report.approximation_choice().note(), "."));
  if (!in.pipelines.empty()) {
    AddPipelineCharts(in.pipelines, in.pipeline_faults, report, page);
    const std::string links = in.setup != nullptr ? LinkChart(*in.setup, *in.result, in.sampled_links) : "";
    if (!links.empty()) {
      page.AddHeading("Link utilisation over time");
      page.AddParagraph(
          "Every pipeline's transfers and the layer ranges' gradient all-reduces on the one network they share, "
          "sampled until the last pipeline's optimizer step.");
      page.AddRaw(links);
    }
    AddPipelineTables(report, page);
  } else if (in.setup != nullptr && in.result != nullptr) {
    AddCharts(*in.setup, *in.result, report, in.sampled_links, page);
  } else {
    page.AddParagraph(
        "Drawn from a saved report: the schedule, memory and link charts need the simulated "
        "iteration (hetsim run PLAN --cluster C --html R.html).");
  }
  page.AddTable(LinkTable(report));
  page.AddHeading("Stages");
  page.AddTable(StageTable(report));
  if (const Table groups = ReplicaGroupTable(report); !groups.rows.empty()) {
    page.AddHeading("Replica groups");
    page.AddParagraph(
        "Each mixed stage's replica groups: a group waits (idle) for the stage's slowest group every pass; its "
        "memory is checked against its own GPU's capacity.");
    page.AddTable(groups);
  }
  if (!report.framework().empty()) {
    page.AddHeading(absl::StrCat("Framework: ", report.framework()));
    page.AddTable(FrameworkTable(report));
  }
  if (report.boundaries_size() > 0) {
    page.AddHeading("Stage boundaries");
    page.AddTable(BoundaryTable(report));
  }
  if (report.faults_size() > 0) {
    page.AddHeading("Faults");
    Table t{{"fault", "what", "at ms", "GPUs", "links", "effect"}, {}, false, "faults"};
    for (int i = 0; i < report.faults_size(); ++i) {
      const v1::FaultReport& f = report.faults(i);
      t.rows.push_back({absl::StrCat(i), f.description(), absl::StrFormat("%.1f", f.at_ms()),
                        absl::StrCat(f.gpus_affected()), absl::StrCat(f.links_affected()), f.effect()});
    }
    page.AddTable(t);
    if (report.failed()) page.AddParagraph(absl::StrCat("The iteration failed: ", report.lost()));
  }
  return page.Finish();
}

}  // namespace hetsim::traces::html
