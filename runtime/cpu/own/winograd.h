// Winograd F(2x2, 3x3) transforms for the convolutions of runtime/cpu/blas/onednn_kernels.cc that
// run the 16 products between them as one batched oneDNN matmul, and for cpu.avx2.winograd
// (winograd_avx2.cc): the tile geometry, and the portable f32 transforms (plain loops over the
// channels that the compiler vectorizes for the kernels' x86-64-v3 target: AVX2 + FMA), which read
// and write f32 or bf16 NHWC activations. The bf16 transforms with AVX512-BF16 are in
// winograd_avx512.h. Also the filter transform of F(4x4, 3x3) (WinogradFilter4x4), whose input and
// output transforms are cpu.avx2.winograd4's own (winograd_avx2.cc); WinogradTiles serves it with
// 4x4 output tiles.
//
// Tiles: output rows 2ty, 2ty+1 and columns 2tx, 2tx+1 of image n are tile t = (n*th + ty)*tw + tx;
// its 4x4 input window starts at row 2ty - pt, column 2tx - pl (zeros outside the image).
// Winograd-domain arrays hold a block of `rows` tiles from tile `base` as [16][rows][channels],
// point xi*4 + nu first, tile t at row t - base; a call handles the tiles [t0, t1) of the block.
#pragma once

#include <cstdint>

namespace gcomp::cpu::own {

struct WinogradTiles {
  int64_t h = 0, w = 0, ho = 0, wo = 0;  // input and output rows / columns
  int64_t pt = 0, pl = 0;                // top and left padding
  int64_t th = 0, tw = 0, count = 0;     // tiles per column / row, tiles in all (T)
};

// Internal linkage: winograd.cc, winograd_avx2.cc and winograd_avx512.cc each compile their own copy
// with their own instruction sets.
namespace {

// The 4x4 input window of tile t of the NHWC x (c channels): its pixels' first channels, null for
// padding.
template <typename T>
inline void WinogradWindow(const WinogradTiles& g, const T* x, int64_t c, int64_t t, const T* px[4][4]) {
  const int64_t n = t / (g.th * g.tw), ty = (t / g.tw) % g.th, tx = t % g.tw;
  const int64_t y0 = 2 * ty - g.pt, x0 = 2 * tx - g.pl;
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 4; ++j) {
      const int64_t iy = y0 + i, ix = x0 + j;
      px[i][j] = iy >= 0 && iy < g.h && ix >= 0 && ix < g.w ? x + ((n * g.h + iy) * g.w + ix) * c : nullptr;
    }
  }
}

// U = G g G^T of one 3x3 filter g (row-major), its 16 points in point order (xi*4 + nu).
inline void WinogradFilter(const float* f, float u[16]) {
  float gg[4][3];  // G g
  for (int j = 0; j < 3; ++j) {
    gg[0][j] = f[j];
    gg[1][j] = 0.5f * (f[j] + f[3 + j] + f[6 + j]);
    gg[2][j] = 0.5f * (f[j] - f[3 + j] + f[6 + j]);
    gg[3][j] = f[6 + j];
  }
  for (int i = 0; i < 4; ++i) {
    const float a = gg[i][0], b = gg[i][1], c = gg[i][2];
    u[i * 4 + 0] = a;
    u[i * 4 + 1] = 0.5f * (a + b + c);
    u[i * 4 + 2] = 0.5f * (a - b + c);
    u[i * 4 + 3] = c;
  }
}

// U = G g G^T of one 3x3 filter g (row-major) for F(4x4, 3x3), its 36 points in point order
// (xi*6 + nu). G's rows (interpolation points 0, 1, -1, 2, -2 and infinity): g0 / 4,
// -(g0 + g1 + g2) / 6, -(g0 - g1 + g2) / 6, g0 / 24 + g1 / 12 + g2 / 6, g0 / 24 - g1 / 12 + g2 / 6,
// g2.
inline void WinogradFilter4x4(const float* f, float u[36]) {
  const auto rows = [](float a, float b, float c, float out[6]) {
    out[0] = a / 4.0f;
    out[1] = -(a + b + c) / 6.0f;
    out[2] = -(a - b + c) / 6.0f;
    out[3] = a / 24.0f + b / 12.0f + c / 6.0f;
    out[4] = a / 24.0f - b / 12.0f + c / 6.0f;
    out[5] = c;
  };
  float gg[6][3];  // G g, column by column
  for (int j = 0; j < 3; ++j) {
    float col[6];
    rows(f[j], f[3 + j], f[6 + j], col);
    for (int i = 0; i < 6; ++i) gg[i][j] = col[i];
  }
  for (int i = 0; i < 6; ++i) rows(gg[i][0], gg[i][1], gg[i][2], u + i * 6);
}

}  // namespace

// V = B^T d B in f32 of tiles [t0, t1) of the NHWC input x (f32, or bf16 where `bf16`) with c channels.
void WinogradInputTilesF32(const WinogradTiles& g, bool bf16, const void* x, int64_t c, int64_t base, int64_t rows,
                           int64_t t0, int64_t t1, float* v);

// The NHWC output y (f32, or bf16 where `bf16`; k channels) of tiles [t0, t1) from their f32 products
// m: A^T M A, plus bias (f32 [k], or null), then max(0, .) where relu.
void WinogradOutputTilesF32(const WinogradTiles& g, const float* m, int64_t k, int64_t base, int64_t rows, int64_t t0,
                            int64_t t1, const float* bias, bool relu, bool bf16, void* y);

}  // namespace gcomp::cpu::own
