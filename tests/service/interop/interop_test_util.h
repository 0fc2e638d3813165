// What the importer tests (tests/interop_*_test.cc) share: the bundled 16K-H100 cluster the configs
// are laid out on, a test file's text, a note among an import's notes, and the committed corpus of
// real inputs in tests/corpus/.
#ifndef HETSIM_TESTS_INTEROP_TEST_UTIL_H_
#define HETSIM_TESTS_INTEROP_TEST_UTIL_H_

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
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

// A file of the committed corpus of real inputs, tests/corpus/third_party/SUBDIR/NAME; the test fails when it is
// missing (tests/corpus/sources.txt lists every file, scripts/fetch-corpus.sh re-fetches one).
inline std::filesystem::path CorpusFile(const std::string& subdir, const std::string& name) {
  const std::filesystem::path path = std::filesystem::path(HETSIM_CORPUS_DIR) / subdir / name;
  std::error_code ec;
  INFO(path.string() << " is listed in tests/corpus/sources.txt (scripts/fetch-corpus.sh places it)");
  REQUIRE(std::filesystem::is_regular_file(path, ec));
  return path;
}

// The names of the files in tests/corpus/third_party/SUBDIR, sorted: a file there that no test case expects is a
// file whose expected result is not asserted.
inline std::vector<std::string> CorpusFileNames(const std::string& subdir) {
  const std::filesystem::path dir = std::filesystem::path(HETSIM_CORPUS_DIR) / subdir;
  std::error_code ec;
  REQUIRE(std::filesystem::is_directory(dir, ec));
  std::vector<std::string> out;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    if (entry.is_regular_file()) out.push_back(std::filesystem::relative(entry.path(), dir).generic_string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace hetsim::testing

#endif  // HETSIM_TESTS_INTEROP_TEST_UTIL_H_
