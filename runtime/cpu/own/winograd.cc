// Portable f32 transforms of the Winograd F(2x2, 3x3) convolution; see winograd.h.
#include "runtime/cpu/own/winograd.h"

#include <algorithm>
#include <cstring>

namespace gcomp::cpu::own {
namespace {

// Channels per pass: the window's 16 rows of kChunk f32 stay in registers or L1.
constexpr int64_t kChunk = 64;

// n channels of one pixel as f32 (zeros for padding: src null).
template <typename T>
inline void Widen(const T* src, int64_t n, float* dst) {
  if (!src) {
    std::fill(dst, dst + n, 0.0f);
  } else if constexpr (sizeof(T) == 4) {
    std::memcpy(dst, src, static_cast<size_t>(n) * 4);
  } else {
    for (int64_t i = 0; i < n; ++i) {
      const uint32_t bits = uint32_t{src[i]} << 16;
      std::memcpy(&dst[i], &bits, 4);
    }
  }
}

// n f32 into T (bf16: round to nearest even, NaN kept quiet), as StoreF32.
template <typename T>
inline void Narrow(const float* src, int64_t n, T* dst) {
  if constexpr (sizeof(T) == 4) {
    std::memcpy(dst, src, static_cast<size_t>(n) * 4);
  } else {
    for (int64_t i = 0; i < n; ++i) {
      uint32_t x;
      std::memcpy(&x, &src[i], 4);
      const uint32_t rounded = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
      dst[i] = static_cast<uint16_t>((x & 0x7fffffffu) > 0x7f800000u ? (x >> 16) | 0x40u : rounded);
    }
  }
}

template <typename T>
void InputTiles(const WinogradTiles& g, const T* x, int64_t c, int64_t base, int64_t rows, int64_t t0, int64_t t1,
                float* v) {
  const int64_t plane = rows * c;  // one Winograd point's [rows][c]
  alignas(64) float d[4][4][kChunk];
  alignas(64) float r[4][4][kChunk];
  for (int64_t t = t0; t < t1; ++t) {
    const T* px[4][4];
    WinogradWindow(g, x, c, t, px);
    for (int64_t c0 = 0; c0 < c; c0 += kChunk) {
      const int64_t nc = std::min(kChunk, c - c0);
      for (int i = 0; i < 4; ++i) {
        for (int j = 0; j < 4; ++j) Widen(px[i][j] ? px[i][j] + c0 : nullptr, nc, d[i][j]);
      }
      // B^T d: rows d0 - d2, d1 + d2, d2 - d1, d1 - d3; then the same on the columns.
      for (int j = 0; j < 4; ++j) {
        for (int64_t q = 0; q < nc; ++q) {
          r[0][j][q] = d[0][j][q] - d[2][j][q];
          r[1][j][q] = d[1][j][q] + d[2][j][q];
          r[2][j][q] = d[2][j][q] - d[1][j][q];
          r[3][j][q] = d[1][j][q] - d[3][j][q];
        }
      }
      float* out = v + (t - base) * c + c0;
      for (int i = 0; i < 4; ++i) {
        float* o0 = out + (i * 4 + 0) * plane;
        float* o1 = out + (i * 4 + 1) * plane;
        float* o2 = out + (i * 4 + 2) * plane;
        float* o3 = out + (i * 4 + 3) * plane;
        for (int64_t q = 0; q < nc; ++q) {
          o0[q] = r[i][0][q] - r[i][2][q];
          o1[q] = r[i][1][q] + r[i][2][q];
          o2[q] = r[i][2][q] - r[i][1][q];
          o3[q] = r[i][1][q] - r[i][3][q];
        }
      }
    }
  }
}

template <typename T>
void OutputTiles(const WinogradTiles& g, const float* m, int64_t k, int64_t base, int64_t rows, int64_t t0, int64_t t1,
                 const float* bias, bool relu, T* y) {
  const int64_t plane = rows * k;
  alignas(64) float s[2][4][kChunk];
  alignas(64) float o[2][2][kChunk];
  for (int64_t t = t0; t < t1; ++t) {
    const int64_t n = t / (g.th * g.tw), ty = (t / g.tw) % g.th, tx = t % g.tw;
    const int64_t oy = 2 * ty, ox = 2 * tx;
    const bool row1 = oy + 1 < g.ho, col1 = ox + 1 < g.wo;
    T* out = y + ((n * g.ho + oy) * g.wo + ox) * k;
    for (int64_t k0 = 0; k0 < k; k0 += kChunk) {
      const int64_t nk = std::min(kChunk, k - k0);
      const float* in = m + (t - base) * k + k0;
      // A^T p: rows p0 + p1 + p2 and p1 - p2 - p3; then the same on the columns.
      for (int j = 0; j < 4; ++j) {
        const float* p0 = in + (0 * 4 + j) * plane;
        const float* p1 = in + (1 * 4 + j) * plane;
        const float* p2 = in + (2 * 4 + j) * plane;
        const float* p3 = in + (3 * 4 + j) * plane;
        for (int64_t q = 0; q < nk; ++q) {
          s[0][j][q] = p0[q] + p1[q] + p2[q];
          s[1][j][q] = p1[q] - p2[q] - p3[q];
        }
      }
      for (int i = 0; i < 2; ++i) {
        for (int64_t q = 0; q < nk; ++q) {
          const float b = bias ? bias[k0 + q] : 0.0f;
          float a0 = s[i][0][q] + s[i][1][q] + s[i][2][q] + b;
          float a1 = s[i][1][q] - s[i][2][q] - s[i][3][q] + b;
          if (relu) {
            a0 = a0 > 0.0f ? a0 : 0.0f;
            a1 = a1 > 0.0f ? a1 : 0.0f;
          }
          o[i][0][q] = a0;
          o[i][1][q] = a1;
        }
      }
      for (int i = 0; i < 2; ++i) {
        if (i == 1 && !row1) break;
        T* row = out + i * g.wo * k + k0;
        Narrow(o[i][0], nk, row);
        if (col1) Narrow(o[i][1], nk, row + k);
      }
    }
  }
}

}  // namespace

void WinogradInputTilesF32(const WinogradTiles& g, bool bf16, const void* x, int64_t c, int64_t base, int64_t rows,
                           int64_t t0, int64_t t1, float* v) {
  if (bf16) {
    InputTiles(g, static_cast<const uint16_t*>(x), c, base, rows, t0, t1, v);
  } else {
    InputTiles(g, static_cast<const float*>(x), c, base, rows, t0, t1, v);
  }
}

void WinogradOutputTilesF32(const WinogradTiles& g, const float* m, int64_t k, int64_t base, int64_t rows, int64_t t0,
                            int64_t t1, const float* bias, bool relu, bool bf16, void* y) {
  if (bf16) {
    OutputTiles(g, m, k, base, rows, t0, t1, bias, relu, static_cast<uint16_t*>(y));
  } else {
    OutputTiles(g, m, k, base, rows, t0, t1, bias, relu, static_cast<float*>(y));
  }
}

}  // namespace gcomp::cpu::own
