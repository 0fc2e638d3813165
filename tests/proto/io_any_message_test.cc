// proto/any_message: message type detection for convert and check.
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "absl/strings/str_cat.h"
#include "proto/any_message.h"
#include "proto/io.h"
#include "tests/proto/validate_test_util.h"

namespace {

namespace fs = std::filesystem;
using hetsim::proto::LoadAnyMessage;
using hetsim::proto::MessageType;

fs::path Write(const std::string& name, const std::string& contents) {
  fs::path dir = fs::temp_directory_path() / absl::StrCat("hetsim_any_test_", ::getpid());
  fs::create_directories(dir);
  std::ofstream(dir / name, std::ios::binary) << contents;
  return dir / name;
}

}  // namespace

TEST_CASE("every example's type is detected in every format", "[io]") {
  for (auto format :
       {hetsim::proto::FileFormat::kBinary, hetsim::proto::FileFormat::kText, hetsim::proto::FileFormat::kJson}) {
    for (const hetsim::cli::Example& e : hetsim::cli::BundledExamples(format)) {
      const fs::path f =
          Write(e.name + hetsim::cli::ExampleExtension(format), *hetsim::proto::SerializeMessage(*e.message, format));
      INFO(f);
      absl::StatusOr<hetsim::proto::AnyMessage> m = LoadAnyMessage(f.string(), std::nullopt);
      REQUIRE(m.ok());
      CHECK(m->message->GetDescriptor() == e.message->GetDescriptor());
      CHECK(m->message->SerializeAsString() == e.message->SerializeAsString());
    }
  }
}

TEST_CASE("a file that several types accept needs --type", "[io]") {
  const fs::path f = Write("named.pbtxt", "name: \"x\"\n");
  absl::StatusOr<hetsim::proto::AnyMessage> m = LoadAnyMessage(f.string(), std::nullopt);
  REQUIRE_FALSE(m.ok());
  CHECK_THAT(std::string(m.status().message()), Catch::Contains("reads as cluster, model, plan, sweep; pass --type"));
  m = LoadAnyMessage(f.string(), MessageType::kModel);
  REQUIRE(m.ok());
  CHECK(m->type == MessageType::kModel);
}

TEST_CASE("a text file no type accepts reports the error of the type it matches longest", "[io]") {
  const fs::path f = Write("bad.pbtxt", "gpu_types { name: \"a\" }\nislands { name: \"i\" node_count: 2 colour: 3 }\n");
  absl::StatusOr<hetsim::proto::AnyMessage> m = LoadAnyMessage(f.string(), std::nullopt);
  REQUIRE_FALSE(m.ok());
  CHECK_THAT(std::string(m.status().message()), Catch::Contains("read as a cluster"));
  CHECK_THAT(std::string(m.status().message()), Catch::Contains(f.string() + ":2:"));
  CHECK_THAT(std::string(m.status().message()), Catch::Contains("colour"));
}

TEST_CASE("message type names", "[io]") {
  for (MessageType t : hetsim::proto::AllMessageTypes()) {
    CHECK(*hetsim::proto::MessageTypeFromName(hetsim::proto::MessageTypeName(t)) == t);
  }
  CHECK_FALSE(hetsim::proto::MessageTypeFromName("clusters").ok());
}
