#include "service/interop/launch_script.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"
#include "service/interop/shell_arithmetic_internal.h"
#include "service/interop/shell_lexer_internal.h"

namespace hetsim::interop {
namespace {

constexpr size_t kMaxExpansionBytes = size_t{1} << 20;
constexpr int kMaxParameterNesting = 16;  // ${A:-${B:-${C:-...}}}

// A command that trains: a distributed launcher runs it, or it gives a model's shape, a parallel layout
// or a DeepSpeed config. A plain `python helper.py --in X --out Y` before the launch (BigScience's
// data-ratio step before BLOOM's) does none of these.
bool Trains(const std::vector<std::string>& words) {
  constexpr absl::string_view kLaunchers[] = {"torchrun", "torch.distributed.run", "torch.distributed.launch",
                                              "deepspeed", "accelerate"};
  constexpr absl::string_view kFlags[] = {"--num-layers",
                                          "--hidden-size",
                                          "--tensor-model-parallel-size",
                                          "--pipeline-model-parallel-size",
                                          "--micro-batch-size",
                                          "--global-batch-size",
                                          "--deepspeed",
                                          "--deepspeed_config"};
  for (const std::string& w : words) {
    const absl::string_view base = absl::string_view(w).substr(w.find_last_of('/') + 1);
    if (absl::c_linear_search(kLaunchers, base)) return true;
    for (absl::string_view flag : kFlags) {
      if (w == flag || absl::StartsWith(w, absl::StrCat(flag, "="))) return true;
    }
  }
  return false;
}

// The Python script a command runs: its first word ending in ".py".
std::string ScriptOf(const std::vector<std::string>& words) {
  for (const std::string& w : words) {
    if (absl::EndsWith(w, ".py")) return w;
  }
  return "";
}

// A test's outcome: a script's conditions are true, false, or beyond what can be decided without
// running it (file tests, commands).
enum class Truth { kTrue, kFalse, kUnknown };

bool IsName(absl::string_view s) {
  if (s.empty() || !(absl::ascii_isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s) {
    if (!(absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  }
  return true;
}

// The name a parameter expansion starts with: a variable's, or one special character ($1, $@, $#).
size_t NameLength(absl::string_view inner) {
  if (inner.empty()) return 0;
  if (!(absl::ascii_isalpha(static_cast<unsigned char>(inner[0])) || inner[0] == '_')) return 1;
  size_t n = 1;
  while (n < inner.size() && (absl::ascii_isalnum(static_cast<unsigned char>(inner[n])) || inner[n] == '_')) ++n;
  return n;
}

// What stands for a value that is not computed (a command's output, arithmetic over one): as written,
// its blanks closed up so that the later splitting of an unquoted use keeps it one word.
std::string Placeholder(absl::string_view open, absl::string_view text, absl::string_view close) {
  std::string out = absl::StrCat(open, text, close);
  for (char& c : out) {
    if (c == ' ' || c == '\t' || c == '\n') c = '_';
  }
  return out;
}

// The folder of the script file `source` ("." for a line given inline or a bare file name).
std::string ScriptFolder(absl::string_view source) {
  const size_t slash = source.find_last_of('/');
  return slash == absl::string_view::npos || source == "--line" ? "." : std::string(source.substr(0, slash));
}

// The commands whose output a launch script uses to find itself: `dirname $0`, `cd $(dirname $0) && pwd`,
// `pwd`, `realpath $0`. Their output is known without running them.
std::optional<std::string> KnownOutput(absl::string_view command, absl::string_view source) {
  const bool self = absl::StrContains(command, "$0") || absl::StrContains(command, "BASH_SOURCE");
  if (self && absl::StrContains(command, "dirname")) return ScriptFolder(source);
  if (self && (absl::StartsWith(command, "realpath") || absl::StartsWith(command, "readlink")))
    return std::string(source);
  if (absl::StripAsciiWhitespace(command) == "pwd") return std::string(".");
  return std::nullopt;
}

Truth Not(Truth t) { return t == Truth::kUnknown ? t : t == Truth::kTrue ? Truth::kFalse : Truth::kTrue; }
Truth Of(bool b) { return b ? Truth::kTrue : Truth::kFalse; }

// The words of one expansion joined into fields as bash splits them: unquoted text splits at blanks,
// quoted text never does, each element of "${ARRAY[@]}" is a field of its own.
class Fields {
 public:
  void Quoted(absl::string_view s) {
    current_.append(s.data(), s.size());
    open_ = true;
  }
  void Split(absl::string_view s) {
    for (char c : s) {
      if (c == ' ' || c == '\t' || c == '\n') {
        Break();
      } else {
        current_ += c;
        open_ = true;
      }
    }
  }
  void Break() {
    if (open_) fields_.push_back(std::move(current_));
    current_.clear();
    open_ = false;
  }
  size_t Bytes() const {
    size_t n = current_.size();
    for (const std::string& f : fields_) n += f.size();
    return n;
  }
  std::vector<std::string> Done() {
    Break();
    return std::move(fields_);
  }

 private:
  std::vector<std::string> fields_;
  std::string current_;
  bool open_ = false;
};

// One `if` (or a skipped loop) the script is inside.
struct Frame {
  bool parent_active = true;
  bool active = false;        // this branch runs
  bool taken = false;         // a branch of this `if` ran (or was decided)
  bool in_condition = false;  // between if/elif and then
  Truth condition = Truth::kTrue;
  bool skipping = false;  // a loop, case or function body: not run
  int skip_depth = 0;     // nested loops inside a skipped one
};

class Renderer {
 public:
  explicit Renderer(absl::string_view source) : source_(source) {}

  absl::StatusOr<RenderedLaunch> Render(const std::vector<ShellCommand>& commands, int64_t sbatch_nodes,
                                        int sbatch_line);

 private:
  bool Active() const { return frames_.empty() || (frames_.back().active && !frames_.back().skipping); }
  // Notes made while expanding a command are kept only if it turns out to be the launch.
  void Note(std::string key, std::string text) {
    if (in_launch_candidate_) {
      candidate_notes_.emplace_back(std::move(key), std::move(text));
    } else if (noted_.insert(key).second) {
      out_.notes.push_back(std::move(text));
    }
  }
  absl::Status TooLarge() const {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: line %d: an expansion grows past %d bytes", source_, line_, kMaxExpansionBytes));
  }

  absl::StatusOr<std::vector<std::string>> Expand(const ShellWord& w, int depth = 0);
  absl::StatusOr<std::string> ExpandScalar(const ShellWord& w, int depth = 0);
  absl::Status ExpandPart(const ShellPart& p, int depth, bool split, Fields& f);
  // The value of ${inner}, or nullopt when unset (and not defaulted).
  absl::StatusOr<std::optional<std::vector<std::string>>> Parameter(absl::string_view inner, int depth);
  absl::StatusOr<std::optional<std::string>> Arithmetic(absl::string_view expr, int depth);

  absl::Status Assign(absl::string_view name, bool append, const ShellWord& value);
  absl::StatusOr<bool> TryAssignment(const ShellWord& w);
  absl::StatusOr<Truth> Test(std::vector<std::string> args) const;
  absl::StatusOr<bool> Keyword(const ShellCommand& cmd, size_t& first);
  absl::StatusOr<Truth> RunCommand(const ShellCommand& cmd, size_t first);
  absl::StatusOr<Truth> RunProgram(const ShellCommand& cmd, size_t first);
  absl::Status RunCommands(const std::vector<ShellCommand>& commands);
  absl::Status RunText(const std::string& text, int line);
  absl::Status WriteHeredoc(const ShellCommand& cmd);

  absl::string_view source_;
  absl::flat_hash_map<std::string, std::vector<std::string>> vars_;
  std::vector<Frame> frames_;
  std::set<std::string> noted_;
  RenderedLaunch out_;
  int line_ = 0;
  int nesting_ = 0;  // eval and sh -c inside one another
  static constexpr int kMaxNesting = 4;
  Truth last_ = Truth::kTrue;
  bool in_launch_candidate_ = false;  // unset variables stay as written, so a refusal names them
  // The last command run was a program other than the launch (grep, nvidia-smi, mkdir): its exit status
  // is the machine's. A statement assumes it succeeded (`cd "$DIR" && torchrun ...`); a condition is
  // not decided by it.
  bool ran_program_ = false;
  // The variables the script exports (`export NAME=...`, `declare -x`) and the current command's own
  // assignments before its program (`NAME=v torchrun ...`): the launch's environment (EnvironmentOf).
  std::set<std::string> exported_;
  std::vector<std::string> prefix_names_;
  std::map<std::string, std::string> EnvironmentOf(const std::vector<std::string>& words) const;
  bool chain_assumed_ = false;  // the current && / || chain's truth rests on such a program
  // In an array's elements too: arrays are spliced into the launch ("${MEGATRON_ARGS[@]}").
  bool in_array_ = false;
  bool KeepsUnset() const { return in_launch_candidate_ || in_array_; }
  std::vector<std::pair<std::string, std::string>> candidate_notes_;
};

absl::StatusOr<std::vector<std::string>> Renderer::Expand(const ShellWord& w, int depth) {
  Fields f;
  for (const ShellPart& p : w.parts) {
    HETSIM_RETURN_IF_ERROR(ExpandPart(p, depth, /*split=*/true, f));
    if (f.Bytes() > kMaxExpansionBytes) return TooLarge();
  }
  return f.Done();
}

absl::StatusOr<std::string> Renderer::ExpandScalar(const ShellWord& w, int depth) {
  Fields f;
  for (const ShellPart& p : w.parts) {
    HETSIM_RETURN_IF_ERROR(ExpandPart(p, depth, /*split=*/false, f));
    if (f.Bytes() > kMaxExpansionBytes) return TooLarge();
  }
  return absl::StrJoin(f.Done(), " ");
}

absl::Status Renderer::ExpandPart(const ShellPart& p, int depth, bool split, Fields& f) {
  const bool quoted = p.quoted || !split;
  switch (p.kind) {
    case ShellPart::Kind::kLiteral: quoted ? f.Quoted(p.text) : f.Split(p.text); return absl::OkStatus();
    case ShellPart::Kind::kCommand:
      if (std::optional<std::string> known = KnownOutput(p.text, source_)) {
        quoted ? f.Quoted(*known) : f.Split(*known);
        return absl::OkStatus();
      }
      Note(absl::StrCat("$(", p.text),
           absl::StrFormat("line %d: $(%s) is not run: its output is left as written", line_, p.text));
      f.Quoted(Placeholder("$(", p.text, ")"));
      return absl::OkStatus();
    case ShellPart::Kind::kArithmetic: {
      HETSIM_ASSIGN_OR_RETURN(std::optional<std::string> v, Arithmetic(p.text, depth));
      f.Quoted(v.value_or(Placeholder("$((", p.text, "))")));
      return absl::OkStatus();
    }
    case ShellPart::Kind::kParameter: break;
  }
  HETSIM_ASSIGN_OR_RETURN(std::optional<std::vector<std::string>> values, Parameter(p.text, depth));
  if (!values.has_value()) {
    // Unset: bash expands it to nothing; in the launch command it stays as written, so that the
    // import's refusal of a missing value names the variable.
    if (KeepsUnset()) f.Quoted(IsName(p.text) ? absl::StrCat("$", p.text) : absl::StrCat("${", p.text, "}"));
    return absl::OkStatus();
  }
  for (size_t k = 0; k < values->size(); ++k) {
    if (k > 0) f.Break();
    quoted ? f.Quoted((*values)[k]) : f.Split((*values)[k]);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<std::string>> Renderer::Arithmetic(absl::string_view expr, int depth) {
  if (depth > kMaxParameterNesting) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: line %d: $(( )) nested too deeply", source_, line_));
  }
  HETSIM_ASSIGN_OR_RETURN(ShellWord word, LexShellWord(expr, source_, line_, /*as_heredoc=*/true));
  HETSIM_ASSIGN_OR_RETURN(std::string text, ExpandScalar(word, depth + 1));
  absl::StatusOr<int64_t> v =
      EvaluateShellArithmetic(text, [this](absl::string_view name) -> std::optional<std::string> {
        auto it = vars_.find(name);
        if (it == vars_.end() || it->second.empty()) return std::nullopt;
        return it->second[0];
      });
  if (!v.ok()) {
    Note(absl::StrCat("$((", expr),
         absl::StrFormat("line %d: $((%s)) is not evaluated: %s", line_, expr, v.status().message()));
    return std::nullopt;
  }
  return absl::StrCat(*v);
}

// ${inner}: NAME, NAME[i], NAME[@], #NAME, and the default/alternative forms (:- - := = :+ + :? ?).
absl::StatusOr<std::optional<std::vector<std::string>>> Renderer::Parameter(absl::string_view inner, int depth) {
  if (depth > kMaxParameterNesting) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: line %d: parameter expansions nested too deeply", source_, line_));
  }
  const bool length = inner.size() > 1 && inner[0] == '#';
  if (length) inner.remove_prefix(1);
  const size_t n = NameLength(inner);
  const std::string name(inner.substr(0, n));
  absl::string_view rest = inner.substr(n);
  std::string index;
  if (absl::StartsWith(rest, "[")) {
    const size_t close = rest.find(']');
    if (close == absl::string_view::npos) return std::optional<std::vector<std::string>>();
    index = std::string(rest.substr(1, close - 1));
    rest.remove_prefix(close + 1);
  }
  std::optional<std::vector<std::string>> value;
  if (name == "#") {
    value = std::vector<std::string>{"0"};  // the script's arguments: none are known
  } else if (name == "0") {
    value = std::vector<std::string>{std::string(source_)};
  } else if (name == "@" || name == "*") {
    value = std::vector<std::string>{};
    Note("$@", absl::StrFormat("line %d: the script's arguments ($@) are not known: none are passed", line_));
  } else if (auto it = vars_.find(name); it != vars_.end()) {
    int64_t i = 0;
    if (index == "@" || index == "*") {
      value = it->second;
    } else if ((index.empty() || absl::SimpleAtoi(index, &i)) && i >= 0 && static_cast<size_t>(i) < it->second.size()) {
      value = std::vector<std::string>{it->second[i]};
    }
  }
  if (length)
    return std::optional<std::vector<std::string>>(
        std::vector<std::string>{absl::StrCat(value && !value->empty() ? (*value)[0].size() : 0)});
  const bool colon = absl::StartsWith(rest, ":") && rest.size() > 1 &&
                     absl::string_view("-=+?").find(rest[1]) != absl::string_view::npos;
  if (colon) rest.remove_prefix(1);
  const bool empty = !value || value->empty() || (value->size() == 1 && (*value)[0].empty());
  const bool use_word = colon ? empty : !value.has_value();
  if (rest.empty()) {
    const bool argument = absl::ascii_isdigit(static_cast<unsigned char>(name.empty() ? 'x' : name[0]));
    if (!value && (KeepsUnset() || argument)) {
      Note(absl::StrCat("unset ", name),
           argument
               ? absl::StrFormat("line %d: the script's arguments ($%s) are not known: none are passed", line_, name)
               : absl::StrFormat("line %d: %s is not set in the script (nor by a default): left as $%s", line_, name,
                                 name));
    }
    return value;
  }
  const char op = rest[0];
  if (absl::string_view("-=+?").find(op) == absl::string_view::npos) {
    Note(absl::StrCat("${", inner), absl::StrFormat("line %d: ${%s} is not evaluated: left as written", line_, inner));
    return std::optional<std::vector<std::string>>();
  }
  HETSIM_ASSIGN_OR_RETURN(ShellWord word, LexShellWord(rest.substr(1), source_, line_));
  if (op == '+') {
    if (use_word) return std::optional<std::vector<std::string>>(std::vector<std::string>{""});
    HETSIM_ASSIGN_OR_RETURN(std::string alt, ExpandScalar(word, depth + 1));
    return std::optional<std::vector<std::string>>(std::vector<std::string>{alt});
  }
  if (!use_word) return value;
  if (op == '?') {
    Note(absl::StrCat("unset ", name),
         absl::StrFormat("line %d: %s is required by the script and not set: left as $%s", line_, name, name));
    return std::optional<std::vector<std::string>>();
  }
  HETSIM_ASSIGN_OR_RETURN(std::string fallback, ExpandScalar(word, depth + 1));
  if (op == '=' && IsName(name)) vars_[name] = {fallback};
  return std::optional<std::vector<std::string>>(std::vector<std::string>{fallback});
}

absl::Status Renderer::Assign(absl::string_view name, bool append, const ShellWord& value) {
  std::vector<std::string> values;
  if (value.is_array) {
    in_array_ = true;
    for (const ShellWord& element : value.elements) {
      absl::StatusOr<std::vector<std::string>> fields = Expand(element);
      if (!fields.ok()) {
        in_array_ = false;
        return fields.status();
      }
      for (std::string& field : *fields) values.push_back(std::move(field));
    }
    in_array_ = false;
  } else {
    HETSIM_ASSIGN_OR_RETURN(std::string v, ExpandScalar(value));
    values.push_back(std::move(v));
  }
  std::vector<std::string>& target = vars_[name];
  if (!append) {
    target = std::move(values);
  } else if (value.is_array || target.empty()) {
    for (std::string& v : values) target.push_back(std::move(v));
  } else {
    target[0] += values[0];
  }
  size_t bytes = 0;
  for (const std::string& v : target) bytes += v.size();
  if (bytes > kMaxExpansionBytes) return TooLarge();
  return absl::OkStatus();
}

// NAME=value, NAME+=value or NAME=( ... ): assigned, and true; any other word: false.
// The variable `w` assigns (NAME=..., NAME+=...), or nullopt when it is no assignment.
std::optional<std::string> AssignedName(const ShellWord& w) {
  if (w.parts.empty() || w.parts[0].kind != ShellPart::Kind::kLiteral || w.parts[0].quoted) return std::nullopt;
  const std::string& head = w.parts[0].text;
  const size_t eq = head.find('=');
  if (eq == std::string::npos) return std::nullopt;
  const bool append = eq > 0 && head[eq - 1] == '+';
  std::string name = head.substr(0, append ? eq - 1 : eq);
  if (!IsName(name)) return std::nullopt;
  return name;
}

// The launch's environment as the importer reads it (RenderedLaunch::environment): Transformer Engine's
// NVTE_* variables the script exports or sets before the launch's program, and those an `env` among the
// launch's words sets (`srun env NVTE_FUSED_ATTN=0 python ...`), the last one set winning.
std::map<std::string, std::string> Renderer::EnvironmentOf(const std::vector<std::string>& words) const {
  std::map<std::string, std::string> env;
  auto keep = [&](const std::string& name) {
    if (!absl::StartsWith(name, "NVTE_")) return;
    const auto it = vars_.find(name);
    if (it != vars_.end()) env[name] = absl::StrJoin(it->second, " ");
  };
  for (const std::string& name : exported_) keep(name);
  for (const std::string& name : prefix_names_) keep(name);
  for (size_t k = 0; k < words.size() && !absl::EndsWith(words[k], ".py"); ++k) {
    if (words[k] != "env") continue;
    for (size_t j = k + 1; j < words.size(); ++j) {
      const size_t eq = words[j].find('=');
      if (eq == std::string::npos || !IsName(words[j].substr(0, eq))) break;
      if (absl::StartsWith(words[j], "NVTE_")) env[words[j].substr(0, eq)] = words[j].substr(eq + 1);
    }
  }
  return env;
}

absl::StatusOr<bool> Renderer::TryAssignment(const ShellWord& w) {
  const std::optional<std::string> assigned = AssignedName(w);
  if (!assigned) return false;
  const std::string& head = w.parts[0].text;
  const size_t eq = head.find('=');
  const bool append = eq > 0 && head[eq - 1] == '+';
  const std::string& name = *assigned;
  ShellWord value = w;
  if (!value.is_array) value.parts[0].text = head.substr(eq + 1);
  HETSIM_RETURN_IF_ERROR(Assign(name, append, value));
  return true;
}

// [ ... ], [[ ... ]] and test: strings and integers compared; file tests and the rest undecided.
absl::StatusOr<Truth> Renderer::Test(std::vector<std::string> args) const {
  bool negate = false;
  while (!args.empty() && args[0] == "!") {
    negate = !negate;
    args.erase(args.begin());
  }
  Truth t = Truth::kUnknown;
  if (args.empty()) {
    t = Truth::kFalse;
  } else if (args.size() == 1) {
    t = Of(!args[0].empty());
  } else if (args.size() == 2 && (args[0] == "-z" || args[0] == "-n")) {
    t = Of(args[1].empty() == (args[0] == "-z"));
  } else if (args.size() == 3) {
    const std::string& op = args[1];
    int64_t a = 0, b = 0;
    const bool numbers = absl::SimpleAtoi(args[0], &a) && absl::SimpleAtoi(args[2], &b);
    if (op == "=" || op == "==") t = Of(args[0] == args[2]);
    if (op == "!=") t = Of(args[0] != args[2]);
    if (numbers && op == "-eq") t = Of(a == b);
    if (numbers && op == "-ne") t = Of(a != b);
    if (numbers && op == "-lt") t = Of(a < b);
    if (numbers && op == "-le") t = Of(a <= b);
    if (numbers && op == "-gt") t = Of(a > b);
    if (numbers && op == "-ge") t = Of(a >= b);
  }
  return negate ? Not(t) : t;
}

// A word written as plain text (a keyword or a command's name), or "".
std::string PlainText(const ShellWord& w) {
  return w.parts.size() == 1 && w.parts[0].kind == ShellPart::Kind::kLiteral && !w.parts[0].quoted ? w.parts[0].text
                                                                                                   : "";
}

bool IsLoopStart(absl::string_view w) {
  return w == "for" || w == "while" || w == "until" || w == "case" || w == "select" || w == "function";
}

// The reserved words at the start of `cmd` (if, then, elif, else, fi, do, loops): the `if` stack
// moves, `first` skips them. True when nothing of the command is left to run.
absl::StatusOr<bool> Renderer::Keyword(const ShellCommand& cmd, size_t& first) {
  while (first < cmd.words.size()) {
    const std::string w = PlainText(cmd.words[first]);
    if (!frames_.empty() && frames_.back().skipping) {
      Frame& f = frames_.back();
      if (IsLoopStart(w) && w != "function") ++f.skip_depth;
      if (w == "done" || w == "esac") {
        if (f.skip_depth == 0)
          frames_.pop_back();
        else
          --f.skip_depth;
      }
      return true;
    }
    if (w == "if") {
      frames_.push_back(Frame{.parent_active = Active(), .in_condition = true});
    } else if ((w == "then" || w == "elif" || w == "else" || w == "fi") && frames_.empty()) {
      return absl::InvalidArgumentError(absl::StrFormat("%s: line %d: \"%s\" without its if", source_, cmd.line, w));
    } else if (w == "then") {
      Frame& f = frames_.back();
      f.in_condition = false;
      const bool decides = f.parent_active && !f.taken;
      f.active = decides && f.condition == Truth::kTrue;
      if (f.active) f.taken = true;
      if (decides && f.condition == Truth::kUnknown) {
        f.taken = true;  // undecided: neither this branch nor the ones after it are read
        Note(absl::StrCat("if ", cmd.line),
             absl::StrFormat("line %d: a condition that needs the machine (a file test, a command) is not decided: the "
                             "branches of this if are not read",
                             cmd.line));
      }
    } else if (w == "elif") {
      frames_.back().active = false;
      frames_.back().in_condition = true;
      frames_.back().condition = Truth::kTrue;
    } else if (w == "else") {
      Frame& f = frames_.back();
      f.active = f.parent_active && !f.taken;
      f.taken = true;
    } else if (w == "fi") {
      frames_.pop_back();
    } else if (IsLoopStart(w)) {
      if (Active())
        Note(absl::StrCat("loop ", cmd.line),
             absl::StrFormat("line %d: %s: loops, case and functions are not run", cmd.line, w));
      frames_.push_back(Frame{.skipping = true});
      return true;
    } else if (w != "do" && w != "{" && w != "}") {
      break;
    }
    ++first;
  }
  return first >= cmd.words.size() && !cmd.has_heredoc && !cmd.arithmetic;
}

absl::Status Renderer::WriteHeredoc(const ShellCommand& cmd) {
  if (!cmd.has_heredoc || !cmd.output) return absl::OkStatus();  // a here document fed to a program
  HETSIM_ASSIGN_OR_RETURN(std::string path, ExpandScalar(*cmd.output));
  std::string body = cmd.heredoc_body;
  if (cmd.heredoc_expands) {
    HETSIM_ASSIGN_OR_RETURN(ShellWord word, LexShellWord(body, source_, cmd.line, /*as_heredoc=*/true));
    HETSIM_ASSIGN_OR_RETURN(body, ExpandScalar(word));
  }
  out_.written_files[path] = std::move(body);
  return absl::OkStatus();
}

// One command of a branch the script takes; its exit status as far as it can be known.
absl::StatusOr<Truth> Renderer::RunCommand(const ShellCommand& cmd, size_t first) {
  if (cmd.arithmetic) {
    HETSIM_ASSIGN_OR_RETURN(std::optional<std::string> v, Arithmetic(cmd.words[0].parts[0].text, 0));
    return v ? Of(*v != "0") : Truth::kUnknown;
  }
  prefix_names_.clear();
  while (first < cmd.words.size()) {
    HETSIM_ASSIGN_OR_RETURN(bool assigned, TryAssignment(cmd.words[first]));
    if (!assigned) break;
    if (std::optional<std::string> name = AssignedName(cmd.words[first])) prefix_names_.push_back(*name);
    ++first;
  }
  HETSIM_RETURN_IF_ERROR(WriteHeredoc(cmd));
  if (first >= cmd.words.size()) return Truth::kTrue;
  HETSIM_ASSIGN_OR_RETURN(const std::string name, ExpandScalar(cmd.words[first]));
  std::vector<std::string> args;
  if (name == "export" || name == "declare" || name == "typeset" || name == "local" || name == "readonly") {
    bool exports = name == "export";
    for (size_t k = first + 1; k < cmd.words.size(); ++k) {
      const ShellWord& w = cmd.words[k];
      HETSIM_RETURN_IF_ERROR(TryAssignment(w).status());
      const bool literal = !w.parts.empty() && w.parts[0].kind == ShellPart::Kind::kLiteral;
      if (literal && absl::StartsWith(w.parts[0].text, "-")) {
        exports = exports || absl::StrContains(w.parts[0].text, 'x');  // declare -x
        continue;
      }
      if (!exports) continue;
      if (std::optional<std::string> assigned = AssignedName(w)) {
        exported_.insert(*assigned);
      } else if (literal && w.parts.size() == 1 && IsName(w.parts[0].text)) {
        exported_.insert(w.parts[0].text);  // export NAME, set before or after
      }
    }
    return Truth::kTrue;
  }
  if (name == "[" || name == "[[" || name == "test" || name == "unset") {
    for (size_t k = first + 1; k < cmd.words.size(); ++k) {
      HETSIM_ASSIGN_OR_RETURN(std::vector<std::string> fields, Expand(cmd.words[k]));
      for (std::string& field : fields) args.push_back(std::move(field));
    }
    if (name == "unset") {
      for (const std::string& a : args) vars_.erase(a);
      return Truth::kTrue;
    }
    if (!args.empty() && ((name == "[" && args.back() == "]") || (name == "[[" && args.back() == "]]")))
      args.pop_back();
    return Test(std::move(args));
  }
  if (name == "true" || name == ":") {
    // `: "${VAR:=default}"`, the idiom that sets a default: its words are expanded, for their assignments.
    for (size_t k = first + 1; k < cmd.words.size(); ++k) HETSIM_RETURN_IF_ERROR(Expand(cmd.words[k]).status());
    return Truth::kTrue;
  }
  if (name == "false") return Truth::kFalse;
  if (name == "eval") {
    std::vector<std::string> words;
    for (size_t k = first + 1; k < cmd.words.size(); ++k) {
      HETSIM_ASSIGN_OR_RETURN(std::vector<std::string> fields, Expand(cmd.words[k]));
      for (std::string& field : fields) words.push_back(std::move(field));
    }
    HETSIM_RETURN_IF_ERROR(RunText(absl::StrJoin(words, " "), cmd.line));
    return Truth::kTrue;
  }
  if (name == "exit" || name == "return" || name == "source" || name == ".") {
    Note(absl::StrCat(name, " ", cmd.line),
         absl::StrFormat("line %d: %s is not followed: the script is read on", cmd.line, name));
    return Truth::kTrue;
  }
  return RunProgram(cmd, first);
}

// Any other program: the launch if one of its words is a Python script (torchrun, deepspeed, srun,
// python -m torch.distributed.run ... pretrain_gpt.py), else a command whose effects are not known.
absl::StatusOr<Truth> Renderer::RunProgram(const ShellCommand& cmd, size_t first) {
  in_launch_candidate_ = true;
  candidate_notes_.clear();
  std::vector<std::string> words;
  for (size_t k = first; k < cmd.words.size(); ++k) {
    absl::StatusOr<std::vector<std::string>> fields = Expand(cmd.words[k]);
    if (!fields.ok()) {
      in_launch_candidate_ = false;
      return fields.status();
    }
    for (std::string& f : *fields) words.push_back(std::move(f));
  }
  in_launch_candidate_ = false;
  // `echo ${run_cmd}` before `eval ${run_cmd}` prints the launch; it does not run it.
  const bool prints = !words.empty() && (words[0] == "echo" || words[0] == "printf");
  const bool launch =
      !prints && std::any_of(words.begin(), words.end(), [](const std::string& w) { return absl::EndsWith(w, ".py"); });
  if (!launch) {
    ran_program_ = true;
    // srun ... sh -c "python pretrain_gpt.py ...": the launch is the string the shell runs. NVIDIA Base
    // Command's bcprun takes its command the same way, after its own options (`bcprun -p 8 --env E -c 'python
    // main.py ...'`, LLM360's K2 pretrain_65b.sh; -c/--cmd in NGC's bcprun documentation).
    const bool bcprun = !words.empty() && words[0].substr(words[0].find_last_of('/') + 1) == "bcprun";
    for (size_t k = 1; k + 1 < words.size(); ++k) {
      const std::string& shell = words[k - 1];
      const bool shell_c = words[k] == "-c" && (absl::EndsWith(shell, "sh") || absl::EndsWith(shell, "bash"));
      if (shell_c || (bcprun && (words[k] == "-c" || words[k] == "--cmd"))) {
        HETSIM_RETURN_IF_ERROR(RunText(words[k + 1], cmd.line));
        break;
      }
    }
    return Truth::kTrue;
  }
  if (!out_.words.empty() && !Trains(out_.words) && Trains(words)) {
    Note(absl::StrCat("helper ", out_.line),
         absl::StrFormat("line %d: %s is not the training launch (no launcher, no model, layout or DeepSpeed flag): "
                         "the launch on line %d is read",
                         out_.line, ScriptOf(out_.words), cmd.line));
    // The helper's later siblings were noted as second launches after it: none is, now.
    const std::string stale = absl::StrFormat("a second launch command: the first, on line %d, is read", out_.line);
    out_.notes.erase(std::remove_if(out_.notes.begin(), out_.notes.end(),
                                    [&](const std::string& n) { return absl::StrContains(n, stale); }),
                     out_.notes.end());
    out_.words.clear();
  }
  if (!out_.words.empty()) {
    Note(absl::StrCat("launch ", cmd.line),
         absl::StrFormat("line %d: a second launch command: the first, on line %d, is read", cmd.line, out_.line));
    return Truth::kTrue;
  }
  for (auto& [key, text] : candidate_notes_) Note(std::move(key), std::move(text));
  candidate_notes_.clear();
  out_.environment = EnvironmentOf(words);
  out_.words = std::move(words);
  out_.line = cmd.line;
  return Truth::kTrue;
}

absl::StatusOr<RenderedLaunch> Renderer::Render(const std::vector<ShellCommand>& commands, int64_t sbatch_nodes,
                                                int sbatch_line) {
  out_.sbatch_nodes = sbatch_nodes;
  out_.sbatch_line = sbatch_line;
  if (sbatch_nodes > 0) {  // what Slurm sets for a job of the header's allocation
    for (const char* name : {"SLURM_JOB_NUM_NODES", "SLURM_NNODES"}) vars_[name] = {absl::StrCat(sbatch_nodes)};
  }
  HETSIM_RETURN_IF_ERROR(RunCommands(commands));
  if (out_.words.empty()) {
    for (const auto& [name, values] : vars_) {
      std::vector<std::string> words;
      for (const std::string& v : values) {
        for (absl::string_view w : absl::StrSplit(v, absl::ByAnyChar(" \t\n"), absl::SkipEmpty())) {
          words.emplace_back(w);
        }
      }
      if (!words.empty() && absl::StartsWith(words.front(), "--")) out_.flag_variables[name] = std::move(words);
    }
  }
  return std::move(out_);
}

// A command held in a string, run by `eval` or `sh -c`: read as a script of its own, on `line`.
absl::Status Renderer::RunText(const std::string& text, int line) {
  if (++nesting_ > kMaxNesting) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: line %d: eval and sh -c nested too deeply", source_, line));
  }
  HETSIM_ASSIGN_OR_RETURN(std::vector<ShellCommand> commands, LexShellScript(text, source_));
  for (ShellCommand& c : commands) c.line = line;
  const std::vector<Frame> outer = std::move(frames_);
  frames_.clear();
  absl::Status s = RunCommands(commands);
  frames_ = outer;
  --nesting_;
  return s;
}

absl::Status Renderer::RunCommands(const std::vector<ShellCommand>& commands) {
  for (const ShellCommand& cmd : commands) {
    line_ = cmd.line;
    size_t first = 0;
    HETSIM_ASSIGN_OR_RETURN(const bool consumed, Keyword(cmd, first));
    if (consumed) continue;
    // Between if and then the command is the condition: it runs when its `if` is being decided.
    if (!frames_.empty() && frames_.back().in_condition) {
      Frame& f = frames_.back();
      if (!f.parent_active || f.taken) continue;
      const bool starts = first > 0 || cmd.connector.empty();
      if (!starts && ((cmd.connector == "&&" && f.condition == Truth::kFalse) ||
                      (cmd.connector == "||" && f.condition == Truth::kTrue))) {
        continue;
      }
      ran_program_ = false;
      HETSIM_ASSIGN_OR_RETURN(Truth t, RunCommand(cmd, first));
      // `if grep -q ...; then` read the first branch as if the command had succeeded (session 33).
      if (ran_program_) t = Truth::kUnknown;
      // Taken afresh: `if eval ...` runs a script of its own, which moves frames_ away and back, so a
      // reference held across RunCommand dangled (fuzz_launch_line, session 33: heap-use-after-free).
      Frame& g = frames_.back();
      g.condition = starts || g.condition != Truth::kUnknown ? t : Truth::kUnknown;
      continue;
    }
    if (!Active()) continue;
    if (cmd.connector == "&&" || cmd.connector == "||") {
      const Truth needed = cmd.connector == "&&" ? Truth::kTrue : Truth::kFalse;
      if (last_ == Truth::kUnknown) {
        Note(absl::StrCat("chain ", cmd.line),
             absl::StrFormat("line %d: a command after %s a test that needs the machine is not read", cmd.line,
                             cmd.connector));
      }
      if (last_ != needed) {
        if (cmd.connector == "||" && chain_assumed_) {
          // `grep -q x && TP=8 || TP=4`: the program is assumed to succeed; say what that skipped.
          Note(absl::StrCat("chain ", cmd.line),
               absl::StrFormat("line %d: a program's exit status is not known: it is assumed to succeed, and the "
                               "command after || is not read",
                               cmd.line));
        }
        continue;
      }
    }
    ran_program_ = false;
    HETSIM_ASSIGN_OR_RETURN(last_, RunCommand(cmd, first));
    chain_assumed_ = ran_program_ || (chain_assumed_ && (cmd.connector == "&&" || cmd.connector == "||"));
  }
  return absl::OkStatus();
}

// The node count of a "#SBATCH --nodes=N" (or "--nodes N", "-N N") header line, and that line; {0, 0}
// without one or with a range ("2-4").
std::pair<int64_t, int> SbatchNodes(absl::string_view script) {
  int line_no = 0;
  for (absl::string_view line : absl::StrSplit(script, '\n')) {
    ++line_no;
    line = absl::StripLeadingAsciiWhitespace(line);
    if (!absl::ConsumePrefix(&line, "#SBATCH")) continue;
    const std::vector<absl::string_view> words = absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    for (size_t i = 0; i < words.size(); ++i) {
      absl::string_view value;
      if (absl::StartsWith(words[i], "--nodes=")) value = words[i].substr(8);
      if ((words[i] == "--nodes" || words[i] == "-N") && i + 1 < words.size()) value = words[i + 1];
      int64_t nodes = 0;
      if (absl::SimpleAtoi(value, &nodes) && nodes > 0) return {nodes, line_no};
    }
  }
  return {0, 0};
}

}  // namespace

absl::StatusOr<RenderedLaunch> RenderLaunchScript(absl::string_view script, absl::string_view source) {
  HETSIM_ASSIGN_OR_RETURN(const std::vector<ShellCommand> commands, LexShellScript(script, source));
  const auto [sbatch_nodes, sbatch_line] = SbatchNodes(script);
  return Renderer(source).Render(commands, sbatch_nodes, sbatch_line);
}

}  // namespace hetsim::interop
