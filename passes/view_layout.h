// Layouts of views: which elements of a root tensor each element of a view of it is, as strides.
// fold-attention-layout pushes a layout through a chain of view nodes (Transpose, Slice, Gather
// at constant indices, Reshape and the like) and compares it with the layout Attention's strided
// form addresses; the work is a few steps per dim, whatever the dims.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace gcomp::passes {

// One digit of a dim's index: `size` values, `stride` root elements apart.
struct Mode {
  int64_t size = 1;
  int64_t stride = 0;
  bool operator==(const Mode&) const = default;
};
using Modes = std::vector<Mode>;  // a dim's digits, most significant first

// A value as a view of the root: element (i_0, ..., i_r-1) is root element
// offset + sum_k sum_j digit_j(i_k) * modes[k][j].stride, where digit_j are i_k's mixed-radix
// digits by modes[k]'s sizes (whose product is dims[k]). Callers keep the root's element count
// within 2^48 or so, so that no stride or offset overflows.
struct Layout {
  std::vector<int64_t> dims;
  std::vector<Modes> modes;
  int64_t offset = 0;
};

// The root itself: row-major over `dims`.
Layout RowMajor(const std::vector<int64_t>& dims);

// `m` without digits of size 1, and with each digit merged into the next more significant one
// where together they step evenly (outer stride = inner size * inner stride). Two digit lists
// with the same sizes' product address the same elements exactly when their canonical forms are
// equal.
Modes Canonical(const Modes& m);

// Whether `a` and `b` have the same dims and address the same root element at every index.
bool SameElements(const Layout& a, const Layout& b);

// The root offset of index `i` along a dim with digits `m`.
int64_t OffsetOf(const Modes& m, int64_t i);

// Narrows dim `k` of `x` to indices start, start + step, ... (`count` >= 1 of them, in range);
// false where the result is not a layout (a stride that crosses digits unevenly: only progressions
// of a one-digit dim and whole blocks of the most significant digit are taken).
bool Narrow(Layout& x, size_t k, int64_t start, int64_t step, int64_t count);

// `x`'s elements in row-major order regrouped as `dims` (Reshape and the like); none where the
// element counts differ or a new dim would split a digit that its size does not divide.
std::optional<Layout> Regroup(const Layout& x, const std::vector<int64_t>& dims);

}  // namespace gcomp::passes
