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

// Two passes for the statistics (the mean, then the squared deviations from it), each with four
// independent accumulators over 64 elements at a time: one accumulator chained 48 additions per
// 768-element row, and the row took 740 cycles where its arithmetic needs about 300 (0.160 ->
// 0.133 ms for 788 rows of 768 bf16 on one Zen 5 core). Each pass reads the row from x (it stays
// in L1) where an fp32 copy of it was stored first.
void LayerNormRow(const void* x, bool x_bf16, void* y, bool y_bf16, const float* scale, const float* bias,
                  int64_t len, float epsilon) {
  auto sum4 = [](__m512 a, __m512 b, __m512 c, __m512 d) {
    return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(a, b), _mm512_add_ps(c, d)));
  };
  __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
  int64_t i = 0;
  for (; i + 64 <= len; i += 64) {
    s0 = _mm512_add_ps(s0, Load(x, x_bf16, i, 0xffff));
    s1 = _mm512_add_ps(s1, Load(x, x_bf16, i + 16, 0xffff));
    s2 = _mm512_add_ps(s2, Load(x, x_bf16, i + 32, 0xffff));
    s3 = _mm512_add_ps(s3, Load(x, x_bf16, i + 48, 0xffff));
  }
  for (; i < len; i += 16) s0 = _mm512_add_ps(s0, Load(x, x_bf16, i, Lanes(len - i)));
  const float mean = sum4(s0, s1, s2, s3) / static_cast<float>(len);
  const __m512 vmean = _mm512_set1_ps(mean);
  auto dev = [&](int64_t at, __mmask16 m) { return _mm512_maskz_sub_ps(m, Load(x, x_bf16, at, m), vmean); };
  s0 = s1 = s2 = s3 = _mm512_setzero_ps();
  for (i = 0; i + 64 <= len; i += 64) {
    const __m512 d0 = dev(i, 0xffff), d1 = dev(i + 16, 0xffff), d2 = dev(i + 32, 0xffff), d3 = dev(i + 48, 0xffff);
    s0 = _mm512_fmadd_ps(d0, d0, s0);
    s1 = _mm512_fmadd_ps(d1, d1, s1);
    s2 = _mm512_fmadd_ps(d2, d2, s2);
    s3 = _mm512_fmadd_ps(d3, d3, s3);
  }
  for (; i < len; i += 16) {
    const __m512 d = dev(i, Lanes(len - i));  // 0 past the row
    s0 = _mm512_fmadd_ps(d, d, s0);
  }
  const double var = static_cast<double>(sum4(s0, s1, s2, s3)) / static_cast<double>(len);
  const __m512 inv = _mm512_set1_ps(static_cast<float>(1.0 / __builtin_sqrt(var + epsilon)));
  for (i = 0; i < len; i += 16) {
    const __mmask16 m = Lanes(len - i);
    const __m512 d = _mm512_mul_ps(dev(i, m), inv);
    Store(y, y_bf16, i, m, _mm512_fmadd_ps(d, _mm512_maskz_loadu_ps(m, scale + i), _mm512_maskz_loadu_ps(m, bias + i)));
  }
}

}  // namespace gcomp::cpu::own::avx512
