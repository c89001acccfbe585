// Lane masks and bf16 loads/stores on 16 float lanes, shared by the AVX-512 files of the own
// kernels (attention, LayerNorm, pooling, the AMX GEMM's epilogue). Internal linkage: each file
// keeps its own copy compiled with its own instruction sets (docs/ARCHITECTURE.md, the cpu
// backend's instruction-set forms). StoreBf16 exists only where AVX512-BF16 is enabled.
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace gcomp::cpu::own {
namespace {

// Lanes [0, n) of 16.
inline __mmask16 Lanes(int64_t n) {
  return n >= 16  ? static_cast<__mmask16>(0xFFFF)
         : n <= 0 ? static_cast<__mmask16>(0)
                  : static_cast<__mmask16>((1u << n) - 1);
}

// The bf16 values at p in lanes m, widened to float (0 in the other lanes).
inline __m512 LoadBf16(const uint16_t* p, __mmask16 m) {
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, p)), 16));
}

#if defined(__AVX512BF16__)
// v rounded to bf16 (nearest even) into lanes m at p.
inline void StoreBf16(uint16_t* p, __mmask16 m, __m512 v) {
  _mm256_mask_storeu_epi16(p, m, reinterpret_cast<__m256i>(_mm512_cvtneps_pbh(v)));
}
#endif

}  // namespace
}  // namespace gcomp::cpu::own
