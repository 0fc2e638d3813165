#include "service/interop/shell_lexer_internal.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"

namespace hetsim::interop {
namespace {

bool IsNameStart(char c) { return absl::ascii_isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool IsNameChar(char c) { return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// A here document waiting for its body: the lines after the one its command ends on.
struct PendingHeredoc {
  size_t command = 0;  // index into the commands read so far
  std::string delimiter;
  bool strip_tabs = false;  // <<-
  bool expands = true;
};

class Lexer {
 public:
  Lexer(absl::string_view text, absl::string_view source, int line) : s_(text), source_(source), line_(line) {}

  absl::StatusOr<std::vector<ShellCommand>> Commands();
  absl::StatusOr<ShellWord> OneWord(bool as_heredoc);

 private:
  bool At(absl::string_view token) const { return absl::StartsWith(s_.substr(i_), token); }
  char Peek(size_t ahead = 0) const { return i_ + ahead < s_.size() ? s_[i_ + ahead] : '\0'; }
  char Take() {
    const char c = s_[i_++];
    if (c == '\n') ++line_;
    return c;
  }
  absl::Status Unterminated(absl::string_view what, int line) const {
    return absl::InvalidArgumentError(absl::StrFormat("%s: line %d: unterminated %s", source_, line, what));
  }

  void AddLiteral(ShellWord& w, char c, bool quoted) {
    if (w.parts.empty() || w.parts.back().kind != ShellPart::Kind::kLiteral || w.parts.back().quoted != quoted) {
      w.parts.push_back({ShellPart::Kind::kLiteral, "", quoted});
    }
    w.parts.back().text += c;
  }
  size_t PlaceholderLength() const;
  absl::StatusOr<std::string> Balanced(char open, char close, size_t depth, absl::string_view what);
  absl::Status ReadDollar(ShellWord& w, bool quoted);
  absl::Status ReadBacktick(ShellWord& w, bool quoted);
  absl::Status ReadDoubleQuoted(ShellWord& w);
  absl::Status ReadWordChar(ShellWord& w);
  absl::Status ReadAnsiCQuoted(ShellWord& w);
  absl::Status ReadRedirection(ShellCommand& cmd, std::vector<PendingHeredoc>& pending, size_t index);
  absl::StatusOr<ShellWord> ReadPlainWord();
  absl::Status ReadHeredocBodies(std::vector<PendingHeredoc>& pending, std::vector<ShellCommand>& out);

  absl::string_view s_;
  absl::string_view source_;
  size_t i_ = 0;
  int line_ = 1;
};

// The text up to the `close` that brings `depth` to zero (the opening ones already taken), skipping
// quoted text; the closing characters are taken, not returned.
absl::StatusOr<std::string> Lexer::Balanced(char open, char close, size_t depth, absl::string_view what) {
  const int start_line = line_;
  std::string text;
  char quote = 0;
  while (i_ < s_.size()) {
    const char c = Take();
    if (quote != 0) {
      if (c == quote) quote = 0;
      if (c == '\\' && quote == '"' && i_ < s_.size()) {
        text += c;
        text += Take();
        continue;
      }
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == open) {
      ++depth;
    } else if (c == close && --depth == 0) {
      return text;
    }
    text += c;
  }
  return Unterminated(what, start_line);
}

absl::Status Lexer::ReadDollar(ShellWord& w, bool quoted) {
  Take();  // $
  if (At("((")) {
    i_ += 2;
    absl::StatusOr<std::string> expr = Balanced('(', ')', 2, "$((");
    if (!expr.ok()) return expr.status();
    if (!expr->empty() && expr->back() == ')') expr->pop_back();  // the first of the closing pair
    w.parts.push_back({ShellPart::Kind::kArithmetic, *std::move(expr), quoted});
    return absl::OkStatus();
  }
  if (Peek() == '(' || Peek() == '{') {
    const bool command = Take() == '(';
    absl::StatusOr<std::string> inner = command ? Balanced('(', ')', 1, "$(") : Balanced('{', '}', 1, "${");
    if (!inner.ok()) return inner.status();
    w.parts.push_back({command ? ShellPart::Kind::kCommand : ShellPart::Kind::kParameter, *std::move(inner), quoted});
    return absl::OkStatus();
  }
  if (IsNameStart(Peek())) {
    std::string name;
    while (IsNameChar(Peek())) name += Take();
    w.parts.push_back({ShellPart::Kind::kParameter, std::move(name), quoted});
    return absl::OkStatus();
  }
  if (Peek() != '\0' && absl::string_view("0123456789@*#?$!-").find(Peek()) != absl::string_view::npos) {
    w.parts.push_back({ShellPart::Kind::kParameter, std::string(1, Take()), quoted});
    return absl::OkStatus();
  }
  AddLiteral(w, '$', quoted);  // a lone $ is itself
  return absl::OkStatus();
}

absl::Status Lexer::ReadBacktick(ShellWord& w, bool quoted) {
  const int start_line = line_;
  Take();
  std::string text;
  while (i_ < s_.size() && Peek() != '`') {
    if (Peek() == '\\' && i_ + 1 < s_.size()) text += Take();
    text += Take();
  }
  if (i_ >= s_.size()) return Unterminated("`", start_line);
  Take();
  w.parts.push_back({ShellPart::Kind::kCommand, std::move(text), quoted});
  return absl::OkStatus();
}

absl::Status Lexer::ReadDoubleQuoted(ShellWord& w) {
  const int start_line = line_;
  Take();  // "
  // "" is an empty field of its own: an empty quoted literal keeps the word.
  w.parts.push_back({ShellPart::Kind::kLiteral, "", true});
  while (i_ < s_.size()) {
    const char c = Peek();
    if (c == '"') {
      Take();
      return absl::OkStatus();
    }
    if (c == '\\' && i_ + 1 < s_.size() && absl::string_view("$`\"\\\n").find(Peek(1)) != absl::string_view::npos) {
      Take();
      const char escaped = Take();
      if (escaped != '\n') AddLiteral(w, escaped, true);  // \newline continues the line
      continue;
    }
    if (c == '$') {
      if (absl::Status s = ReadDollar(w, true); !s.ok()) return s;
      continue;
    }
    if (c == '`') {
      if (absl::Status s = ReadBacktick(w, true); !s.ok()) return s;
      continue;
    }
    AddLiteral(w, Take(), true);
  }
  return Unterminated("double quote", start_line);
}

// bash's ANSI-C quoting, $'...' (what `printf %q` writes for a value with a control character): the
// backslash escapes of bash's manual ("QUOTING"), \xHH and octal \NNN; another escaped character stays
// with its backslash, as bash keeps it.
absl::Status Lexer::ReadAnsiCQuoted(ShellWord& w) {
  const int start_line = line_;
  Take();
  Take();
  w.parts.push_back({ShellPart::Kind::kLiteral, "", true});
  std::string& text = w.parts.back().text;
  static constexpr absl::string_view kFrom = "abefnrtv\\'\"?";
  static constexpr absl::string_view kTo = "\a\b\x1b\f\n\r\t\v\\'\"?";
  while (i_ < s_.size() && Peek() != '\'') {
    if (Peek() != '\\' || i_ + 1 >= s_.size()) {
      text += Take();
      continue;
    }
    Take();
    const char e = Take();
    const bool hex = e == 'x';
    const bool octal = e >= '0' && e <= '7';
    if (!hex && !octal) {
      const size_t k = kFrom.find(e);
      text += k == absl::string_view::npos ? absl::StrCat("\\", std::string(1, e)) : std::string(1, kTo[k]);
      continue;
    }
    int value = octal ? e - '0' : 0;
    size_t d = 0;
    for (; d < 2 && i_ < s_.size(); ++d) {  // \xHH: up to 2 hex digits; \NNN: up to 3 octal digits
      const char n = Peek();
      const bool ok = hex ? absl::ascii_isxdigit(static_cast<unsigned char>(n)) : (n >= '0' && n <= '7');
      if (!ok) break;
      Take();
      value = value * (hex ? 16 : 8) +
              (absl::ascii_isdigit(static_cast<unsigned char>(n)) ? n - '0' : absl::ascii_tolower(n) - 'a' + 10);
    }
    text += hex && d == 0 ? std::string("\\x") : std::string(1, static_cast<char>(value & 0xff));
  }
  if (i_ >= s_.size()) return Unterminated("$' quote", start_line);
  Take();
  return absl::OkStatus();
}

// One character (or quoted run, or expansion) of an unquoted word.
absl::Status Lexer::ReadWordChar(ShellWord& w) {
  const char c = Peek();
  if (c == '\'') {
    const int start_line = line_;
    Take();
    w.parts.push_back({ShellPart::Kind::kLiteral, "", true});
    while (i_ < s_.size() && Peek() != '\'') w.parts.back().text += Take();
    if (i_ >= s_.size()) return Unterminated("single quote", start_line);
    Take();
    return absl::OkStatus();
  }
  if (c == '"') return ReadDoubleQuoted(w);
  if (c == '$' && Peek(1) == '\'') return ReadAnsiCQuoted(w);
  if (c == '$') return ReadDollar(w, false);
  if (c == '`') return ReadBacktick(w, false);
  if (c == '\\' && i_ + 1 < s_.size()) {
    Take();
    AddLiteral(w, Take(), true);  // an escaped character is quoted
    return absl::OkStatus();
  }
  AddLiteral(w, Take(), false);
  return absl::OkStatus();
}

bool IsWordEnd(char c) { return c == '\0' || absl::string_view(" \t\r\n;&|()<>").find(c) != absl::string_view::npos; }

// A template's placeholder at `<` ("<PATH TO gpt-vocab.json>", "<Specify path to file>/gpt2-vocab.json",
// the Megatron-LM scripts of 2020-2021): a letter after the `<`, then no shell operator, quote or `$`
// before a `>` on the same line that follows no blank. Its length, or 0 for a redirection (`< file`,
// `<in.txt >out.txt`). Read as a redirection, `<PATH TO CHECKPOINTS DIRECTORY> --fp16` sent --fp16 to a
// file as a shell would, and the run was priced in FP32.
size_t Lexer::PlaceholderLength() const {
  if (Peek() != '<' || !absl::ascii_isalpha(static_cast<unsigned char>(Peek(1)))) return 0;
  for (size_t k = 2; i_ + k < s_.size(); ++k) {
    const char c = Peek(k);
    if (c == '>') return absl::ascii_isblank(static_cast<unsigned char>(Peek(k - 1))) ? 0 : k + 1;
    if (absl::string_view("\n;&|()<$`\"'\\").find(c) != absl::string_view::npos) return 0;
  }
  return 0;
}

// A word up to the next blank or operator (a redirection's target, a here document's delimiter).
absl::StatusOr<ShellWord> Lexer::ReadPlainWord() {
  while (Peek() == ' ' || Peek() == '\t') Take();
  ShellWord w;
  const size_t start = i_;
  while (!IsWordEnd(Peek())) {
    if (absl::Status s = ReadWordChar(w); !s.ok()) return s;
  }
  w.raw = std::string(s_.substr(start, i_ - start));
  return w;
}

// After `<`, `>`, `<<` and their kin: the target word, or a here document to read after this line.
absl::Status Lexer::ReadRedirection(ShellCommand& cmd, std::vector<PendingHeredoc>& pending, size_t index) {
  if (At("<<<")) {
    i_ += 3;
    return ReadPlainWord().status();  // a here string feeds stdin: nothing a launch line reads
  }
  if (At("<<")) {
    i_ += 2;
    PendingHeredoc doc;
    doc.command = index;
    if (Peek() == '-') {
      Take();
      doc.strip_tabs = true;
    }
    absl::StatusOr<ShellWord> delimiter = ReadPlainWord();
    if (!delimiter.ok()) return delimiter.status();
    for (const ShellPart& p : delimiter->parts) {
      doc.delimiter += p.kind == ShellPart::Kind::kParameter ? "$" + p.text : p.text;
      if (p.quoted) doc.expands = false;
    }
    if (doc.delimiter.empty())
      return absl::InvalidArgumentError(absl::StrFormat("%s: line %d: << without a delimiter", source_, line_));
    cmd.has_heredoc = true;
    pending.push_back(std::move(doc));
    return absl::OkStatus();
  }
  const bool output = Peek() == '>' || (Peek() == '&' && Peek(1) == '>');
  while (Peek() == '<' || Peek() == '>' || Peek() == '&' || Peek() == '|') Take();
  if (absl::ascii_isdigit(static_cast<unsigned char>(Peek())) && IsWordEnd(Peek(1))) {
    Take();  // >&2: a descriptor, not a file
    return absl::OkStatus();
  }
  absl::StatusOr<ShellWord> target = ReadPlainWord();
  if (!target.ok()) return target.status();
  if (output) cmd.output = *std::move(target);
  return absl::OkStatus();
}

absl::Status Lexer::ReadHeredocBodies(std::vector<PendingHeredoc>& pending, std::vector<ShellCommand>& out) {
  for (PendingHeredoc& doc : pending) {
    const int start_line = line_;
    std::string body;
    bool closed = false;
    while (i_ < s_.size()) {
      const size_t end = s_.find('\n', i_);
      absl::string_view line = s_.substr(i_, end == absl::string_view::npos ? absl::string_view::npos : end - i_);
      i_ = end == absl::string_view::npos ? s_.size() : end + 1;
      ++line_;
      // <<- strips leading tabs only, as bash does; spaces stay part of the line.
      while (doc.strip_tabs && absl::ConsumePrefix(&line, "\t")) {
      }
      if (absl::StripSuffix(line, "\r") == doc.delimiter) {
        closed = true;
        break;
      }
      absl::StrAppend(&body, line, "\n");
    }
    if (!closed) return Unterminated(absl::StrFormat("here document (<<%s)", doc.delimiter), start_line);
    out[doc.command].heredoc_body = std::move(body);
    out[doc.command].heredoc_expands = doc.expands;
  }
  pending.clear();
  return absl::OkStatus();
}

// NAME= or NAME+= as written so far: an array literal follows when `(` comes next.
bool IsAssignmentPrefix(const ShellWord& w) {
  if (w.parts.size() != 1 || w.parts[0].kind != ShellPart::Kind::kLiteral || w.parts[0].quoted) return false;
  absl::string_view t = w.parts[0].text;
  if (!absl::ConsumeSuffix(&t, "=")) return false;
  absl::ConsumeSuffix(&t, "+");
  if (t.empty() || !IsNameStart(t[0])) return false;
  for (char c : t) {
    if (!IsNameChar(c)) return false;
  }
  return true;
}

bool IsDescriptor(const ShellWord& w) {
  if (w.parts.size() != 1 || w.parts[0].kind != ShellPart::Kind::kLiteral || w.parts[0].quoted) return false;
  for (char c : w.parts[0].text) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

// The commands of a script, one per line or separator; the state of the one being read.
struct CommandBuilder {
  std::vector<ShellCommand> out;
  ShellCommand cmd;
  std::optional<ShellWord> word;
  size_t word_start = 0;
  std::optional<ShellWord> array;  // NAME=( ... ) being read

  void FinishWord(absl::string_view text, size_t end) {
    if (!word) return;
    word->raw = std::string(text.substr(word_start, end - word_start));
    (array ? array->elements : cmd.words).push_back(*std::move(word));
    word.reset();
  }
  void FinishCommand(absl::string_view text, size_t end, int next_line, std::string connector) {
    FinishWord(text, end);
    if (!cmd.words.empty() || cmd.has_heredoc || cmd.output) out.push_back(std::move(cmd));
    cmd = ShellCommand{};
    cmd.line = next_line;
    cmd.connector = std::move(connector);
  }
};

absl::StatusOr<std::vector<ShellCommand>> Lexer::Commands() {
  CommandBuilder b;
  b.cmd.line = line_;
  std::vector<PendingHeredoc> pending;
  while (i_ < s_.size()) {
    const char c = Peek();
    if (c == '\\' && (Peek(1) == '\n' || (Peek(1) == '\r' && Peek(2) == '\n'))) {
      b.FinishWord(s_, i_);
      i_ += Peek(1) == '\r' ? 2 : 1;
      Take();  // a continued line: the shell joins it
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r') {
      b.FinishWord(s_, i_);
      Take();
      continue;
    }
    if (c == '#' && !b.word) {
      while (i_ < s_.size() && Peek() != '\n') Take();
      continue;
    }
    if (c == '\n') {
      Take();
      if (b.array) {
        b.FinishWord(s_, i_ - 1);
        continue;
      }
      b.FinishCommand(s_, i_ - 1, line_, "");
      if (!pending.empty()) HETSIM_RETURN_IF_ERROR(ReadHeredocBodies(pending, b.out));
      b.cmd.line = line_;
      continue;
    }
    if (b.array && c == ')') {
      b.FinishWord(s_, i_);
      Take();
      b.cmd.words.push_back(*std::move(b.array));
      b.array.reset();
      continue;
    }
    if (!b.array && (c == ';' || c == '|' || (c == '&' && Peek(1) != '>'))) {
      const std::string connector = At("&&") ? "&&" : At("||") ? "||" : c == '|' ? "|" : "";
      b.FinishWord(s_, i_);
      i_ += (At("&&") || At("||") || At(";;")) ? 2 : 1;
      b.FinishCommand(s_, i_, line_, connector);
      continue;
    }
    if (const size_t placeholder = PlaceholderLength(); placeholder > 0) {
      if (!b.word) {
        b.word.emplace();
        b.word_start = i_;
      }
      // One word, its blanks as '_', so that an unquoted $VAR holding it stays one value as the author meant.
      for (size_t k = 0; k < placeholder; ++k) {
        const char ch = Take();
        AddLiteral(*b.word, absl::ascii_isblank(static_cast<unsigned char>(ch)) ? '_' : ch, true);
      }
      continue;
    }
    if (c == '<' || c == '>' || c == '&') {
      if (b.word && IsDescriptor(*b.word)) b.word.reset();  // 2>&1: the descriptor is no word
      b.FinishWord(s_, i_);
      HETSIM_RETURN_IF_ERROR(ReadRedirection(b.cmd, pending, b.out.size()));
      continue;
    }
    if (c == '(' && b.word && IsAssignmentPrefix(*b.word)) {
      Take();
      b.array = *std::move(b.word);
      b.array->is_array = true;
      b.array->raw = b.array->parts[0].text;
      b.word.reset();
      continue;
    }
    if (c == '(' && !b.word && b.cmd.words.empty() && Peek(1) == '(') {
      i_ += 2;
      absl::StatusOr<std::string> expr = Balanced('(', ')', 2, "((");
      if (!expr.ok()) return expr.status();
      if (!expr->empty() && expr->back() == ')') expr->pop_back();
      b.cmd.arithmetic = true;
      ShellWord expression;
      expression.parts.push_back({ShellPart::Kind::kLiteral, *expr, true});
      expression.raw = *expr;
      b.cmd.words.push_back(std::move(expression));
      continue;
    }
    if (c == '(' || c == ')') {  // a subshell, or a function's (): a command boundary
      Take();
      b.FinishCommand(s_, i_ - 1, line_, "");
      continue;
    }
    if (!b.word) {
      b.word.emplace();
      b.word_start = i_;
    }
    HETSIM_RETURN_IF_ERROR(ReadWordChar(*b.word));
  }
  if (b.array) return Unterminated("array ( ... )", b.cmd.line);
  b.FinishCommand(s_, i_, line_, "");
  if (!pending.empty()) HETSIM_RETURN_IF_ERROR(ReadHeredocBodies(pending, b.out));
  return std::move(b.out);
}

absl::StatusOr<ShellWord> Lexer::OneWord(bool as_heredoc) {
  ShellWord w;
  w.raw = std::string(s_);
  while (i_ < s_.size()) {
    const char c = Peek();
    if (!as_heredoc) {
      HETSIM_RETURN_IF_ERROR(ReadWordChar(w));
    } else if (c == '\\' && absl::string_view("$`\\").find(Peek(1)) != absl::string_view::npos) {
      Take();
      AddLiteral(w, Take(), true);
    } else if (c == '$') {
      HETSIM_RETURN_IF_ERROR(ReadDollar(w, true));
    } else if (c == '`') {
      HETSIM_RETURN_IF_ERROR(ReadBacktick(w, true));
    } else {
      AddLiteral(w, Take(), true);
    }
  }
  return w;
}

}  // namespace

absl::StatusOr<std::vector<ShellCommand>> LexShellScript(absl::string_view script, absl::string_view source) {
  return Lexer(script, source, 1).Commands();
}

absl::StatusOr<ShellWord> LexShellWord(absl::string_view text, absl::string_view source, int line, bool as_heredoc) {
  return Lexer(text, source, line).OneWord(as_heredoc);
}

}  // namespace hetsim::interop
