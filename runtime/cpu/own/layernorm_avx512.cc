// AVX-512 row of cpu.layernorm; see layernorm_avx512.h. Compiled with AVX-512 (F/BW/VL/DQ/BF16)
// enabled; intrinsics and internal functions only (see attention_avx512.cc).
#include "runtime/cpu/own/layernorm_avx512.h"

#include <immintrin.h>

#include "runtime/cpu/own/avx512_lanes.h"

namespace gcomp::cpu::own::avx512 {
namespace {

inline __m512 Load(const void* x, bool bf16, int64_t i, __mmask16 m) {
  if (!bf16) return _mm512_maskz_loadu_ps(m, static_cast<const float*>(x) + i);
  return LoadBf16(static_cast<const uint16_t*>(x) + i, m);
}

inline void Store(void* y, bool bf16, int64_t i, __mmask16 m, __m512 v) {
  if (!bf16) {
    _mm512_mask_storeu_ps(static_cast<float*>(y) + i, m, v);
    return;
  }
  StoreBf16(static_cast<uint16_t*>(y) + i, m, v);
}

}  // namespace

void LayerNormRow(const void* x, bool x_bf16, void* y, bool y_bf16, const float* scale, const float* bias,
                  int64_t len, float epsilon, float* row) {
  __m512 sum = _mm512_setzero_ps();
  for (int64_t i = 0; i < len; i += 16) {
    const __mmask16 m = Lanes(len - i);
    const __m512 v = Load(x, x_bf16, i, m);
    _mm512_mask_storeu_ps(row + i, m, v);
    sum = _mm512_add_ps(sum, v);
  }
  const float mean = _mm512_reduce_add_ps(sum) / static_cast<float>(len);
  const __m512 vmean = _mm512_set1_ps(mean);
  __m512 sq = _mm512_setzero_ps();
  for (int64_t i = 0; i < len; i += 16) {
    const __mmask16 m = Lanes(len - i);
    const __m512 d = _mm512_maskz_sub_ps(m, _mm512_maskz_loadu_ps(m, row + i), vmean);  // 0 past the row
    sq = _mm512_fmadd_ps(d, d, sq);
  }
  const double var = static_cast<double>(_mm512_reduce_add_ps(sq)) / static_cast<double>(len);
  const __m512 inv = _mm512_set1_ps(static_cast<float>(1.0 / __builtin_sqrt(var + epsilon)));
  for (int64_t i = 0; i < len; i += 16) {
    const __mmask16 m = Lanes(len - i);
    const __m512 d = _mm512_mul_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, row + i), vmean), inv);
    Store(y, y_bf16, i, m, _mm512_fmadd_ps(d, _mm512_maskz_loadu_ps(m, scale + i), _mm512_maskz_loadu_ps(m, bias + i)));
  }
}

}  // namespace gcomp::cpu::own::avx512
