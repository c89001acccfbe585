// A dense tensor with concrete dims: constant data in the IR and values in the interpreter.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/dtype.h"
#include "core/limits.h"  // kMaxTensorBytes: larger declared sizes are refused before allocating

namespace gcomp {

class Tensor {
 public:
  Tensor() = default;

  // Zero-filled tensor; refuses negative dims, overflow and sizes over kMaxTensorBytes.
  static absl::StatusOr<Tensor> Zeros(DType dtype, std::vector<int64_t> dims);
  static Tensor Scalar(DType dtype, double value);
  static Tensor FromF32(std::vector<int64_t> dims, const std::vector<float>& values);
  static Tensor FromI64(std::vector<int64_t> dims, const std::vector<int64_t>& values);

  DType dtype() const { return dtype_; }
  const std::vector<int64_t>& dims() const { return dims_; }
  int64_t rank() const { return static_cast<int64_t>(dims_.size()); }
  int64_t numel() const { return numel_; }
  size_t nbytes() const { return buffer_ ? buffer_->size() : 0; }
  bool empty_storage() const { return !buffer_; }

  const uint8_t* data() const { return buffer_ ? buffer_->data() : nullptr; }
  uint8_t* mutable_data() { return buffer_ ? buffer_->data() : nullptr; }
  template <typename T>
  const T* data_as() const { return reinterpret_cast<const T*>(data()); }
  template <typename T>
  T* mutable_data_as() { return reinterpret_cast<T*>(mutable_data()); }

  // Element access converting to/from fp32 or int64 (any dtype).
  float GetF32(int64_t i) const;
  void SetF32(int64_t i, float v);
  int64_t GetI64(int64_t i) const;
  void SetI64(int64_t i, int64_t v);
  std::vector<float> ToF32() const;
  std::vector<int64_t> ToI64() const;

  // Same data, other dims (same element count).
  Tensor Reshaped(std::vector<int64_t> dims) const;
  std::string DebugString() const;

 private:
  DType dtype_ = DType::kF32;
  std::vector<int64_t> dims_;
  int64_t numel_ = 0;
  std::shared_ptr<std::vector<uint8_t>> buffer_;
};

}  // namespace gcomp
