// AVX-512 rows of cpu.pool; see pool_avx512.h. Compiled with AVX-512 (F/BW/VL/DQ) enabled;
// intrinsics and internal functions only (see attention_avx512.cc).
#include "runtime/cpu/own/pool_avx512.h"

#include <immintrin.h>

#include "runtime/cpu/own/avx512_lanes.h"

namespace gcomp::cpu::own::avx512 {

void MaxPoolBf16(const uint8_t* const* taps, int64_t count, int64_t c, uint16_t* y) {
  for (int64_t ch = 0; ch < c; ch += 16) {
    const int64_t left = c - ch;
    const __mmask16 m = Lanes(left);
    __m512 acc = LoadBf16(reinterpret_cast<const uint16_t*>(taps[0]) + ch, m);
    for (int64_t t = 1; t < count; ++t) {
      const __m512 v = LoadBf16(reinterpret_cast<const uint16_t*>(taps[t]) + ch, m);
      // v replaces acc where v > acc or v is NaN (MaxKeepNan in pool.cc).
      const __mmask16 take = _mm512_cmp_ps_mask(v, acc, _CMP_GT_OQ) | _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
      acc = _mm512_mask_mov_ps(acc, take, v);
    }
    // The upper halves are the bf16 bits of the chosen inputs.
    _mm256_mask_storeu_epi16(y + ch, m, _mm512_cvtepi32_epi16(_mm512_srli_epi32(_mm512_castps_si512(acc), 16)));
  }
}

void MaxPoolF32(const uint8_t* const* taps, int64_t count, int64_t c, float* y) {
  for (int64_t ch = 0; ch < c; ch += 16) {
    const __mmask16 m = Lanes(c - ch);
    __m512 acc = _mm512_maskz_loadu_ps(m, reinterpret_cast<const float*>(taps[0]) + ch);
    for (int64_t t = 1; t < count; ++t) {
      const __m512 v = _mm512_maskz_loadu_ps(m, reinterpret_cast<const float*>(taps[t]) + ch);
      const __mmask16 take = _mm512_cmp_ps_mask(v, acc, _CMP_GT_OQ) | _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
      acc = _mm512_mask_mov_ps(acc, take, v);
    }
    _mm512_mask_storeu_ps(y + ch, m, acc);
  }
}

}  // namespace gcomp::cpu::own::avx512
