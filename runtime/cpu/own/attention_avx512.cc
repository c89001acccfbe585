// AVX-512 tiles of cpu.attention; see attention_avx512.h. This file alone is compiled with
// AVX-512 (F/BW/VL/DQ/BF16) enabled. It uses intrinsics and internal functions only, so that no
// inline library code is emitted here with instructions other CPUs lack (the linker could keep
// that copy for the whole program).
#include "runtime/cpu/own/attention_avx512.h"

#include <immintrin.h>

namespace gcomp::cpu::own::avx512 {
namespace {

constexpr int64_t kR = kAttentionRows;
constexpr int64_t kKb = kAttentionKeyBlock;

// Lanes [0, n) of 16.
inline __mmask16 Lanes(int64_t n) {
  return n >= 16 ? static_cast<__mmask16>(0xFFFF) : n <= 0 ? static_cast<__mmask16>(0)
                                                           : static_cast<__mmask16>((1u << n) - 1);
}

inline __m512 Bcast32(const uint16_t* pair) {
  int32_t w;
  __builtin_memcpy(&w, pair, 4);
  return _mm512_castsi512_ps(_mm512_set1_epi32(w));
}

inline __m512 Dot(__m512 acc, __m512 a, __m512 b) {
  return _mm512_dpbf16_ps(acc, (__m512bh)a, (__m512bh)b);
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

// exp(x) for x <= 0 (softmax arguments: scores minus their running max) to bf16 accuracy: the
// same range reduction, a degree-4 polynomial (relative error < 5e-6, far below bf16's 2^-9),
// 2^n by scalef; x below -87 gives exp(-87).
inline __m512 ExpNonPositiveForBf16(__m512 x) {
  x = _mm512_max_ps(x, _mm512_set1_ps(-87.0f));
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693147180559945f), x);
  __m512 p = _mm512_set1_ps(4.1944388e-2f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6686983e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.9999145e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(9.9999744e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  return _mm512_scalef_ps(p, n);
}

// kR rows x NC*16 columns of s = q kt, reduction over d (fp32).
template <int NC>
void ScoreRowsF32(const float* q, const float* kt, float* s, int64_t d) {
  __m512 acc[kR][NC];
  for (int r = 0; r < kR; ++r)
    for (int c = 0; c < NC; ++c) acc[r][c] = _mm512_setzero_ps();
  for (int64_t e = 0; e < d; ++e) {
    __m512 k[NC];
    for (int c = 0; c < NC; ++c) k[c] = _mm512_loadu_ps(kt + e * kKb + 16 * c);
    for (int r = 0; r < kR; ++r) {
      const __m512 qb = _mm512_set1_ps(q[r * d + e]);
      for (int c = 0; c < NC; ++c) acc[r][c] = _mm512_fmadd_ps(qb, k[c], acc[r][c]);
    }
  }
  for (int r = 0; r < kR; ++r)
    for (int c = 0; c < NC; ++c) _mm512_storeu_ps(s + r * kKb + 16 * c, acc[r][c]);
}

// The same with bf16 pairs: dq / 2 dot-product steps.
template <int NC>
void ScoreRowsBf16(const uint16_t* q, const uint16_t* kt, float* s, int64_t dq) {
  __m512 acc[kR][NC];
  for (int r = 0; r < kR; ++r)
    for (int c = 0; c < NC; ++c) acc[r][c] = _mm512_setzero_ps();
  for (int64_t t = 0; t < dq / 2; ++t) {
    __m512 k[NC];
    for (int c = 0; c < NC; ++c) k[c] = _mm512_loadu_ps(reinterpret_cast<const float*>(kt + (t * kKb + 16 * c) * 2));
    for (int r = 0; r < kR; ++r) {
      const __m512 qb = Bcast32(q + r * dq + 2 * t);
      for (int c = 0; c < NC; ++c) acc[r][c] = Dot(acc[r][c], qb, k[c]);
    }
  }
  for (int r = 0; r < kR; ++r)
    for (int c = 0; c < NC; ++c) _mm512_storeu_ps(s + r * kKb + 16 * c, acc[r][c]);
}

// kR rows x NC*16 columns of o += p vt (fp32), columns from e0 of rows of dv.
template <int NC>
void AccumulateRowsF32(const float* p, const float* vt, float* o, int64_t keys, int64_t dv, int64_t e0) {
  __m512 acc[kR][NC];
  for (int r = 0; r < kR; ++r)
    for (int c = 0; c < NC; ++c) acc[r][c] = _mm512_loadu_ps(o + r * dv + e0 + 16 * c);
  for (int64_t j = 0; j < keys; ++j) {
    __m512 v[NC];
    for (int c = 0; c < NC; ++c) v[c] = _mm512_loadu_ps(vt + j * dv + e0 + 16 * c);
    for (int r = 0; r < kR; ++r) {
      const __m512 pb = _mm512_set1_ps(p[r * kKb + j]);
      for (int c = 0; c < NC; ++c) acc[r][c] = _mm512_fmadd_ps(pb, v[c], acc[r][c]);
    }
  }
  for (int r = 0; r < kR; ++r)
    for (int c = 0; c < NC; ++c) _mm512_storeu_ps(o + r * dv + e0 + 16 * c, acc[r][c]);
}

// The same with bf16 pairs of keys.
template <int NC>
void AccumulateRowsBf16(const uint16_t* p, const uint16_t* vt, float* o, int64_t keys, int64_t dv, int64_t e0) {
  __m512 acc[kR][NC];
  for (int r = 0; r < kR; ++r)
    for (int c = 0; c < NC; ++c) acc[r][c] = _mm512_loadu_ps(o + r * dv + e0 + 16 * c);
  for (int64_t t = 0; t < keys / 2; ++t) {
    __m512 v[NC];
    for (int c = 0; c < NC; ++c)
      v[c] = _mm512_loadu_ps(reinterpret_cast<const float*>(vt + (t * dv + e0 + 16 * c) * 2));
    for (int r = 0; r < kR; ++r) {
      const __m512 pb = Bcast32(p + r * kKb + 2 * t);
      for (int c = 0; c < NC; ++c) acc[r][c] = Dot(acc[r][c], pb, v[c]);
    }
  }
  for (int r = 0; r < kR; ++r)
    for (int c = 0; c < NC; ++c) _mm512_storeu_ps(o + r * dv + e0 + 16 * c, acc[r][c]);
}

}  // namespace

void ScoreTileF32(const float* q, const float* kt, float* s, int64_t rows, int64_t cols, int64_t d) {
  for (int64_t i = 0; i < rows; i += kR) {
    const float* qi = q + i * d;
    float* si = s + i * kKb;
    for (int64_t j = 0; j < cols; j += 64) {
      switch ((cols - j) >= 64 ? 4 : (cols - j) / 16) {
        case 4: ScoreRowsF32<4>(qi, kt + j, si + j, d); break;
        case 3: ScoreRowsF32<3>(qi, kt + j, si + j, d); break;
        case 2: ScoreRowsF32<2>(qi, kt + j, si + j, d); break;
        default: ScoreRowsF32<1>(qi, kt + j, si + j, d); break;
      }
    }
  }
}

void ScoreTileBf16(const uint16_t* q, const uint16_t* kt, float* s, int64_t rows, int64_t cols, int64_t dq) {
  for (int64_t i = 0; i < rows; i += kR) {
    const uint16_t* qi = q + i * dq;
    float* si = s + i * kKb;
    for (int64_t j = 0; j < cols; j += 64) {
      switch ((cols - j) >= 64 ? 4 : (cols - j) / 16) {
        case 4: ScoreRowsBf16<4>(qi, kt + 2 * j, si + j, dq); break;
        case 3: ScoreRowsBf16<3>(qi, kt + 2 * j, si + j, dq); break;
        case 2: ScoreRowsBf16<2>(qi, kt + 2 * j, si + j, dq); break;
        default: ScoreRowsBf16<1>(qi, kt + 2 * j, si + j, dq); break;
      }
    }
  }
}

void SoftmaxStep(float* s, uint16_t* p, float* m, float* l, float* o, int64_t rows, int64_t nk, int64_t cols,
                 int64_t dv, float scale, int64_t stride) {
  const __m512 vscale = _mm512_set1_ps(scale);
  for (int64_t i = 0; i < rows; ++i) {
    float* si = s + i * stride;
    __m512 vmax = _mm512_set1_ps(-__builtin_inff());
    for (int64_t j = 0; j < cols; j += 16) {
      vmax = _mm512_mask_max_ps(vmax, Lanes(nk - j), vmax, _mm512_mul_ps(_mm512_loadu_ps(si + j), vscale));
    }
    const float block_max = _mm512_reduce_max_ps(vmax);
    const float m_new = m[i] > block_max ? m[i] : block_max;
    const float corr = _mm512_cvtss_f32(Exp16(_mm512_set1_ps(m[i] - m_new)));  // m = -inf: 0
    const __m512 vm = _mm512_set1_ps(m_new);
    __m512 sum = _mm512_setzero_ps();
    for (int64_t j = 0; j < cols; j += 16) {
      const __m512 x = _mm512_fmsub_ps(_mm512_loadu_ps(si + j), vscale, vm);
      const __m512 e = _mm512_maskz_mov_ps(Lanes(nk - j), p ? ExpNonPositiveForBf16(x) : Exp16(x));
      sum = _mm512_add_ps(sum, e);
      if (p) {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(p + i * stride + j), (__m256i)_mm512_cvtneps_pbh(e));
      } else {
        _mm512_storeu_ps(si + j, e);
      }
    }
    l[i] = l[i] * corr + _mm512_reduce_add_ps(sum);
    m[i] = m_new;
    if (corr != 1.0f) {
      const __m512 vc = _mm512_set1_ps(corr);
      float* oi = o + i * dv;
      for (int64_t e = 0; e < dv; e += 16) _mm512_storeu_ps(oi + e, _mm512_mul_ps(_mm512_loadu_ps(oi + e), vc));
    }
  }
}

void PackValuePairs(const uint16_t* a, const uint16_t* b, uint16_t* out, int64_t n) {
  // Output lanes 2i and 2i+1 take element i of a and of b (b's elements are indices 32 and up).
  alignas(64) static constexpr uint16_t kLo[32] = {0, 32, 1, 33, 2, 34, 3, 35, 4, 36, 5, 37, 6, 38, 7, 39,
                                                  8, 40, 9, 41, 10, 42, 11, 43, 12, 44, 13, 45, 14, 46, 15, 47};
  alignas(64) static constexpr uint16_t kHi[32] = {16, 48, 17, 49, 18, 50, 19, 51, 20, 52, 21, 53, 22, 54, 23, 55,
                                                  24, 56, 25, 57, 26, 58, 27, 59, 28, 60, 29, 61, 30, 62, 31, 63};
  const __m512i lo = _mm512_load_si512(kLo), hi = _mm512_load_si512(kHi);
  for (int64_t e = 0; e < n; e += 32) {
    const int64_t left = n - e;
    const __mmask32 m = left >= 32 ? ~__mmask32{0} : static_cast<__mmask32>((1u << left) - 1);
    const __m512i va = _mm512_maskz_loadu_epi16(m, a + e);
    const __m512i vb = b ? _mm512_maskz_loadu_epi16(m, b + e) : _mm512_setzero_si512();
    // 2 * left output elements: the first 32 from the low half, the rest from the high half.
    const __mmask32 m_lo = left >= 16 ? ~__mmask32{0} : static_cast<__mmask32>((1u << (2 * left)) - 1);
    _mm512_mask_storeu_epi16(out + 2 * e, m_lo, _mm512_permutex2var_epi16(va, lo, vb));
    if (left > 16) {
      const __mmask32 m_hi = left >= 32 ? ~__mmask32{0} : static_cast<__mmask32>((1u << (2 * (left - 16))) - 1);
      _mm512_mask_storeu_epi16(out + 2 * e + 32, m_hi, _mm512_permutex2var_epi16(va, hi, vb));
    }
  }
}

void AccumulateTileF32(const float* p, const float* vt, float* o, int64_t rows, int64_t keys, int64_t dv) {
  for (int64_t i = 0; i < rows; i += kR) {
    for (int64_t e = 0; e < dv; e += 64) {
      switch ((dv - e) >= 64 ? 4 : (dv - e) / 16) {
        case 4: AccumulateRowsF32<4>(p + i * kKb, vt, o + i * dv, keys, dv, e); break;
        case 3: AccumulateRowsF32<3>(p + i * kKb, vt, o + i * dv, keys, dv, e); break;
        case 2: AccumulateRowsF32<2>(p + i * kKb, vt, o + i * dv, keys, dv, e); break;
        default: AccumulateRowsF32<1>(p + i * kKb, vt, o + i * dv, keys, dv, e); break;
      }
    }
  }
}

void AccumulateTileBf16(const uint16_t* p, const uint16_t* vt, float* o, int64_t rows, int64_t keys, int64_t dv) {
  for (int64_t i = 0; i < rows; i += kR) {
    for (int64_t e = 0; e < dv; e += 64) {
      switch ((dv - e) >= 64 ? 4 : (dv - e) / 16) {
        case 4: AccumulateRowsBf16<4>(p + i * kKb, vt, o + i * dv, keys, dv, e); break;
        case 3: AccumulateRowsBf16<3>(p + i * kKb, vt, o + i * dv, keys, dv, e); break;
        case 2: AccumulateRowsBf16<2>(p + i * kKb, vt, o + i * dv, keys, dv, e); break;
        default: AccumulateRowsBf16<1>(p + i * kKb, vt, o + i * dv, keys, dv, e); break;
      }
    }
  }
}

}  // namespace gcomp::cpu::own::avx512
