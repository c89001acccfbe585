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
  int64_t count = 0;
  if (step > 0 && end > start) count = (end - start + step - 1) / step;
  if (step < 0 && start > end) count = (start - end + (-step) - 1) / (-step);
  return {start, step, count};
}

}  // namespace gcomp
