#include "app/cli/cli.h"

#include <cmath>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <iostream>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "base/wall_limit.h"
#include "service/driver/run_command.h"
#include "sim/executor/run_limit.h"

namespace hetsim::cli {

int ExitCodeFor(const absl::Status& status) {
  // A user's --max-events / --max-wall-seconds reached: the command line asked for it, not a bug.
  if (executor::IsRunLimit(status)) return kExitBadInput;
  switch (status.code()) {
    case absl::StatusCode::kOk: return kExitOk;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kNotFound:
    case absl::StatusCode::kPermissionDenied:
    case absl::StatusCode::kOutOfRange:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kAlreadyExists: return kExitBadInput;
    case absl::StatusCode::kCancelled:
    case absl::StatusCode::kUnknown:
    case absl::StatusCode::kDeadlineExceeded:
    case absl::StatusCode::kResourceExhausted:
    case absl::StatusCode::kAborted:
    case absl::StatusCode::kUnimplemented:
    case absl::StatusCode::kInternal:
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kDataLoss:
    case absl::StatusCode::kUnauthenticated: return kExitInternal;
    // Abseil's placeholder for codes it may add; it is never a status's code.
    case absl::StatusCode::kDoNotUseReservedForFutureExpansionUseDefaultInSwitchInstead_: break;
  }
  return kExitInternal;  // a code newer than this build's Abseil: not the input's fault
}

int ReportFailure(const CommandInfo& info, const absl::Status& status) {
  const bool internal = ExitCodeFor(status) == kExitInternal;
  for (absl::string_view line : absl::StrSplit(status.message(), '\n')) {
    std::fprintf(stderr, "hetsim %s: %s%.*s\n", info.name, internal ? "internal error: " : "",
                 static_cast<int>(line.size()), line.data());
  }
  const int code = ExitCodeFor(status);
  return code == kExitOk ? kExitInternal : code;  // an OK status here is itself a bug
}

int UsageError(const CommandInfo& info, absl::string_view message) {
  std::fprintf(stderr, "hetsim %s: %.*s\nusage: %s\n(hetsim %s --help for the options)\n", info.name,
               static_cast<int>(message.size()), message.data(), info.usage, info.name);
  return kExitBadInput;
}

std::optional<int> ParseCommandLine(const CommandInfo& info, const Args& args, po::options_description& options,
                                    const po::positional_options_description& positional, po::variables_map* vm) {
  options.add_options()("help,h", "print this help and exit");
  try {
    const po::parsed_options parsed = po::command_line_parser(args).options(options).positional(positional).run();
    po::store(parsed, *vm);
    if (vm->count("help")) {
      std::cout << "usage: " << info.usage << "\n\n" << info.description << "\n\n" << options << std::flush;
      return kExitOk;
    }
    po::notify(*vm);  // checks required options after --help had its chance
    // An empty value names nothing: `--report ''` wrote no report and `--max-memory ''` set no limit,
    // both with exit 0, as if the flag were absent (session 33).
    for (const po::option& o : parsed.options) {
      for (const std::string& value : o.value) {
        if (!value.empty()) continue;
        return UsageError(info, o.position_key >= 0
                                    ? absl::StrCat(o.string_key, " (argument ", o.position_key + 1, "): empty")
                                    : absl::StrCat("--", o.string_key, ": empty value"));
      }
    }
  } catch (const po::error& e) {
    return UsageError(info, e.what());
  }
  return std::nullopt;
}

std::optional<int> ParseTypeOption(const CommandInfo& info, const std::string& name,
                                   std::optional<proto::MessageType>* type) {
  if (name.empty()) return std::nullopt;
  absl::StatusOr<proto::MessageType> t = proto::MessageTypeFromName(name);
  if (!t.ok()) return UsageError(info, absl::StrCat("--type: ", t.status().message()));
  *type = *t;
  return std::nullopt;
}

std::optional<int> CheckGivenOnce(const CommandInfo& info, const std::vector<std::string>& paths) {
  for (size_t i = 0; i < paths.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      std::error_code ec;
      if (paths[i] != paths[j] && !std::filesystem::equivalent(paths[i], paths[j], ec)) continue;
      return UsageError(info,
                        absl::StrFormat("%s: given twice (also as %s): each file is read once", paths[i], paths[j]));
    }
  }
  return std::nullopt;
}

std::optional<int> CheckRunLimitFlags(const CommandInfo& info, int64_t max_events, double max_wall_seconds) {
  if (absl::Status s = driver::CheckRunLimits(max_events, max_wall_seconds); !s.ok()) {
    return UsageError(info, s.message());
  }
  return std::nullopt;
}

absl::StatusOr<std::string> DrawPageWithin(const WallLimit& limit, const std::function<std::string()>& draw) {
  std::optional<WallLimitScope> scope;
  if (limit.limited()) scope.emplace(limit);
  std::string page = draw();
  if (absl::Status s = CurrentWallLimit().Check("drawing the HTML page"); !s.ok()) return s;
  return page;
}

int RunGuarded(const CommandInfo& info, const std::function<int()>& body) {
  try {
    return body();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hetsim %s: internal error: %s\n", info.name, e.what());
  } catch (...) {
    std::fprintf(stderr, "hetsim %s: internal error: unknown exception\n", info.name);
  }
  return kExitInternal;
}

}  // namespace hetsim::cli
