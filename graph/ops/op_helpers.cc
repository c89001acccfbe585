#include "graph/ops/op_helpers.h"

#include <algorithm>

namespace gcomp::ops {

absl::StatusOr<Shape> BroadcastShapes(const Shape& a, const Shape& b) {
  size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const Dim one(1);
    const Dim& da = i + a.size() >= rank ? a[i + a.size() - rank] : one;
    const Dim& db = i + b.size() >= rank ? b[i + b.size() - rank] : one;
    if (da == db || db == one) {
      out[i] = da;
    } else if (da == one) {
      out[i] = db;
    } else if (da.IsConst() && db.IsConst()) {
      return absl::InvalidArgumentError(absl::StrCat("shapes ", ShapeToString(a), " and ", ShapeToString(b),
                                                     " do not broadcast: ", da.value(), " vs ", db.value(),
                                                     " at output axis ", i, ", expected equal sizes or 1"));
    } else {
      out[i] = da.IsConst() ? da : db;  // the symbol must equal the constant at run time
    }
  }
  return out;
}

absl::StatusOr<int64_t> NormalizeAxis(int64_t axis, int64_t rank, const char* what) {
  if (axis < -rank || axis >= rank || (rank == 0 && axis != 0)) {
    return absl::InvalidArgumentError(absl::StrCat(what, " ", axis, " is out of range for rank ", rank));
  }
  return axis < 0 ? axis + rank : axis;
}

absl::Status ExpectFloat(const InferContext& ctx, size_t i) {
  if (!IsFloat(ctx.in(i).dtype)) {
    return ctx.Error(ctx.InputName(i), " has dtype ", DTypeName(ctx.in(i).dtype), ", expected a float type");
  }
  return absl::OkStatus();
}

absl::Status ExpectInteger(const InferContext& ctx, size_t i) {
  DType t = ctx.in(i).dtype;
  if (t != DType::kI64 && t != DType::kI32) {
    return ctx.Error(ctx.InputName(i), " has dtype ", DTypeName(t), ", expected i64 or i32");
  }
  return absl::OkStatus();
}

absl::Status ExpectRank(const InferContext& ctx, size_t i, int64_t rank) {
  if (ctx.rank(i) != rank) {
    return ctx.Error(ctx.InputName(i), " has rank ", ctx.rank(i), ", expected ", rank);
  }
  return absl::OkStatus();
}

absl::Status ExpectSameDType(const InferContext& ctx, size_t i, size_t j) {
  if (ctx.in(i).dtype != ctx.in(j).dtype) {
    return ctx.Error(ctx.InputName(j), " has dtype ", DTypeName(ctx.in(j).dtype), ", expected ",
                     DTypeName(ctx.in(i).dtype), " like ", ctx.InputName(i));
  }
  return absl::OkStatus();
}

Dim DataDependentDim(const InferContext& ctx, size_t output, size_t axis) {
  return Dim::Symbol(absl::StrCat("?", ctx.node().name, ":", output, ":", axis));
}

Shape DataDependentShape(const InferContext& ctx, size_t output, int64_t rank) {
  Shape s;
  for (int64_t i = 0; i < rank; ++i) s.push_back(DataDependentDim(ctx, output, static_cast<size_t>(i)));
  return s;
}

bool IsDataDependentSymbol(const std::string& symbol) { return !symbol.empty() && symbol[0] == '?'; }

absl::StatusOr<int64_t> VectorLength(const InferContext& ctx, size_t i) {
  if (ctx.rank(i) != 1) return ctx.Error(ctx.InputName(i), " has rank ", ctx.rank(i), ", expected 1");
  std::optional<int64_t> n = ctx.in(i).shape[0].ConstValue();
  if (!n) {
    return ctx.Error(ctx.InputName(i), " has symbolic length ", ctx.in(i).shape[0].ToString(),
                     ", expected a constant (it sets the output rank)");
  }
  return *n;
}

std::vector<int64_t> BroadcastIndexMap(const std::vector<int64_t>& in_dims,
                                       const std::vector<int64_t>& out_dims) {
  size_t rank = out_dims.size();
  std::vector<int64_t> padded(rank, 1);
  std::copy(in_dims.begin(), in_dims.end(), padded.begin() + (rank - in_dims.size()));
  std::vector<int64_t> in_strides = RowMajorStrides(padded);
  for (size_t d = 0; d < rank; ++d) {
    if (padded[d] == 1) in_strides[d] = 0;
  }
  int64_t n = Product(out_dims, 0, rank);
  std::vector<int64_t> map(static_cast<size_t>(n));
  std::vector<int64_t> idx(rank, 0);
  for (int64_t flat = 0; flat < n; ++flat) {
    int64_t off = 0;
    for (size_t d = 0; d < rank; ++d) off += idx[d] * in_strides[d];
    map[flat] = off;
    for (int64_t d = static_cast<int64_t>(rank) - 1; d >= 0; --d) {
      if (++idx[d] < out_dims[d]) break;
      idx[d] = 0;
    }
  }
  return map;
}

void WriteF32(Tensor& t, const std::vector<float>& v) {
  for (int64_t i = 0; i < t.numel(); ++i) t.SetF32(i, v[i]);
}

void WriteI64(Tensor& t, const std::vector<int64_t>& v) {
  for (int64_t i = 0; i < t.numel(); ++i) t.SetI64(i, v[i]);
}

}  // namespace gcomp::ops
