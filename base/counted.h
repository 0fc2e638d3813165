// A count and its noun for the lines people read: Counted(1, "stage") is "1 stage", Counted(2,
// "stage") "2 stages", Counted(3, "microbatch") "3 microbatches". Summaries and reports use it; error
// messages that quote a field (stages[0]...) keep the field's own spelling.
#ifndef HETSIM_BASE_COUNTED_H_
#define HETSIM_BASE_COUNTED_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace hetsim {

// The English plural of a regular noun: "es" after s, x, z, ch and sh ("microbatches"), else "s"
// ("stages", "GPUs").
std::string Plural(absl::string_view noun);

// "<n> <noun>", the noun in the plural unless n is 1 or -1.
std::string Counted(int64_t n, absl::string_view noun);

}  // namespace hetsim

#endif  // HETSIM_BASE_COUNTED_H_
