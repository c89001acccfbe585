#include "core/tensor.h"

#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/size.h"

namespace gcomp {

absl::StatusOr<Tensor> Tensor::Zeros(DType dtype, std::vector<int64_t> dims) {
  auto n = CheckedNumElements(dims);
  if (!n.ok()) return n.status();
  int64_t bytes;
  if (__builtin_mul_overflow(*n, static_cast<int64_t>(DTypeSize(dtype)), &bytes) ||
      bytes > kMaxTensorBytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat("tensor of ", *n, " ", DTypeName(dtype), " elements [",
                     absl::StrJoin(dims, ","), "] exceeds the ", kMaxTensorBytes >> 30,
                     " GiB tensor limit"));
  }
  Tensor t;
  t.dtype_ = dtype;
  t.dims_ = std::move(dims);
  t.numel_ = *n;
  t.buffer_ = std::make_shared<std::vector<uint8_t>>(static_cast<size_t>(bytes));
  return t;
}

Tensor Tensor::Scalar(DType dtype, double value) {
  Tensor t = *Zeros(dtype, {});
  if (IsFloat(dtype)) {
    t.SetF32(0, static_cast<float>(value));
  } else {
    t.SetI64(0, static_cast<int64_t>(value));
  }
  return t;
}

Tensor Tensor::FromF32(std::vector<int64_t> dims, const std::vector<float>& values) {
  Tensor t = *Zeros(DType::kF32, std::move(dims));
  if (t.nbytes()) std::memcpy(t.mutable_data(), values.data(), t.nbytes());
  return t;
}

Tensor Tensor::FromI64(std::vector<int64_t> dims, const std::vector<int64_t>& values) {
  Tensor t = *Zeros(DType::kI64, std::move(dims));
  if (t.nbytes()) std::memcpy(t.mutable_data(), values.data(), t.nbytes());
  return t;
}

float Tensor::GetF32(int64_t i) const {
  const uint8_t* p = data();
  switch (dtype_) {
    case DType::kF32: return reinterpret_cast<const float*>(p)[i];
    case DType::kF16: return HalfToFloat(reinterpret_cast<const uint16_t*>(p)[i]);
    case DType::kBF16: return BFloat16ToFloat(reinterpret_cast<const uint16_t*>(p)[i]);
    case DType::kF8E4M3: return F8E4M3ToFloat(p[i]);
    case DType::kF64: return static_cast<float>(reinterpret_cast<const double*>(p)[i]);
    case DType::kI64: return static_cast<float>(reinterpret_cast<const int64_t*>(p)[i]);
    case DType::kI32: return static_cast<float>(reinterpret_cast<const int32_t*>(p)[i]);
    case DType::kI8: return static_cast<float>(reinterpret_cast<const int8_t*>(p)[i]);
    case DType::kU8: return static_cast<float>(p[i]);
    case DType::kBool: return p[i] ? 1.0f : 0.0f;
  }
  return 0.0f;
}

void Tensor::SetF32(int64_t i, float v) {
  uint8_t* p = mutable_data();
  switch (dtype_) {
    case DType::kF32: reinterpret_cast<float*>(p)[i] = v; return;
    case DType::kF16: reinterpret_cast<uint16_t*>(p)[i] = FloatToHalf(v); return;
    case DType::kBF16: reinterpret_cast<uint16_t*>(p)[i] = FloatToBFloat16(v); return;
    case DType::kF8E4M3: p[i] = FloatToF8E4M3(v); return;
    case DType::kF64: reinterpret_cast<double*>(p)[i] = v; return;
    // Float -> integer conversion truncates toward zero, as ONNX Cast does.
    case DType::kI64: reinterpret_cast<int64_t*>(p)[i] = static_cast<int64_t>(v); return;
    case DType::kI32: reinterpret_cast<int32_t*>(p)[i] = static_cast<int32_t>(v); return;
    case DType::kI8: reinterpret_cast<int8_t*>(p)[i] = static_cast<int8_t>(static_cast<int32_t>(v)); return;
    case DType::kU8: p[i] = static_cast<uint8_t>(static_cast<int32_t>(v)); return;
    case DType::kBool: p[i] = v != 0.0f; return;
  }
}

int64_t Tensor::GetI64(int64_t i) const {
  const uint8_t* p = data();
  switch (dtype_) {
    case DType::kI64: return reinterpret_cast<const int64_t*>(p)[i];
    case DType::kI32: return reinterpret_cast<const int32_t*>(p)[i];
    case DType::kI8: return reinterpret_cast<const int8_t*>(p)[i];
    case DType::kU8: return p[i];
    case DType::kBool: return p[i] ? 1 : 0;
    default: return static_cast<int64_t>(GetF32(i));
  }
}

void Tensor::SetI64(int64_t i, int64_t v) {
  uint8_t* p = mutable_data();
  switch (dtype_) {
    case DType::kI64: reinterpret_cast<int64_t*>(p)[i] = v; return;
    case DType::kI32: reinterpret_cast<int32_t*>(p)[i] = static_cast<int32_t>(v); return;
    case DType::kI8: reinterpret_cast<int8_t*>(p)[i] = static_cast<int8_t>(v); return;
    case DType::kU8: p[i] = static_cast<uint8_t>(v); return;
    case DType::kBool: p[i] = v != 0; return;
    default: SetF32(i, static_cast<float>(v)); return;
  }
}

std::vector<float> Tensor::ToF32() const {
  std::vector<float> out(static_cast<size_t>(numel_));
  if (dtype_ == DType::kF32) {
    if (numel_ > 0) std::memcpy(out.data(), data(), out.size() * sizeof(float));
    return out;
  }
  for (int64_t i = 0; i < numel_; ++i) out[i] = GetF32(i);
  return out;
}

std::vector<int64_t> Tensor::ToI64() const {
  std::vector<int64_t> out(static_cast<size_t>(numel_));
  for (int64_t i = 0; i < numel_; ++i) out[i] = GetI64(i);
  return out;
}

Tensor Tensor::Reshaped(std::vector<int64_t> dims) const {
  Tensor t = *this;
  t.dims_ = std::move(dims);
  return t;
}

std::string Tensor::DebugString() const {
  std::string out = absl::StrCat(DTypeName(dtype_), "[", absl::StrJoin(dims_, ","), "]");
  if (numel_ <= 8) {
    out += "{";
    for (int64_t i = 0; i < numel_; ++i) {
      if (i) out += ",";
      if (IsFloat(dtype_)) {
        absl::StrAppend(&out, GetF32(i));
      } else {
        absl::StrAppend(&out, GetI64(i));
      }
    }
    out += "}";
  }
  return out;
}

}  // namespace gcomp
