// Transforms and vdpbf16ps products of the bf16 Winograd F(2x2, 3x3) convolution; see
// winograd_avx512.h. Compiled with AVX-512 F/BW/VL/DQ/BF16 enabled; intrinsics and internal
// functions only (attention_avx512.cc).
#include "runtime/cpu/own/winograd_avx512.h"

#include <immintrin.h>

#include "runtime/cpu/own/avx512_lanes.h"
#include "runtime/cpu/own/winograd_products_avx512.h"

namespace gcomp::cpu::own::avx512 {

void WinogradProductsBf16(const uint16_t* vp, const uint16_t* up, int64_t rows, int64_t c, int64_t k, int64_t pair,
                          float* mp) {
  PointProducts(vp, up, rows, c, k, pair, mp);
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
