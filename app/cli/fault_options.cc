#include "app/cli/fault_options.h"

#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "proto/io.h"
#include "proto/validate_faults.h"
#include "proto/validate_problems.h"

namespace hetsim::app {

absl::StatusOr<LoadedFaults> LoadFaultOptions(const FaultOptions& options, const v1::Cluster& cluster) {
  LoadedFaults out;
  if (!options.faults_path.empty()) {
    HETSIM_ASSIGN_OR_RETURN(out.faults, driver::LoadFaults(proto::Source::File(options.faults_path), cluster));
    out.sources = driver::SourcesOf(out.faults, options.faults_path);
  }
  for (const std::string& text : options.fault_texts) {
    const std::string source = absl::StrFormat("--fault '%s'", text);
    v1::Fault fault;
    HETSIM_RETURN_IF_ERROR(proto::ParseMessage(text, proto::FileFormat::kText, source, &fault));
    proto::Problems p(source);
    proto::ValidateFault(fault, cluster, "", p);
    HETSIM_RETURN_IF_ERROR(p.ToStatus());
    *out.faults.add_faults() = fault;
    out.sources.push_back({source, ""});
  }
  if (!options.jitter_text.empty()) {
    const std::string source = absl::StrFormat("--jitter '%s'", options.jitter_text);
    v1::Jitter jitter;
    HETSIM_RETURN_IF_ERROR(proto::ParseMessage(options.jitter_text, proto::FileFormat::kText, source, &jitter));
    proto::Problems p(source);
    proto::ValidateJitter(jitter, cluster, "", p);
    HETSIM_RETURN_IF_ERROR(p.ToStatus());
    *out.faults.mutable_jitter() = jitter;
  }
  return out;
}

}  // namespace hetsim::app
