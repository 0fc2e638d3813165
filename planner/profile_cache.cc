#include "planner/profile_cache.h"

#include <utility>

#include "planner/profile.h"

namespace hetsim::planner {

void ProfileCache::Bind(absl::string_view scope) {
  std::lock_guard<std::mutex> lock(mu_);
  if (scope_ == scope) return;
  if (!entries_.empty()) ++stats_.rebinds;
  scope_ = std::string(scope);
  entries_.clear();
  stats_.entries = 0;
}

ProfileCache::Options ProfileCache::Find(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(key);
  if (it == entries_.end()) return nullptr;
  ++stats_.hits;
  return it->second;
}

void ProfileCache::Store(const std::string& key, Options options) {
  std::lock_guard<std::mutex> lock(mu_);
  if (entries_.try_emplace(key, std::move(options)).second) {
    ++stats_.misses;
    ++stats_.entries;
  }
}

ProfileCacheStats ProfileCache::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

}  // namespace hetsim::planner
