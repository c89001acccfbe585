// The AVX-512 rows of cpu.pool's NHWC max pooling on bf16 and f32 (pool.cc), compiled in pool_avx512.cc
// with AVX-512 enabled; called only where CpuSimdLevel() (simd.h) is at least kAvx512.
#pragma once

#include <cstdint>

namespace gcomp::cpu::own::avx512 {

// y[0, c) = the maximum over `count` rows of c bf16 channels (taps[i] points at one), NaN kept as
// MaxPool keeps it (a NaN tap wins); count > 0. Every value is bf16 already, so y holds input bits.
void MaxPoolBf16(const uint8_t* const* taps, int64_t count, int64_t c, uint16_t* y);

// The same over f32 rows.
void MaxPoolF32(const uint8_t* const* taps, int64_t count, int64_t c, float* y);

}  // namespace gcomp::cpu::own::avx512
