#include "service/interop/megatron_layout.h"

#include <algorithm>
#include <cctype>
#include <optional>

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

// The count of the digits at `pos`, advancing `pos` past them; nullopt without a digit there.
std::optional<int64_t> Count(const std::string& text, size_t& pos) {
  const size_t start = pos;
  int64_t n = 0;
  while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) {
    n = std::min<int64_t>(n * 10 + (text[pos++] - '0'), kMaxExpandedLength + 1);
  }
  if (pos == start) return std::nullopt;
  return n;
}

// Megatron's two rewrites, each left to right over the whole text like Python's re.sub: first
// "(group)*N" (a group holds no ')'), then "x*N" (x any one character). What is left unmatched stays,
// for the letter check to name.
absl::StatusOr<std::string> Rewrite(absl::string_view layout, const std::string& text, bool groups) {
  std::string out;
  const auto append = [&](absl::string_view piece, int64_t times) -> absl::Status {
    if (static_cast<int64_t>(out.size()) + static_cast<int64_t>(piece.size()) * times > kMaxExpandedLength) {
      return LayoutError(layout, "too long once its repetitions are written out");
    }
    for (int64_t k = 0; k < times; ++k) out.append(piece.data(), piece.size());
    return absl::OkStatus();
  };
  for (size_t i = 0; i < text.size();) {
    size_t end = i;
    absl::string_view piece;
    if (groups && text[i] == '(') {
      const size_t close = text.find(')', i);
      if (close != std::string::npos && close > i + 1) {
        piece = absl::string_view(text).substr(i + 1, close - i - 1);
        end = close + 1;
      }
    } else if (!groups) {
      piece = absl::string_view(text).substr(i, 1);
      end = i + 1;
    }
    if (!piece.empty() && end < text.size() && text[end] == '*') {
      size_t digits = end + 1;
      if (const std::optional<int64_t> n = Count(text, digits)) {
        if (absl::Status s = append(piece, *n); !s.ok()) return s;
        i = digits;
        continue;
      }
    }
    out.push_back(text[i++]);
  }
  return out;
}

}  // namespace

absl::StatusOr<std::vector<LayoutStage>> ParsePipelineLayout(absl::string_view layout) {
  std::string text;
  for (char c : layout) {
    if (c != ',') text.push_back(c);  // Megatron's commas are cosmetic
  }
  absl::StatusOr<std::string> grouped = Rewrite(layout, text, /*groups=*/true);
  if (!grouped.ok()) return grouped.status();
  absl::StatusOr<std::string> expanded = Rewrite(layout, *grouped, /*groups=*/false);
  if (!expanded.ok()) return expanded.status();
  std::vector<LayoutStage> stages;
  bool seen_mtp = false;
  for (absl::string_view stage : absl::StrSplit(*expanded, '|')) {
    LayoutStage s;
    for (char c : stage) {
      switch (c) {
        case 'E': ++s.embedding; break;
        case 't':
          if (seen_mtp) return LayoutError(layout, "the blocks (t) must come before the MTP modules (m)");
          ++s.blocks;
          break;
        case 'm':
          seen_mtp = true;
          ++s.mtp;
          break;
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
