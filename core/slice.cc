#include "core/slice.h"

#include <algorithm>

namespace gcomp {

SliceAxis ResolveSlice(int64_t start, int64_t end, int64_t step, int64_t dim) {
  auto adjust = [dim](int64_t v) { return v < 0 ? (v < -dim ? -1 : v + dim) : v; };
  start = adjust(start);
  end = adjust(end);
  if (step > 0) {
    start = std::clamp(start, int64_t{0}, dim);
    end = std::clamp(end, int64_t{0}, dim);
  } else {
    start = std::clamp(start, int64_t{0}, dim - 1);
    end = std::clamp(end, int64_t{-1}, dim - 1);
  }
  // Counted without overflow for any step (INT64_MIN and INT64_MAX included): the span is at
  // most dim, and a step past it takes one element.
  int64_t count = 0;
  if (step > 0 && end > start) count = 1 + (end - start - 1) / step;
  if (step < 0 && start > end) count = 1 + (start - end - 1) / (step == INT64_MIN ? INT64_MAX : -step);
  return {start, step, count};
}

}  // namespace gcomp
