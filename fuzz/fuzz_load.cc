// libFuzzer target: the bytes of one input file, read as each message type (Cluster, Model, Plan,
// Sweep, Report, Faults, ...) in the format HETSIM_FUZZ_FORMAT (0 binary, 1 text, 2 JSON) through
// proto::ParseMessage, the code path Load and LoadAnyMessage use. Whatever parses is validated (a
// Cluster is also built into a topology; Faults are checked against a small fixed cluster) and written
// back in all three formats, which must parse again to the same message.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "absl/strings/string_view.h"
#include "google/protobuf/util/field_comparator.h"
#include "google/protobuf/util/message_differencer.h"
#include "proto/any_message.h"
#include "proto/file_format.h"
#include "proto/gpu_presets.h"
#include "proto/hetsim.pb.h"
#include "proto/io.h"
#include "proto/validate_cluster.h"
#include "proto/validate_faults.h"
#include "proto/validate_model.h"
#include "proto/validate_sweep.h"
#include "topology/device_graph.h"

namespace {

using hetsim::proto::FileFormat;

constexpr FileFormat kFormat = static_cast<FileFormat>(HETSIM_FUZZ_FORMAT);

// Every format written must read back to the same message: a mismatch is a bug, so abort.
void CheckRoundTrips(const google::protobuf::Message& message) {
  for (FileFormat format : {FileFormat::kBinary, FileFormat::kText, FileFormat::kJson}) {
    auto bytes = hetsim::proto::SerializeMessage(message, format);
    if (!bytes.ok()) continue;  // e.g. JSON cannot hold a NaN; the validators reject those anyway
    std::unique_ptr<google::protobuf::Message> again(message.New());
    if (!hetsim::proto::ParseMessage(*bytes, format, "again", again.get()).ok()) std::abort();
    // Compared by value: JSON omits a -0.0 that text and binary keep, and NaN != NaN.
    google::protobuf::util::DefaultFieldComparator comparator;
    comparator.set_treat_nan_as_equal(true);
    google::protobuf::util::MessageDifferencer differencer;
    differencer.set_field_comparator(&comparator);
    differencer.set_message_field_comparison(google::protobuf::util::MessageDifferencer::EQUIVALENT);
    if (!differencer.Compare(message, *again)) std::abort();
  }
}

// Two islands of two-GPU nodes (6 GPUs, NVSwitch, InfiniBand, one Ethernet link between them): the
// cluster that fuzzed Faults are validated against.
const hetsim::v1::Cluster& FaultsCluster() {
  static const hetsim::v1::Cluster* cluster = [] {
    auto* c = new hetsim::v1::Cluster;
    constexpr absl::string_view kText = R"pb(
      gpu_types { name: "a100" preset: "A100-80GB" }
      gpu_types { name: "v100" preset: "V100-32GB" }
      node_types { name: "fast" gpu_type: "a100" gpus_per_node: 2 intra_node_fabric: NVSWITCH
                   intra_node_bandwidth_gbps: 2400 intra_node_latency_ns: 1000 }
      node_types { name: "slow" gpu_type: "v100" gpus_per_node: 2 intra_node_fabric: NVSWITCH
                   intra_node_bandwidth_gbps: 1200 intra_node_latency_ns: 1000 }
      islands { name: "fast" node_type: "fast" node_count: 2 fabric: INFINIBAND topology: SINGLE_SWITCH
                nics_per_node: 1 nic_bandwidth_gbps: 200 nic_latency_ns: 1000 switch_latency_ns: 1000 }
      islands { name: "slow" node_type: "slow" node_count: 1 fabric: INFINIBAND topology: SINGLE_SWITCH
                nics_per_node: 1 nic_bandwidth_gbps: 200 nic_latency_ns: 1000 switch_latency_ns: 1000 }
      inter_island_links { island_a: "slow" island_b: "fast" fabric: ETHERNET bandwidth_gbps: 25
                           latency_ns: 5000 count: 1 })pb";
    if (!hetsim::proto::ParseMessage(kText, FileFormat::kText, "faults-cluster", c).ok() ||
        !hetsim::proto::ApplyGpuPresets(c, "faults-cluster").ok()) {
      std::abort();
    }
    return c;
  }();
  return *cluster;
}

void Validate(const google::protobuf::Message& message) {
  if (const auto* cluster = dynamic_cast<const hetsim::v1::Cluster*>(&message)) {
    hetsim::v1::Cluster resolved = *cluster;
    if (!hetsim::proto::ApplyGpuPresets(&resolved, "fuzz").ok()) return;
    if (!hetsim::proto::ValidateCluster(resolved, "fuzz").ok()) return;
    (void)hetsim::topology::Topology::Build(resolved);
  } else if (const auto* model = dynamic_cast<const hetsim::v1::Model*>(&message)) {
    (void)hetsim::proto::ValidateModel(*model, "fuzz");
  } else if (const auto* sweep = dynamic_cast<const hetsim::v1::Sweep*>(&message)) {
    (void)hetsim::proto::ValidateSweep(*sweep, "fuzz");
  } else if (const auto* faults = dynamic_cast<const hetsim::v1::Faults*>(&message)) {
    (void)hetsim::proto::ValidateFaults(*faults, FaultsCluster(), "fuzz");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::string_view contents(reinterpret_cast<const char*>(data), size);
  for (hetsim::proto::MessageType type : hetsim::proto::AllMessageTypes()) {
    auto message = hetsim::proto::NewMessage(type);
    if (!hetsim::proto::ParseMessage(contents, kFormat, "fuzz", message.get()).ok()) continue;
    Validate(*message);
    CheckRoundTrips(*message);
  }
  return 0;
}
