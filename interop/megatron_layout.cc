#include "interop/megatron_layout.h"

#include <cctype>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace hetsim::interop {
namespace {

constexpr int64_t kMaxExpandedLength = 1 << 20;  // letters after the repetitions are written out

absl::Status LayoutError(absl::string_view layout, absl::string_view problem) {
  return absl::InvalidArgumentError(absl::StrFormat("--pipeline-model-parallel-layout %s: %s", layout, problem));
}

// The count after a '*' at `pos`, advancing `pos` past it.
absl::StatusOr<int64_t> RepeatCount(absl::string_view layout, const std::string& text, size_t& pos) {
  if (pos >= text.size() || text[pos] != '*') return LayoutError(layout, "a '(...)' group needs '*N' after it");
  ++pos;
  int64_t n = 0;
  const size_t start = pos;
  while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos])) && n <= kMaxExpandedLength) {
    n = n * 10 + (text[pos++] - '0');
  }
  if (pos == start) return LayoutError(layout, "'*' needs a count after it");
  if (n > kMaxExpandedLength) return LayoutError(layout, "a repetition count is too large");
  return n;
}

// Writes the repetitions out: "(ab|)*2" -> "ab|ab|", "t*3" -> "ttt" (Megatron expands groups first,
// which hold no parentheses, then single letters).
absl::StatusOr<std::string> Expand(absl::string_view layout) {
  std::string text;
  for (char c : layout) {
    if (c != ',' && !std::isspace(static_cast<unsigned char>(c))) text.push_back(c);
  }
  std::string out;
  for (size_t pos = 0; pos < text.size();) {
    std::string piece;
    if (text[pos] == '(') {
      const size_t close = text.find(')', pos);
      if (close == std::string::npos) return LayoutError(layout, "a '(' is not closed");
      piece = text.substr(pos + 1, close - pos - 1);
      if (piece.empty() || piece.find('(') != std::string::npos) {
        return LayoutError(layout, "a '(...)' group must hold letters (groups do not nest)");
      }
      pos = close + 1;
      absl::StatusOr<int64_t> n = RepeatCount(layout, text, pos);
      if (!n.ok()) return n.status();
      if (static_cast<int64_t>(piece.size()) * *n > kMaxExpandedLength) {
        return LayoutError(layout, "too long once its repetitions are written out");
      }
      std::string repeated;
      for (int64_t i = 0; i < *n; ++i) repeated += piece;
      piece = std::move(repeated);
    } else {
      piece = std::string(1, text[pos++]);
      if (pos < text.size() && text[pos] == '*') {
        absl::StatusOr<int64_t> n = RepeatCount(layout, text, pos);
        if (!n.ok()) return n.status();
        if (*n > kMaxExpandedLength) return LayoutError(layout, "too long once its repetitions are written out");
        piece = std::string(static_cast<size_t>(*n), piece[0]);
      }
    }
    // A letter repeated inside a group ("(t*2|)*3") is written out after the group, as Megatron does.
    out += piece;
    if (static_cast<int64_t>(out.size()) > kMaxExpandedLength) {
      return LayoutError(layout, "too long once its repetitions are written out");
    }
  }
  return out;
}

}  // namespace

absl::StatusOr<std::vector<LayoutStage>> ParsePipelineLayout(absl::string_view layout) {
  absl::StatusOr<std::string> once = Expand(layout);
  if (!once.ok()) return once.status();
  // Letters repeated inside groups ("(t*2|)*3" -> "t*2|t*2|t*2|") are expanded in a second pass.
  absl::StatusOr<std::string> text = Expand(*once);
  if (!text.ok()) return text.status();
  std::vector<LayoutStage> stages;
  for (absl::string_view stage : absl::StrSplit(*text, '|')) {
    LayoutStage s;
    for (char c : stage) {
      switch (c) {
        case 'E': ++s.embedding; break;
        case 't': ++s.blocks; break;
        case 'm': ++s.mtp; break;
        case 'L': ++s.loss; break;
        default: return LayoutError(layout, absl::StrFormat("'%c' is not a layer letter (E, t, m, L)", c));
      }
    }
    s.embedding_first = !stage.empty() && stage.front() == 'E';
    s.loss_last = !stage.empty() && stage.back() == 'L';
    stages.push_back(s);
  }
  return stages;
}

std::string FormatPipelineLayout(const std::vector<LayoutStage>& stages) {
  std::vector<std::string> parts;
  for (const LayoutStage& s : stages) {
    const auto letters = [](int64_t n, char c) { return std::string(static_cast<size_t>(n), c); };
    parts.push_back(
        absl::StrCat(letters(s.embedding, 'E'), letters(s.blocks, 't'), letters(s.mtp, 'm'), letters(s.loss, 'L')));
  }
  return absl::StrJoin(parts, "|");
}

}  // namespace hetsim::interop
