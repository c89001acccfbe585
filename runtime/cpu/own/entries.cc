// gcomp's own CPU kernels, in the order the table tries them, and the helpers they share.
#include "runtime/cpu/own/entries.h"

#include <cstring>

#include "runtime/cpu/own/common.h"

namespace gcomp::cpu {

namespace own {

bool PresentAndNotInPlace(const KernelSpec& spec) {
  for (const Operand& o : spec.outputs) {
    if (!o.present) return false;
  }
  for (int i : spec.in_place) {
    if (i >= 0) return false;
  }
  return true;
}

std::optional<std::vector<int64_t>> ConstantInts(const Operand& op) {
  if (!op.present || !op.is_constant()) return std::nullopt;
  const int64_t n = NumElements(op.dims);
  std::vector<int64_t> v(static_cast<size_t>(n));
  if (op.dtype == DType::kI64 && op.constant_bytes == static_cast<size_t>(n) * 8) {
    std::memcpy(v.data(), op.constant, static_cast<size_t>(n) * 8);
    return v;
  }
  if (op.dtype == DType::kI32 && op.constant_bytes == static_cast<size_t>(n) * 4) {
    for (int64_t i = 0; i < n; ++i) {
      int32_t x;
      std::memcpy(&x, op.constant + i * 4, 4);
      v[i] = x;
    }
    return v;
  }
  return std::nullopt;
}

std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (int64_t i = static_cast<int64_t>(dims.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * dims[i + 1];
  return s;
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

std::vector<KernelEntry> OwnKernelEntries() {
  return {own::AttentionEntry(), own::LayerNormEntry(), own::TransposeEntry(),   own::SliceEntry(),
          own::PoolEntry(),      own::ReduceMeanEntry(), own::ElementwiseEntry(), own::ConcatEntry(),
          own::SoftmaxEntry(),   own::CastEntry()};
}

}  // namespace gcomp::cpu
