// libFuzzer target: the Python binding's argument layer, its C++ side (issue 42's Python door). The
// bytes pick a call of the api table (app/api/api.h, what app/python/hetsim_ext.cc forwards every
// Python call to) and its arguments, each of any kind, including the wrong one, then api::Invoke runs
// it under a 2-second wall-clock limit (base/wall_limit.h). Every input must end in a result or an
// error status: a crash, a hang, a sanitizer report or an escaped exception (std::terminate inside the
// interpreter) is the finding.
//
// Input layout: one byte for the call, then per parameter one mode byte (0: the default, 1: a value of
// the parameter's kind, 2: a value of another kind) and the value: strings, inputs and lists with a
// one-byte length (inputs: a binary message in memory, never a path), numbers as 8 little-endian bytes.
// `plan`, `sweep` and `fidelity` are left out: a planner's search, a sweep's points and fidelity's
// calibration search are bounded by their own limits, not by the wall clock, and a sweep and the
// fidelity sets name files (fidelity reads only paths: with none, the bundled sets, minutes of work
// under the sanitizers, which the harness cannot vary). tests/fuzz/make_api_args_corpus.py writes
// the seeds.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "app/api/api.h"
#include "base/wall_limit.h"

namespace {

class Bytes {
 public:
  Bytes(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint8_t Byte() { return at_ < size_ ? data_[at_++] : 0; }
  std::string Text() {
    const size_t n = std::min<size_t>(Byte(), size_ - at_);
    std::string s(reinterpret_cast<const char*>(data_ + at_), n);
    at_ += n;
    return s;
  }
  std::string LongText() {  // a message: two length bytes
    const size_t low = Byte();
    const size_t n = std::min<size_t>(low | (size_t{Byte()} << 8), size_ - at_);
    std::string s(reinterpret_cast<const char*>(data_ + at_), n);
    at_ += n;
    return s;
  }
  uint64_t Word() {
    uint64_t w = 0;
    for (int i = 0; i < 8; ++i) w |= uint64_t{Byte()} << (8 * i);
    return w;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t at_ = 0;
};

hetsim::api::Input InputOf(const hetsim::api::Param& p, Bytes& in) {
  static const char* const kTypes[] = {"cluster", "model", "plan", "sweep", "faults", "report", ""};
  hetsim::api::Input input;
  input.name = p.name;
  input.message_type = kTypes[in.Byte() % 7];
  input.bytes = in.LongText();
  return input;
}

hetsim::api::Value ValueOf(const hetsim::api::Param& p, hetsim::api::Kind kind, Bytes& in) {
  using hetsim::api::Kind;
  switch (kind) {
    case Kind::kInput:
    case Kind::kAnyInput:
    case Kind::kOptionalInput: return InputOf(p, in);
    case Kind::kInputs: {
      std::vector<hetsim::api::Input> inputs(in.Byte() % 4);
      for (hetsim::api::Input& i : inputs) i = InputOf(p, in);
      return inputs;
    }
    case Kind::kString: return in.Text();
    case Kind::kInt:
    case Kind::kCount: return static_cast<int64_t>(in.Word());
    case Kind::kDouble: {
      const uint64_t w = in.Word();
      double d;
      std::memcpy(&d, &w, sizeof d);
      return d;
    }
    case Kind::kBool: return (in.Byte() & 1) != 0;
    case Kind::kInts: {
      std::vector<int64_t> ints(in.Byte() % 17);
      for (int64_t& i : ints) i = static_cast<int64_t>(in.Word());
      return ints;
    }
  }
  return std::monostate{};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Bytes in(data, size);
  std::vector<const hetsim::api::Call*> calls;
  for (const hetsim::api::Call& c : hetsim::api::Calls()) {
    if (c.name != "plan" && c.name != "sweep" && c.name != "fidelity") calls.push_back(&c);
  }
  const hetsim::api::Call& call = *calls[in.Byte() % calls.size()];
  std::vector<hetsim::api::Value> values = hetsim::api::DefaultArguments(call);
  for (size_t i = 0; i < call.params.size(); ++i) {
    const hetsim::api::Param& p = call.params[i];
    const uint8_t mode = in.Byte() % 3;
    if (mode == 1) values[i] = ValueOf(p, p.kind, in);
    // Another kind: the binding converts by kind, so this is what a bug there would pass.
    if (mode == 2) values[i] = ValueOf(p, static_cast<hetsim::api::Kind>(in.Byte() % 10), in);
  }
  const hetsim::WallLimit limit(2.0);
  const hetsim::WallLimitScope scope(limit);
  (void)hetsim::api::Invoke(call, values);
  return 0;
}
