// Status propagation, the two macros Abseil keeps internal (Debian's Abseil ships no
// status_macros.h). Library code returns absl::Status / StatusOr; these spell the early return.
//
//   HETSIM_RETURN_IF_ERROR(Validate(x));                    // returns the error, if any
//   HETSIM_ASSIGN_OR_RETURN(Topology topo, BuildTopology(c)); // declares topo from the value
#ifndef HETSIM_BASE_STATUS_MACROS_H_
#define HETSIM_BASE_STATUS_MACROS_H_

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define HETSIM_STATUS_CONCAT_INNER_(a, b) a##b
#define HETSIM_STATUS_CONCAT_(a, b) HETSIM_STATUS_CONCAT_INNER_(a, b)

// Evaluates `expr` (an absl::Status or StatusOr) once and returns its status from the enclosing
// function when it is not OK.
#define HETSIM_RETURN_IF_ERROR(expr)                                                                                  \
  do {                                                                                                                \
    if (auto hetsim_status_ = ::hetsim::status_internal::AsStatus(expr); !hetsim_status_.ok()) return hetsim_status_; \
  } while (false)

// Evaluates `rexpr` (an absl::StatusOr<T>); returns its status when not OK, else moves its value into
// `lhs` (a declaration such as `auto x` or an existing lvalue).
#define HETSIM_ASSIGN_OR_RETURN(lhs, rexpr) \
  HETSIM_ASSIGN_OR_RETURN_IMPL_(HETSIM_STATUS_CONCAT_(hetsim_statusor_, __LINE__), lhs, rexpr)

#define HETSIM_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, rexpr) \
  auto statusor = (rexpr);                                  \
  if (!statusor.ok()) return std::move(statusor).status();  \
  lhs = *std::move(statusor)

namespace hetsim::status_internal {

inline absl::Status AsStatus(absl::Status s) { return s; }
template <typename T>
absl::Status AsStatus(const absl::StatusOr<T>& s) {
  return s.status();
}

}  // namespace hetsim::status_internal

#endif  // HETSIM_BASE_STATUS_MACROS_H_
