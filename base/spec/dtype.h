// The compute dtype of a resolved model: the file's DTYPE_UNSPECIFIED is already BF16 here.
#ifndef HETSIM_BASE_SPEC_DTYPE_H_
#define HETSIM_BASE_SPEC_DTYPE_H_

#include <cstdint>

namespace hetsim::spec {

enum class DType : uint8_t { kFp32, kTf32, kBf16, kFp16, kFp8 };
inline constexpr int kNumDTypes = 5;

// The schema's name of the dtype ("BF16"), as traces write it.
inline const char* DTypeName(DType d) {
  switch (d) {
    case DType::kFp32: return "FP32";
    case DType::kTf32: return "TF32";
    case DType::kBf16: return "BF16";
    case DType::kFp16: return "FP16";
    case DType::kFp8: return "FP8";
  }
  return "BF16";
}

}  // namespace hetsim::spec

#endif  // HETSIM_BASE_SPEC_DTYPE_H_
