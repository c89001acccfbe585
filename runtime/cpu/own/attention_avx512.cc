// The fp32 AVX-512 tiles of cpu.attention and the bf16 V packing; see attention_avx512.h. This file
// is compiled with AVX-512 F/BW/VL/DQ enabled (not BF16: it also runs on AVX-512 CPUs without it).
// It uses intrinsics and internal functions only, so that no inline library code is emitted here
// with instructions other CPUs lack (the linker could keep that copy for the whole program).
#include <immintrin.h>

#include "runtime/cpu/own/attention_avx512.h"
#include "runtime/cpu/own/attention_avx512_common.h"

namespace gcomp::cpu::own::avx512 {
namespace {

// kR rows x NC*16 columns of s = q kt, reduction over d (fp32).
template <int NC>
void ScoreRowsF32(const float* q, const float* kt, float* s, int64_t d, int64_t stride, int64_t valid, float* mx) {
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
  StoreScores(acc, s, stride, 1.0f, valid, mx);
}

// kR rows x NC*16 columns of o += p vt (fp32), columns from e0 of rows of dv.
template <int NC>
void AccumulateRowsF32(const float* p, const float* vt, float* o, int64_t keys, int64_t dv, int64_t e0,
                       int64_t stride) {
  __m512 acc[kR][NC];
  for (int r = 0; r < kR; ++r)
    for (int c = 0; c < NC; ++c) acc[r][c] = _mm512_loadu_ps(o + r * dv + e0 + 16 * c);
  for (int64_t j = 0; j < keys; ++j) {
    __m512 v[NC];
    for (int c = 0; c < NC; ++c) v[c] = _mm512_loadu_ps(vt + j * dv + e0 + 16 * c);
    for (int r = 0; r < kR; ++r) {
      const __m512 pb = _mm512_set1_ps(p[r * stride + j]);
      for (int c = 0; c < NC; ++c) acc[r][c] = _mm512_fmadd_ps(pb, v[c], acc[r][c]);
    }
  }
  for (int r = 0; r < kR; ++r)
    for (int c = 0; c < NC; ++c) _mm512_storeu_ps(o + r * dv + e0 + 16 * c, acc[r][c]);
}

}  // namespace

void ScoreTileF32(const float* q, const float* kt, float* s, int64_t rows, int64_t cols, int64_t d, int64_t stride,
                  int64_t valid, float* mx) {
  ForEachMicroTile(rows, cols, [&](int64_t i, int64_t j, auto c) {
    ScoreRowsF32<decltype(c)::kVectors>(q + i * d, kt + j, s + i * stride + j, d, stride, valid - j, mx + 16 * i);
  });
}

void SoftmaxStep(float* s, float* m, float* l, float* o, int64_t rows, int64_t nk, int64_t cols, int64_t dv,
                 float scale, int64_t stride, const float* mx) {
  SoftmaxRows<false>(s, nullptr, m, l, o, rows, nk, cols, dv, scale, stride, mx);
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

void TransposeKeys16(const uint32_t* const rows[16], int64_t words, uint32_t* out, int64_t out_stride) {
  for (int64_t w0 = 0; w0 < words; w0 += 16) {
    const __mmask16 m = Lanes(words - w0);
    __m512i r[16], t[16];
    for (int i = 0; i < 16; ++i) r[i] = rows[i] ? _mm512_maskz_loadu_epi32(m, rows[i] + w0) : _mm512_setzero_si512();
    // Per 128-bit lane L: t[2i] = (r[2i][4L], r[2i+1][4L], r[2i][4L+1], r[2i+1][4L+1]), t[2i+1] the
    // same for words 4L+2, 4L+3.
    for (int i = 0; i < 8; ++i) {
      t[2 * i] = _mm512_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
      t[2 * i + 1] = _mm512_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
    }
    // r[4g + c], lane L: word 4L + c of rows 4g..4g+3.
    for (int g = 0; g < 4; ++g) {
      r[4 * g] = _mm512_unpacklo_epi64(t[4 * g], t[4 * g + 2]);
      r[4 * g + 1] = _mm512_unpackhi_epi64(t[4 * g], t[4 * g + 2]);
      r[4 * g + 2] = _mm512_unpacklo_epi64(t[4 * g + 1], t[4 * g + 3]);
      r[4 * g + 3] = _mm512_unpackhi_epi64(t[4 * g + 1], t[4 * g + 3]);
    }
    // Word 4L + c of all 16 rows: lane L of r[c], r[4 + c], r[8 + c], r[12 + c].
    for (int c = 0; c < 4; ++c) {
      const __m512i x0 = _mm512_shuffle_i32x4(r[c], r[4 + c], 0x44), x1 = _mm512_shuffle_i32x4(r[c], r[4 + c], 0xEE);
      const __m512i y0 = _mm512_shuffle_i32x4(r[8 + c], r[12 + c], 0x44);
      const __m512i y1 = _mm512_shuffle_i32x4(r[8 + c], r[12 + c], 0xEE);
      const __m512i col[4] = {_mm512_shuffle_i32x4(x0, y0, 0x88), _mm512_shuffle_i32x4(x0, y0, 0xDD),
                              _mm512_shuffle_i32x4(x1, y1, 0x88), _mm512_shuffle_i32x4(x1, y1, 0xDD)};
      for (int l = 0; l < 4; ++l) {
        const int64_t w = w0 + 4 * l + c;
        if (w < words) _mm512_storeu_si512(out + w * out_stride, col[l]);
      }
    }
  }
}

void AccumulateTileF32(const float* p, const float* vt, float* o, int64_t rows, int64_t keys, int64_t dv,
                       int64_t stride) {
  ForEachMicroTile(rows, dv, [&](int64_t i, int64_t e, auto c) {
    AccumulateRowsF32<decltype(c)::kVectors>(p + i * stride, vt, o + i * dv, keys, dv, e, stride);
  });
}

}  // namespace gcomp::cpu::own::avx512
