// The transforms of the bf16 Winograd F(2x2, 3x3) convolution (cpu.onednn.winograd_bf16 in
// runtime/cpu/blas/onednn_kernels.cc, which runs the 16 products between them as one batched
// oneDNN matmul), compiled in winograd_avx512.cc with AVX-512 and AVX512-BF16 enabled; called only
// where the CPU has both.
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

}  // namespace gcomp::cpu::own::avx512
