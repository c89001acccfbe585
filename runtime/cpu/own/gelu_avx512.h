// The erf GELU as a pass of its own over a GEMM's output, compiled in gelu_avx512.cc with AVX-512
// and AVX512-BF16 enabled; called only where CpuSimdLevel() (simd.h) is at least kAvx512Bf16.
// The cpu.onednn.gemm kernel runs it after a bf16 matmul in place of oneDNN 2.6's gelu_erf post-op
// (blas/onednn_kernels.cc says why).
#pragma once

#include <cstdint>

namespace gcomp::cpu::own::avx512 {

// y[i] = gelu(x[i]) = x[i] / 2 * (1 + erf(x[i] / sqrt(2))) rounded to bf16 (nearest even), for
// i < n; erf by a rational function fitted for bf16 results (gelu_avx512.cc: GELU's error before
// rounding at most 1.3e-3 of max(|GELU|, 1e-3)), one rounding per element.
void GeluF32ToBf16(const float* x, uint16_t* y, int64_t n);

}  // namespace gcomp::cpu::own::avx512
