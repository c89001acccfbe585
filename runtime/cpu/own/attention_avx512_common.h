// Shared by the AVX-512 attention files (attention_avx512.cc, attention_avx512bf16.cc) only:
// everything here has internal linkage, so each file keeps its own copy compiled with its own
// instruction sets (see simd.h).
#pragma once

#include <immintrin.h>

#include "runtime/cpu/own/attention_avx512.h"
#include "runtime/cpu/own/avx512_lanes.h"

namespace gcomp::cpu::own::avx512 {
namespace {

constexpr int64_t kR = kAttentionRows;
constexpr int64_t kKb = kAttentionKeyBlock;

// A micro-kernel call's number of 16-float column vectors, as a type.
template <int N>
struct Columns {
  static constexpr int kVectors = N;
};

// f(i, j, Columns<NC>{}) over rows [0, rows) in steps of kR and columns [0, cols) (a multiple of
// 16) in steps of 64, NC = min(4, (cols - j) / 16): the micro-kernel calls covering a tile.
template <typename F>
inline void ForEachMicroTile(int64_t rows, int64_t cols, F f) {
  for (int64_t i = 0; i < rows; i += kR) {
    for (int64_t j = 0; j < cols; j += 64) {
      switch (cols - j >= 64 ? 4 : (cols - j) / 16) {
        case 4: f(i, j, Columns<4>{}); break;
        case 3: f(i, j, Columns<3>{}); break;
        case 2: f(i, j, Columns<2>{}); break;
        default: f(i, j, Columns<1>{}); break;
      }
    }
  }
}

// The score micro-kernels' epilogue: row r's NC accumulators (times `scale` unless it is 1) into
// s (rows `stride` apart), and their maximum over the columns before `valid` into the row's 16
// running maxima at mx + 16 r (SoftmaxRows reads them instead of a pass over the scores).
// Inlined with its loops unrolled, so that the accumulators stay in registers.
template <int NC>
[[gnu::always_inline]] inline void StoreScores(__m512 (&acc)[kR][NC], float* s, int64_t stride, float scale,
                                               int64_t valid, float* mx) {
  const bool scaled = scale != 1.0f;
  const __m512 vscale = _mm512_set1_ps(scale);
#pragma GCC unroll 8
  for (int r = 0; r < kR; ++r) {
    __m512 rm = _mm512_loadu_ps(mx + 16 * r);
#pragma GCC unroll 4
    for (int c = 0; c < NC; ++c) {
      const __m512 v = scaled ? _mm512_mul_ps(acc[r][c], vscale) : acc[r][c];
      _mm512_storeu_ps(s + r * stride + 16 * c, v);
      rm = _mm512_mask_max_ps(rm, Lanes(valid - 16 * c), rm, v);
    }
    _mm512_storeu_ps(mx + 16 * r, rm);
  }
}

// exp(x) on 16 lanes: the same range reduction and polynomial as Exp8 (common.h), 2^n by scalef;
// -inf gives 0.
inline __m512 Exp16(__m512 x) {
  const __mmask16 neg_inf = _mm512_cmp_ps_mask(x, _mm512_set1_ps(-__builtin_inff()), _CMP_EQ_OQ);
  x = _mm512_min_ps(_mm512_max_ps(x, _mm512_set1_ps(-87.0f)), _mm512_set1_ps(88.0f));
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
  __m512 p = _mm512_set1_ps(1.9875691500e-4f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
  p = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), r);
  p = _mm512_add_ps(p, _mm512_set1_ps(1.0f));
  return _mm512_maskz_mov_ps(static_cast<__mmask16>(~neg_inf), _mm512_scalef_ps(p, n));
}

// 2^x for x <= 0 to bf16 accuracy (the bf16 softmax's probabilities, in base 2): x = n + f with
// n = round(x), 2^f by a degree-3 polynomial on [-1/2, 1/2] (relative error < 7.5e-5, far below
// bf16's 2^-9), 2^n by scalef; x below -126 gives 2^-126, a NaN stays NaN.
inline __m512 Exp2NonPositiveForBf16(__m512 x) {
  x = _mm512_max_ps(_mm512_set1_ps(-126.0f), x);  // max returns its second operand for a NaN
  const __m512 n = _mm512_roundscale_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m512 f = _mm512_sub_ps(x, n);
  __m512 p = _mm512_set1_ps(5.517132207751274e-2f);
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(2.4261054396629333e-1f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(6.932609677314758e-1f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(9.999281167984009e-1f));
  return _mm512_scalef_ps(p, n);
}

// The online-softmax step (attention_avx512.h, SoftmaxStep): probabilities in place of the fp32
// scores, or (kBf16) rounded to bf16 into p. With `mx` (the scores already scaled, and each row's
// 16 running maxima from StoreScores) one pass over the scores, else a first pass finds the row's
// maximum. A row holding a NaN score gets m = l = NaN (its output becomes NaN, as the
// reference's) and zero probabilities. kBf16 works in base 2: the caller's scale includes log2(e)
// (scores, m and the correction are log2(e) times the natural ones; p and l are the same), and a
// NaN score shows as a NaN sum (2^x keeps NaNs), with no compare per vector.
template <bool kBf16>
void SoftmaxRows(float* s, uint16_t* p, float* m, float* l, float* o, int64_t rows, int64_t nk, int64_t cols,
                 int64_t dv, float scale, int64_t stride, const float* mx) {
  const __m512 vscale = _mm512_set1_ps(mx ? 1.0f : scale);
  auto zero_row = [&](int64_t i) {
    m[i] = l[i] = __builtin_nanf("");
    for (int64_t j = 0; j < cols; j += 16) {
      if constexpr (kBf16) {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(p + i * stride + j), _mm256_setzero_si256());
      } else {
        _mm512_storeu_ps(s + i * stride + j, _mm512_setzero_ps());
      }
    }
  };
  for (int64_t i = 0; i < rows; ++i) {
    float* si = s + i * stride;
    if (m[i] != m[i]) {
      zero_row(i);
      continue;
    }
    float block_max;
    if (mx) {
      block_max = _mm512_reduce_max_ps(_mm512_loadu_ps(mx + 16 * i));
    } else {
      __m512 vmax = _mm512_set1_ps(-__builtin_inff());
      __mmask16 nan = 0;
      for (int64_t j = 0; j < cols; j += 16) {
        const __mmask16 lanes = Lanes(nk - j);
        const __m512 x = _mm512_mul_ps(_mm512_loadu_ps(si + j), vscale);
        nan |= _mm512_mask_cmp_ps_mask(lanes, x, x, _CMP_UNORD_Q);
        vmax = _mm512_mask_max_ps(vmax, lanes, vmax, x);
      }
      if (nan) {
        zero_row(i);
        continue;
      }
      block_max = _mm512_reduce_max_ps(vmax);
    }
    const float m_new = m[i] > block_max ? m[i] : block_max;
    const __m512 vm = _mm512_set1_ps(m_new);
    __m512 sum = _mm512_setzero_ps();
    float corr;
    if constexpr (kBf16) {
      uint16_t* pi = p + i * stride;
      auto store = [&](int64_t j, __m512 e) {
        sum = _mm512_add_ps(sum, e);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(pi + j), (__m256i)_mm512_cvtneps_pbh(e));
      };
      int64_t j = 0;
      for (; j + 16 <= nk; j += 16) store(j, Exp2NonPositiveForBf16(_mm512_fmsub_ps(_mm512_loadu_ps(si + j), vscale, vm)));
      for (; j < cols; j += 16) {  // the last keys and the padding (0)
        const __m512 x = _mm512_fmsub_ps(_mm512_loadu_ps(si + j), vscale, vm);
        store(j, _mm512_maskz_mov_ps(Lanes(nk - j), Exp2NonPositiveForBf16(x)));
      }
      const float total = _mm512_reduce_add_ps(sum);
      if (total != total) {
        zero_row(i);
        continue;
      }
      corr = __builtin_exp2f(m[i] - m_new);  // m = -inf: 0
      l[i] = l[i] * corr + total;
    } else {
      __mmask16 nan = 0;
      for (int64_t j = 0; j < cols; j += 16) {
        const __mmask16 lanes = Lanes(nk - j);
        const __m512 sv = _mm512_loadu_ps(si + j);
        if (mx) nan |= _mm512_mask_cmp_ps_mask(lanes, sv, sv, _CMP_UNORD_Q);
        const __m512 e = _mm512_maskz_mov_ps(lanes, Exp16(_mm512_fmsub_ps(sv, vscale, vm)));
        sum = _mm512_add_ps(sum, e);
        _mm512_storeu_ps(si + j, e);
      }
      if (nan) {
        zero_row(i);
        continue;
      }
      corr = _mm512_cvtss_f32(Exp16(_mm512_set1_ps(m[i] - m_new)));  // m = -inf: 0
      l[i] = l[i] * corr + _mm512_reduce_add_ps(sum);
    }
    m[i] = m_new;
    if (corr != 1.0f) {
      const __m512 vc = _mm512_set1_ps(corr);
      float* oi = o + i * dv;
      for (int64_t e = 0; e < dv; e += 16) _mm512_storeu_ps(oi + e, _mm512_mul_ps(_mm512_loadu_ps(oi + e), vc));
    }
  }
}

}  // namespace
}  // namespace gcomp::cpu::own::avx512
