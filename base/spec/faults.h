// The plain words of a resolved fault and of compute jitter (sim/faults reads these; the resolution
// of a Faults message against the topology is service/driver/resolve_faults.h's).
#ifndef HETSIM_BASE_SPEC_FAULTS_H_
#define HETSIM_BASE_SPEC_FAULTS_H_

#include <cstdint>
#include <vector>

namespace hetsim::spec {

// kNone: a kind this build does not know (a validated file has none); it does nothing.
enum class FaultKind : uint8_t { kNone, kSlow, kFlap, kFail };
enum class JitterDistribution : uint8_t { kNone, kUniform, kNormal, kLogNormal };

// The schema's name ("LOGNORMAL"), as reports print it.
inline const char* JitterDistributionName(JitterDistribution d) {
  switch (d) {
    case JitterDistribution::kUniform: return "UNIFORM";
    case JitterDistribution::kNormal: return "NORMAL";
    case JitterDistribution::kLogNormal: return "LOGNORMAL";
    case JitterDistribution::kNone: break;
  }
  return "JITTER_DISTRIBUTION_UNSPECIFIED";
}

// Seeded compute-time noise: every compute task's duration is multiplied by an independent draw.
struct JitterSpec {
  uint64_t seed = 0;
  JitterDistribution distribution = JitterDistribution::kNone;
  double spread = 0;           // relative, e.g. 0.05
  std::vector<uint32_t> gpus;  // empty: every GPU
};

}  // namespace hetsim::spec

#endif  // HETSIM_BASE_SPEC_FAULTS_H_
