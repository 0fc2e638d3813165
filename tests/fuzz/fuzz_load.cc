// libFuzzer target: the bytes of one input file, read as each message type (Cluster, Model, Plan,
// Sweep, Report, Faults, ...) in the format HETSIM_FUZZ_FORMAT (0 binary, 1 text, 2 JSON) through
// proto::ParseMessage, the code path Load and LoadAnyMessage use. Whatever parses is validated (a
// Cluster is also built into a topology; Faults are checked against a small fixed cluster) and written
// back in all three formats, which must parse again to the same message.
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "base/check.h"
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
#include "service/driver/cluster_topology.h"
#include "tests/fuzz/fuzz_cluster.h"

namespace {

using hetsim::proto::FileFormat;

constexpr FileFormat kFormat = static_cast<FileFormat>(HETSIM_FUZZ_FORMAT);

// Every format written must read back to the same message: a mismatch is a bug (HETSIM_CHECK aborts).
void CheckRoundTrips(const google::protobuf::Message& message) {
  for (FileFormat format : {FileFormat::kBinary, FileFormat::kText, FileFormat::kJson}) {
    auto bytes = hetsim::proto::SerializeMessage(message, format);
    if (!bytes.ok()) continue;  // e.g. JSON cannot hold a NaN; the validators reject those anyway
    std::unique_ptr<google::protobuf::Message> again(message.New());
    HETSIM_CHECK(hetsim::proto::ParseMessage(*bytes, format, "again", again.get()).ok(),
                 "written as format %d, does not read back", static_cast<int>(format));
    // Compared by value: JSON omits a -0.0 that text and binary keep, and NaN != NaN.
    google::protobuf::util::DefaultFieldComparator comparator;
    comparator.set_treat_nan_as_equal(true);
    google::protobuf::util::MessageDifferencer differencer;
    differencer.set_field_comparator(&comparator);
    differencer.set_message_field_comparison(google::protobuf::util::MessageDifferencer::EQUIVALENT);
    HETSIM_CHECK(differencer.Compare(message, *again), "format %d reads back a different message",
                 static_cast<int>(format));
  }
}

// Two islands of two-GPU nodes (6 GPUs, NVSwitch, InfiniBand, one Ethernet link between them): the
// cluster that fuzzed Faults are validated against.
void Validate(const google::protobuf::Message& message) {
  if (const auto* cluster = dynamic_cast<const hetsim::v1::Cluster*>(&message)) {
    hetsim::v1::Cluster resolved = *cluster;
    if (!hetsim::proto::ApplyGpuPresets(&resolved, "fuzz").ok()) return;
    if (!hetsim::proto::ValidateCluster(resolved, "fuzz").ok()) return;
    (void)hetsim::driver::BuildTopology(resolved, "fuzz");
  } else if (const auto* model = dynamic_cast<const hetsim::v1::Model*>(&message)) {
    (void)hetsim::proto::ValidateModel(*model, "fuzz");
  } else if (const auto* sweep = dynamic_cast<const hetsim::v1::Sweep*>(&message)) {
    (void)hetsim::proto::ValidateSweep(*sweep, "fuzz");
  } else if (const auto* faults = dynamic_cast<const hetsim::v1::Faults*>(&message)) {
    (void)hetsim::proto::ValidateFaults(*faults, FuzzCluster(), "fuzz");
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
