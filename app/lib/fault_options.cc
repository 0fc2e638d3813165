#include "app/lib/fault_options.h"

#include "absl/strings/str_format.h"
#include "proto/io.h"
#include "proto/validate_faults.h"
#include "proto/validate_problems.h"

namespace hetsim::app {

absl::StatusOr<LoadedFaults> LoadFaultOptions(const FaultOptions& options, const v1::Cluster& cluster) {
  LoadedFaults out;
  if (!options.faults_path.empty()) {
    absl::StatusOr<v1::Faults> file = proto::LoadAs<v1::Faults>(options.faults_path);
    if (!file.ok()) return file.status();
    if (absl::Status s = proto::ValidateFaults(*file, cluster, options.faults_path); !s.ok()) return s;
    out.faults = *std::move(file);
    out.sources = sim::faults::SourcesOf(out.faults, options.faults_path);
  }
  for (const std::string& text : options.fault_texts) {
    const std::string source = absl::StrFormat("--fault '%s'", text);
    v1::Fault fault;
    if (absl::Status s = proto::ParseMessage(text, proto::FileFormat::kText, source, &fault); !s.ok()) return s;
    proto::Problems p(source);
    proto::ValidateFault(fault, cluster, "", p);
    if (absl::Status s = p.ToStatus(); !s.ok()) return s;
    *out.faults.add_faults() = fault;
    out.sources.push_back({source, ""});
  }
  if (!options.jitter_text.empty()) {
    const std::string source = absl::StrFormat("--jitter '%s'", options.jitter_text);
    v1::Jitter jitter;
    if (absl::Status s = proto::ParseMessage(options.jitter_text, proto::FileFormat::kText, source, &jitter); !s.ok()) {
      return s;
    }
    proto::Problems p(source);
    proto::ValidateJitter(jitter, cluster, "", p);
    if (absl::Status s = p.ToStatus(); !s.ok()) return s;
    *out.faults.mutable_jitter() = jitter;
  }
  return out;
}

}  // namespace hetsim::app
