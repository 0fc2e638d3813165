// Tests build models and GPU types as messages; these resolve them (proto/resolve.h) on the way to
// the cost model, which reads only the spec.
#ifndef HETSIM_TESTS_SPEC_TEST_UTIL_H_
#define HETSIM_TESTS_SPEC_TEST_UTIL_H_

#include <catch2/catch.hpp>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/hetsim.pb.h"
#include "proto/resolve.h"
#include "proto/validate_model.h"
#include "sim/workload/gpu_compute.h"
#include "sim/workload/model_cost.h"

namespace hetsim::testing {

// A model read as the edge reads one: checked (proto::ValidateModel), then resolved.
inline absl::StatusOr<sim::workload::ModelCost> ModelCostOf(const v1::Model& model, absl::string_view source) {
  if (absl::Status s = proto::ValidateModel(model, source); !s.ok()) return s;
  return sim::workload::ModelCost::Create(proto::ResolveModel(model, source));
}

inline absl::StatusOr<sim::workload::GpuCompute> GpuComputeOf(const v1::GpuType& gpu, v1::DType dtype,
                                                              absl::string_view where, bool ideal = false) {
  return sim::workload::GpuCompute::Create(proto::ResolveGpu(gpu), proto::DTypeOf(dtype), where, ideal);
}

// The same with the model's (resolved) dtype.
inline absl::StatusOr<sim::workload::GpuCompute> GpuComputeOf(const v1::GpuType& gpu, spec::DType dtype,
                                                              absl::string_view where, bool ideal = false) {
  return sim::workload::GpuCompute::Create(proto::ResolveGpu(gpu), dtype, where, ideal);
}

// BF16 compute of `gpu` as cluster.pbtxt's first GPU type; the test fails if it does not resolve.
inline sim::workload::GpuCompute Bf16ComputeOk(const v1::GpuType& gpu, bool ideal = false) {
  auto c = GpuComputeOf(gpu, v1::BF16, "cluster.pbtxt: gpu_types[0]", ideal);
  REQUIRE(c.ok());
  return *c;
}

}  // namespace hetsim::testing

#endif  // HETSIM_TESTS_SPEC_TEST_UTIL_H_
