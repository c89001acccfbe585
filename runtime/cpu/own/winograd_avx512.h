// The transforms of the bf16 Winograd F(2x2, 3x3) convolution (cpu.onednn.winograd_bf16 in
// runtime/cpu/blas/onednn_kernels.cc, which runs the 16 products between them as one batched
// oneDNN matmul), compiled in winograd_avx512.cc with AVX-512 and AVX512-BF16 enabled; called only
// where the CPU has both.
//
// Tiles: output rows 2ty, 2ty+1 and columns 2tx, 2tx+1 of image n are tile t = (n*th + ty)*tw + tx;
// its 4x4 input window starts at row 2ty - pt, column 2tx - pl (zeros outside the image).
// Winograd-domain arrays hold a block of `rows` tiles from tile `base` as [16][rows][channels],
// point xi*4 + nu first, tile t at row t - base; a call handles the tiles [t0, t1) of the block.
#pragma once

#include <cstdint>

namespace gcomp::cpu::own::avx512 {

struct WinogradTiles {
  int64_t h = 0, w = 0, ho = 0, wo = 0;  // input and output rows / columns
  int64_t pt = 0, pl = 0;                // top and left padding
  int64_t th = 0, tw = 0, count = 0;     // tiles per column / row, tiles in all (T)
};

// V = B^T d B of tiles [t0, t1) of the NHWC bf16 input x with c channels, rounded to bf16.
void WinogradInputTiles(const WinogradTiles& g, const uint16_t* x, int64_t c, int64_t base, int64_t rows, int64_t t0,
                        int64_t t1, uint16_t* v);

// The NHWC bf16 output y (k channels) of tiles [t0, t1) from their f32 products m: A^T M A,
// plus bias (f32 [k], or null), then max(0, .) where relu, rounded to bf16.
void WinogradOutputTiles(const WinogradTiles& g, const float* m, int64_t k, int64_t base, int64_t rows, int64_t t0,
                         int64_t t1, const float* bias, bool relu, uint16_t* y);

}  // namespace gcomp::cpu::own::avx512
