// The transforms of the bf16 Winograd F(2x2, 3x3) convolution and its vdpbf16ps products
// (cpu.avx512.winograd_bf16 in winograd_avx2.cc; cpu.onednn.winograd_bf16 in
// runtime/cpu/blas/onednn_kernels.cc runs the same transforms around a batched oneDNN matmul),
// compiled in winograd_avx512.cc with AVX-512 and AVX512-BF16 enabled; called only where the CPU
// has both. And the AVX-512 parts of the f32 Winograd F(4x4, 3x3) (cpu.avx512.winograd4 in
// winograd_avx2.cc), compiled in winograd4_avx512.cc with AVX-512 F/BW/VL/DQ enabled; called only
// where the CPU has them.
// The tiles and the Winograd-domain arrays are as in winograd.h.
#pragma once

#include <cstdint>

#include "runtime/cpu/own/winograd.h"

namespace gcomp::cpu::own::avx512 {

using own::WinogradTiles;

// V = B^T d B of tiles [t0, t1) of the NHWC bf16 input x with c channels, rounded to bf16.
void WinogradInputTiles(const WinogradTiles& g, const uint16_t* x, int64_t c, int64_t base, int64_t rows, int64_t t0,
                        int64_t t1, uint16_t* v);

// The NHWC bf16 output y (k channels) of tiles [t0, t1) from their f32 products m: A^T M A,
// plus bias (f32 [k], or null), then max(0, .) where relu, rounded to bf16.
void WinogradOutputTiles(const WinogradTiles& g, const float* m, int64_t k, int64_t base, int64_t rows, int64_t t0,
                         int64_t t1, const float* bias, bool relu, uint16_t* y);

// F(4x4, 3x3) on f32 NHWC activations, 16 channels at a time: V = B^T d B of tiles [t0, t1) of x
// (c channels), and y (k channels) of tiles [t0, t1) from their products m: A^T M A, plus bias
// (zero-padded to whole 16-channel panels), then max(0, .) where relu. As winograd4_transforms.h.
void Winograd4InputTiles(const WinogradTiles& g, const float* x, int64_t c, int64_t base, int64_t rows, int64_t t0,
                         int64_t t1, float* v);
void Winograd4OutputTiles(const WinogradTiles& g, const float* m, int64_t k, int64_t base, int64_t rows, int64_t t0,
                          int64_t t1, const float* bias, bool relu, float* y);

// The rows of one register tile of WinogradProducts: 14 rows x 32 columns of M in 28 zmm
// accumulators.
inline constexpr int64_t kProductTileRows = 14;

// Columns [32 pair, 32 pair + 32) (those below k) of one point's products M_p [rows][k] =
// V_p [rows][c] x U_p, where U_p is ceil(k / 16) panels of 16 output channels, each c rows of 16
// floats: panels 2 pair and 2 pair + 1 (where it exists).
void WinogradProducts(const float* vp, const float* up, int64_t rows, int64_t c, int64_t k, int64_t pair, float* mp);

// The same with bf16 V_p [rows][c] and U_p (c even; winograd_avx512.cc, AVX512-BF16): each panel
// c / 2 rows of 16 output channels x 2 input channels (the pair vdpbf16ps multiplies), fp32 M.
void WinogradProductsBf16(const uint16_t* vp, const uint16_t* up, int64_t rows, int64_t c, int64_t k, int64_t pair,
                          float* mp);

}  // namespace gcomp::cpu::own::avx512
