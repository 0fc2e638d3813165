#include "traces/html/gantt_internal.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/time.h"
#include "base/wall_limit.h"
#include "sim/pipeline/dag.h"
#include "traces/html/svg_internal.h"
#include "traces/trace_events.h"

namespace hetsim::traces::html {
namespace {

using pipeline::NodeId;
using pipeline::NodeKind;

constexpr int kSvgWidth = 1560, kGanttLeft = 170, kGanttRight = 16, kGanttTop = 22;
constexpr int kComputeHeight = 22, kLaneHeight = 9, kLaneGap = 2, kRowGap = 10;
constexpr double kLaneNameTop = 25, kLaneNameStep = 11;  // the stage's GPU lines under its name
constexpr int kPlotWidth = kSvgWidth - kGanttLeft - kGanttRight;

struct Block {
  Time start, finish;
  const char* kind;  // class: F forward, B backward, O optimizer, T transfer, S gradient sync
  const char* fill;
  bool light = false;  // label in black
  std::string label;   // drawn inside when it fits
  std::string title;
};

struct StageRows {
  std::vector<Block> compute, transfers, syncs;
};

std::string Span(Time a, Time b) {
  return absl::StrFormat("%.3f - %.3f ms (%.3f ms)", TimeToMilliseconds(a), TimeToMilliseconds(b),
                         TimeToMilliseconds(b - a));
}

// The most blocks the page draws: about 250 bytes of SVG each, so a page stays near 25 MB however
// long the schedule. Past it, runs of consecutive operations of a lane are drawn as one block.
constexpr int64_t kMaxGanttBlocks = 100'000;

// Groups consecutive blocks of one lane `per_block` at a time into one block that spans them, titled
// with how many it holds (`per_block` = 1 keeps every block). Titles are built only for what is drawn.
class LaneBuilder {
 public:
  LaneBuilder(std::vector<Block>* out, int64_t per_block) : out_(out), per_block_(per_block) {}

  template <typename MakeBlock>
  void Add(Time start, Time finish, MakeBlock make) {
    if (per_block_ == 1) {
      out_->push_back(make());
      return;
    }
    if (count_ == 0) first_ = start;
    last_ = std::max(last_, finish);
    if (++count_ == per_block_) Flush();
  }

  void Flush() {
    if (count_ == 0) return;
    out_->push_back({first_, last_, "M", kGrey, true, "",
                     absl::StrFormat("%d operations drawn as one block (the page draws at most %d; the Chrome trace "
                                     "has each)\n%s",
                                     count_, kMaxGanttBlocks, Span(first_, last_))});
    count_ = 0;
    last_ = 0;
  }

 private:
  std::vector<Block>* out_;
  int64_t per_block_;
  int64_t count_ = 0;
  Time first_ = 0, last_ = 0;
};

std::vector<StageRows> CollectRows(const executor::ExecutionSetup& setup, const executor::ExecutionResult& r,
                                   int64_t per_block) {
  const auto& dag = *setup.dag;
  const int S = setup.num_stages();
  const bool interleaved = dag.num_virtual_stages() > S;
  std::vector<StageRows> rows(S);
  for (int s = 0; s < S; ++s) {
    LaneBuilder compute(&rows[s].compute, per_block);
    for (NodeId id : dag.stage_compute_order()[s]) {
      if (WallLimitPassed()) break;  // the page is dropped: the command checks its limit after drawing
      if (r.node_start[id] < 0) continue;
      compute.Add(r.node_start[id], r.node_finish[id], [&]() -> Block {
        const auto& n = dag.node(id);
        const bool fwd = n.kind == NodeKind::kForward;
        const bool odd = n.microbatch % 2 == 1;
        const std::string chunk = interleaved ? absl::StrFormat(", chunk %d", n.virtual_stage / S) : "";
        return {r.node_start[id],
                r.node_finish[id],
                fwd ? "F" : "B",
                fwd ? (odd ? kSky : kBlue) : (odd ? kOrange : kVermillion),
                odd,
                absl::StrCat(n.microbatch),
                absl::StrFormat("%s%d: %s of microbatch %d on stage %d%s\n%s", fwd ? "F" : "B", n.microbatch,
                                fwd ? "forward" : "backward", n.microbatch, s, chunk,
                                Span(r.node_start[id], r.node_finish[id]))};
      });
    }
    compute.Flush();
    if (r.optimizer_start[s] >= 0) {
      const Time end = r.optimizer_start[s] + setup.stages[s].optimizer_time;
      rows[s].compute.push_back(
          {r.optimizer_start[s], end, "O", kGrey, true, "opt",
           absl::StrFormat("optimizer step of stage %d\n%s", s, Span(r.optimizer_start[s], end))});
    }
  }
  std::vector<LaneBuilder> transfers;
  for (int s = 0; s < S; ++s) transfers.emplace_back(&rows[s].transfers, per_block);
  for (NodeId id = 0; id < dag.num_nodes() && !WallLimitPassed(); ++id) {
    const auto& n = dag.node(id);
    if ((n.kind != NodeKind::kCommForward && n.kind != NodeKind::kCommBackward) || r.node_start[id] < 0) continue;
    transfers[n.stage].Add(r.node_start[id], r.node_finish[id], [&]() -> Block {
      const bool fwd = n.kind == NodeKind::kCommForward;
      return {r.node_start[id],
              r.node_finish[id],
              "T",
              fwd ? kGreen : kPurple,
              false,
              absl::StrCat(n.microbatch),
              absl::StrFormat("%s%d: %s of microbatch %d, stage %d -> %d\n%s", fwd ? "CF" : "CB", n.microbatch,
                              fwd ? "activations" : "gradients", n.microbatch, n.stage, n.peer_stage,
                              Span(r.node_start[id], r.node_finish[id]))};
    });
  }
  for (LaneBuilder& lane : transfers) lane.Flush();
  for (const auto& g : r.grad_syncs) {
    const std::string what = g.param_gather ? "parameter all-gather" : absl::StrFormat("gradient bucket %d", g.step);
    rows[g.stage].syncs.push_back({g.start, g.finish, "S", kYellow, true, "",
                                   absl::StrFormat("%s of stage %d\n%s", what, g.stage, Span(g.start, g.finish))});
  }
  return rows;
}

// Operations per drawn block: 1 unless the schedule has more than kMaxGanttBlocks operations.
int64_t OperationsPerBlock(const executor::ExecutionSetup& setup, const executor::ExecutionResult& r) {
  int64_t operations = static_cast<int64_t>(r.grad_syncs.size());
  for (NodeId id = 0; id < setup.dag->num_nodes(); ++id) operations += r.node_start[id] >= 0 ? 1 : 0;
  return std::max<int64_t>(1, (operations + kMaxGanttBlocks - 1) / kMaxGanttBlocks);
}

// Blocks split into lanes where they overlap (traces::AssignLanes, the trace's rule).
std::vector<std::vector<const Block*>> Lanes(const std::vector<Block>& blocks) {
  std::vector<std::pair<int64_t, int64_t>> intervals;
  for (const Block& b : blocks)
    intervals.emplace_back(TimeToPicoseconds(b.start), TimeToPicoseconds(b.finish));  // lanes of picoseconds
  const std::vector<int> lane = traces::AssignLanes(intervals);
  std::vector<std::vector<const Block*>> lanes;
  for (size_t i = 0; i < blocks.size(); ++i) {
    if (lane[i] >= static_cast<int>(lanes.size())) lanes.resize(lane[i] + 1);
    lanes[lane[i]].push_back(&blocks[i]);
  }
  return lanes;
}

class GanttWriter {
 public:
  explicit GanttWriter(Time end) : end_(std::max(end, kPicosecond)) {}

  double X(Time t) const {
    return kGanttLeft + TimeToPicosecondsDouble(t) / TimeToPicosecondsDouble(end_) * kPlotWidth;
  }

  void AddBlock(const Block& b, double y, int height) {
    if (WallLimitPassed()) return;
    const double x0 = X(b.start), x1 = X(b.finish);
    const std::string t = absl::StrFormat("%.4f %.4f", TimeToMilliseconds(b.start), TimeToMilliseconds(b.finish));
    absl::StrAppendFormat(
        &out_,
        R"(<rect class="b %s" x="%s" y="%s" width="%s" height="%d" fill="%s" data-t="%s"><title>%s</title></rect>)",
        b.kind, Coord(x0), Coord(y), Coord(x1 - x0), height, b.fill, t, HtmlEscape(b.title));
    if (!b.label.empty() && height >= kComputeHeight) {
      const bool fits = x1 - x0 > static_cast<double>(b.label.size()) * 6 + 4;
      absl::StrAppendFormat(&out_, R"(<text class="lbl%s" x="%s" y="%s" text-anchor="middle" data-t="%s"%s>%s</text>)",
                            b.light ? " dark" : "", Coord((x0 + x1) / 2), Coord(y + height / 2.0 + 3.5), t,
                            fits ? "" : R"( style="display:none")", HtmlEscape(b.label));
    }
    out_ += "\n";
  }

  void AddLanes(const std::vector<Block>& blocks, const char* name, double& y) {
    for (const auto& lane : Lanes(blocks)) {
      absl::StrAppendFormat(&labels_, R"(<text class="lane" x="%d" y="%s" text-anchor="end">%s</text>)", kGanttLeft - 4,
                            Coord(y + kLaneHeight - 1), name);
      for (const Block* b : lane) AddBlock(*b, y, kLaneHeight);
      y += kLaneHeight + kLaneGap;
    }
  }

  std::string& out() { return out_; }        // inside the plot (clipped)
  std::string& labels() { return labels_; }  // row and lane names, left of the plot
  Time end() const { return end_; }

 private:
  Time end_;
  std::string out_, labels_;
};

// The lines under a stage's name: its GPU type and TP x DP, or for a mixed stage one line per replica
// group with its share of every microbatch.
std::vector<std::string> StageLaneNames(const executor::ExecutionSetup& setup, int s) {
  const auto& layout = setup.stages[s].layout;
  if (!layout.mixed()) {
    return {absl::StrFormat("%s, TP %d x DP %d", setup.topology->island(layout.island).gpu.short_name(),
                            layout.tensor_parallel, layout.data_parallel)};
  }
  std::vector<std::string> out;
  for (const auto& g : layout.replica_groups) {
    // Short: the lines share the left margin with the lanes' names.
    out.push_back(absl::StrFormat("%s %dx%d, %d/mb", setup.topology->island(g.island).gpu.short_name(),
                                  g.tensor_parallel, g.data_parallel, g.micro_batch_share));
  }
  return out;
}

}  // namespace

std::string GanttLegendHtml() {
  std::string out = "<div class=\"legend\">";
  const std::pair<const char*, const char*> items[] = {
      {kBlue, "forward (even microbatch)"}, {kSky, "forward (odd)"},        {kVermillion, "backward (even)"},
      {kOrange, "backward (odd)"},          {kGrey, "optimizer step"},      {kGreen, "activations sent (p2p)"},
      {kPurple, "gradients sent (p2p)"},    {kYellow, "gradient sync (DP)"}};
  for (const auto& [color, name] : items)
    absl::StrAppendFormat(&out, R"(<span><i style="background:%s"></i>%s</span>)", color, name);
  out += "<span>- - - fault</span></div>";
  return out;
}

std::string GanttSvg(const executor::ExecutionSetup& setup, const executor::ExecutionResult& r,
                     const std::vector<faults::FaultEvent>& fault_events) {
  const std::vector<StageRows> rows = CollectRows(setup, r, OperationsPerBlock(setup, r));
  GanttWriter w(r.iteration_time);
  double y = kGanttTop;
  for (int s = 0; s < setup.num_stages(); ++s) {
    const double row_top = y;
    w.out() += absl::StrFormat(R"(<g class="stage" data-stage="%d">)", s);
    for (const Block& b : rows[s].compute) w.AddBlock(b, y, kComputeHeight);
    y += kComputeHeight + kLaneGap;
    w.AddLanes(rows[s].transfers, "p2p", y);
    w.AddLanes(rows[s].syncs, "sync", y);
    // A mixed stage names each replica group on a line of its own: its GPU type, TP x DP and share.
    const std::vector<std::string> lanes = StageLaneNames(setup, s);
    y = std::max(y, row_top + kLaneNameTop + kLaneNameStep * static_cast<double>(lanes.size() - 1) + 4);
    const double row_height = y - row_top;
    w.out() += "</g>\n";
    std::string label = absl::StrFormat(
        R"(<rect class="row" x="%d" y="%s" width="%d" height="%s"/><text class="rowname" x="6" y="%s">stage %d</text><text class="lane" x="%d" y="%s" text-anchor="end">F/B</text>)",
        kGanttLeft, Coord(row_top - 2), kPlotWidth, Coord(row_height + 2), Coord(row_top + 12), s, kGanttLeft - 4,
        Coord(row_top + 15));
    for (size_t i = 0; i < lanes.size(); ++i) {
      absl::StrAppendFormat(&label, R"(<text class="lane" x="6" y="%s">%s</text>)",
                            Coord(row_top + kLaneNameTop + kLaneNameStep * static_cast<double>(i)),
                            HtmlEscape(lanes[i]));
    }
    w.labels() += label + "\n";
    y += kRowGap;
  }
  const double axis_y = y;
  std::string faults;
  for (const auto& e : fault_events) {
    const double x = w.X(e.at);
    absl::StrAppendFormat(
        &faults,
        R"(<line class="fault" x1="%s" x2="%s" y1="%d" y2="%s" data-t="%.4f %.4f"><title>fault %d %s at %.3f ms</title></line>)"
        "\n",
        Coord(x), Coord(x), kGanttTop - 14, Coord(axis_y), TimeToMilliseconds(e.at), TimeToMilliseconds(e.at), e.fault,
        HtmlEscape(e.what), TimeToMilliseconds(e.at));
  }
  std::string ticks;
  for (double t : NiceTicks(0, TimeToMilliseconds(w.end()), 8)) {
    const double x = kGanttLeft + t / TimeToMilliseconds(w.end()) * kPlotWidth;
    absl::StrAppendFormat(
        &ticks,
        R"(<line x1="%s" x2="%s" y1="%s" y2="%s" stroke="#444"/><text class="tick" x="%s" y="%s" text-anchor="middle">%s</text>)",
        Coord(x), Coord(x), Coord(axis_y), Coord(axis_y + 5), Coord(x), Coord(axis_y + 17), Num(t, 6));
  }
  const int height = static_cast<int>(axis_y) + 40;
  return absl::StrCat(
      absl::StrFormat(R"(<svg id="gantt" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" width="100%%" )"
                      R"(data-left="%d" data-width="%d" data-end="%.4f" data-axis="%s" role="img">)",
                      kSvgWidth, height, kGanttLeft, kPlotWidth, TimeToMilliseconds(w.end()), Coord(axis_y)),
      "\n<defs><clipPath id=\"gclip\">",
      absl::StrFormat(R"(<rect x="%d" y="0" width="%d" height="%d"/>)", kGanttLeft, kPlotWidth, height),
      "</clipPath></defs>\n", w.labels(), "<g clip-path=\"url(#gclip)\">\n", w.out(), faults, "</g>\n",
      absl::StrFormat(R"(<line x1="%d" x2="%d" y1="%s" y2="%s" stroke="#444"/>)", kGanttLeft, kGanttLeft + kPlotWidth,
                      Coord(axis_y), Coord(axis_y)),
      "<g id=\"gaxis\">", ticks, "</g>",
      absl::StrFormat(
          R"(<text class="axis" x="%d" y="%d" text-anchor="middle">time since the iteration started (ms)</text>)",
          kGanttLeft + kPlotWidth / 2, height - 4),
      "</svg>");
}

}  // namespace hetsim::traces::html
