// The erf GELU pass of gelu_avx512.h; AVX-512 F/BW/VL/DQ/BF16 enabled in this file only.
#include "runtime/cpu/own/gelu_avx512.h"

#include <immintrin.h>

#include "runtime/cpu/erf_rational.h"
#include "runtime/cpu/own/avx512_lanes.h"

namespace gcomp::cpu::own::avx512 {
namespace {

inline __m512 Gelu(__m512 v) {
  __m512 x = _mm512_mul_ps(v, _mm512_set1_ps(0.70710678118654752f));
  x = _mm512_min_ps(_mm512_max_ps(x, _mm512_set1_ps(-4.0f)), _mm512_set1_ps(4.0f));
  const __m512 erf = ErfRational(x);
  return _mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(0.5f), v), _mm512_add_ps(_mm512_set1_ps(1.0f), erf));
}

}  // namespace

void GeluF32ToBf16(const float* x, uint16_t* y, int64_t n) {
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m512 a = Gelu(_mm512_loadu_ps(x + i)), b = Gelu(_mm512_loadu_ps(x + i + 16));
    _mm512_storeu_si512(y + i, reinterpret_cast<__m512i>(_mm512_cvtne2ps_pbh(b, a)));
  }
  for (; i < n; i += 16) {
    const __mmask16 m = Lanes(n - i);
    StoreBf16(y + i, m, Gelu(_mm512_maskz_loadu_ps(m, x + i)));
  }
}

}  // namespace gcomp::cpu::own::avx512
