// proto/io's input layer (ReadInputFile): regular files only, a size limit checked before reading,
// text inputs as people save them (byte-order mark, CRLF).
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <catch2/catch.hpp>

#include "absl/strings/str_cat.h"
#include "proto/hetsim.pb.h"
#include "proto/io.h"

namespace {

namespace fs = std::filesystem;
using hetsim::proto::InputKind;
using hetsim::proto::ReadInputFile;

fs::path InputTestDir(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / absl::StrCat("hetsim_input_test_", name, "_", ::getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

void WriteBytes(const fs::path& path, const std::string& contents) {
  std::ofstream(path, std::ios::binary) << contents;
}

}  // namespace

TEST_CASE("a device, a FIFO or a folder is refused without reading it, also behind a link", "[io]") {
  const fs::path dir = InputTestDir("special");
  fs::create_symlink("/dev/zero", dir / "zero.pbtxt");
  REQUIRE(::mkfifo((dir / "fifo.pbtxt").c_str(), 0600) == 0);
  for (const char* name : {"zero.pbtxt", "fifo.pbtxt"}) {
    const auto read = ReadInputFile((dir / name).string(), InputKind::kMessage);
    REQUIRE_FALSE(read.ok());
    CHECK_THAT(std::string(read.status().message()), Catch::Contains("not a regular file"));
  }
  hetsim::v1::Cluster cluster;
  const absl::Status load = hetsim::proto::Load((dir / "zero.pbtxt").string(), &cluster);
  CHECK_THAT(std::string(load.message()), Catch::Contains("zero.pbtxt: not a regular file"));
  const auto folder = ReadInputFile(dir.string(), InputKind::kText);
  CHECK_THAT(std::string(folder.status().message()), Catch::Contains("is a folder"));
  fs::remove_all(dir);
}

TEST_CASE("a file over its kind's limit is refused before it is read", "[io]") {
  const fs::path dir = InputTestDir("large");
  const fs::path big = dir / "big.pbtxt";
  WriteBytes(big, "");
  // Sparse: the size is there, the bytes are not, so the test writes nothing and would take
  // minutes if the reader read first and checked after.
  fs::resize_file(big, hetsim::proto::MaxInputBytes(InputKind::kMessage) + 1);
  const auto read = ReadInputFile(big.string(), InputKind::kMessage);
  REQUIRE_FALSE(read.ok());
  CHECK_THAT(std::string(read.status().message()),
             Catch::Contains("larger than 256 MiB, the limit for an input message"));
  fs::resize_file(big, hetsim::proto::MaxInputBytes(InputKind::kText) + 1);
  CHECK_FALSE(ReadInputFile(big.string(), InputKind::kText).ok());
  fs::remove_all(dir);
}

TEST_CASE("text inputs drop a byte-order mark and read CRLF as LF, binary inputs keep their bytes", "[io]") {
  const fs::path dir = InputTestDir("text");
  const std::string saved = "\xEF\xBB\xBFline one\r\nline two\r\n";
  WriteBytes(dir / "launch.sh", saved);
  CHECK(*ReadInputFile((dir / "launch.sh").string(), InputKind::kText) == "line one\nline two\n");
  CHECK(*ReadInputFile((dir / "launch.sh").string(), InputKind::kChakraTrace) == saved);

  // A cluster saved by a Windows editor (BOM, CRLF) loads as text format and as JSON.
  WriteBytes(dir / "c.pbtxt", "\xEF\xBB\xBFname: \"x\"\r\nislands { name: \"a\" }\r\n");
  WriteBytes(dir / "c.json", "\xEF\xBB\xBF{\r\n  \"name\": \"x\"\r\n}\r\n");
  hetsim::v1::Cluster text, json;
  REQUIRE(hetsim::proto::Load((dir / "c.pbtxt").string(), &text).ok());
  REQUIRE(hetsim::proto::Load((dir / "c.json").string(), &json).ok());
  CHECK(text.name() == "x");
  CHECK(text.islands(0).name() == "a");
  CHECK(json.name() == "x");
  fs::remove_all(dir);
}
