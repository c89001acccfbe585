// gcomp's own CPU kernels, in the order the table tries them, and the helpers they share.
#include "runtime/cpu/own/entries.h"

#include <cstring>

#include "runtime/cpu/own/common.h"

namespace gcomp::cpu {

namespace own {

void ToF32(DType dtype, const void* src, float* dst, int64_t n) {
  if (dtype != DType::kF16) {
    LoadF32(dtype, src, dst, n);  // f32: memcpy; bf16: a shift the compiler vectorizes
    return;
  }
  const auto* s = static_cast<const uint16_t*>(src);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
    // Exponent all ones (inf / NaN): scalar, which keeps NaN payloads as the reference does.
    const __m128i special = _mm_cmpeq_epi16(_mm_and_si128(h, _mm_set1_epi16(0x7c00)), _mm_set1_epi16(0x7c00));
    if (_mm_movemask_epi8(special) != 0) {
      LoadF32(dtype, s + i, dst + i, 8);
    } else {
      _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(h));
    }
  }
  if (i < n) LoadF32(dtype, s + i, dst + i, n - i);
}

void FromF32(DType dtype, const float* src, void* dst, int64_t n) {
  if (dtype == DType::kF32) {
    std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
    return;
  }
  auto* d = static_cast<uint16_t*>(dst);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 x = _mm256_loadu_ps(src + i);
    // NaN lanes: scalar, for the reference's NaN encoding.
    const __m256 nan = _mm256_cmp_ps(x, x, _CMP_UNORD_Q);
    if (_mm256_movemask_ps(nan) != 0) {
      StoreF32(dtype, src + i, d + i, 8);
      continue;
    }
    __m128i h;
    if (dtype == DType::kF16) {
      h = _mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    } else {  // bf16: round to nearest even on the upper 16 bits
      const __m256i b = _mm256_castps_si256(x);
      const __m256i odd = _mm256_and_si256(_mm256_srli_epi32(b, 16), _mm256_set1_epi32(1));
      const __m256i r = _mm256_srli_epi32(_mm256_add_epi32(b, _mm256_add_epi32(_mm256_set1_epi32(0x7fff), odd)), 16);
      h = _mm_packus_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
    }
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i), h);
  }
  if (i < n) StoreF32(dtype, src + i, d + i, n - i);
}

float ExpShiftedInPlace(float* x, int64_t n, float shift) {
  const __m256 s = _mm256_set1_ps(shift);
  __m256 acc = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 e = Exp8(_mm256_sub_ps(_mm256_loadu_ps(x + i), s));
    _mm256_storeu_ps(x + i, e);
    acc = _mm256_add_ps(acc, e);
  }
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, acc);
  float sum = 0.0f;
  for (float l : lanes) sum += l;
  if (i < n) {
    alignas(32) float tail[8];
    const int64_t rest = n - i;
    for (int64_t j = 0; j < 8; ++j) tail[j] = j < rest ? x[i + j] - shift : -INFINITY;
    _mm256_store_ps(tail, Exp8(_mm256_load_ps(tail)));
    for (int64_t j = 0; j < rest; ++j) {
      x[i + j] = tail[j];
      sum += tail[j];
    }
  }
  return sum;
}

}  // namespace own

std::vector<CpuEntry> OwnKernelEntries() {
  return {own::AttentionEntry(), own::LayerNormEntry(),  own::TransposeEntry(),   own::SliceEntry(),
          own::PoolEntry(),      own::ReduceMeanEntry(), own::ElementwiseEntry(), own::ConcatEntry(),
          own::SoftmaxEntry(),   own::CastEntry(),       own::GatherEntry(), own::ExpandEntry(),
          own::ShapeEntry(),     own::CopyEntry(),         own::PadEntry(),
          own::ClipEntry(),      own::IsNaNEntry(),      own::WhereEntry()};
}

}  // namespace gcomp::cpu
