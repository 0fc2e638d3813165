// Tests build models and GPU types as messages; these resolve them (proto/resolve.h) on the way to
// the cost model, which reads only the spec.
#ifndef HETSIM_TESTS_SPEC_TEST_UTIL_H_
#define HETSIM_TESTS_SPEC_TEST_UTIL_H_

#include <catch2/catch.hpp>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/hetsim.pb.h"
#include "proto/resolve.h"
#include "sim/workload/gpu_compute.h"
#include "sim/workload/model_cost.h"

namespace hetsim::testing {

inline absl::StatusOr<sim::workload::ModelCost> ModelCostOf(const v1::Model& model, absl::string_view source) {
  absl::StatusOr<spec::ModelSpec> spec = proto::ResolveModel(model, source);
  if (!spec.ok()) return spec.status();
  return sim::workload::ModelCost::Create(*spec);
}

inline absl::StatusOr<sim::workload::GpuCompute> GpuComputeOf(const v1::GpuType& gpu, v1::DType dtype,
                                                              absl::string_view where, bool ideal = false) {
  absl::StatusOr<spec::GpuSpec> spec = proto::ResolveGpu(gpu, where);
  if (!spec.ok()) return spec.status();
  return sim::workload::GpuCompute::Create(*spec, proto::DTypeOf(dtype), where, ideal);
}

// The same with the model's (resolved) dtype.
inline absl::StatusOr<sim::workload::GpuCompute> GpuComputeOf(const v1::GpuType& gpu, spec::DType dtype,
                                                              absl::string_view where, bool ideal = false) {
  absl::StatusOr<spec::GpuSpec> spec = proto::ResolveGpu(gpu, where);
  if (!spec.ok()) return spec.status();
  return sim::workload::GpuCompute::Create(*spec, dtype, where, ideal);
}

// BF16 compute of `gpu` as cluster.pbtxt's first GPU type; the test fails if it does not resolve.
inline sim::workload::GpuCompute Bf16ComputeOk(const v1::GpuType& gpu, bool ideal = false) {
  auto c = GpuComputeOf(gpu, v1::BF16, "cluster.pbtxt: gpu_types[0]", ideal);
  REQUIRE(c.ok());
  return *c;
}

}  // namespace hetsim::testing

#endif  // HETSIM_TESTS_SPEC_TEST_UTIL_H_
