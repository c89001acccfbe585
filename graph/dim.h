// Symbolic dimensions: a dim is an integer or a polynomial with integer coefficients over named
// symbols ("batch", "batch*197", "batch*2+1"). Arithmetic is overflow-checked and refuses results
// over the shape-expression limits (core/limits.h: kMaxDimTerms, kMaxDimDegree).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/size.h"

namespace gcomp {

class Dim {
 public:
  Dim() = default;  // the constant 0
  Dim(int64_t value);  // NOLINT(google-explicit-constructor): constants read naturally as dims
  static Dim Symbol(const std::string& name);

  bool IsConst() const;
  // The value of a constant dim; precondition IsConst().
  int64_t value() const;
  std::optional<int64_t> ConstValue() const;
  // Single term `c * s1 * s2 ...` (constants included).
  bool IsMonomial() const { return terms_.size() <= 1; }
  // The most symbols multiplied in one term (0 for a constant).
  size_t Degree() const;
  // Symbols used, sorted and unique.
  std::vector<std::string> Symbols() const;

  static absl::StatusOr<Dim> Add(const Dim& a, const Dim& b);
  static absl::StatusOr<Dim> Sub(const Dim& a, const Dim& b);
  static absl::StatusOr<Dim> Mul(const Dim& a, const Dim& b);
  // Exact division; nullopt when `a` is not a multiple of `b` in this representation.
  static std::optional<Dim> DivExact(const Dim& a, const Dim& b);
  // Floor division of a by a positive constant, only when exact or `a` is constant.
  static std::optional<Dim> FloorDiv(const Dim& a, int64_t b);

  // Substitutes symbol values; error when a symbol is unbound or arithmetic overflows.
  absl::StatusOr<int64_t> Evaluate(const std::map<std::string, int64_t>& bindings) const;

  std::string ToString() const;
  friend bool operator==(const Dim& a, const Dim& b) { return a.terms_ == b.terms_; }
  friend bool operator!=(const Dim& a, const Dim& b) { return !(a == b); }

 private:
  // Monomial key: sorted symbol names with repetition; value: coefficient (never 0).
  using Terms = std::map<std::vector<std::string>, int64_t>;
  Terms terms_;
};

using Shape = std::vector<Dim>;

std::string ShapeToString(const Shape& s);
// Number of elements as a Dim (overflow-checked).
absl::StatusOr<Dim> NumElements(const Shape& s);
// Concrete dims, or nullopt if any dim is symbolic.
std::optional<std::vector<int64_t>> ConcreteDims(const Shape& s);
Shape ShapeFromInts(const std::vector<int64_t>& dims);

}  // namespace gcomp
