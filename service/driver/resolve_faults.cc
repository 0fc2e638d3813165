#include "service/driver/resolve_faults.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "base/check.h"
#include "base/status_macros.h"
#include "google/protobuf/text_format.h"
#include "proto/validate_faults.h"

namespace hetsim::driver {
namespace {

using faults::FaultSet;
using faults::ResolvedFault;

using topology::DeviceKind;
using topology::Topology;

Time MsToTime(double ms) { return SecondsToTime(ms / 1e3); }

std::string OneLineText(const v1::Fault& f) {
  google::protobuf::TextFormat::Printer printer;
  printer.SetSingleLineMode(true);
  std::string text;
  printer.PrintToString(f, &text);
  return std::string(absl::StripAsciiWhitespace(text));
}

// The gateway-to-gateway links of inter_island_links[k]: the topology adds them last, bundle by
// bundle, `count` duplex pairs each.
std::vector<LinkId> BundleLinks(const Topology& t, uint32_t k) {
  std::vector<LinkId> gateway_links;
  for (LinkId l : IdsBelow<LinkId>(t.links().size())) {
    const topology::Link& link = t.link(l);
    if (t.device(link.src).kind == DeviceKind::kGateway && t.device(link.dst).kind == DeviceKind::kGateway) {
      gateway_links.push_back(l);
    }
  }
  size_t first = 0;
  for (uint32_t b = 0; b < k; ++b) first += 2 * t.cluster().inter_island_links[b].count;
  const size_t n = 2 * t.cluster().inter_island_links[k].count;
  if (first + n > gateway_links.size()) return {};
  return {gateway_links.begin() + first, gateway_links.begin() + first + n};
}

// Links with an end on one of `devices` (flags per device id).
std::vector<LinkId> LinksTouching(const Topology& t, const std::vector<bool>& devices) {
  std::vector<LinkId> out;
  for (LinkId l : IdsBelow<LinkId>(t.links().size())) {
    if (devices[t.link(l).src.value()] || devices[t.link(l).dst.value()]) out.push_back(l);
  }
  return out;
}

spec::FaultKind KindOf(v1::FaultKind kind) {
  switch (kind) {
    case v1::SLOW: return spec::FaultKind::kSlow;
    case v1::FLAP: return spec::FaultKind::kFlap;
    case v1::FAIL: return spec::FaultKind::kFail;
    case v1::FAULT_KIND_UNSPECIFIED: return spec::FaultKind::kNone;  // refused by ValidateFaults
    case v1::FaultKind_INT_MIN_SENTINEL_DO_NOT_USE_:                 // protoc's range markers, never a value
    case v1::FaultKind_INT_MAX_SENTINEL_DO_NOT_USE_: break;
  }
  HETSIM_CHECK(false, "a FaultKind number outside the schema (proto::Load refuses them)");
  return spec::FaultKind::kNone;
}

spec::JitterSpec JitterOf(const v1::Jitter& j) {
  spec::JitterSpec out;
  out.seed = j.seed();
  switch (j.distribution()) {
    case v1::UNIFORM: out.distribution = spec::JitterDistribution::kUniform; break;
    case v1::NORMAL: out.distribution = spec::JitterDistribution::kNormal; break;
    case v1::LOGNORMAL: out.distribution = spec::JitterDistribution::kLogNormal; break;
    case v1::JITTER_DISTRIBUTION_UNSPECIFIED: break;           // kNone
    case v1::JitterDistribution_INT_MIN_SENTINEL_DO_NOT_USE_:  // protoc's range markers, never a value
    case v1::JitterDistribution_INT_MAX_SENTINEL_DO_NOT_USE_: break;
  }
  out.spread = j.spread();
  out.gpus.assign(j.gpus().begin(), j.gpus().end());
  return out;
}

std::string Window(const v1::Fault& f) {
  std::string s = absl::StrFormat("from %g ms", f.at_ms());
  if (f.duration_ms() > 0) absl::StrAppendFormat(&s, " for %g ms", f.duration_ms());
  return s;
}

std::string TargetName(const Topology& t, const v1::Fault& f, const ResolvedFault& r) {
  switch (f.target_case()) {
    case v1::Fault::kGpu:
      return absl::StrFormat("GPU %d (%s)", f.gpu(), t.DeviceName(t.gpu_device(GpuId(static_cast<int32_t>(f.gpu())))));
    case v1::Fault::kNode:
      return absl::StrFormat("node %s/node%d (%d GPUs)", f.node().island(), f.node().node(), r.gpus.size());
    case v1::Fault::kLinkClass: return absl::StrFormat("%d %s links", r.links.size(), f.link_class());
    case v1::Fault::kLink:
      return r.links.size() == 1 ? absl::StrFormat("link %s", f.link())
                                 : absl::StrFormat("%d parallel links %s", r.links.size(), f.link());
    case v1::Fault::kInterIslandLink: {
      const spec::InterIslandLinkSpec& l = t.cluster().inter_island_links[f.inter_island_link()];
      return absl::StrFormat("inter-island link %d (%s <-> %s, %d links)", f.inter_island_link(),
                             t.island(l.island_a).name, t.island(l.island_b).name, r.links.size());
    }
    case v1::Fault::TARGET_NOT_SET: break;
  }
  return "nothing";
}

std::string Describe(const Topology& t, const v1::Fault& f, const ResolvedFault& r) {
  const std::string target = TargetName(t, f, r);
  switch (f.kind()) {
    case v1::SLOW:
      if (!r.gpus.empty()) return absl::StrFormat("%s compute x%g %s", target, f.factor(), Window(f));
      return absl::StrFormat("%s bandwidth /%g %s", target, f.factor(), Window(f));
    case v1::FLAP:
      return absl::StrFormat("%s down %g ms of every %g ms %s", target, f.down_ms(), f.period_ms(), Window(f));
    case v1::FAIL: return absl::StrFormat("%s fails at %g ms", target, f.at_ms());
    case v1::FAULT_KIND_UNSPECIFIED: break;
    case v1::FaultKind_INT_MIN_SENTINEL_DO_NOT_USE_:  // protoc's range markers, never a value
    case v1::FaultKind_INT_MAX_SENTINEL_DO_NOT_USE_: break;
  }
  return target;
}

}  // namespace

absl::StatusOr<v1::Faults> LoadFaults(const proto::Source& source, const v1::Cluster& cluster) {
  v1::Faults faults;
  HETSIM_RETURN_IF_ERROR(proto::ParseSource(source, &faults));
  HETSIM_RETURN_IF_ERROR(proto::ValidateFaults(faults, cluster, source.label()));
  return faults;
}

std::vector<FaultSource> SourcesOf(const v1::Faults& faults, const std::string& file) {
  std::vector<FaultSource> out;
  for (int i = 0; i < faults.faults_size(); ++i) out.push_back({file, absl::StrFormat("faults[%d].", i)});
  return out;
}

std::string LinkName(const Topology& t, LinkId id) {
  const topology::Link& l = t.link(id);
  return absl::StrCat(t.DeviceName(l.src), "->", t.DeviceName(l.dst));
}

namespace {

// The GPUs and links `f` targets, into `r` (a failed GPU or node takes the links touching it too);
// `by_name` is the links by name, built on first use.
absl::Status ResolveTarget(const v1::Fault& f, const Topology& t, const FaultSource& src,
                           absl::flat_hash_map<std::string, std::vector<LinkId>>& by_name, ResolvedFault& r) {
  std::vector<bool> devices;  // FAIL of GPUs and nodes: their links too
  switch (f.target_case()) {
    case v1::Fault::kGpu:
      if (f.gpu() >= static_cast<uint32_t>(t.num_gpus())) {
        return absl::InvalidArgumentError(absl::StrFormat("%s: %sgpu: GPU %d is outside the cluster's %d GPUs",
                                                          src.file, src.path, f.gpu(), t.num_gpus()));
      }
      r.gpus.push_back(static_cast<GpuId>(f.gpu()));
      break;
    case v1::Fault::kNode: {
      absl::StatusOr<int32_t> island = t.IslandIndex(f.node().island());
      if (!island.ok()) {
        return absl::InvalidArgumentError(
            absl::StrFormat("%s: %snode.island: unknown island \"%s\"", src.file, src.path, f.node().island()));
      }
      for (int32_t g = 0; g < t.gpus_per_node(*island); ++g) {
        absl::StatusOr<GpuId> id = t.GpuIdOf(*island, static_cast<int32_t>(f.node().node()), g);
        if (!id.ok()) {
          return absl::InvalidArgumentError(
              absl::StrFormat("%s: %snode.node: %s", src.file, src.path, id.status().message()));
        }
        r.gpus.push_back(*id);
      }
      if (f.kind() == v1::FAIL) {
        devices.assign(t.devices().size(), false);
        for (size_t d = 0; d < t.devices().size(); ++d) {
          devices[d] = t.devices()[d].island == *island && t.devices()[d].node == static_cast<int32_t>(f.node().node());
        }
      }
      break;
    }
    case v1::Fault::kLinkClass:
      for (LinkId l : IdsBelow<LinkId>(t.links().size())) {
        if (topology::LinkClassName(t.link(l).link_class) == f.link_class()) r.links.push_back(l);
      }
      if (r.links.empty()) {
        return absl::InvalidArgumentError(
            absl::StrFormat("%s: %slink_class: the cluster has no %s link", src.file, src.path, f.link_class()));
      }
      break;
    case v1::Fault::kLink: {
      if (by_name.empty()) {
        for (LinkId l : IdsBelow<LinkId>(t.links().size())) by_name[LinkName(t, l)].push_back(l);
      }
      auto it = by_name.find(f.link());
      if (it == by_name.end()) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "%s: %slink: \"%s\" is no link of the cluster (links are named \"<device>-><device>\" like \"%s\")",
            src.file, src.path, f.link(), LinkName(t, LinkId(0))));
      }
      r.links = it->second;
      break;
    }
    case v1::Fault::kInterIslandLink:
      r.links = BundleLinks(t, f.inter_island_link());
      if (r.links.empty()) {
        return absl::InvalidArgumentError(
            absl::StrFormat("%s: %sinter_island_link: %d has no links", src.file, src.path, f.inter_island_link()));
      }
      break;
    case v1::Fault::TARGET_NOT_SET:
      return absl::InvalidArgumentError(absl::StrFormat("%s: %starget: required", src.file, src.path));
  }
  if (f.kind() == v1::FAIL && f.target_case() == v1::Fault::kGpu) {
    devices.assign(t.devices().size(), false);
    devices[t.gpu_device(r.gpus[0]).value()] = true;
  }
  if (!devices.empty()) r.links = LinksTouching(t, devices);
  return absl::OkStatus();
}

// The fault's kind, factor and times, in the simulator's units.
ResolvedFault TimesOf(const v1::Fault& f) {
  ResolvedFault r;
  r.kind = KindOf(f.kind());
  r.factor = f.factor();
  r.at_ms = f.at_ms();
  r.text = OneLineText(f);
  r.at = MsToTime(f.at_ms());
  if (f.duration_ms() > 0) r.end = r.at + MsToTime(f.duration_ms());
  r.period = MsToTime(f.period_ms());
  r.down = MsToTime(f.down_ms());
  return r;
}

}  // namespace

absl::StatusOr<FaultSet> ResolveFaults(const v1::Faults& faults, const Topology& t,
                                       const std::vector<FaultSource>& sources) {
  FaultSet set;
  absl::flat_hash_map<std::string, std::vector<LinkId>> by_name;  // built on first use
  for (int i = 0; i < faults.faults_size(); ++i) {
    const v1::Fault& f = faults.faults(i);
    ResolvedFault r = TimesOf(f);
    HETSIM_RETURN_IF_ERROR(ResolveTarget(f, t, sources.at(i), by_name, r));
    std::sort(r.gpus.begin(), r.gpus.end());
    std::sort(r.links.begin(), r.links.end());
    r.description = Describe(t, f, r);
    set.faults.push_back(std::move(r));
  }
  if (faults.has_jitter() && faults.jitter().spread() > 0) {
    set.jitter = JitterOf(faults.jitter());
    google::protobuf::TextFormat::Printer printer;
    printer.SetSingleLineMode(true);
    printer.PrintToString(faults.jitter(), &set.jitter_text);
  }
  return set;
}

}  // namespace hetsim::driver
