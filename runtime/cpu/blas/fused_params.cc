#include "runtime/cpu/blas/fused_params.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "runtime/cpu/erf_rational.h"

namespace gcomp::cpu::blas {
namespace {

// erf on [-4, 4] (erf is +-1 in float beyond), vectorized by the compiler over a row.
inline float FastErf(float a) {
  float x = a < -4.0f ? -4.0f : a;
  x = x > 4.0f ? 4.0f : x;
  return ErfRational(x);
}

}  // namespace

void BiasActRow(const Epilogue& e, const float* bias, float* y, int64_t n) {
  if (bias) {
    for (int64_t j = 0; j < n; ++j) y[j] += bias[j];
  }
  switch (e.act) {
    case Act::kNone:
      return;
    case Act::kRelu:
      for (int64_t j = 0; j < n; ++j) y[j] = y[j] > 0.0f ? y[j] : (y[j] < 0.0f ? 0.0f : y[j]);
      return;
    case Act::kGelu:
      for (int64_t j = 0; j < n; ++j) y[j] = 0.5f * y[j] * (1.0f + FastErf(y[j] * 0.70710678118654752f));
      return;
    default:
      for (int64_t j = 0; j < n; ++j) y[j] = ApplyActivation(e.act, y[j], e.clip_min, e.clip_max);
  }
}

absl::StatusOr<std::vector<float>> ConstantF32(const KernelSpec& spec, size_t index) {
  const Operand& o = spec.inputs[index];
  const int64_t n = NumElements(o.dims);
  if (!o.is_constant() || o.constant_bytes != static_cast<size_t>(n) * DTypeSize(o.dtype)) {
    return absl::InvalidArgumentError(absl::StrCat("node '", spec.name, "' (", spec.op, "): constant input ", index,
                                                   " has ", o.constant_bytes, " bytes, expected ",
                                                   n * static_cast<int64_t>(DTypeSize(o.dtype))));
  }
  std::vector<float> v(static_cast<size_t>(n));
  LoadF32(o.dtype, o.constant, v.data(), n);
  return v;
}

}  // namespace gcomp::cpu::blas
