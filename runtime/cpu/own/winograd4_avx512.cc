// The AVX-512 parts of cpu.avx512.winograd4 (winograd_avx2.cc); see winograd_avx512.h. Compiled
// with AVX-512 F/BW/VL/DQ enabled; intrinsics and internal functions only (attention_avx512.cc).
#include <immintrin.h>

#include "runtime/cpu/own/avx512_lanes.h"
#include "runtime/cpu/own/winograd4_transforms.h"
#include "runtime/cpu/own/winograd_avx512.h"

namespace gcomp::cpu::own::avx512 {
namespace {

// AVX-512's vectors for winograd4_transforms.h: 16 f32 lanes, masked at channel tails.
struct Avx512Vec {
  using V = __m512;
  static constexpr int64_t kLanes = 16;
  static V Zero() { return _mm512_setzero_ps(); }
  static V Set1(float f) { return _mm512_set1_ps(f); }
  static V Add(V a, V b) { return _mm512_add_ps(a, b); }
  static V Sub(V a, V b) { return _mm512_sub_ps(a, b); }
  static V Mul(V a, V b) { return _mm512_mul_ps(a, b); }
  static V Fmadd(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
  static V Fnmadd(V a, V b, V c) { return _mm512_fnmadd_ps(a, b, c); }
  static V Max(V a, V b) { return _mm512_max_ps(a, b); }
  static V Load(const float* p, int64_t lanes) {
    if (!p) return _mm512_setzero_ps();
    return lanes == 16 ? _mm512_loadu_ps(p) : _mm512_maskz_loadu_ps(Lanes(lanes), p);
  }
  static void Store(float* p, V v, int64_t lanes) {
    if (lanes == 16) {
      _mm512_storeu_ps(p, v);
    } else {
      _mm512_mask_storeu_ps(p, Lanes(lanes), v);
    }
  }
};

// Rows [0, R) x 16 or 32 columns (kTwo) of M from the rows of V at a (c floats each) and the panel
// rows b0 (and b1), each 16 floats per k; the columns stored in lanes m0 (and m1).
template <int R, bool kTwo>
inline void ProductTile(const float* a, int64_t c, const float* b0, const float* b1, float* y, int64_t ldy,
                        __mmask16 m0, __mmask16 m1) {
  __m512 acc0[R], acc1[R];
#pragma GCC unroll 14
  for (int r = 0; r < R; ++r) acc0[r] = acc1[r] = _mm512_setzero_ps();
#pragma GCC unroll 2
  for (int64_t kk = 0; kk < c; ++kk) {
    const __m512 w0 = _mm512_loadu_ps(b0 + kk * 16);
    const __m512 w1 = kTwo ? _mm512_loadu_ps(b1 + kk * 16) : w0;
#pragma GCC unroll 14
    for (int r = 0; r < R; ++r) {
      const __m512 ar = _mm512_set1_ps(a[r * c + kk]);
      acc0[r] = _mm512_fmadd_ps(ar, w0, acc0[r]);
      if (kTwo) acc1[r] = _mm512_fmadd_ps(ar, w1, acc1[r]);
    }
  }
#pragma GCC unroll 14
  for (int r = 0; r < R; ++r) {
    _mm512_mask_storeu_ps(y + r * ldy, m0, acc0[r]);
    if (kTwo) _mm512_mask_storeu_ps(y + r * ldy + 16, m1, acc1[r]);
  }
}

// The last rows - r0 (R or fewer) rows, one register tile of exactly that many rows.
template <int R, bool kTwo>
inline void ProductTail(int64_t rows, const float* a, int64_t c, const float* b0, const float* b1, float* y,
                        int64_t ldy, __mmask16 m0, __mmask16 m1) {
  if (rows == R) {
    ProductTile<R, kTwo>(a, c, b0, b1, y, ldy, m0, m1);
  } else if constexpr (R > 1) {
    ProductTail<R - 1, kTwo>(rows, a, c, b0, b1, y, ldy, m0, m1);
  }
}

template <bool kTwo>
void ProductRows(const float* a, int64_t rows, int64_t c, const float* b0, const float* b1, float* y, int64_t ldy,
                 __mmask16 m0, __mmask16 m1) {
  int64_t r0 = 0;
  for (; r0 + kProductTileRows <= rows; r0 += kProductTileRows) {
    ProductTile<kProductTileRows, kTwo>(a + r0 * c, c, b0, b1, y + r0 * ldy, ldy, m0, m1);
  }
  ProductTail<kProductTileRows - 1, kTwo>(rows - r0, a + r0 * c, c, b0, b1, y + r0 * ldy, ldy, m0, m1);
}

}  // namespace

void Winograd4InputTiles(const WinogradTiles& g, const float* x, int64_t c, int64_t base, int64_t rows, int64_t t0,
                         int64_t t1, float* v) {
  InputTiles4<Avx512Vec>(g, x, c, base, rows, t0, t1, v);
}

void Winograd4OutputTiles(const WinogradTiles& g, const float* m, int64_t k, int64_t base, int64_t rows, int64_t t0,
                          int64_t t1, const float* bias, bool relu, float* y) {
  OutputTiles4<Avx512Vec>(g, m, k, base, rows, t0, t1, bias, relu, y);
}

void WinogradProducts(const float* vp, const float* up, int64_t rows, int64_t c, int64_t k, int64_t pair, float* mp) {
  const int64_t col = 32 * pair;
  const float* b0 = up + 2 * pair * c * 16;
  const __mmask16 m0 = Lanes(k - col), m1 = Lanes(k - col - 16);
  if (k - col > 16) {  // the pair's second panel exists
    ProductRows<true>(vp, rows, c, b0, b0 + c * 16, mp + col, k, m0, m1);
  } else {
    ProductRows<false>(vp, rows, c, b0, nullptr, mp + col, k, m0, m1);
  }
}

}  // namespace gcomp::cpu::own::avx512
