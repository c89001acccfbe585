// The input and output transforms of Winograd F(4x4, 3x3) on vectors of channels, for
// cpu.avx2.winograd4 (winograd_avx2.cc: 8 lanes of AVX2) and cpu.avx512.winograd4
// (winograd4_avx512.cc: 16 lanes of AVX-512). `Vec` is the instruction set's vector:
//   V; kLanes; Zero(); Set1(float); Add, Sub, Mul(a, b); Fmadd(a, b, c) = a b + c;
//   Fnmadd(a, b, c) = c - a b; Max(a, b) (the second operand where either is NaN, as maxps);
//   Load(const T* p, lanes) (T float, or uint16_t for bf16 widened; p null: zeros) and
//   Store(T* p, v, lanes), each of `lanes` (1..kLanes) channels.
// The tiles and the Winograd-domain arrays are as in winograd.h, with 4x4 output tiles, 6x6 input
// windows and 36 points (xi*6 + nu).
//
// Internal linkage: each file that includes it compiles its own copy with its own instruction sets.
#pragma once

#include <algorithm>
#include <cstdint>

#include "runtime/cpu/own/winograd.h"

namespace gcomp::cpu::own {
namespace {

// B^T (6x6) on six vectors d0..d5:
//   4 d0 - 5 d2 + d4,  (d3 + d4) - 4 (d1 + d2),  (d4 - d3) + 4 (d1 - d2),
//   (d4 - d2) + 2 (d3 - d1),  (d4 - d2) - 2 (d3 - d1),  4 d1 - 5 d3 + d5.
template <typename Vec>
inline void InputRows4(const typename Vec::V d[6], typename Vec::V r[6]) {
  using V = typename Vec::V;
  const V four = Vec::Set1(4.0f), five = Vec::Set1(5.0f), two = Vec::Set1(2.0f);
  r[0] = Vec::Fmadd(four, d[0], Vec::Fnmadd(five, d[2], d[4]));
  const V a = Vec::Fnmadd(four, d[2], d[4]), b = Vec::Fnmadd(four, d[1], d[3]);
  r[1] = Vec::Add(a, b);
  r[2] = Vec::Sub(a, b);
  const V e = Vec::Sub(d[4], d[2]), f = Vec::Mul(two, Vec::Sub(d[3], d[1]));
  r[3] = Vec::Add(e, f);
  r[4] = Vec::Sub(e, f);
  r[5] = Vec::Fmadd(four, d[1], Vec::Fnmadd(five, d[3], d[5]));
}

// A^T (4x6) on six vectors m0..m5: m0 + (m1 + m2) + (m3 + m4),  (m1 - m2) + 2 (m3 - m4),
// (m1 + m2) + 4 (m3 + m4),  (m1 - m2) + 8 (m3 - m4) + m5.
template <typename Vec>
inline void OutputRows4(const typename Vec::V m[6], typename Vec::V o[4]) {
  using V = typename Vec::V;
  const V s12 = Vec::Add(m[1], m[2]), d12 = Vec::Sub(m[1], m[2]);
  const V s34 = Vec::Add(m[3], m[4]), d34 = Vec::Sub(m[3], m[4]);
  o[0] = Vec::Add(Vec::Add(m[0], s12), s34);
  o[1] = Vec::Fmadd(Vec::Set1(2.0f), d34, d12);
  o[2] = Vec::Fmadd(Vec::Set1(4.0f), s34, s12);
  o[3] = Vec::Add(Vec::Fmadd(Vec::Set1(8.0f), d34, d12), m[5]);
}

// V of tiles [t0, t1) of the block from `base` ([36][rows][c]): B^T d B of their 6x6 windows of the
// NHWC x (c channels; zeros outside the image).
template <typename Vec, typename T>
void InputTiles4(const WinogradTiles& g, const T* x, int64_t c, int64_t base, int64_t rows, int64_t t0, int64_t t1,
                 float* v) {
  using V = typename Vec::V;
  const int64_t plane = rows * c;
  for (int64_t t = t0; t < t1; ++t) {
    const int64_t n = t / (g.th * g.tw), y0 = 4 * ((t / g.tw) % g.th) - g.pt, x0 = 4 * (t % g.tw) - g.pl;
    const T* px[6][6];
    for (int i = 0; i < 6; ++i) {
      for (int j = 0; j < 6; ++j) {
        const int64_t iy = y0 + i, ix = x0 + j;
        px[i][j] = iy >= 0 && iy < g.h && ix >= 0 && ix < g.w ? x + ((n * g.h + iy) * g.w + ix) * c : nullptr;
      }
    }
    float* out = v + (t - base) * c;
    for (int64_t c0 = 0; c0 < c; c0 += Vec::kLanes) {
      const int64_t lanes = std::min<int64_t>(Vec::kLanes, c - c0);
      V r[6][6];  // B^T d: r[i][j] is row i of column j
      for (int j = 0; j < 6; ++j) {
        V d[6], col[6];
        for (int i = 0; i < 6; ++i) d[i] = Vec::Load(px[i][j] ? px[i][j] + c0 : nullptr, lanes);
        InputRows4<Vec>(d, col);
        for (int i = 0; i < 6; ++i) r[i][j] = col[i];
      }
      for (int i = 0; i < 6; ++i) {
        V row[6];
        InputRows4<Vec>(r[i], row);
        for (int j = 0; j < 6; ++j) Vec::Store(out + (i * 6 + j) * plane + c0, row[j], lanes);
      }
    }
  }
}

// Y of tiles [t0, t1) from their products m ([36][rows][k]): A^T M A + bias (zero-padded to a
// multiple of kLanes channels), ReLU where relu; the pixels past the image's edge left out.
template <typename Vec, typename T>
void OutputTiles4(const WinogradTiles& g, const float* m, int64_t k, int64_t base, int64_t rows, int64_t t0, int64_t t1,
                  const float* bias, bool relu, T* y) {
  using V = typename Vec::V;
  const int64_t plane = rows * k;
  const V zero = Vec::Zero();
  for (int64_t t = t0; t < t1; ++t) {
    const int64_t n = t / (g.th * g.tw), oy = 4 * ((t / g.tw) % g.th), ox = 4 * (t % g.tw);
    const int64_t out_rows = std::min<int64_t>(4, g.ho - oy), out_cols = std::min<int64_t>(4, g.wo - ox);
    const float* in = m + (t - base) * k;
    T* out = y + ((n * g.ho + oy) * g.wo + ox) * k;
    for (int64_t k0 = 0; k0 < k; k0 += Vec::kLanes) {
      const int64_t lanes = std::min<int64_t>(Vec::kLanes, k - k0);
      V s[4][6];  // A^T M: s[i][j] is row i of column j
      for (int j = 0; j < 6; ++j) {
        V p[6], col[4];
        for (int i = 0; i < 6; ++i) p[i] = Vec::Load(in + (i * 6 + j) * plane + k0, lanes);  // M's rows are k long
        OutputRows4<Vec>(p, col);
        for (int i = 0; i < 4; ++i) s[i][j] = col[i];
      }
      const V b = Vec::Load(bias + k0, Vec::kLanes);
      for (int64_t i = 0; i < out_rows; ++i) {
        V o[4];
        OutputRows4<Vec>(s[i], o);
        for (int64_t j = 0; j < out_cols; ++j) {
          V val = Vec::Add(o[j], b);
          if (relu) val = Vec::Max(zero, val);
          Vec::Store(out + (i * g.wo + j) * k + k0, val, lanes);
        }
      }
    }
  }
}

}  // namespace
}  // namespace gcomp::cpu::own
