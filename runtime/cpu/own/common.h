// Helpers shared by gcomp's own CPU kernels (runtime/cpu/own/): operand checks, constant integer
// inputs, a vectorized exp, and the entry constructors each kernel file defines.
#pragma once

#include <immintrin.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/size.h"
#include "runtime/cpu/kernel.h"
#include "runtime/op_geometry.h"

namespace gcomp::cpu::own {

using runtime::ConstantInts;           // runtime/op_geometry.h
using runtime::IsStorageFloat;
using runtime::PresentAndNotInPlace;

// exp(x) on 8 lanes: range reduction by ln 2 and a degree-6 polynomial, ~2 ulp for x in
// [-87, 88]; smaller x give 0-ish tiny values, -inf gives 0.
inline __m256 Exp8(__m256 x) {
  const __m256 lo = _mm256_set1_ps(-87.0f), hi = _mm256_set1_ps(88.0f);
  const __m256 is_neg_inf = _mm256_cmp_ps(x, _mm256_set1_ps(-INFINITY), _CMP_EQ_OQ);
  x = _mm256_min_ps(_mm256_max_ps(x, lo), hi);
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.9875691500e-4f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
  const __m256 r2 = _mm256_mul_ps(r, r);
  p = _mm256_fmadd_ps(p, r2, r);
  p = _mm256_add_ps(p, _mm256_set1_ps(1.0f));
  const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  const __m256 y = _mm256_mul_ps(p, _mm256_castsi256_ps(e));
  return _mm256_andnot_ps(is_neg_inf, y);
}

// LoadF32 / StoreF32 (runtime/cpu/convert.cc) with vectorized paths: f16 loads and stores by
// F16C, bf16 stores by integer rounding. Blocks of 8 holding a NaN (or, for f16 loads, an inf or
// NaN) take the scalar conversions, so the results are bit-identical to LoadF32 / StoreF32.
void ToF32(DType dtype, const void* src, float* dst, int64_t n);
void FromF32(DType dtype, const float* src, void* dst, int64_t n);

// x[i] = exp(x[i] - shift) for i < n; returns the sum of the results.
float ExpShiftedInPlace(float* x, int64_t n, float shift);

// Entries, one per kernel family (each file defines its own).
CpuEntry AttentionEntry();
CpuEntry LayerNormEntry();
CpuEntry SoftmaxEntry();
CpuEntry TransposeEntry();
CpuEntry SliceEntry();
CpuEntry ConcatEntry();
CpuEntry PoolEntry();
CpuEntry ReduceMeanEntry();
CpuEntry ElementwiseEntry();
CpuEntry CastEntry();
CpuEntry GatherEntry();
CpuEntry ExpandEntry();
CpuEntry ShapeEntry();
CpuEntry CopyEntry();
CpuEntry PadEntry();
CpuEntry ClipEntry();
CpuEntry IsNaNEntry();
CpuEntry WhereEntry();

}  // namespace gcomp::cpu::own
