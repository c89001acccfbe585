// Transforms and vdpbf16ps products of the bf16 Winograd F(2x2, 3x3) convolution; see winograd_avx512.h. Compiled with
// AVX-512 F/BW/VL/DQ/BF16 enabled; intrinsics and internal functions only (attention_avx512.cc).
#include "runtime/cpu/own/winograd_avx512.h"

#include <immintrin.h>

#include <cstring>

#include "runtime/cpu/own/avx512_lanes.h"

namespace gcomp::cpu::own::avx512 {
namespace {

// Rows [0, R) x 16 or 32 columns (kTwo) of M from the bf16 rows of V at a (c values each, c even)
// and the pair panels b0 (and b1): per pair of input channels, 16 output channels x 2 bf16. One
// vdpbf16ps per row and panel adds both channels' products into the fp32 accumulators.
template <int R, bool kTwo>
inline void ProductTileBf16(const uint16_t* a, int64_t c, const uint16_t* b0, const uint16_t* b1, float* y,
                            int64_t ldy, __mmask16 m0, __mmask16 m1) {
  __m512 acc0[R], acc1[R];
#pragma GCC unroll 14
  for (int r = 0; r < R; ++r) acc0[r] = acc1[r] = _mm512_setzero_ps();
#pragma GCC unroll 2
  for (int64_t kk = 0; kk < c; kk += 2) {
    const __m512bh w0 = reinterpret_cast<__m512bh>(_mm512_loadu_si512(b0 + kk * 16));
    const __m512bh w1 = kTwo ? reinterpret_cast<__m512bh>(_mm512_loadu_si512(b1 + kk * 16)) : w0;
#pragma GCC unroll 14
    for (int r = 0; r < R; ++r) {
      int32_t pair;
      std::memcpy(&pair, a + r * c + kk, sizeof(pair));
      const __m512bh ar = reinterpret_cast<__m512bh>(_mm512_set1_epi32(pair));
      acc0[r] = _mm512_dpbf16_ps(acc0[r], ar, w0);
      if (kTwo) acc1[r] = _mm512_dpbf16_ps(acc1[r], ar, w1);
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
inline void ProductTailBf16(int64_t rows, const uint16_t* a, int64_t c, const uint16_t* b0, const uint16_t* b1,
                            float* y, int64_t ldy, __mmask16 m0, __mmask16 m1) {
  if (rows == R) {
    ProductTileBf16<R, kTwo>(a, c, b0, b1, y, ldy, m0, m1);
  } else if constexpr (R > 1) {
    ProductTailBf16<R - 1, kTwo>(rows, a, c, b0, b1, y, ldy, m0, m1);
  }
}

template <bool kTwo>
void ProductRowsBf16(const uint16_t* a, int64_t rows, int64_t c, const uint16_t* b0, const uint16_t* b1, float* y,
                     int64_t ldy, __mmask16 m0, __mmask16 m1) {
  int64_t r0 = 0;
  for (; r0 + kProductTileRows <= rows; r0 += kProductTileRows) {
    ProductTileBf16<kProductTileRows, kTwo>(a + r0 * c, c, b0, b1, y + r0 * ldy, ldy, m0, m1);
  }
  ProductTailBf16<kProductTileRows - 1, kTwo>(rows - r0, a + r0 * c, c, b0, b1, y + r0 * ldy, ldy, m0, m1);
}

}  // namespace

void WinogradProductsBf16(const uint16_t* vp, const uint16_t* up, int64_t rows, int64_t c, int64_t k, int64_t pair,
                          float* mp) {
  const int64_t col = 32 * pair;
  const uint16_t* b0 = up + 2 * pair * c * 16;
  const __mmask16 m0 = Lanes(k - col), m1 = Lanes(k - col - 16);
  if (k - col > 16) {  // the pair's second panel exists
    ProductRowsBf16<true>(vp, rows, c, b0, b0 + c * 16, mp + col, k, m0, m1);
  } else {
    ProductRowsBf16<false>(vp, rows, c, b0, nullptr, mp + col, k, m0, m1);
  }
}

void WinogradInputTiles(const WinogradTiles& g, const uint16_t* x, int64_t c, int64_t base, int64_t rows, int64_t t0,
                        int64_t t1, uint16_t* v) {
  const int64_t plane = rows * c;  // one Winograd point's [rows][c]
  for (int64_t t = t0; t < t1; ++t) {
    const uint16_t* px[4][4];
    WinogradWindow(g, x, c, t, px);
    for (int64_t c0 = 0; c0 < c; c0 += 16) {
      const __mmask16 m = Lanes(c - c0);
      __m512 d[4][4];
      for (int i = 0; i < 4; ++i) {
        for (int j = 0; j < 4; ++j) {
          d[i][j] = px[i][j] ? LoadBf16(px[i][j] + c0, m) : _mm512_setzero_ps();
        }
      }
      // B^T d: rows d0 - d2, d1 + d2, d2 - d1, d1 - d3; then the same on the columns.
      __m512 r[4][4];
      for (int j = 0; j < 4; ++j) {
        r[0][j] = _mm512_sub_ps(d[0][j], d[2][j]);
        r[1][j] = _mm512_add_ps(d[1][j], d[2][j]);
        r[2][j] = _mm512_sub_ps(d[2][j], d[1][j]);
        r[3][j] = _mm512_sub_ps(d[1][j], d[3][j]);
      }
      uint16_t* out = v + (t - base) * c + c0;
      for (int i = 0; i < 4; ++i) {
        StoreBf16(out + (i * 4 + 0) * plane, m, _mm512_sub_ps(r[i][0], r[i][2]));
        StoreBf16(out + (i * 4 + 1) * plane, m, _mm512_add_ps(r[i][1], r[i][2]));
        StoreBf16(out + (i * 4 + 2) * plane, m, _mm512_sub_ps(r[i][2], r[i][1]));
        StoreBf16(out + (i * 4 + 3) * plane, m, _mm512_sub_ps(r[i][1], r[i][3]));
      }
    }
  }
}

void WinogradOutputTiles(const WinogradTiles& g, const float* m, int64_t k, int64_t base, int64_t rows, int64_t t0,
                         int64_t t1, const float* bias, bool relu, uint16_t* y) {
  const int64_t plane = rows * k;
  for (int64_t t = t0; t < t1; ++t) {
    const int64_t n = t / (g.th * g.tw), ty = (t / g.tw) % g.th, tx = t % g.tw;
    const int64_t oy = 2 * ty, ox = 2 * tx;
    const bool row1 = oy + 1 < g.ho, col1 = ox + 1 < g.wo;
    uint16_t* out = y + ((n * g.ho + oy) * g.wo + ox) * k;
    for (int64_t k0 = 0; k0 < k; k0 += 16) {
      const __mmask16 lanes = Lanes(k - k0);
      const float* in = m + (t - base) * k + k0;
      __m512 p[4][4];
      for (int i = 0; i < 4; ++i) {
        for (int j = 0; j < 4; ++j) p[i][j] = _mm512_maskz_loadu_ps(lanes, in + (i * 4 + j) * plane);
      }
      // A^T p: rows p0 + p1 + p2 and p1 - p2 - p3; then the same on the columns.
      __m512 s[2][4];
      for (int j = 0; j < 4; ++j) {
        s[0][j] = _mm512_add_ps(_mm512_add_ps(p[0][j], p[1][j]), p[2][j]);
        s[1][j] = _mm512_sub_ps(_mm512_sub_ps(p[1][j], p[2][j]), p[3][j]);
      }
      const __m512 b = bias ? _mm512_maskz_loadu_ps(lanes, bias + k0) : _mm512_setzero_ps();
      const __m512 zero = _mm512_setzero_ps();
      for (int i = 0; i < 2; ++i) {
        if (i == 1 && !row1) break;
        __m512 o0 = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(s[i][0], s[i][1]), s[i][2]), b);
        __m512 o1 = _mm512_add_ps(_mm512_sub_ps(_mm512_sub_ps(s[i][1], s[i][2]), s[i][3]), b);
        if (relu) {
          o0 = _mm512_max_ps(o0, zero);
          o1 = _mm512_max_ps(o1, zero);
        }
        uint16_t* row = out + i * g.wo * k + k0;
        StoreBf16(row, lanes, o0);
        if (col1) StoreBf16(row + k, lanes, o1);
      }
    }
  }
}

}  // namespace gcomp::cpu::own::avx512
