// What every subcommand shares: option parsing with --help and usage errors (exit 2), and turning an
// absl::Status into a message on stderr and an exit code.
//
// Exit codes (docs/conventions.md): 0 success, 1 internal failure, 2 bad input or usage.
#ifndef HETSIM_APP_CLI_CLI_H_
#define HETSIM_APP_CLI_CLI_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "app/cli/commands.h"
#include "base/wall_limit.h"
#include "proto/any_message.h"

namespace hetsim::cli {

namespace po = boost::program_options;

inline constexpr int kExitOk = 0;
inline constexpr int kExitInternal = 1;
inline constexpr int kExitBadInput = 2;

// How a subcommand describes itself for --help and usage errors.
struct CommandInfo {
  const char* name;         // "convert"
  const char* usage;        // "hetsim convert IN OUT [--type cluster|model|plan|sweep|report]"
  const char* description;  // a paragraph printed under the usage line by --help
};

// 2 for statuses that mean the user's input or command line is wrong (invalid argument, not found,
// permission denied, out of range, failed precondition, already exists) or that a run limit the user
// set was reached (sim/executor/run_limit.h), 1 for everything else.
int ExitCodeFor(const absl::Status& status);

// Prints "hetsim NAME: <message>" on stderr (each line of a multi-line message on its own) and
// returns ExitCodeFor(status). `status` must not be OK.
int ReportFailure(const CommandInfo& info, const absl::Status& status);

// Prints "hetsim NAME: <message>" and the usage line on stderr; returns 2.
int UsageError(const CommandInfo& info, absl::string_view message);

// Parses `args` with `options` (a --help/-h switch is added) and `positional`. Returns nullopt when
// the command should go on, otherwise the exit code to return at once: 0 after printing --help on
// stdout, 2 after a usage error (unknown option, missing or extra argument, bad value).
std::optional<int> ParseCommandLine(const CommandInfo& info, const Args& args, po::options_description& options,
                                    const po::positional_options_description& positional, po::variables_map* vm);

// Turns a --type value into `*type` (unset when `name` is empty). Returns 2 after a usage error for an
// unknown name, nullopt otherwise.
std::optional<int> ParseTypeOption(const CommandInfo& info, const std::string& name,
                                   std::optional<proto::MessageType>* type);

// Exit code 2 when a file is named twice in `paths` (the same path, or two names of one file): calibrate
// read a log given twice as twice the measurements (session 33).
std::optional<int> CheckGivenOnce(const CommandInfo& info, const std::vector<std::string>& paths);

// Checks --max-events N (>= 0) and --max-wall-seconds S (finite, >= 0), 0 meaning no limit, as `run`
// and `sweep` take them (N is parsed signed so that "-5" is refused, not wrapped to 2^64 - 5). Returns 2
// after a usage error, nullopt when both are fine.
std::optional<int> CheckRunLimitFlags(const CommandInfo& info, int64_t max_events, double max_wall_seconds);

// A size: bytes with an optional suffix K, M, G, T (or KiB, MiB, GiB, TiB: powers of 1024; KB, MB, GB,
// TB: of 1000; B), at most 1 PiB (`collective --bytes`, `run --max-memory`); errors name `flag`.
absl::StatusOr<int64_t> ParseSize(absl::string_view text, absl::string_view flag);

// Draws an HTML page (`draw`) under `limit`, installed for the drawing: the drawing polls it and stops
// early, and a page cut short is refused (DeadlineExceeded, a run limit: exit 2), never written.
absl::StatusOr<std::string> DrawPageWithin(const WallLimit& limit, const std::function<std::string()>& draw);

// Runs `body`, turning an escaped exception into "hetsim NAME: internal error: ..." and exit code 1.
int RunGuarded(const CommandInfo& info, const std::function<int()>& body);

}  // namespace hetsim::cli

#endif  // HETSIM_APP_CLI_CLI_H_
