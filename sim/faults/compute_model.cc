#include "sim/faults/compute_model.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "sim/engine/split_mix.h"

namespace hetsim::faults {
namespace {

// SplitMix64's finaliser: a bijective mix, so distinct keys stay distinct.
uint64_t Mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Uniform in (0, 1): 53 random bits, centred in their interval so neither end is reached.
double Uniform(engine::SplitMix64& g) { return (static_cast<double>(g.Next() >> 11) + 0.5) * 0x1p-53; }

double StandardNormal(engine::SplitMix64& g) {  // Box-Muller; one of the pair
  const double u1 = Uniform(g), u2 = Uniform(g);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

Time AddClamped(Time t, double ps) {
  if (!(ps < TimeToPicosecondsDouble(kTimeMax - t))) return kTimeMax;
  return t + PicosecondsToTime(static_cast<int64_t>(std::nearbyint(ps)));
}

}  // namespace

uint64_t TaskKey(int kind, int64_t microbatch, int64_t virtual_stage) {
  return Mix(Mix(static_cast<uint64_t>(kind) + 0x9e3779b97f4a7c15ULL) ^ static_cast<uint64_t>(microbatch)) ^
         Mix(static_cast<uint64_t>(virtual_stage) + 0x632be59bd9b4e019ULL);
}

double JitterFactor(const spec::JitterSpec& jitter, GpuId gpu, uint64_t task) {
  engine::SplitMix64 g(Mix(Mix(jitter.seed) ^ (static_cast<uint64_t>(gpu.value()) * 0xd1b54a32d192ed03ULL)) ^ task);
  const double s = jitter.spread;
  switch (jitter.distribution) {
    case spec::JitterDistribution::kUniform: return 1.0 + s * (2.0 * Uniform(g) - 1.0);
    case spec::JitterDistribution::kNormal: return std::max(0.1, 1.0 + s * StandardNormal(g));
    case spec::JitterDistribution::kLogNormal: return std::exp(s * StandardNormal(g));
    case spec::JitterDistribution::kNone: break;
  }
  return 1.0;
}

ComputeModel::ComputeModel(const FaultSet& faults, int num_gpus) : profile_of_(num_gpus, -1) {
  std::vector<std::vector<const ResolvedFault*>> per_gpu(num_gpus);
  for (const ResolvedFault& f : faults.faults) {
    if (!f.compute()) continue;
    for (GpuId g : f.gpus) per_gpu[g.value()].push_back(&f);
  }
  for (int g = 0; g < num_gpus; ++g) {
    if (per_gpu[g].empty()) continue;
    std::vector<Time> cuts = {0};
    for (const ResolvedFault* f : per_gpu[g]) {
      cuts.push_back(f->at);
      if (f->end != kTimeMax) cuts.push_back(f->end);
    }
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    std::vector<Segment> profile;
    for (Time begin : cuts) {
      double factor = 1;  // multiplied in fault order: deterministic
      for (const ResolvedFault* f : per_gpu[g]) {
        if (f->at <= begin && begin < f->end) factor *= f->factor;
      }
      if (profile.empty() || profile.back().factor != factor) profile.push_back({begin, factor});
    }
    profile_of_[g] = static_cast<int32_t>(profiles_.size());
    profiles_.push_back(std::move(profile));
    active_ = true;
  }
  if (faults.jitter) {
    jitter_ = faults.jitter;
    jittered_.assign(num_gpus, jitter_->gpus.empty());
    for (uint32_t g : jitter_->gpus) {
      if (g < static_cast<uint32_t>(num_gpus)) jittered_[g] = true;
    }
    active_ = true;
  }
}

Time ComputeModel::FinishOn(GpuId gpu, Time start, Time work) const {
  if (profile_of_[gpu.value()] < 0) return AddClamped(start, TimeToPicosecondsDouble(work));
  const std::vector<Segment>& p = profiles_[profile_of_[gpu.value()]];
  // The segment holding `start`: the last that begins at or before it.
  size_t i = static_cast<size_t>(
                 std::upper_bound(p.begin(), p.end(), start, [](Time t, const Segment& s) { return t < s.begin; }) -
                 p.begin()) -
             1;
  Time t = start;
  double remaining = TimeToPicosecondsDouble(work);  // nominal picoseconds still to run
  for (;; ++i) {
    const double factor = p[i].factor;
    if (i + 1 == p.size()) return AddClamped(t, remaining * factor);
    const Time next = p[i + 1].begin;
    const double can_run = TimeToPicosecondsDouble(next - t) / factor;
    if (remaining <= can_run) return std::min(next, AddClamped(t, remaining * factor));
    remaining -= can_run;
    t = next;
  }
}

Time ComputeModel::Finish(std::span<const GpuId> gpus, Time start, Time work, uint64_t task) const {
  if (!active_) return AddClamped(start, TimeToPicosecondsDouble(work));
  Time finish = start;
  for (GpuId g : gpus) {
    Time w = work;
    if (jitter_ && jittered_[g.value()]) {
      const double ps = TimeToPicosecondsDouble(work) * JitterFactor(*jitter_, g, task);
      w = ps < 9.2e18 ? PicosecondsToTime(static_cast<int64_t>(std::nearbyint(ps))) : kTimeMax;
    } else if (profile_of_[g.value()] < 0) {
      finish = std::max(finish, AddClamped(start, TimeToPicosecondsDouble(work)));
      continue;
    }
    finish = std::max(finish, FinishOn(g, start, w));
  }
  return finish;
}

}  // namespace hetsim::faults
