// Stage profiles kept across planning runs: what the profiler priced for one model on one kind of
// island (GPU, node shape, link figures) stays valid for any cluster that has such an island, so a
// re-plan after a failure (service/driver/replan.h) prices only what it has not seen. A profile is keyed by
// the island's pricing figures (never its name, index or node count), the submesh shape, the
// micro-batch size and the stage's layer multiset; the cache is bound to one model and one set of
// profiler options and empties itself when either changes. Thread-safe.
#ifndef HETSIM_PLANNER_PROFILE_CACHE_H_
#define HETSIM_PLANNER_PROFILE_CACHE_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"

namespace hetsim::planner {

struct StageOption;

struct ProfileCacheStats {
  int64_t hits = 0;    // lookups answered from the cache
  int64_t misses = 0;  // profiles priced and stored
  int64_t entries = 0;
  int64_t rebinds = 0;  // times the cache emptied for another model or options
};

class ProfileCache {
 public:
  using Options = std::shared_ptr<const std::vector<StageOption>>;

  // Binds the cache to `scope` (the model and profiler options, as bytes); a different scope empties it.
  void Bind(absl::string_view scope);
  // nullptr when `key` was never stored.
  Options Find(const std::string& key);
  void Store(const std::string& key, Options options);
  ProfileCacheStats stats() const;

 private:
  mutable std::mutex mu_;
  std::string scope_;
  absl::flat_hash_map<std::string, Options> entries_;
  ProfileCacheStats stats_;
};

}  // namespace hetsim::planner

#endif  // HETSIM_PLANNER_PROFILE_CACHE_H_
