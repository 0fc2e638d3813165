#include "service/sweep/fingerprint.h"

#include <boost/crc.hpp>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"

namespace hetsim::sweep {
namespace {

// CRC-64/XZ (ECMA-182 polynomial, reflected, inverted): a checksum, not a defence against forgery;
// it tells apart sweeps that differ by accident.
using Crc64 = boost::crc_optimal<64, 0x42F0E1EBA9EA3693ULL, ~0ULL, ~0ULL, true, true>;

// Each part is preceded by its length so that two parts cannot trade bytes.
void AddText(absl::string_view text, Crc64* crc) {
  const std::string length = absl::StrCat(text.size(), ":");
  crc->process_bytes(length.data(), length.size());
  crc->process_bytes(text.data(), text.size());
}

// Serialises with map entries sorted, so equal messages give equal bytes.
void AddMessage(const google::protobuf::MessageLite& message, Crc64* crc) {
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    message.SerializeToCodedStream(&coded);
  }
  AddText(bytes, crc);
}

}  // namespace

std::string SweepFingerprint(const hetsim::v1::Sweep& sweep, const SweepBase& base, int64_t points) {
  Crc64 crc;
  AddMessage(sweep, &crc);
  AddMessage(base.cluster, &crc);
  AddMessage(base.model, &crc);
  AddText(base.has_plan ? "plan" : "planner", &crc);
  AddMessage(base.plan, &crc);
  AddText(base.planner, &crc);
  AddText(absl::StrCat(points), &crc);
  return absl::StrFormat("%016x", crc.checksum());
}

bool IsSweepFingerprint(absl::string_view text) {
  if (text.size() != 16) return false;
  for (const char c : text) {
    if (!absl::ascii_isdigit(c) && !(c >= 'a' && c <= 'f')) return false;
  }
  return true;
}

}  // namespace hetsim::sweep
