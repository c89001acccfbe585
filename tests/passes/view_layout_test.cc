// The layout algebra of passes/view_layout.h against element-by-element evaluation: random chains of
// views (Transpose, Slice, Gather, Reshape) over small roots, where every layout the algebra
// returns must address exactly the root elements the views select, and SameElements must agree
// with comparing the elements.
#include "passes/view_layout.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

namespace gcomp::passes {
namespace {

int64_t Numel(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

// The root element of every element of `x`, in row-major order.
std::vector<int64_t> Expand(const Layout& x) {
  std::vector<int64_t> at;
  std::vector<int64_t> idx(x.dims.size(), 0);
  for (int64_t i = 0; i < Numel(x.dims); ++i) {
    int64_t e = x.offset;
    for (size_t k = 0; k < idx.size(); ++k) e += OffsetOf(x.modes[k], idx[k]);
    at.push_back(e);
    for (size_t k = idx.size(); k-- > 0;) {
      if (++idx[k] < x.dims[k]) break;
      idx[k] = 0;
    }
  }
  return at;
}

// A tensor of root element indices, evaluated element by element.
struct Indexed {
  std::vector<int64_t> dims;
  std::vector<int64_t> at;
};

// Element (multi-index) -> position in row-major order.
int64_t Flat(const std::vector<int64_t>& dims, const std::vector<int64_t>& idx) {
  int64_t f = 0;
  for (size_t k = 0; k < dims.size(); ++k) f = f * dims[k] + idx[k];
  return f;
}

// y[idx] = x[source(idx)] over y's dims.
template <typename F>
Indexed Map(const Indexed& x, std::vector<int64_t> dims, F source) {
  Indexed y{std::move(dims), {}};
  std::vector<int64_t> idx(y.dims.size(), 0);
  for (int64_t i = 0; i < Numel(y.dims); ++i) {
    y.at.push_back(x.at[Flat(x.dims, source(idx))]);
    for (size_t k = idx.size(); k-- > 0;) {
      if (++idx[k] < y.dims[k]) break;
      idx[k] = 0;
    }
  }
  return y;
}

struct Counts {
  int chains = 0, ops = 0, accepted = 0, whole_chains = 0, blocks = 0;
};

// One random chain of up to 5 views over a random root; checks every layout the algebra returns.
void CheckRandomChain(std::mt19937_64& rng, Counts& counts) {
  auto uniform = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  std::vector<int64_t> root(static_cast<size_t>(uniform(1, 4)));
  for (int64_t& d : root) d = uniform(1, 6);
  Layout layout = RowMajor(root);
  Indexed ref{root, std::vector<int64_t>(static_cast<size_t>(Numel(root)))};
  std::iota(ref.at.begin(), ref.at.end(), 0);
  ++counts.chains;
  const int64_t ops = uniform(1, 5);
  bool whole = true;
  for (int64_t op = 0; op < ops; ++op) {
    const size_t r = ref.dims.size();
    const int kind = static_cast<int>(uniform(0, 3));
    std::optional<Layout> next = layout;
    Indexed want;
    if (kind == 0 && r > 0) {  // Transpose
      std::vector<size_t> perm(r);
      std::iota(perm.begin(), perm.end(), 0);
      std::shuffle(perm.begin(), perm.end(), rng);
      std::vector<int64_t> dims;
      next->dims.clear();
      next->modes.clear();
      for (size_t p : perm) {
        dims.push_back(ref.dims[p]);
        next->dims.push_back(layout.dims[p]);
        next->modes.push_back(layout.modes[p]);
      }
      want = Map(ref, dims, [&](const std::vector<int64_t>& idx) {
        std::vector<int64_t> src(r);
        for (size_t k = 0; k < r; ++k) src[perm[k]] = idx[k];
        return src;
      });
    } else if ((kind == 1 || kind == 2) && r > 0) {  // Slice / Gather: a progression along one axis
      const size_t a = static_cast<size_t>(uniform(0, static_cast<int64_t>(r) - 1));
      const int64_t n = ref.dims[a];
      int64_t step = uniform(1, 3) * (uniform(0, 3) == 0 ? -1 : 1);
      int64_t start = uniform(0, n - 1);
      const int64_t room = step > 0 ? (n - 1 - start) / step : start / -step;
      int64_t count = uniform(1, room + 1);
      // Every other time on a dim of several digits, whole blocks of its leading digit (the case
      // the algebra takes besides one-digit dims and single indices).
      const Modes digits = Canonical(layout.modes[a]);
      if (digits.size() > 1 && uniform(0, 1) == 1) {
        const int64_t inner = n / digits[0].size;
        step = 1;
        start = inner * uniform(0, digits[0].size - 1);
        count = inner * uniform(1, digits[0].size - start / inner);
        ++counts.blocks;
      }
      const bool drop = kind == 2 && count == 1 && uniform(0, 1) == 1;  // a scalar Gather index
      std::vector<int64_t> dims = ref.dims;
      dims[a] = count;
      want = Map(ref, dims, [&](const std::vector<int64_t>& idx) {
        std::vector<int64_t> src = idx;
        src[a] = start + idx[a] * step;
        return src;
      });
      if (!Narrow(*next, a, start, step, count)) next.reset();
      if (drop) {
        want.dims.erase(want.dims.begin() + static_cast<long>(a));
        if (next) {
          next->dims.erase(next->dims.begin() + static_cast<long>(a));
          next->modes.erase(next->modes.begin() + static_cast<long>(a));
        }
      }
    } else {  // Reshape into a random factorization of the element count (size-1 dims included)
      int64_t left = Numel(ref.dims);
      std::vector<int64_t> dims;
      while (left > 1 || (dims.size() < 2 && uniform(0, 1) == 1)) {
        std::vector<int64_t> divisors;
        for (int64_t d = 1; d <= left; ++d) {
          if (left % d == 0) divisors.push_back(d);
        }
        const int64_t d = divisors[static_cast<size_t>(uniform(0, static_cast<int64_t>(divisors.size()) - 1))];
        dims.push_back(d);
        left /= d;
        if (dims.size() > 5) {
          dims.back() *= left;
          left = 1;
        }
      }
      want = Indexed{dims, ref.at};
      next = Regroup(layout, dims);
    }
    ++counts.ops;
    if (!next) {
      whole = false;
      break;  // declined: nothing to check
    }
    ++counts.accepted;
    ASSERT_EQ(next->dims, want.dims);
    ASSERT_EQ(Expand(*next), want.at);
    layout = *next;
    ref = want;
  }
  counts.whole_chains += whole;
}

TEST(ViewLayout, EveryLayoutReturnedAddressesTheElementsTheViewsSelect) {
  std::mt19937_64 rng(20261203);
  Counts counts;
  for (int i = 0; i < 60000; ++i) {
    CheckRandomChain(rng, counts);
    if (HasFatalFailure()) return;
  }
  // The algebra takes most chains (it declines only views that are not layouts): not a vacuous run.
  EXPECT_GT(counts.accepted, counts.ops * 8 / 10);
  EXPECT_GT(counts.whole_chains, counts.chains * 7 / 10);
  EXPECT_GT(counts.blocks, 200);  // slices of whole blocks of a several-digit dim
}

// A random layout of `dims` with 0–2 digits per dim (strides in [-6, 6]).
Layout RandomLayout(std::mt19937_64& rng, const std::vector<int64_t>& dims) {
  auto uniform = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  Layout x;
  x.dims = dims;
  x.offset = uniform(0, 3);
  for (int64_t d : dims) {
    Modes m;
    for (int64_t f = 2; f < d; ++f) {
      if (d % f == 0 && uniform(0, 1) == 1) {  // two digits
        m = {{f, uniform(-6, 6)}, {d / f, uniform(-6, 6)}};
        break;
      }
    }
    if (m.empty()) m = {{d, uniform(-6, 6)}};
    if (uniform(0, 3) == 0) m.insert(m.begin() + static_cast<long>(uniform(0, static_cast<int64_t>(m.size()))), {1, 5});
    x.modes.push_back(m);
  }
  return x;
}

// `x` with one digit split in two and a size-1 digit added: the same elements, other digits.
Layout Refactored(std::mt19937_64& rng, Layout x) {
  for (Modes& m : x.modes) {
    for (size_t j = 0; j < m.size(); ++j) {
      for (int64_t f = 2; f < m[j].size; ++f) {
        if (m[j].size % f == 0 && rng() % 2 == 0) {
          const Mode whole = m[j];
          m[j] = {f, whole.stride * (whole.size / f)};
          m.insert(m.begin() + static_cast<long>(j) + 1, {whole.size / f, whole.stride});
          break;
        }
      }
    }
    m.push_back({1, 7});
  }
  return x;
}

TEST(ViewLayout, SameElementsIsElementEquality) {
  std::mt19937_64 rng(7);
  int same = 0;
  for (int i = 0; i < 20000; ++i) {
    std::vector<int64_t> dims(1 + rng() % 3);
    for (int64_t& d : dims) d = 1 + static_cast<int64_t>(rng() % 6);
    const Layout a = RandomLayout(rng, dims);
    const Layout b = i % 2 ? Refactored(rng, a) : RandomLayout(rng, dims);
    const bool equal = Expand(a) == Expand(b) && a.dims == b.dims;
    ASSERT_EQ(SameElements(a, b), equal) << "case " << i;
    same += equal;
  }
  EXPECT_GT(same, 5000);  // the refactored half, at least
}

}  // namespace
}  // namespace gcomp::passes
