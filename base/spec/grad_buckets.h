// How many gradient buckets Plan.grad_bucket_bytes may cut a plan's gradients into, and the count of
// one cut, for the setup (executor), the layer ranges (executor::CheckRangeBuckets) and the planner's
// price of a plan (`hetsim validate`) alike: each refuses more before cutting any.
#ifndef HETSIM_BASE_SPEC_GRAD_BUCKETS_H_
#define HETSIM_BASE_SPEC_GRAD_BUCKETS_H_

#include <cstdint>

namespace hetsim::spec {

// All stages (or a plan of pipelines' layer ranges) together: each bucket is an event per holder and a
// collective per group, so as many as a pipeline's microbatches (proto/limits.h kMaxMicrobatches). One
// byte per bucket cut a 1.3B model's gradients into 10^8 buckets (std::bad_alloc; session 37).
inline constexpr int64_t kMaxGradBuckets = 1'000'000;
// A plan of pipelines' layer ranges: every bucket of a range is an event on each stage holding it
// (scheduled at once, when the holder's last backward starts), so buckets x holders, all ranges
// together, at most as many as a plan's passes (proto/limits.h kMaxPipelineTasks). 460,000 one-byte
// buckets over 1,000 pipelines' stages took 5.5 GB and std::bad_alloc within 16 s (session 37).
inline constexpr int64_t kMaxGradBucketEvents = 4'000'000;

// The buckets `bytes` (>= 0) make in pieces of `bucket_bytes` (0: one bucket; none of no bytes).
constexpr int64_t GradBucketCount(int64_t bytes, int64_t bucket_bytes) {
  if (bytes <= 0) return 0;
  return bucket_bytes > 0 ? (bytes + bucket_bytes - 1) / bucket_bytes : 1;
}

}  // namespace hetsim::spec

#endif  // HETSIM_BASE_SPEC_GRAD_BUCKETS_H_
