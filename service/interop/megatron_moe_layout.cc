#include "service/interop/megatron_moe_layout.h"

#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/spec/model.h"

namespace hetsim::interop {
namespace {

constexpr uint32_t kMaxRepeat = 1'000'000;  // a list longer than any model's blocks is an error anyway

absl::Status Bad(absl::string_view value, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrFormat("--moe-layer-freq \"%s\": %s", value, why));
}

// One term of the sum: "[a,b,...]" or "[a,b,...]*n", appended to `pattern`.
absl::Status AppendTerm(absl::string_view value, absl::string_view term, std::vector<int>& pattern) {
  int64_t repeat = 1;
  if (const size_t star = term.rfind('*'); star != absl::string_view::npos) {
    if (!absl::SimpleAtoi(term.substr(star + 1), &repeat) || repeat < 0) {
      return Bad(value, absl::StrCat("\"", term, "\": the repeat count is not a whole number"));
    }
    if (repeat > kMaxRepeat) return Bad(value, "the list is longer than any model");
    term = term.substr(0, star);
  }
  if (!absl::ConsumePrefix(&term, "[") || !absl::ConsumeSuffix(&term, "]")) {
    return Bad(value, absl::StrCat("\"", term, "\" is not a bracketed list of 0 and 1"));
  }
  std::vector<int> items;
  for (absl::string_view item : absl::StrSplit(term, ',')) {
    if (item != "0" && item != "1") return Bad(value, absl::StrCat("\"", item, "\" is not 0 or 1"));
    items.push_back(item == "1" ? 1 : 0);
  }
  if (static_cast<double>(pattern.size()) + static_cast<double>(items.size()) * repeat > kMaxRepeat) {
    return Bad(value, "the list is longer than any model");
  }
  for (int64_t r = 0; r < repeat; ++r) pattern.insert(pattern.end(), items.begin(), items.end());
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<MoeLayout> ParseMoeLayerFreq(absl::string_view value, uint32_t num_layers) {
  std::string compact;
  for (char c : value) {
    if (c != ' ') compact += c;
  }
  absl::string_view v = compact;
  int64_t freq = 0;
  if (absl::SimpleAtoi(v, &freq)) {
    if (freq <= 0 || freq > num_layers) {
      return Bad(value, absl::StrFormat("not in [1, %d] (the blocks)", num_layers));
    }
    return MoeLayout{0, static_cast<uint32_t>(freq)};
  }
  std::vector<int> pattern;
  for (absl::string_view term : absl::StrSplit(v, '+')) {
    // Python's grouping: "([0]*3+[1]*5)" and "([0]*1)+([1]*3)" alike.
    while (absl::StartsWith(term, "(")) term.remove_prefix(1);
    while (absl::EndsWith(term, ")")) term.remove_suffix(1);
    if (absl::Status s = AppendTerm(value, term, pattern); !s.ok()) return s;
  }
  if (pattern.size() != num_layers) {
    return Bad(value, absl::StrFormat("%d entries for %d blocks", pattern.size(), num_layers));
  }
  MoeLayout layout;
  while (layout.first_dense < num_layers && pattern[layout.first_dense] == 0) ++layout.first_dense;
  if (layout.first_dense == num_layers) return Bad(value, "no block is MoE");
  // The spacing to the second MoE block; with only one, a spacing that reaches past the last block.
  layout.freq = num_layers - layout.first_dense;
  for (uint32_t i = layout.first_dense + 1; i < num_layers; ++i) {
    if (pattern[i] == 1) {
      layout.freq = i - layout.first_dense;
      break;
    }
  }
  for (uint32_t i = 0; layout.freq > 0 && i < num_layers; ++i) {
    if (spec::TransformerSpec::IsMoeBlockOf(i, 2, layout.first_dense, layout.freq) != (pattern[i] == 1)) {
      layout.freq = 0;
    }
  }
  if (layout.freq == 0) {
    return Bad(value,
               "neither dense blocks followed by MoE ones nor every K-th block MoE (hetsim's "
               "moe_first_dense_layers and moe_layer_freq cannot say it)");
  }
  return layout;
}

std::string MoeLayerFreqValue(const MoeLayout& layout, uint32_t num_layers) {
  if (layout.first_dense == 0) return absl::StrCat(layout.freq);
  if (layout.freq <= 1) {
    return absl::StrFormat("([0]*%d+[1]*%d)", layout.first_dense, num_layers - layout.first_dense);
  }
  std::vector<int> pattern;
  for (uint32_t i = 0; i < num_layers; ++i) {
    pattern.push_back(spec::TransformerSpec::IsMoeBlockOf(i, 2, layout.first_dense, layout.freq) ? 1 : 0);
  }
  return absl::StrCat("[", absl::StrJoin(pattern, ","), "]");
}

}  // namespace hetsim::interop
