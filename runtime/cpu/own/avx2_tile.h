// The register tile of the own AVX2 kernels (gemm_avx2.cc: GEMM, conv_avx2.cc: convolution as an
// implicit GEMM): R rows (up to 6) x 16 columns of Y in 12 ymm accumulators, filled from rows of
// f32 A that the caller points at (a GEMM's rows of A, a convolution's input windows) and a panel
// of B (16 f32 columns per k, contiguous), then bias + residual + activation as it leaves the
// registers, stored as f32 or bf16.
//
// Internal linkage: each file that includes it compiles its own copy (the library is built for
// x86-64-v3: AVX2 + FMA).
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "core/epilogue.h"
#include "runtime/cpu/erf_rational.h"

namespace gcomp::cpu::own {
namespace {

constexpr int64_t kTileCols = 16;
constexpr int kTileRows = 6;

// Lanes [0, cols) of a vector of 8 set (cols may be <= 0 or >= 8).
inline __m256i LaneMask(int64_t cols) {
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(std::clamp<int64_t>(cols, 0, 8))), lane);
}

// 8 bf16 values widened to f32; `n` of them from p (the rest 0) where n < 8.
inline __m256 LoadBf16(const uint16_t* p, int64_t n) {
  __m128i h;
  if (n >= 8) {
    h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  } else {
    alignas(16) uint16_t t[8] = {};
    std::memcpy(t, p, static_cast<size_t>(std::max<int64_t>(n, 0)) * 2);
    h = _mm_load_si128(reinterpret_cast<const __m128i*>(t));
  }
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}

// v rounded to bf16 (nearest even; a NaN stays a quiet NaN, as StoreF32 rounds), the first n of the
// 8 stored at p.
inline void StoreBf16(uint16_t* p, __m256 v, int64_t n) {
  const __m256i x = _mm256_castps_si256(v);
  const __m256i one = _mm256_set1_epi32(1);
  const __m256i rounded = _mm256_srli_epi32(
      _mm256_add_epi32(_mm256_add_epi32(x, _mm256_set1_epi32(0x7fff)), _mm256_and_si256(_mm256_srli_epi32(x, 16), one)),
      16);
  const __m256i quiet = _mm256_or_si256(_mm256_srli_epi32(x, 16), _mm256_set1_epi32(0x40));
  const __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(x, _mm256_set1_epi32(0x7fffffff)), _mm256_set1_epi32(0x7f800000));
  const __m256i bits = _mm256_blendv_epi8(rounded, quiet, nan);
  // packus keeps 0..65535 exactly; within each 128-bit lane it interleaves, the permute joins them.
  const __m128i h = _mm256_castsi256_si128(_mm256_permute4x64_epi64(_mm256_packus_epi32(bits, bits), 0x08));
  if (n >= 8) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), h);
  } else if (n > 0) {
    alignas(16) uint16_t t[8];
    _mm_store_si128(reinterpret_cast<__m128i*>(t), h);
    std::memcpy(p, t, static_cast<size_t>(n) * 2);
  }
}

// 0.5 x (1 + erf(x / sqrt 2)), erf as erf_rational.h evaluates it (a NaN stays NaN through the
// product with x).
inline __m256 Gelu(__m256 v) {
  __m256 x = _mm256_mul_ps(v, _mm256_set1_ps(0.70710678118654752f));
  x = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(-4.0f)), _mm256_set1_ps(4.0f));
  return _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(0.5f), v), _mm256_add_ps(_mm256_set1_ps(1.0f), ErfRational(x)));
}

// f(std::integral_constant<int, R>{}) for R = rows (6 down to 1; 1 below): the tile templates are
// instantiated per row count, and the last tile of a column may have fewer than 6 rows.
template <typename F>
inline void WithTileRows(int64_t rows, F&& f) {
  switch (rows) {
    case 6: f(std::integral_constant<int, 6>{}); break;
    case 5: f(std::integral_constant<int, 5>{}); break;
    case 4: f(std::integral_constant<int, 4>{}); break;
    case 3: f(std::integral_constant<int, 3>{}); break;
    case 2: f(std::integral_constant<int, 2>{}); break;
    default: f(std::integral_constant<int, 1>{}); break;
  }
}

template <int R>
struct TileAcc {
  __m256 v[R][2];
  TileAcc() {
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) v[r][0] = v[r][1] = _mm256_setzero_ps();
  }
};

// acc[r] += a[r][0 .. len) x the panel rows b[0 .. len) (16 floats each, 32-byte aligned).
template <int R>
inline void Accumulate(TileAcc<R>& acc, const float* const a[R], int64_t len, const float* b) {
#pragma GCC unroll 2
  for (int64_t kk = 0; kk < len; ++kk, b += kTileCols) {
    const __m256 b0 = _mm256_load_ps(b), b1 = _mm256_load_ps(b + 8);
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) {
      const __m256 ar = _mm256_broadcast_ss(a[r] + kk);
      acc.v[r][0] = _mm256_fmadd_ps(ar, b0, acc.v[r][0]);
      acc.v[r][1] = _mm256_fmadd_ps(ar, b1, acc.v[r][1]);
    }
  }
}

// Where a tile's results go: Y (and the residual Z) row-major with `ld` elements per row, columns
// [0, n) of them written.
struct TileOutput {
  const float* bias = nullptr;     // zero-padded to whole panels, or nullptr
  const void* residual = nullptr;  // Z (f32 or bf16, as Y) or nullptr; may be Y itself
  void* y = nullptr;
  int64_t ld = 0, n = 0;
  Activation act = Activation::kNone;
  float clip_min = 0.0f, clip_max = 0.0f;
};

// Rows [r0, r0 + R) x columns [c0, c0 + 16) of Y from the accumulators: + bias + residual, the
// activation, stored (the columns past n masked off). kBf16: Z and Y bf16.
template <int R, bool kBf16>
inline void StoreTile(const TileAcc<R>& acc, const TileOutput& g, int64_t r0, int64_t c0) {
  const int64_t cols = g.n - c0;
  const bool full = cols >= kTileCols;
  const __m256i m0 = LaneMask(cols), m1 = LaneMask(cols - 8);
  __m256 bias0 = _mm256_setzero_ps(), bias1 = bias0;
  if (g.bias) bias0 = _mm256_load_ps(g.bias + c0), bias1 = _mm256_load_ps(g.bias + c0 + 8);
  const __m256 zero = _mm256_setzero_ps(), lo = _mm256_set1_ps(g.clip_min), hi = _mm256_set1_ps(g.clip_max);
#pragma GCC unroll 6
  for (int r = 0; r < R; ++r) {
    const int64_t at = (r0 + r) * g.ld + c0;
    __m256 v0 = _mm256_add_ps(acc.v[r][0], bias0), v1 = _mm256_add_ps(acc.v[r][1], bias1);
    if (g.residual && kBf16) {
      const uint16_t* z = static_cast<const uint16_t*>(g.residual) + at;
      v0 = _mm256_add_ps(v0, LoadBf16(z, cols));
      v1 = _mm256_add_ps(v1, LoadBf16(z + 8, cols - 8));
    } else if (g.residual) {
      const float* z = static_cast<const float*>(g.residual) + at;
      v0 = _mm256_add_ps(v0, full ? _mm256_loadu_ps(z) : _mm256_maskload_ps(z, m0));
      v1 = _mm256_add_ps(v1, full ? _mm256_loadu_ps(z + 8) : _mm256_maskload_ps(z + 8, m1));
    }
    if (g.act == Activation::kRelu) {  // max(0, x): a NaN stays NaN (maxps returns its second operand)
      v0 = _mm256_max_ps(zero, v0), v1 = _mm256_max_ps(zero, v1);
    } else if (g.act == Activation::kClip) {
      v0 = _mm256_min_ps(hi, _mm256_max_ps(lo, v0)), v1 = _mm256_min_ps(hi, _mm256_max_ps(lo, v1));
    } else if (g.act == Activation::kGelu) {
      v0 = Gelu(v0), v1 = Gelu(v1);
    }
    if (kBf16) {
      uint16_t* y = static_cast<uint16_t*>(g.y) + at;
      StoreBf16(y, v0, cols), StoreBf16(y + 8, v1, cols - 8);
    } else if (full) {
      float* y = static_cast<float*>(g.y) + at;
      _mm256_storeu_ps(y, v0), _mm256_storeu_ps(y + 8, v1);
    } else {
      float* y = static_cast<float*>(g.y) + at;
      _mm256_maskstore_ps(y, m0, v0), _mm256_maskstore_ps(y + 8, m1, v1);
    }
  }
}

}  // namespace
}  // namespace gcomp::cpu::own
