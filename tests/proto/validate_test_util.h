// Shared by the validate_* and io_* tests: the bundled examples as messages, and a matcher for
// "<file>: <field path>: <problem>" errors.
#ifndef HETSIM_TESTS_VALIDATE_TEST_UTIL_H_
#define HETSIM_TESTS_VALIDATE_TEST_UTIL_H_

#include <string>

#include <catch2/catch.hpp>

#include "absl/status/status.h"
#include "app/cli/examples.h"
#include "proto/gpu_presets.h"
#include "proto/hetsim.pb.h"

namespace hetsim::testing {

template <typename T>
T Example(const std::string& name) {
  for (const cli::Example& e : cli::BundledExamples(proto::FileFormat::kText)) {
    if (e.name == name) return dynamic_cast<const T&>(*e.message);
  }
  FAIL("no example " << name);
  return T();
}

// The bundled 512-GPU and HAPT case-study clusters.
inline hetsim::v1::Cluster BigCluster() { return Example<hetsim::v1::Cluster>("cluster-512gpu"); }
inline hetsim::v1::Cluster HaptCluster() { return Example<hetsim::v1::Cluster>("cluster-hapt-case"); }

inline hetsim::v1::Cluster ResolvedCluster(const std::string& name) {
  hetsim::v1::Cluster c = Example<hetsim::v1::Cluster>(name);
  REQUIRE(proto::ApplyGpuPresets(&c, name).ok());
  return c;
}

// The status is an InvalidArgument and one of its lines contains `expected` (typically
// "file: field.path: problem start").
#define CHECK_PROBLEM(status_expr, expected)                                            \
  do {                                                                                  \
    const absl::Status check_problem_status = (status_expr);                            \
    INFO("status: " << check_problem_status.ToString());                                \
    CHECK(check_problem_status.code() == absl::StatusCode::kInvalidArgument);           \
    CHECK_THAT(std::string(check_problem_status.message()), Catch::Contains(expected)); \
  } while (0)

}  // namespace hetsim::testing

#endif  // HETSIM_TESTS_VALIDATE_TEST_UTIL_H_
