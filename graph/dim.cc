#include "graph/dim.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/limits.h"

namespace gcomp {
namespace {

absl::Status Overflow() { return absl::InvalidArgumentError("dimension arithmetic overflows int64"); }

// The shape-expression limits (core/limits.h): a polynomial of at most kMaxDimTerms terms of
// degree at most kMaxDimDegree, so that chains of Reshape/Concat arithmetic stay small.
absl::StatusOr<Dim> WithinLimits(Dim d, size_t terms, size_t degree) {
  if (static_cast<int64_t>(terms) > kMaxDimTerms || static_cast<int64_t>(degree) > kMaxDimDegree) {
    std::string text = d.ToString();
    if (text.size() > 120) text = text.substr(0, 120) + "...";
    return absl::InvalidArgumentError(absl::StrCat("shape expression ", text, " has ", terms, terms == 1 ? " term" : " terms",
                                                   " and degree ", degree, ", over the limits of ", kMaxDimTerms, " terms and degree ",
                                                   kMaxDimDegree));
  }
  return d;
}

}  // namespace

Dim::Dim(int64_t value) {
  if (value != 0) terms_[{}] = value;
}

Dim Dim::Symbol(const std::string& name) {
  Dim d;
  d.terms_[{name}] = 1;
  return d;
}

bool Dim::IsConst() const { return terms_.empty() || (terms_.size() == 1 && terms_.begin()->first.empty()); }

size_t Dim::Degree() const {
  size_t degree = 0;
  for (const auto& [key, coef] : terms_) degree = std::max(degree, key.size());
  return degree;
}

int64_t Dim::value() const { return terms_.empty() ? 0 : terms_.begin()->second; }

std::optional<int64_t> Dim::ConstValue() const {
  if (!IsConst()) return std::nullopt;
  return value();
}

std::vector<std::string> Dim::Symbols() const {
  std::vector<std::string> out;
  for (const auto& [key, coef] : terms_) out.insert(out.end(), key.begin(), key.end());
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

absl::StatusOr<Dim> Dim::Add(const Dim& a, const Dim& b) {
  Dim r = a;
  for (const auto& [key, coef] : b.terms_) {
    int64_t& c = r.terms_[key];
    if (__builtin_add_overflow(c, coef, &c)) return Overflow();
    if (c == 0) r.terms_.erase(key);
  }
  const size_t terms = r.terms_.size(), degree = r.Degree();
  return WithinLimits(std::move(r), terms, degree);
}

absl::StatusOr<Dim> Dim::Sub(const Dim& a, const Dim& b) {
  Dim neg;
  for (const auto& [key, coef] : b.terms_) {
    if (coef == INT64_MIN) return Overflow();
    neg.terms_[key] = -coef;
  }
  return Add(a, neg);
}

absl::StatusOr<Dim> Dim::Mul(const Dim& a, const Dim& b) {
  Dim r;
  for (const auto& [ka, ca] : a.terms_) {
    for (const auto& [kb, cb] : b.terms_) {
      std::vector<std::string> key = ka;
      key.insert(key.end(), kb.begin(), kb.end());
      std::sort(key.begin(), key.end());
      int64_t prod;
      if (__builtin_mul_overflow(ca, cb, &prod)) return Overflow();
      int64_t& c = r.terms_[key];
      if (__builtin_add_overflow(c, prod, &c)) return Overflow();
      if (c == 0) r.terms_.erase(key);
    }
  }
  const size_t terms = r.terms_.size(), degree = r.Degree();
  return WithinLimits(std::move(r), terms, degree);
}

std::optional<Dim> Dim::DivExact(const Dim& a, const Dim& b) {
  if (b.terms_.empty()) return std::nullopt;
  if (a == b) return Dim(1);
  if (b.terms_.size() != 1) return std::nullopt;
  const auto& [bkey, bcoef] = *b.terms_.begin();
  Dim r;
  for (const auto& [akey, acoef] : a.terms_) {
    if (acoef % bcoef != 0) return std::nullopt;
    // Remove b's symbols (a multiset) from a's monomial.
    std::vector<std::string> key;
    if (!std::includes(akey.begin(), akey.end(), bkey.begin(), bkey.end())) return std::nullopt;
    std::set_difference(akey.begin(), akey.end(), bkey.begin(), bkey.end(), std::back_inserter(key));
    r.terms_[key] = acoef / bcoef;
  }
  return r;
}

std::optional<Dim> Dim::FloorDiv(const Dim& a, int64_t b) {
  if (b <= 0) return std::nullopt;
  if (a.IsConst()) {
    int64_t v = a.value();
    int64_t q = v / b;
    if ((v % b != 0) && ((v < 0) != (b < 0))) --q;
    return Dim(q);
  }
  return DivExact(a, Dim(b));
}

absl::StatusOr<int64_t> Dim::Evaluate(const std::map<std::string, int64_t>& bindings) const {
  int64_t total = 0;
  for (const auto& [key, coef] : terms_) {
    int64_t term = coef;
    for (const std::string& s : key) {
      auto it = bindings.find(s);
      if (it == bindings.end()) {
        return absl::InvalidArgumentError(absl::StrCat("symbol '", s, "' has no value"));
      }
      if (__builtin_mul_overflow(term, it->second, &term)) return Overflow();
    }
    if (__builtin_add_overflow(total, term, &total)) return Overflow();
  }
  return total;
}

std::string Dim::ToString() const {
  if (terms_.empty()) return "0";
  std::string out;
  // Highest-degree terms first, constants last: "batch*2+1".
  std::vector<std::pair<std::vector<std::string>, int64_t>> ordered(terms_.begin(), terms_.end());
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const auto& x, const auto& y) { return x.first.size() > y.first.size(); });
  bool first = true;
  for (const auto& [key, coef] : ordered) {
    int64_t c = coef;
    if (!first) {
      out += c < 0 ? "-" : "+";
      if (c < 0) c = -c;
    }
    first = false;
    if (key.empty()) {
      absl::StrAppend(&out, c);
      continue;
    }
    // Symbols first, then the coefficient: "batch*197" (as DESIGN.md writes them).
    if (c == -1) out += "-";
    out += absl::StrJoin(key, "*");
    if (c != 1 && c != -1) absl::StrAppend(&out, "*", c);
  }
  return out;
}

std::string ShapeToString(const Shape& s) {
  return absl::StrCat("[", absl::StrJoin(s, ",", [](std::string* o, const Dim& d) { o->append(d.ToString()); }), "]");
}

absl::StatusOr<Dim> NumElements(const Shape& s) {
  Dim n(1);
  for (const Dim& d : s) {
    auto m = Dim::Mul(n, d);
    if (!m.ok()) return m.status();
    n = *m;
  }
  return n;
}

std::optional<std::vector<int64_t>> ConcreteDims(const Shape& s) {
  std::vector<int64_t> out;
  out.reserve(s.size());
  for (const Dim& d : s) {
    if (!d.IsConst()) return std::nullopt;
    out.push_back(d.value());
  }
  return out;
}

Shape ShapeFromInts(const std::vector<int64_t>& dims) { return Shape(dims.begin(), dims.end()); }

}  // namespace gcomp
