// The erf GELU pass of gelu_avx512.h; AVX-512 F/BW/VL/DQ/BF16 enabled in this file only.
#include "runtime/cpu/own/gelu_avx512.h"

#include <immintrin.h>

#include "runtime/cpu/own/avx512_lanes.h"

namespace gcomp::cpu::own::avx512 {
namespace {

// GELU(v) = v/2 * (1 + erf(v / sqrt 2)) for a bf16 result, 15 vector operations: erf(v / sqrt 2) =
// v P(v^2) / Q(v^2) on |v| <= 4 sqrt 2 (v clamped by one vrangeps; erf is +-1 within 2e-8 beyond),
// fitted for GELU's relative error where |GELU| >= 1e-3 (the negative tail, where 1 + erf is
// small): before rounding at most 1.3e-3 of max(|GELU|, 1e-3) (erf_rational.h's: 1.1e-3), |erf
// error| < 4e-5; after rounding to bf16 at most 4.5e-3 relative (erf_rational.h's: 3.9e-3, bf16's
// own rounding). erf_rational.h's form took 21 operations: 0.50 -> 0.36 ms per 1.5 M elements.
inline __m512 Gelu(__m512 v) {
  const __m512 c = _mm512_range_ps(v, _mm512_set1_ps(5.65685424949238f), 0x02);  // min |.|, v's sign
  const __m512 t = _mm512_mul_ps(c, c);
  __m512 p = _mm512_fmadd_ps(t, _mm512_set1_ps(-2.852173679457337e-07f), _mm512_set1_ps(1.1324061779305339e-04f));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(8.8051687926054e-03f));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(5.515342950820923e-02f));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(7.978724837303162e-01f));
  p = _mm512_mul_ps(p, c);
  __m512 q = _mm512_fmadd_ps(t, _mm512_set1_ps(1.5426817117258906e-03f), _mm512_set1_ps(2.5096261873841286e-02f));
  q = _mm512_fmadd_ps(q, t, _mm512_set1_ps(2.360009253025055e-01f));
  q = _mm512_fmadd_ps(q, t, _mm512_set1_ps(1.0f));
  // Below -4 sqrt 2 erf is -1 exactly: the rational's -0.99999982 there would leave v * -9e-8,
  // growing with |v|, where GELU is 0 (a NaN fails the compare and stays NaN).
  const __mmask16 tail = _mm512_cmp_ps_mask(v, _mm512_set1_ps(-5.65685424949238f), _CMP_LT_OQ);
  const __m512 erf = _mm512_mask_mov_ps(_mm512_div_ps(p, q), tail, _mm512_set1_ps(-1.0f));
  const __m512 hv = _mm512_mul_ps(_mm512_set1_ps(0.5f), v);
  return _mm512_fmadd_ps(hv, erf, hv);
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
