// The words and commands of a shell script, as bash splits them, for the launch-script renderer
// (launch_script.h): quotes, escapes, comments, line continuations, `;`/`&&`/`||`/`|`, redirections,
// here documents, array literals and `(( ))`. Expansions are kept as parts for the renderer to
// evaluate; nothing here runs or expands anything.
#ifndef HETSIM_SERVICE_INTEROP_SHELL_LEXER_INTERNAL_H_
#define HETSIM_SERVICE_INTEROP_SHELL_LEXER_INTERNAL_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace hetsim::interop {

struct ShellPart {
  enum class Kind {
    kLiteral,     // text as written, escapes and quotes removed
    kParameter,   // $NAME or ${...}: `text` is NAME or what the braces hold
    kArithmetic,  // $(( ... )): `text` is the expression
    kCommand,     // $( ... ) or `...`: `text` is the command, never run
  };
  Kind kind = Kind::kLiteral;
  std::string text;
  bool quoted = false;  // inside quotes: not split into fields
};

struct ShellWord {
  std::vector<ShellPart> parts;
  std::string raw;        // as written, for messages
  bool is_array = false;  // NAME=( ... ): `parts` holds "NAME=" and `elements` the values
  std::vector<ShellWord> elements;
};

struct ShellCommand {
  std::vector<ShellWord> words;
  int line = 0;                     // where it starts, 1-based
  std::string connector;            // what joins it to the command before: "", "&&", "||" or "|"
  bool arithmetic = false;          // (( expr )): words[0] is the expression, a literal
  std::optional<ShellWord> output;  // > path or >> path
  bool has_heredoc = false;         // <<DELIM: its body, and whether $ expands in it (an unquoted DELIM)
  std::string heredoc_body;
  bool heredoc_expands = true;
};

// InvalidArgument naming `source` and the line for an unterminated quote, `$(`, `${`, `$((`, array
// or here document.
absl::StatusOr<std::vector<ShellCommand>> LexShellScript(absl::string_view script, absl::string_view source);

// The parts of `text` read as one word (a ${VAR:-default}'s default, a here document's body with
// `as_heredoc`: quotes are plain characters there, only $, ` and \ are special).
absl::StatusOr<ShellWord> LexShellWord(absl::string_view text, absl::string_view source, int line,
                                       bool as_heredoc = false);

}  // namespace hetsim::interop

#endif  // HETSIM_SERVICE_INTEROP_SHELL_LEXER_INTERNAL_H_
