// The bf16 AVX-512 tiles of cpu.attention (vdpbf16ps dot products, the bf16 softmax step); see
// attention_avx512.h. This file is compiled with AVX-512 F/BW/VL/DQ/BF16 enabled and runs only
// where the CPU has AVX512-BF16; intrinsics and internal functions only (attention_avx512.cc).
#include <immintrin.h>

#include "runtime/cpu/own/attention_avx512.h"
#include "runtime/cpu/own/attention_avx512_common.h"

namespace gcomp::cpu::own::avx512 {
namespace {

inline __m512 Bcast32(const uint16_t* pair) {
  int32_t w;
  __builtin_memcpy(&w, pair, 4);
  return _mm512_castsi512_ps(_mm512_set1_epi32(w));
}

inline __m512 Dot(__m512 acc, __m512 a, __m512 b) {
  return _mm512_dpbf16_ps(acc, (__m512bh)a, (__m512bh)b);
}

// The same with bf16 pairs: dq / 2 dot-product steps.
template <int NC>
void ScoreRowsBf16(const uint16_t* q, const uint16_t* kt, float* s, int64_t dq, int64_t stride, float scale,
                   int64_t valid, float* mx) {
  __m512 acc[kR][NC];
#pragma GCC unroll 8
  for (int r = 0; r < kR; ++r)
#pragma GCC unroll 4
    for (int c = 0; c < NC; ++c) acc[r][c] = _mm512_setzero_ps();
  for (int64_t t = 0; t < dq / 2; ++t) {
    __m512 k[NC];
    for (int c = 0; c < NC; ++c) k[c] = _mm512_loadu_ps(reinterpret_cast<const float*>(kt + (t * kKb + 16 * c) * 2));
    for (int r = 0; r < kR; ++r) {
      const __m512 qb = Bcast32(q + r * dq + 2 * t);
      for (int c = 0; c < NC; ++c) acc[r][c] = Dot(acc[r][c], qb, k[c]);
    }
  }
  StoreScores(acc, s, stride, scale, valid, mx);
}

// The same with bf16 pairs of keys.
template <int NC>
void AccumulateRowsBf16(const uint16_t* p, const uint16_t* vt, float* o, int64_t keys, int64_t dv, int64_t e0,
                        int64_t stride) {
  __m512 acc[kR][NC];
  for (int r = 0; r < kR; ++r)
    for (int c = 0; c < NC; ++c) acc[r][c] = _mm512_loadu_ps(o + r * dv + e0 + 16 * c);
  for (int64_t t = 0; t < keys / 2; ++t) {
    __m512 v[NC];
    for (int c = 0; c < NC; ++c)
      v[c] = _mm512_loadu_ps(reinterpret_cast<const float*>(vt + (t * dv + e0 + 16 * c) * 2));
    for (int r = 0; r < kR; ++r) {
      const __m512 pb = Bcast32(p + r * stride + 2 * t);
      for (int c = 0; c < NC; ++c) acc[r][c] = Dot(acc[r][c], pb, v[c]);
    }
  }
  for (int r = 0; r < kR; ++r)
    for (int c = 0; c < NC; ++c) _mm512_storeu_ps(o + r * dv + e0 + 16 * c, acc[r][c]);
}

}  // namespace

void ScoreTileBf16(const uint16_t* q, const uint16_t* kt, float* s, int64_t rows, int64_t cols, int64_t dq,
                   int64_t stride, float scale, int64_t valid, float* mx) {
  ForEachMicroTile(rows, cols, [&](int64_t i, int64_t j, auto c) {
    ScoreRowsBf16<decltype(c)::kVectors>(q + i * dq, kt + 2 * j, s + i * stride + j, dq, stride, scale, valid - j,
                                         mx + 16 * i);
  });
}

void SoftmaxStepBf16(float* s, uint16_t* p, float* m, float* l, float* o, int64_t rows, int64_t nk, int64_t cols,
                     int64_t dv, float scale, int64_t stride, const float* mx) {
  SoftmaxRows<true>(s, p, m, l, o, rows, nk, cols, dv, scale, stride, mx);
}

void StoreScaledBf16(const float* o, float inv, uint16_t* y, int64_t n) {
  const __m512 v = _mm512_set1_ps(inv);
  for (int64_t e = 0; e < n; e += 16) {
    const __mmask16 m = Lanes(n - e);
    StoreBf16(y + e, m, _mm512_mul_ps(_mm512_maskz_loadu_ps(m, o + e), v));
  }
}

void AccumulateTileBf16(const uint16_t* p, const uint16_t* vt, float* o, int64_t rows, int64_t keys, int64_t dv,
                        int64_t stride) {
  ForEachMicroTile(rows, dv, [&](int64_t i, int64_t e, auto c) {
    AccumulateRowsBf16<decltype(c)::kVectors>(p + i * stride, vt, o + i * dv, keys, dv, e, stride);
  });
}

}  // namespace gcomp::cpu::own::avx512
