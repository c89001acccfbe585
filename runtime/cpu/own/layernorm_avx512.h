// The AVX-512 row of cpu.layernorm (layernorm.cc), compiled in layernorm_avx512.cc with AVX-512
// enabled; called only where CpuSimdLevel() (simd.h) is at least kAvx512Bf16.
#pragma once

#include <cstdint>

namespace gcomp::cpu::own::avx512 {

// y = (x - mean) / sqrt(var + epsilon) * scale + bias over one row of `len` elements, x and y f32
// or bf16 (`*_bf16`; bf16 stored rounded to nearest even), statistics in fp32 as layernorm.cc
// computes them (the mean first, then the squared deviations from it); y must not overlap x.
void LayerNormRow(const void* x, bool x_bf16, void* y, bool y_bf16, const float* scale, const float* bias,
                  int64_t len, float epsilon);

}  // namespace gcomp::cpu::own::avx512
