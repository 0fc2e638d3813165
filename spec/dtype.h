// The compute dtype of a resolved model: the file's DTYPE_UNSPECIFIED is already BF16 here.
#ifndef HETSIM_SPEC_DTYPE_H_
#define HETSIM_SPEC_DTYPE_H_

#include <cstdint>

namespace hetsim::spec {

enum class DType : uint8_t { kFp32, kTf32, kBf16, kFp16, kFp8 };
inline constexpr int kNumDTypes = 5;

}  // namespace hetsim::spec

#endif  // HETSIM_SPEC_DTYPE_H_
