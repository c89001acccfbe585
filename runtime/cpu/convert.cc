// Converting loads and stores between the storage types and fp32.
#include <cstring>

#include "runtime/cpu/kernel.h"

namespace gcomp::cpu {

void LoadF32(DType dtype, const void* src, float* dst, int64_t n) {
  switch (dtype) {
    case DType::kF16: {
      const auto* s = static_cast<const uint16_t*>(src);
      for (int64_t i = 0; i < n; ++i) dst[i] = HalfToFloat(s[i]);
      return;
    }
    case DType::kBF16: {
      const auto* s = static_cast<const uint16_t*>(src);
      for (int64_t i = 0; i < n; ++i) {
        uint32_t bits = uint32_t{s[i]} << 16;
        std::memcpy(&dst[i], &bits, 4);
      }
      return;
    }
    default:
      std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
  }
}

void StoreF32(DType dtype, const float* src, void* dst, int64_t n) {
  switch (dtype) {
    case DType::kF16: {
      auto* d = static_cast<uint16_t*>(dst);
      for (int64_t i = 0; i < n; ++i) d[i] = FloatToHalf(src[i]);
      return;
    }
    case DType::kBF16: {
      auto* d = static_cast<uint16_t*>(dst);
      for (int64_t i = 0; i < n; ++i) d[i] = FloatToBFloat16(src[i]);
      return;
    }
    default:
      std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
  }
}

}  // namespace gcomp::cpu
