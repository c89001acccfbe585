// Size arithmetic for dims, strides and byte counts, overflow-checked where values come from
// untrusted files (models and plans).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"

namespace gcomp {

// a * b, or nullopt when it overflows int64.
inline std::optional<int64_t> CheckedMul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}
// a + b, or nullopt when it overflows int64.
inline std::optional<int64_t> CheckedAdd(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// Product of dims; an error for a negative dim or an int64 overflow.
absl::StatusOr<int64_t> CheckedNumElements(const std::vector<int64_t>& dims);
// Bytes of a tensor of `dims` with elements of `element_size` bytes (checked like the above).
absl::StatusOr<int64_t> CheckedBytes(const std::vector<int64_t>& dims, int64_t element_size);

// Row-major strides (in elements) of dims that are known to be valid.
std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims);
// Product of dims[begin:end) of dims that are known to be valid.
int64_t Product(const std::vector<int64_t>& dims, size_t begin, size_t end);

}  // namespace gcomp
