#include "base/counted.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace hetsim {

std::string Plural(absl::string_view noun) {
  const bool sibilant = absl::EndsWith(noun, "s") || absl::EndsWith(noun, "x") || absl::EndsWith(noun, "z") ||
                        absl::EndsWith(noun, "ch") || absl::EndsWith(noun, "sh");
  return absl::StrCat(noun, sibilant ? "es" : "s");
}

std::string Counted(int64_t n, absl::string_view noun) {
  return absl::StrCat(n, " ", n == 1 || n == -1 ? std::string(noun) : Plural(noun));
}

}  // namespace hetsim
