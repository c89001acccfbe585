#include "passes/view_layout.h"

#include <utility>

namespace gcomp::passes {

Layout RowMajor(const std::vector<int64_t>& dims) {
  Layout x;
  x.dims = dims;
  x.modes.resize(dims.size());
  int64_t stride = 1;
  for (size_t k = dims.size(); k-- > 0;) {
    x.modes[k] = {{dims[k], stride}};
    stride *= dims[k];
  }
  return x;
}

Modes Canonical(const Modes& m) {
  Modes out;
  for (const Mode& x : m) {
    if (x.size == 1) continue;
    if (!out.empty() && out.back().stride == x.size * x.stride) {
      out.back() = {out.back().size * x.size, x.stride};
    } else {
      out.push_back(x);
    }
  }
  return out;
}

bool SameElements(const Layout& a, const Layout& b) {
  if (a.dims != b.dims || a.offset != b.offset) return false;
  for (size_t k = 0; k < a.dims.size(); ++k) {
    if (Canonical(a.modes[k]) != Canonical(b.modes[k])) return false;
  }
  return true;
}

int64_t OffsetOf(const Modes& m, int64_t i) {
  int64_t at = 0;
  for (size_t j = m.size(); j-- > 0;) {
    at += (i % m[j].size) * m[j].stride;
    i /= m[j].size;
  }
  return at;
}

bool Narrow(Layout& x, size_t k, int64_t start, int64_t step, int64_t count) {
  if (start == 0 && step == 1 && count == x.dims[k]) return true;
  Modes m = Canonical(x.modes[k]);
  x.dims[k] = count;
  if (count == 1) {
    x.offset += OffsetOf(m, start);
    x.modes[k] = {};
    return true;
  }
  if (m.size() == 1) {  // one digit: any progression
    x.offset += start * m[0].stride;
    x.modes[k] = {{count, step * m[0].stride}};
    return true;
  }
  int64_t inner = 1;  // several digits: whole blocks of the most significant one
  for (size_t j = 1; j < m.size(); ++j) inner *= m[j].size;
  if (step != 1 || start % inner != 0 || count % inner != 0) return false;
  x.offset += (start / inner) * m[0].stride;
  m[0].size = count / inner;
  x.modes[k] = std::move(m);
  return true;
}

std::optional<Layout> Regroup(const Layout& x, const std::vector<int64_t>& dims) {
  Modes all;
  for (const Modes& m : x.modes) all.insert(all.end(), m.begin(), m.end());
  Modes flat = Canonical(all);
  Layout y;
  y.dims = dims;
  y.offset = x.offset;
  size_t p = 0;
  for (int64_t size : dims) {
    Modes m;
    int64_t have = 1;  // divides `size` throughout
    while (have < size) {
      if (p >= flat.size()) return std::nullopt;
      const int64_t need = size / have;
      const Mode f = flat[p];
      if (need % f.size == 0) {
        m.push_back(f);
        have *= f.size;
        ++p;
      } else if (f.size % need == 0) {
        m.push_back({need, f.stride * (f.size / need)});
        flat[p] = {f.size / need, f.stride};
        have = size;
      } else {
        return std::nullopt;
      }
    }
    y.modes.push_back(std::move(m));
  }
  if (p != flat.size()) return std::nullopt;
  return y;
}

}  // namespace gcomp::passes
