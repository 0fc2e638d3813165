#include "service/interop/megatron_split.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace hetsim::interop {
namespace {

absl::StatusOr<std::vector<int64_t>> UnevenBlocks(const MegatronSplit& split, int64_t num_layers, int64_t pp) {
  if (pp < 2) {
    return absl::InvalidArgumentError(
        "--decoder-first/last-pipeline-num-layers need --pipeline-model-parallel-size of at least 2");
  }
  const int64_t first = split.first_blocks, last = split.last_blocks;
  // Megatron wants each count above 0; both at most --num-layers before any arithmetic on them.
  for (const auto& [flag, n] : {std::pair{"first", first}, std::pair{"last", last}}) {
    if (n == 0 || n > num_layers) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--decoder-%s-pipeline-num-layers %d: not between 1 and --num-layers %d", flag, n, num_layers));
    }
  }
  const int64_t fixed = (first >= 0) + (last >= 0);
  const int64_t given = std::max<int64_t>(first, 0) + std::max<int64_t>(last, 0);
  const int64_t rest = num_layers - given, middle = pp - fixed;
  const char* which = first >= 0 && last >= 0 ? "first and last stages'"
                      : first >= 0            ? "first stage's"
                                              : "last stage's";
  if (rest < 0 || (middle == 0 && rest != 0) || (middle > 0 && rest % middle != 0)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("--num-layers %d minus the %s %d leaves %d blocks, which do not split evenly over the "
                        "other %d stages",
                        num_layers, which, given, rest, middle));
  }
  if (middle > 0 && rest == 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--num-layers %d minus the %s %d leaves no block for the other %d stages (a hetsim stage holds at least one)",
        num_layers, which, given, middle));
  }
  std::vector<int64_t> blocks(pp, middle > 0 ? rest / middle : 0);
  if (first >= 0) blocks.front() = first;
  if (last >= 0) blocks.back() = last;
  return blocks;
}

}  // namespace

absl::StatusOr<std::vector<int64_t>> StageBlocks(const MegatronSplit& split, int64_t num_layers, int64_t pp) {
  if (split.uneven() && (split.account_embedding || split.account_loss)) {
    return absl::InvalidArgumentError(
        "--decoder-first/last-pipeline-num-layers and --account-for-*-in-pipeline-split contradict each other: "
        "Megatron takes one way of unbalancing the stages");
  }
  if (split.uneven()) return UnevenBlocks(split, num_layers, pp);
  const int64_t counted = num_layers + split.account_embedding + split.account_loss;
  if (counted % pp != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--num-layers %d%s is not divisible by --pipeline-model-parallel-size %d", num_layers,
        counted == num_layers ? "" : absl::StrFormat(" (%d counting the embedding/loss)", counted), pp));
  }
  std::vector<int64_t> blocks(pp, counted / pp);
  blocks.front() -= split.account_embedding;
  blocks.back() -= split.account_loss;
  if (blocks.front() < 0 || blocks.back() < 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--pipeline-model-parallel-size %d: a stage of %d layers cannot hold the embedding and the loss", pp,
        counted / pp));
  }
  return blocks;
}

std::optional<MegatronSplit> SplitOf(const std::vector<int64_t>& blocks, int64_t num_layers, int64_t chunks) {
  const auto pp = static_cast<int64_t>(blocks.size());
  std::vector<MegatronSplit> candidates;
  const auto split = [](int64_t first, int64_t last, bool embedding, bool loss) {
    MegatronSplit s;
    s.first_blocks = first;
    s.last_blocks = last;
    s.account_embedding = embedding;
    s.account_loss = loss;
    return s;
  };
  for (const bool embedding : {false, true}) {
    for (const bool loss : {false, true}) candidates.push_back(split(-1, -1, embedding, loss));
  }
  if (pp >= 2) {
    candidates.push_back(split(blocks.front(), -1, false, false));
    candidates.push_back(split(-1, blocks.back(), false, false));
    candidates.push_back(split(blocks.front(), blocks.back(), false, false));
  }
  for (const MegatronSplit& s : candidates) {
    absl::StatusOr<std::vector<int64_t>> b = StageBlocks(s, num_layers, pp);
    if (!b.ok() || *b != blocks) continue;
    const bool cut = s.uneven() ? std::all_of(blocks.begin(), blocks.end(), [&](int64_t n) { return n % chunks == 0; })
                                : s.LayersPerStage(num_layers, pp) % chunks == 0;
    if (cut) return s;
  }
  return std::nullopt;
}

std::string SplitFlags(const MegatronSplit& split) {
  std::string out;
  if (split.first_blocks >= 0)
    absl::StrAppendFormat(&out, " --decoder-first-pipeline-num-layers %d", split.first_blocks);
  if (split.last_blocks >= 0) absl::StrAppendFormat(&out, " --decoder-last-pipeline-num-layers %d", split.last_blocks);
  if (split.account_embedding) absl::StrAppend(&out, " --account-for-embedding-in-pipeline-split");
  if (split.account_loss) absl::StrAppend(&out, " --account-for-loss-in-pipeline-split");
  return out.empty() ? out : out.substr(1);
}

}  // namespace hetsim::interop
