// Bash's $(( )) integer arithmetic over a script's variables, for the launch-script renderer: + - * /
// % **, comparisons, ! && ||, unary signs and parentheses on 64-bit integers.
#ifndef HETSIM_SERVICE_INTEROP_SHELL_ARITHMETIC_INTERNAL_H_
#define HETSIM_SERVICE_INTEROP_SHELL_ARITHMETIC_INTERNAL_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace hetsim::interop {

// A variable's value by name; nullopt when unset (bash reads it as 0).
using ShellLookup = std::function<std::optional<std::string>(absl::string_view name)>;

// The value of `expr` (its $ expansions already done), or InvalidArgument saying why not: a syntax
// error, a variable whose value is not a number, division by zero, overflow.
absl::StatusOr<int64_t> EvaluateShellArithmetic(absl::string_view expr, const ShellLookup& lookup);

}  // namespace hetsim::interop

#endif  // HETSIM_SERVICE_INTEROP_SHELL_ARITHMETIC_INTERNAL_H_
