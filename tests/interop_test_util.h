// What the importer tests (tests/interop_*_test.cc) share: the bundled 16K-H100 cluster the configs
// are laid out on, a test file's text, and a note among an import's notes.
#ifndef HETSIM_TESTS_INTEROP_TEST_UTIL_H_
#define HETSIM_TESTS_INTEROP_TEST_UTIL_H_

#include <catch2/catch.hpp>

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

}  // namespace hetsim::testing

#endif  // HETSIM_TESTS_INTEROP_TEST_UTIL_H_
