// What the importer tests (tests/interop_*_test.cc) share: the bundled 16K-H100 cluster the configs
// are laid out on, a test file's text, a note among an import's notes, and the published inputs in
// shared/.
#ifndef HETSIM_TESTS_INTEROP_TEST_UTIL_H_
#define HETSIM_TESTS_INTEROP_TEST_UTIL_H_

#include <catch2/catch.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "proto/io.h"
#include "proto/validate_cluster.h"

namespace hetsim::testing {

inline hetsim::v1::Cluster ImportTestCluster() {
  auto c = hetsim::proto::LoadCluster(std::string(HETSIM_SOURCE_DIR) + "/examples/cluster-16k-h100.pbtxt");
  REQUIRE(c.ok());
  return *c;
}

inline std::string ImportTestText(const std::string& path) {
  auto text = hetsim::proto::ReadFileToString(path);
  REQUIRE(text.ok());
  return *text;
}

inline bool HasImportNote(const std::vector<std::string>& notes, const std::string& part) {
  for (const std::string& n : notes) {
    if (n.find(part) != std::string::npos) return true;
  }
  return false;
}

// The published inputs the steering repository places in shared/SUBDIR, those ending in `extension`;
// nullopt (with a warning: the corpus is not checked) when shared/ does not hold them yet.
inline std::optional<std::vector<std::filesystem::path>> SharedCorpus(const std::string& subdir,
                                                                      const std::string& extension) {
  const std::filesystem::path dir = std::filesystem::path(HETSIM_SHARED_DIR) / subdir;
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    WARN("no " << dir.string() << ": the published inputs are not in shared/ yet; corpus not checked");
    return std::nullopt;
  }
  std::vector<std::filesystem::path> out;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == extension) out.push_back(entry.path());
  }
  return out;
}

}  // namespace hetsim::testing

#endif  // HETSIM_TESTS_INTEROP_TEST_UTIL_H_
