// hetsim as a library for other languages (the Python package `hetsim`, app/python/): every call takes
// its inputs as file paths or serialized messages of proto/hetsim.proto and returns a serialized
// message (or text), so a binding passes bytes and needs no C++ type. Errors are the CLI's:
// InvalidArgument "<file>: <field path>: <problem>", where a message passed in memory is named by its
// argument ("plan", "cluster", "plans[2]"). Calls are independent and thread-safe (no shared state).
//
// The calls are one table (Calls()): each names its parameters, their kinds and defaults, its result
// and its docstring, so a binding defines every call from the table and a new call is one row in
// api.cc (docs/architecture.md, "Where to add").
#ifndef HETSIM_APP_API_API_H_
#define HETSIM_APP_API_API_H_

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace hetsim::api {

// A file path, or a serialized message named `name` in error messages.
struct Input {
  std::string name;   // "plan", "cluster", ...
  std::string path;   // set: read the file (format from its extension)
  std::string bytes;  // else: the binary message
  bool is_path = false;
  std::string message_type;  // kAnyInput in memory: its type as `hetsim check --type` names it ("plan")
};

// What a parameter takes; a binding converts its language's values by kind.
enum class Kind : uint8_t {
  kInput,          // a path or a message of `Param::message`
  kInputs,         // a list of those (a single one is a list of one)
  kOptionalInput,  // an input or nothing
  kAnyInput,       // a path or a message of any input type (the message's type travels with it)
  kString,
  kInt,
  kCount,  // an integer >= 0
  kDouble,
  kBool,
  kInts,
};
const char* KindName(Kind kind);  // "input", "inputs", ..., as a binding reads them

// One argument. std::monostate is "nothing" (an optional input left out, a required one's default).
using Value =
    std::variant<std::monostate, bool, int64_t, double, std::string, std::vector<int64_t>, Input, std::vector<Input>>;

struct Param {
  std::string name;
  Kind kind = Kind::kString;
  std::string message;        // inputs: the schema's message ("Plan")
  bool keyword_only = false;  // Python: after the `*`
  bool required = false;
  Value default_value;  // when not required
};

class Args;

struct Call {
  std::string name;    // the command's name: "run"
  std::string doc;     // what it does, for the binding's docstring
  std::string result;  // the message it returns ("Report"); empty: text
  std::vector<Param> params;
  absl::StatusOr<std::string> (*body)(const Args&) = nullptr;
};

// The arguments of one call, in its parameters' order, read by name.
class Args {
 public:
  Args(const Call& call, const std::vector<Value>& values) : call_(call), values_(values) {}
  const Input& input(absl::string_view name) const { return Get<Input>(name); }
  const std::vector<Input>& inputs(absl::string_view name) const { return Get<std::vector<Input>>(name); }
  const Input* optional_input(absl::string_view name) const;  // null when left out
  const std::string& str(absl::string_view name) const { return Get<std::string>(name); }
  int64_t integer(absl::string_view name) const { return Get<int64_t>(name); }
  double real(absl::string_view name) const { return Get<double>(name); }
  bool flag(absl::string_view name) const { return Get<bool>(name); }
  const std::vector<int64_t>& integers(absl::string_view name) const { return Get<std::vector<int64_t>>(name); }

 private:
  const Value& At(absl::string_view name) const;
  template <typename T>
  const T& Get(absl::string_view name) const {
    return std::get<T>(At(name));
  }
  const Call& call_;
  const std::vector<Value>& values_;
};

// Every call, in the order the binding lists them.
const std::vector<Call>& Calls();

// The call named `name`, or null.
const Call* FindCall(absl::string_view name);

// The parameters' defaults (std::monostate for the required ones), to fill in by position.
std::vector<Value> DefaultArguments(const Call& call);

// Runs `call` on `values` (one a parameter, in order): InvalidArgument naming the parameter when a
// value is missing, of the wrong kind, or a negative count; otherwise the call's result.
absl::StatusOr<std::string> Invoke(const Call& call, const std::vector<Value>& values);

}  // namespace hetsim::api

#endif  // HETSIM_APP_API_API_H_
