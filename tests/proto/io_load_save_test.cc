// proto/io: strict loading in three formats, deterministic and atomic saving.
#include <filesystem>
#include <fstream>
#include <string>

#include <catch2/catch.hpp>

#include "absl/strings/str_cat.h"
#include "proto/io.h"
#include "tests/proto/validate_test_util.h"

namespace hetsim::proto {
namespace {

namespace fs = std::filesystem;
using v1::Cluster;
using v1::Plan;

// A fresh, empty folder per test case.
fs::path TempDir(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / absl::StrCat("hetsim_io_test_", name, "_", ::getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

void WriteFile(const fs::path& path, const std::string& contents) { std::ofstream(path, std::ios::binary) << contents; }

std::string ReadFile(const fs::path& path) { return *hetsim::proto::ReadFileToString(path.string()); }

int FileCount(const fs::path& dir) {
  return static_cast<int>(std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
}

}  // namespace

TEST_CASE("every example round-trips through binary, text and JSON byte for byte", "[io]") {
  const fs::path dir = TempDir("roundtrip");
  for (const hetsim::cli::Example& e : hetsim::cli::BundledExamples(FileFormat::kBinary)) {
    INFO(e.name);
    const std::string binary = *hetsim::proto::SerializeMessage(*e.message, FileFormat::kBinary);
    REQUIRE_FALSE(binary.empty());
    // binary -> text -> JSON -> binary, each step through a file.
    const fs::path pb = dir / (e.name + ".pb"), txt = dir / (e.name + ".pbtxt"), json = dir / (e.name + ".json");
    REQUIRE(Save(pb.string(), *e.message).ok());
    CHECK(ReadFile(pb) == binary);
    std::unique_ptr<google::protobuf::Message> m(e.message->New());
    REQUIRE(Load(pb.string(), m.get()).ok());
    REQUIRE(Save(txt.string(), *m).ok());
    REQUIRE(Load(txt.string(), m.get()).ok());
    REQUIRE(Save(json.string(), *m).ok());
    REQUIRE(Load(json.string(), m.get()).ok());
    CHECK(*hetsim::proto::SerializeMessage(*m, FileFormat::kBinary) == binary);
  }
}

TEST_CASE("saving is deterministic", "[io]") {
  const auto cluster = hetsim::testing::Example<Cluster>("cluster-512gpu");
  for (FileFormat f : {FileFormat::kBinary, FileFormat::kText, FileFormat::kJson}) {
    CHECK(*hetsim::proto::SerializeMessage(cluster, f) == *hetsim::proto::SerializeMessage(Cluster(cluster), f));
  }
}

TEST_CASE("JSON keeps proto field names and leaves defaults out", "[io]") {
  const std::string json =
      *hetsim::proto::SerializeMessage(hetsim::testing::Example<Plan>("plan-512gpu"), FileFormat::kJson);
  CHECK_THAT(json, Catch::Contains("\"global_batch_size\""));
  CHECK_THAT(json, !Catch::Contains("globalBatchSize"));
  CHECK_THAT(json, !Catch::Contains("\"first_layer\": 0"));  // stage 0's first_layer is at its default
}

TEST_CASE("text parse errors carry file, line and column", "[io]") {
  const fs::path dir = TempDir("text_errors");
  const fs::path f = dir / "c.pbtxt";
  WriteFile(f, "name: \"x\"\nislandz {\n}\n");
  Cluster c;
  const absl::Status s = Load(f.string(), &c);
  CHECK(s.code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(s.message()), Catch::StartsWith(f.string() + ":2:"));
  CHECK_THAT(std::string(s.message()), Catch::Contains("islandz"));

  WriteFile(f, "name: \"x\"\nislands { node_count: -3 }\n");
  CHECK_THAT(std::string(Load(f.string(), &c).message()), Catch::StartsWith(f.string() + ":2:"));
}

TEST_CASE("JSON errors name the file", "[io]") {
  const fs::path dir = TempDir("json_errors");
  const fs::path f = dir / "p.json";
  WriteFile(f, "{\"name\": \"x\", \"stagez\": []}");
  Plan p;
  const absl::Status s = Load(f.string(), &p);
  CHECK(s.code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(s.message()), Catch::StartsWith(f.string() + ": not a JSON hetsim.v1.Plan"));
  WriteFile(f, "{\"schedule\": \"H_2F2B\"}");
  CHECK_THAT(std::string(Load(f.string(), &p).message()), Catch::StartsWith(f.string() + ":"));
}

TEST_CASE("binary garbage and unknown fields are rejected", "[io]") {
  const fs::path dir = TempDir("binary_errors");
  const fs::path f = dir / "c.pb";
  Cluster c;
  WriteFile(f, std::string("\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff", 11));
  CHECK_THAT(std::string(Load(f.string(), &c).message()), Catch::Contains("not a binary hetsim.v1.Cluster"));

  // A valid Cluster with an unknown field 99 added inside islands[0].
  Cluster cluster = hetsim::testing::Example<Cluster>("cluster-hapt-case");
  cluster.mutable_islands(0)->GetReflection()->MutableUnknownFields(cluster.mutable_islands(0))->AddVarint(99, 7);
  WriteFile(f, *hetsim::proto::SerializeMessage(cluster, FileFormat::kBinary));
  CHECK_PROBLEM(Load(f.string(), &c), f.string() + ": islands[0].field number 99: unknown field");
}

TEST_CASE("enum numbers outside the schema are rejected in every format", "[io]") {
  const fs::path dir = TempDir("enums");
  Plan plan = hetsim::testing::Example<Plan>("plan-hapt-case");
  plan.mutable_stages(1)->set_recompute(static_cast<hetsim::v1::Recompute>(7));
  Plan loaded;
  for (const char* ext : {".pb", ".pbtxt", ".json"}) {
    const fs::path f = dir / absl::StrCat("p", ext);
    WriteFile(f, *hetsim::proto::SerializeMessage(plan, *hetsim::proto::FileFormatFromPath(f.string())));
    INFO(ext);
    const absl::Status s = Load(f.string(), &loaded);
    CHECK_FALSE(s.ok());
    if (std::string(ext) == ".pb") CHECK_PROBLEM(s, ": stages[1].recompute: 7 is not a value of Recompute");
  }
}

TEST_CASE("a missing file, a folder and an unknown extension are errors naming the path", "[io]") {
  const fs::path dir = TempDir("paths");
  Cluster c;
  const absl::Status missing = Load((dir / "nope.pbtxt").string(), &c);
  CHECK(missing.code() == absl::StatusCode::kNotFound);
  CHECK_THAT(std::string(missing.message()), Catch::Contains("nope.pbtxt: cannot open"));
  fs::create_directories(dir / "d.pbtxt");
  CHECK_THAT(std::string(Load((dir / "d.pbtxt").string(), &c).message()), Catch::Contains("is a folder"));
  CHECK_THAT(std::string(Load((dir / "c.yaml").string(), &c).message()), Catch::Contains("unknown file extension"));
  CHECK_FALSE(Save((dir / "c.yaml").string(), c).ok());
  CHECK_FALSE(fs::exists(dir / "c.yaml"));
}

TEST_CASE("writes are atomic: no temporary file is left, a failed write creates nothing", "[io]") {
  const fs::path dir = TempDir("atomic");
  const fs::path f = dir / "out.txt";
  REQUIRE(hetsim::proto::WriteFileAtomically(f.string(), "first").ok());
  REQUIRE(hetsim::proto::WriteFileAtomically(f.string(), "second").ok());
  CHECK(ReadFile(f) == "second");
  CHECK(FileCount(dir) == 1);

  const absl::Status s = hetsim::proto::WriteFileAtomically((dir / "no" / "such" / "dir.txt").string(), "x");
  CHECK(s.code() == absl::StatusCode::kPermissionDenied);
  CHECK_THAT(std::string(s.message()), Catch::Contains("dir.txt: cannot write"));
  CHECK(FileCount(dir) == 1);

  // The destination is a folder: rename fails, the temporary file must be gone.
  fs::create_directories(dir / "taken.txt" / "inside");
  CHECK_FALSE(hetsim::proto::WriteFileAtomically((dir / "taken.txt").string(), "x").ok());
  CHECK(FileCount(dir) == 2);
}

}  // namespace hetsim::proto
