// proto/output_files.h: a command's outputs all or none, never over an input.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <catch2/catch.hpp>

#include "absl/strings/str_cat.h"
#include "proto/output_files.h"

namespace {

namespace fs = std::filesystem;

fs::path OutputTestDir(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / absl::StrCat("hetsim_outputs_test_", name, "_", ::getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

int EntryCount(const fs::path& dir) {
  return static_cast<int>(std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
}

}  // namespace

TEST_CASE("outputs: all are written, or none when one cannot be", "[io]") {
  const fs::path dir = OutputTestDir("all_or_none");
  {
    hetsim::proto::OutputFiles files;
    REQUIRE(files.Add((dir / "a.json").string(), "a").ok());
    REQUIRE(files.Add((dir / "b.html").string(), "b").ok());
    REQUIRE(files.Commit().ok());
    CHECK(EntryCount(dir) == 2);
  }
  // The second output's folder disappears between staging and writing: the first is not written
  // either, and no temporary file is left.
  fs::create_directories(dir / "sub");
  hetsim::proto::OutputFiles files;
  REQUIRE(files.Add((dir / "c.json").string(), "c").ok());
  REQUIRE(files.Add((dir / "sub" / "d.html").string(), "d").ok());
  fs::remove_all(dir / "sub");
  CHECK_FALSE(files.Commit().ok());
  CHECK(EntryCount(dir) == 2);
  CHECK_FALSE(fs::exists(dir / "c.json"));
  fs::remove_all(dir);
}

TEST_CASE("outputs: an input, a name given twice or a missing folder is refused before writing", "[io]") {
  const fs::path dir = OutputTestDir("refused");
  const std::string plan = (dir / "plan.pbtxt").string();
  std::ofstream(plan) << "name: \"p\"\n";
  fs::create_symlink(plan, dir / "link.pbtxt");
  hetsim::proto::OutputFiles files({plan});
  CHECK_THAT(std::string(files.Add(plan, "x").message()), Catch::Contains("is also an input of this command"));
  CHECK_FALSE(files.Add((dir / "link.pbtxt").string(), "x").ok());  // the same file by another name
  REQUIRE(files.Add((dir / "r.json").string(), "r").ok());
  CHECK_THAT(std::string(files.Add((dir / "r.json").string(), "r").message()), Catch::Contains("named for two"));
  CHECK_THAT(std::string(files.Check((dir / "no" / "x.html").string()).message()), Catch::Contains("does not exist"));
  std::string kept;
  std::getline(std::ifstream(plan), kept);
  CHECK(kept == "name: \"p\"");
  fs::remove_all(dir);
}
