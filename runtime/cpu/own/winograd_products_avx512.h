// The point GEMMs of the AVX-512 Winograd kernels (winograd_avx512.h: WinogradProducts and
// WinogradProductsBf16), shared by winograd4_avx512.cc (f32 V and U: one FMA per input channel)
// and winograd_avx512.cc (bf16 V and U: one vdpbf16ps per pair of input channels, compiled there
// with AVX512-BF16). Internal linkage: each file keeps its own copy with its own instruction sets.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "runtime/cpu/own/avx512_lanes.h"
#include "runtime/cpu/own/winograd_avx512.h"

namespace gcomp::cpu::own::avx512 {
namespace {

// Input channels per multiply step: 1 for f32, a pair for bf16 (uint16_t).
template <typename T>
inline constexpr int64_t kChannelsPerStep = std::is_same_v<T, float> ? 1 : 2;

// Rows [0, R) x 16 or 32 columns (kTwo) of M from the rows of V at a (c values each) and the panel
// rows b0 (and b1), each 64 bytes per step (16 output channels x 1 f32, or x 2 bf16 input
// channels); the columns stored in lanes m0 (and m1).
template <int R, bool kTwo, typename T>
inline void ProductTile(const T* a, int64_t c, const T* b0, const T* b1, float* y, int64_t ldy, __mmask16 m0,
                        __mmask16 m1) {
  constexpr int64_t kStep = kChannelsPerStep<T>;
  __m512 acc0[R], acc1[R];
#pragma GCC unroll 14
  for (int r = 0; r < R; ++r) acc0[r] = acc1[r] = _mm512_setzero_ps();
#pragma GCC unroll 2
  for (int64_t kk = 0; kk < c; kk += kStep) {
    const __m512 w0 = _mm512_castsi512_ps(_mm512_loadu_si512(b0 + kk * 16));
    const __m512 w1 = kTwo ? _mm512_castsi512_ps(_mm512_loadu_si512(b1 + kk * 16)) : w0;
#pragma GCC unroll 14
    for (int r = 0; r < R; ++r) {
      if constexpr (kStep == 1) {
        const __m512 ar = _mm512_set1_ps(a[r * c + kk]);
        acc0[r] = _mm512_fmadd_ps(ar, w0, acc0[r]);
        if (kTwo) acc1[r] = _mm512_fmadd_ps(ar, w1, acc1[r]);
      } else {
        int32_t pair;
        std::memcpy(&pair, a + r * c + kk, sizeof(pair));
        const __m512bh ar = reinterpret_cast<__m512bh>(_mm512_set1_epi32(pair));
        acc0[r] = _mm512_dpbf16_ps(acc0[r], ar, reinterpret_cast<__m512bh>(w0));
        if (kTwo) acc1[r] = _mm512_dpbf16_ps(acc1[r], ar, reinterpret_cast<__m512bh>(w1));
      }
    }
  }
#pragma GCC unroll 14
  for (int r = 0; r < R; ++r) {
    _mm512_mask_storeu_ps(y + r * ldy, m0, acc0[r]);
    if (kTwo) _mm512_mask_storeu_ps(y + r * ldy + 16, m1, acc1[r]);
  }
}

// The last rows - r0 (R or fewer) rows, one register tile of exactly that many rows.
template <int R, bool kTwo, typename T>
inline void ProductTail(int64_t rows, const T* a, int64_t c, const T* b0, const T* b1, float* y, int64_t ldy,
                        __mmask16 m0, __mmask16 m1) {
  if (rows == R) {
    ProductTile<R, kTwo>(a, c, b0, b1, y, ldy, m0, m1);
  } else if constexpr (R > 1) {
    ProductTail<R - 1, kTwo>(rows, a, c, b0, b1, y, ldy, m0, m1);
  }
}

template <bool kTwo, typename T>
void ProductRows(const T* a, int64_t rows, int64_t c, const T* b0, const T* b1, float* y, int64_t ldy, __mmask16 m0,
                 __mmask16 m1) {
  int64_t r0 = 0;
  for (; r0 + kProductTileRows <= rows; r0 += kProductTileRows) {
    ProductTile<kProductTileRows, kTwo>(a + r0 * c, c, b0, b1, y + r0 * ldy, ldy, m0, m1);
  }
  ProductTail<kProductTileRows - 1, kTwo>(rows - r0, a + r0 * c, c, b0, b1, y + r0 * ldy, ldy, m0, m1);
}

// Columns [32 pair, 32 pair + 32) (those below k) of M_p = V_p x U_p (winograd_avx512.h).
template <typename T>
void PointProducts(const T* vp, const T* up, int64_t rows, int64_t c, int64_t k, int64_t pair, float* mp) {
  const int64_t col = 32 * pair;
  const T* b0 = up + 2 * pair * c * 16;
  const __mmask16 m0 = Lanes(k - col), m1 = Lanes(k - col - 16);
  if (k - col > 16) {  // the pair's second panel exists
    ProductRows<true>(vp, rows, c, b0, b0 + c * 16, mp + col, k, m0, m1);
  } else {
    ProductRows<false>(vp, rows, c, b0, static_cast<const T*>(nullptr), mp + col, k, m0, m1);
  }
}

}  // namespace
}  // namespace gcomp::cpu::own::avx512
