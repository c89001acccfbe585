// The AMX tiles of cpu.attention (attention.cc), compiled in attention_amx.cc with AMX enabled;
// called only where CpuSimdLevel() (simd.h) is kAmxBf16. Operands are the bf16 tiles of
// attention_avx512.h, with rows a multiple of 16, dq a multiple of 32 and `keys` of 32.
#pragma once

#include <cstdint>

namespace gcomp::cpu::own::amx {

// Loads this thread's tile configuration (tiles 0-7: 16 rows of 64 bytes each; attention and
// cpu.amx.gemm share it); ReleaseTiles undoes it.
void ConfigureTiles();
void ReleaseTiles();

// s[rows x cols] (row stride `stride`) = q[rows x dq] * kt over `cols` keys (kt: [dq/2 x kKeyBlock x 2]).
void ScoreTile(const uint16_t* q, const uint16_t* kt, float* s, int64_t rows, int64_t cols, int64_t dq,
               int64_t stride);
// o[rows x dv] += p[rows x keys] (row stride `stride`) * vt over `keys` keys (vt: [kKeyBlock/2 x dv x 2]).
void AccumulateTile(const uint16_t* p, const uint16_t* vt, float* o, int64_t rows, int64_t keys, int64_t dv,
                    int64_t stride);

}  // namespace gcomp::cpu::own::amx
