// cpu.layernorm (LayerNorm, and LayerNormalization with only its Y output) and cpu.softmax:
// row-wise kernels, rows spread over threads, each row loaded to fp32, statistics in fp32 with
// vectorized (omp simd) reductions, stored back in the storage type. LayerNorm on f32 or bf16
// storage runs its AVX-512 row (layernorm_avx512.cc) where the CPU has AVX512-BF16.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "runtime/cpu/own/common.h"
#include "runtime/cpu/own/layernorm_avx512.h"
#include "runtime/cpu/own/simd.h"
#include "runtime/op_geometry.h"

namespace gcomp::cpu::own {
namespace {

using runtime::LayerNormShape;
using runtime::NormalizedAxis;
using runtime::ResolveLayerNorm;

class LayerNormKernel : public ShapedKernel {
 public:
  LayerNormKernel(const LayerNormShape& s, int threads)
      : s_(s), threads_(std::max(1, threads)), avx512_(UsesAvx512Row(s)) {
    if (!avx512_) rows_.assign(threads_, std::vector<float>(s_.len));  // the AVX-512 row needs no copy
  }

  static bool UsesAvx512Row(const LayerNormShape& s) {
    auto f32_or_bf16 = [](DType t) { return t == DType::kF32 || t == DType::kBF16; };
    return CpuSimdLevel() >= SimdLevel::kAvx512Bf16 && f32_or_bf16(s.x_type) && f32_or_bf16(s.y_type) &&
           s.fp8_scale == 0.0f && s.len > 0;
  }

  absl::Status Run(std::span<const void* const> inputs, std::span<void* const> outputs) override {
    const int64_t len = s_.len;
    // Scale and bias in fp32 (they may change between runs when not constant).
    scale_.resize(len);
    ToF32(s_.s_type, inputs[1], scale_.data(), len);
    bias_.assign(len, 0.0f);
    if (s_.has_bias) ToF32(s_.b_type, inputs[2], bias_.data(), len);
    const auto* x = static_cast<const uint8_t*>(inputs[0]);
    auto* y = static_cast<uint8_t*>(outputs[0]);
    const size_t xs = DTypeSize(s_.x_type), ys = DTypeSize(s_.y_type);
    const float* scale = scale_.data();
    const float* bias = bias_.data();
#pragma omp parallel for num_threads(threads_) schedule(static) if (threads_ > 1)
    for (int64_t r = 0; r < s_.rows; ++r) {
      if (avx512_) {
        avx512::LayerNormRow(x + r * len * xs, s_.x_type == DType::kBF16, y + r * len * ys,
                             s_.y_type == DType::kBF16, scale, bias, len, s_.epsilon);
        continue;
      }
      float* row = rows_[omp_get_thread_num()].data();
      ToF32(s_.x_type, x + r * len * xs, row, len);
      float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
      for (int64_t j = 0; j < len; ++j) sum += row[j];
      const float mean = sum / static_cast<float>(len);
      float sq = 0.0f;
#pragma omp simd reduction(+ : sq)
      for (int64_t j = 0; j < len; ++j) sq += (row[j] - mean) * (row[j] - mean);
      const float inv_std =
          static_cast<float>(1.0 / std::sqrt(static_cast<double>(sq) / static_cast<double>(len) + s_.epsilon));
#pragma omp simd
      for (int64_t j = 0; j < len; ++j) row[j] = (row[j] - mean) * inv_std * scale[j] + bias[j];
      FromF32(s_.y_type, row, y + r * len * ys, len);
    }
    return absl::OkStatus();
  }

 private:
  LayerNormShape s_;
  int threads_;
  bool avx512_;
  std::vector<std::vector<float>> rows_;
  std::vector<float> scale_, bias_;
};

struct SoftmaxShape {
  int64_t outer = 0, len = 0, inner = 0;
  DType x_type = DType::kF32, y_type = DType::kF32;
};

std::optional<SoftmaxShape> ResolveSoftmax(const KernelSpec& spec) {
  if (!spec.params) return std::nullopt;
  // Each row is loaded before it is stored: running in place is fine.
  if (spec.inputs.size() != 1 || spec.outputs.size() != 1 || !spec.outputs[0].present) return std::nullopt;
  const Operand& x = spec.inputs[0];
  if (!x.present || !IsStorageFloat(x.dtype) || !IsStorageFloat(spec.outputs[0].dtype)) return std::nullopt;
  if (spec.outputs[0].dims != x.dims || x.dims.empty()) return std::nullopt;
  std::optional<int64_t> axis = NormalizedAxis(spec.params->GetInt("axis", -1), x.dims.size());
  if (!axis) return std::nullopt;
  SoftmaxShape s;
  s.outer = 1;
  for (int64_t i = 0; i < *axis; ++i) s.outer *= x.dims[i];
  s.len = x.dims[*axis];
  s.inner = 1;
  for (size_t i = *axis + 1; i < x.dims.size(); ++i) s.inner *= x.dims[i];
  s.x_type = x.dtype;
  s.y_type = spec.outputs[0].dtype;
  return s;
}

class SoftmaxKernel : public ShapedKernel {
 public:
  SoftmaxKernel(const SoftmaxShape& s, int threads) : s_(s), threads_(std::max(1, threads)) {
    rows_.assign(threads_, std::vector<float>(std::max<int64_t>(s_.len, 1)));
  }

  absl::Status Run(std::span<const void* const> inputs, std::span<void* const> outputs) override {
    const auto* x = static_cast<const uint8_t*>(inputs[0]);
    auto* y = static_cast<uint8_t*>(outputs[0]);
    const size_t xs = DTypeSize(s_.x_type), ys = DTypeSize(s_.y_type);
    const int64_t len = s_.len, inner = s_.inner, rows = s_.outer * s_.inner;
    if (len == 0) return absl::OkStatus();
#pragma omp parallel for num_threads(threads_) schedule(static) if (threads_ > 1)
    for (int64_t r = 0; r < rows; ++r) {
      float* row = rows_[omp_get_thread_num()].data();
      const int64_t o = r / inner, i = r % inner;
      const int64_t base = o * len * inner + i;  // element (o, 0, i)
      if (inner == 1) {
        ToF32(s_.x_type, x + base * xs, row, len);
      } else {
        for (int64_t j = 0; j < len; ++j) ToF32(s_.x_type, x + (base + j * inner) * xs, row + j, 1);
      }
      float mx = -INFINITY;
#pragma omp simd reduction(max : mx)
      for (int64_t j = 0; j < len; ++j) mx = std::max(mx, row[j]);
      const float sum = ExpShiftedInPlace(row, len, mx);
      const float inv = 1.0f / sum;
#pragma omp simd
      for (int64_t j = 0; j < len; ++j) row[j] *= inv;
      if (inner == 1) {
        FromF32(s_.y_type, row, y + base * ys, len);
      } else {
        for (int64_t j = 0; j < len; ++j) FromF32(s_.y_type, row + j, y + (base + j * inner) * ys, 1);
      }
    }
    return absl::OkStatus();
  }

 private:
  SoftmaxShape s_;
  int threads_;
  std::vector<std::vector<float>> rows_;
};

}  // namespace

CpuEntry LayerNormEntry() {
  CpuEntry e;
  e.id = "cpu.layernorm";
  e.ops = {"LayerNorm", "LayerNormalization"};  // LayerNormalization with only Y
  e.params = {{"axis", AttrType::kInt}, {"epsilon", AttrType::kFloat}, {"stash_type", AttrType::kInt}};
  e.description = "row-wise layer normalization, fp32 statistics, per-row Scale/B";
  e.accepts = [](const KernelSpec& spec) -> std::optional<std::string> {
    std::optional<LayerNormShape> s = ResolveLayerNorm(spec);
    if (!s) return std::nullopt;
    return absl::StrCat("own layernorm: ", s->rows, " rows of ", s->len,
                        LayerNormKernel::UsesAvx512Row(*s) ? ", AVX-512 rows" : "");
  };
  e.create = [](const KernelSpec& spec) -> absl::StatusOr<std::unique_ptr<ShapedKernel>> {
    std::optional<LayerNormShape> s = ResolveLayerNorm(spec);
    if (!s) return absl::InvalidArgumentError(absl::StrCat("node '", spec.name, "': cpu.layernorm does not run it"));
    return std::unique_ptr<ShapedKernel>(new LayerNormKernel(*s, spec.threads));
  };
  return e;
}

CpuEntry SoftmaxEntry() {
  CpuEntry e;
  e.id = "cpu.softmax";
  e.ops = {"Softmax"};
  e.params = {{"axis", AttrType::kInt}};
  e.description = "softmax along one axis (contiguous rows fast path), vectorized exp";
  e.accepts = [](const KernelSpec& spec) -> std::optional<std::string> {
    std::optional<SoftmaxShape> s = ResolveSoftmax(spec);
    if (!s) return std::nullopt;
    return absl::StrCat("own softmax: ", s->outer * s->inner, " rows of ", s->len, s->inner == 1 ? "" : " (strided)");
  };
  e.create = [](const KernelSpec& spec) -> absl::StatusOr<std::unique_ptr<ShapedKernel>> {
    std::optional<SoftmaxShape> s = ResolveSoftmax(spec);
    if (!s) return absl::InvalidArgumentError(absl::StrCat("node '", spec.name, "': cpu.softmax does not run it"));
    return std::unique_ptr<ShapedKernel>(new SoftmaxKernel(*s, spec.threads));
  };
  return e;
}

}  // namespace gcomp::cpu::own
