// ONNX Slice index clamping, shared by the reference interpreter and the backends' kernels.
#pragma once

#include <cstdint>

namespace gcomp {

// One axis of an ONNX Slice after index clamping: `count` elements from `start` by `step`.
struct SliceAxis {
  int64_t start, step, count;
};
// ONNX Slice index clamping for one axis of concrete size `dim` (step != 0).
SliceAxis ResolveSlice(int64_t start, int64_t end, int64_t step, int64_t dim);

}  // namespace gcomp
