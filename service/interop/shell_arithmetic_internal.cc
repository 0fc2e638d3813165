#include "service/interop/shell_arithmetic_internal.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"

namespace hetsim::interop {
namespace {

constexpr int kMaxNesting = 64;  // a variable naming an expression, or parentheses, this deep is refused

absl::Status Invalid(absl::string_view why) { return absl::InvalidArgumentError(why); }

// Precedence climbing over the expression, lowest first: || && (== !=) (< <= > >=) (+ -) (* / %) ** unary.
class Parser {
 public:
  Parser(absl::string_view text, const ShellLookup& lookup, int depth) : s_(text), lookup_(lookup), depth_(depth) {}

  absl::StatusOr<int64_t> Whole() {
    HETSIM_ASSIGN_OR_RETURN(int64_t v, Binary(0));
    SkipBlanks();
    if (i_ != s_.size()) return Invalid(absl::StrFormat("\"%s\" is not understood", s_.substr(i_)));
    return v;
  }

 private:
  void SkipBlanks() {
    while (i_ < s_.size() && absl::ascii_isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  bool Eat(absl::string_view op) {
    SkipBlanks();
    if (!absl::StartsWith(s_.substr(i_), op)) return false;
    i_ += op.size();
    return true;
  }

  // The operators of each level, longest first so that "<=" is not read as "<".
  static constexpr const char* kLevels[][4] = {{"||"},     {"&&"},         {"==", "!="}, {"<=", ">=", "<", ">"},
                                               {"+", "-"}, {"*", "/", "%"}};
  static constexpr int kLevelCount = 6;

  absl::StatusOr<int64_t> Binary(int level) {
    if (level == kLevelCount) return Power();
    HETSIM_ASSIGN_OR_RETURN(int64_t left, Binary(level + 1));
    while (true) {
      const char* matched = nullptr;
      for (const char* op : kLevels[level]) {
        if (op == nullptr) break;
        // "**" is power, "&&" and "||" are their own level: do not read their first character.
        SkipBlanks();
        absl::string_view rest = s_.substr(i_);
        if ((absl::string_view(op) == "*" && absl::StartsWith(rest, "**")) ||
            (absl::string_view(op) == "<" && absl::StartsWith(rest, "<<")) ||
            (absl::string_view(op) == ">" && absl::StartsWith(rest, ">>"))) {
          continue;
        }
        if (Eat(op)) {
          matched = op;
          break;
        }
      }
      if (matched == nullptr) return left;
      HETSIM_ASSIGN_OR_RETURN(int64_t right, Binary(level + 1));
      HETSIM_ASSIGN_OR_RETURN(left, Apply(matched, left, right));
    }
  }

  static absl::StatusOr<int64_t> Apply(absl::string_view op, int64_t a, int64_t b) {
    int64_t r = 0;
    if (op == "+" && !__builtin_add_overflow(a, b, &r)) return r;
    if (op == "-" && !__builtin_sub_overflow(a, b, &r)) return r;
    if (op == "*" && !__builtin_mul_overflow(a, b, &r)) return r;
    if (op == "/" || op == "%") {
      if (b == 0) return Invalid("division by zero");
      if (a == INT64_MIN && b == -1) return Invalid("overflow");
      return op == "/" ? a / b : a % b;
    }
    if (op == "||") return static_cast<int64_t>(a != 0 || b != 0);
    if (op == "&&") return static_cast<int64_t>(a != 0 && b != 0);
    if (op == "==") return static_cast<int64_t>(a == b);
    if (op == "!=") return static_cast<int64_t>(a != b);
    if (op == "<") return static_cast<int64_t>(a < b);
    if (op == "<=") return static_cast<int64_t>(a <= b);
    if (op == ">") return static_cast<int64_t>(a > b);
    if (op == ">=") return static_cast<int64_t>(a >= b);
    return Invalid("overflow");
  }

  absl::StatusOr<int64_t> Power() {
    HETSIM_ASSIGN_OR_RETURN(int64_t base, Unary());
    if (!Eat("**")) return base;
    if (++chain_ > kMaxChain) return Invalid("nested too deeply");
    HETSIM_ASSIGN_OR_RETURN(int64_t exponent, Power());  // right-associative
    if (exponent < 0) return Invalid("a negative exponent");
    int64_t r = 1;
    for (int64_t k = 0; k < exponent && r != 0; ++k) {
      if (__builtin_mul_overflow(r, base, &r)) return Invalid("overflow");
      if (base == 1 || base == -1) {
        if (base == -1 && (exponent - k - 1) % 2 == 1) r = -r;
        break;
      }
    }
    return r;
  }

  absl::StatusOr<int64_t> Unary() {
    if (++chain_ > kMaxChain) return Invalid("nested too deeply");
    if (Eat("!")) {
      HETSIM_ASSIGN_OR_RETURN(int64_t v, Unary());
      return static_cast<int64_t>(v == 0);
    }
    if (Eat("-")) {
      HETSIM_ASSIGN_OR_RETURN(int64_t v, Unary());
      if (v == INT64_MIN) return Invalid("overflow");
      return -v;
    }
    if (Eat("+")) return Unary();
    return Primary();
  }

  absl::StatusOr<int64_t> Primary() {
    SkipBlanks();
    if (Eat("(")) {
      if (++depth_ > kMaxNesting) return Invalid("nested too deeply");
      HETSIM_ASSIGN_OR_RETURN(int64_t v, Binary(0));
      --depth_;
      if (!Eat(")")) return Invalid("a ( without its )");
      return v;
    }
    const size_t start = i_;
    while (i_ < s_.size() && (absl::ascii_isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_')) ++i_;
    absl::string_view token = s_.substr(start, i_ - start);
    if (token.empty()) return Invalid(absl::StrFormat("a number is missing at \"%s\"", s_.substr(start)));
    if (absl::ascii_isdigit(static_cast<unsigned char>(token[0]))) {
      int64_t v = 0;
      if (!absl::SimpleAtoi(token, &v)) return Invalid(absl::StrFormat("\"%s\" is not a number", token));
      return v;
    }
    std::optional<std::string> value = lookup_(token);
    if (!value.has_value() || absl::StripAsciiWhitespace(*value).empty()) return 0;  // unset reads as 0
    // A variable holding an expression is evaluated in turn, as bash does.
    if (depth_ + 1 > kMaxNesting) return Invalid("nested too deeply");
    absl::StatusOr<int64_t> v = Parser(*value, lookup_, depth_ + 1).Whole();
    if (!v.ok()) return Invalid(absl::StrFormat("%s=\"%s\" is not a number", token, *value));
    return v;
  }

  absl::string_view s_;
  const ShellLookup& lookup_;
  int depth_;
  size_t i_ = 0;
  int chain_ = 0;  // unary signs and powers read so far: each one recurses
  static constexpr int kMaxChain = 4096;
};

}  // namespace

absl::StatusOr<int64_t> EvaluateShellArithmetic(absl::string_view expr, const ShellLookup& lookup) {
  return Parser(expr, lookup, 0).Whole();
}

}  // namespace hetsim::interop
