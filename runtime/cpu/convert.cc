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
      // FloatToBFloat16 (round to nearest even, NaN kept quiet) written branch-free, so that the
      // loop vectorizes: bf16 plans on CPUs without AVX-512 round every step's f32 result here.
      auto* d = static_cast<uint16_t*>(dst);
      const auto* s = reinterpret_cast<const uint32_t*>(src);
      for (int64_t i = 0; i < n; ++i) {
        const uint32_t x = s[i];
        const uint32_t rounded = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
        const uint32_t nan = (x >> 16) | 0x40u;
        d[i] = static_cast<uint16_t>((x & 0x7fffffffu) > 0x7f800000u ? nan : rounded);
      }
      return;
    }
    default:
      std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
  }
}

}  // namespace gcomp::cpu
