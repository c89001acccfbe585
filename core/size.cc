#include "core/size.h"

#include "absl/strings/str_cat.h"

namespace gcomp {

absl::StatusOr<int64_t> CheckedNumElements(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) return absl::InvalidArgumentError(absl::StrCat("negative dimension ", d));
    if (__builtin_mul_overflow(n, d, &n)) return absl::InvalidArgumentError("element count overflows int64");
  }
  return n;
}

absl::StatusOr<int64_t> CheckedBytes(const std::vector<int64_t>& dims, int64_t element_size) {
  auto n = CheckedNumElements(dims);
  if (!n.ok()) return n.status();
  auto bytes = CheckedMul(*n, element_size);
  if (!bytes) return absl::InvalidArgumentError("byte count overflows int64");
  return *bytes;
}

std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (int64_t i = static_cast<int64_t>(dims.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * dims[i + 1];
  return s;
}

int64_t Product(const std::vector<int64_t>& dims, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end && i < dims.size(); ++i) p *= dims[i];
  return p;
}

}  // namespace gcomp
