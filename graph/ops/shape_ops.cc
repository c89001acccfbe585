// Data-movement and shape-computation ops: Shape, Reshape, Flatten, Transpose, Squeeze,
// Unsqueeze, Concat, Split, Slice, Gather, Expand, ConstantOfShape, Range, Pad.
//
// Shape functions propagate symbolic element values (sym_values) for the small integer tensors
// that dynamic-batch exports compute shapes with (Shape -> Gather -> Unsqueeze -> Concat ->
// Reshape), so `batch` flows through to the reshaped tensors.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "graph/ops/op_helpers.h"
#include "core/status_macros.h"
#include "absl/strings/str_join.h"

namespace gcomp {
namespace {


using ops::BroadcastShapes;
using ops::NormalizeAxis;
using ops::One;
using ops::Out;

// Copies element `src_index` of `src` to element `dst_index` of `dst` (same dtype).
inline void CopyElement(const Tensor& src, int64_t src_index, Tensor& dst, int64_t dst_index) {
  size_t es = DTypeSize(src.dtype());
  std::memcpy(dst.mutable_data() + dst_index * es, src.data() + src_index * es, es);
}

// Generic gather-copy: out[i] = in[src_index(i)] for i over the output's multi-index.
template <typename IndexFn>
void CopyByIndex(const Tensor& in, Tensor& out, IndexFn src_index) {
  const auto& od = out.dims();
  std::vector<int64_t> idx(od.size(), 0);
  for (int64_t flat = 0; flat < out.numel(); ++flat) {
    CopyElement(in, src_index(idx), out, flat);
    for (int64_t d = static_cast<int64_t>(od.size()) - 1; d >= 0; --d) {
      if (++idx[d] < od[d]) break;
      idx[d] = 0;
    }
  }
}

void CopyAll(const Tensor& in, Tensor& out) {
  if (in.nbytes()) std::memcpy(out.mutable_data(), in.data(), in.nbytes());
}

// ---- Shape ------------------------------------------------------------------------------

OpDef ShapeOp() {
  OpDef d;
  d.name = "Shape";
  d.attrs = {{"start", AttrType::kInt}, {"end", AttrType::kInt}};
  d.shape = [](const InferContext& ctx) -> absl::StatusOr<std::vector<OutputInfo>> {
    int64_t r = ctx.rank(0);
    auto clamp = [r](int64_t v) { return std::clamp(v < 0 ? v + r : v, int64_t{0}, r); };
    int64_t start = clamp(ctx.attrs().GetInt("start", 0));
    int64_t end = clamp(ctx.attrs().GetInt("end", r));
    std::vector<Dim> vals;
    for (int64_t i = start; i < end; ++i) vals.push_back(ctx.in(0).shape[i]);
    OutputInfo out = Out(DType::kI64, {Dim(static_cast<int64_t>(vals.size()))});
    out.sym_values = vals;
    return std::vector<OutputInfo>{out};
  };
  d.kernel = [](KernelContext& k) -> absl::Status {
    const auto& dims = k.in(0)->dims();
    int64_t r = static_cast<int64_t>(dims.size());
    auto clamp = [r](int64_t v) { return std::clamp(v < 0 ? v + r : v, int64_t{0}, r); };
    int64_t start = clamp(k.attrs().GetInt("start", 0));
    for (int64_t i = 0; i < k.outputs[0].numel(); ++i) k.outputs[0].SetI64(i, dims[start + i]);
    return absl::OkStatus();
  };
  return d;
}

// ---- Reshape / Flatten --------------------------------------------------------------------

absl::StatusOr<Shape> ReshapeTarget(const InferContext& ctx, const Shape& in, const std::vector<Dim>& spec,
                                    bool allowzero) {
  Shape out;
  int64_t infer_at = -1;
  Dim known(1);
  for (size_t i = 0; i < spec.size(); ++i) {
    Dim d = spec[i];
    if (d == Dim(-1)) {
      if (infer_at >= 0) return ctx.Error("shape ", ShapeToString(spec), " has more than one -1");
      infer_at = static_cast<int64_t>(i);
      out.push_back(Dim(1));
      continue;
    }
    if (d == Dim(0) && !allowzero) {
      if (i >= in.size()) {
        return ctx.Error("shape ", ShapeToString(spec), " copies dimension ", i, " (0) but the input has rank ", in.size());
      }
      d = in[i];
    }
    if (auto c = d.ConstValue(); c && *c < 0) {
      return ctx.Error("shape ", ShapeToString(spec), " has invalid dimension ", *c);
    }
    ASSIGN_OR_RETURN(known, Dim::Mul(known, d));
    out.push_back(d);
  }
  ASSIGN_OR_RETURN(Dim total, NumElements(in));
  if (infer_at >= 0) {
    auto q = Dim::DivExact(total, known);
    if (!q) {
      return ctx.Error("cannot reshape ", ShapeToString(in), " to ", ShapeToString(spec), ": ", total.ToString(),
                       " elements are not a multiple of ", known.ToString());
    }
    out[infer_at] = *q;
  } else if (total != known && (total.IsConst() && known.IsConst())) {
    return ctx.Error("cannot reshape ", ShapeToString(in), " (", total.ToString(), " elements) to ",
                     ShapeToString(spec), " (", known.ToString(), " elements)");
  }
  return out;
}

OpDef Reshape() {
  OpDef d;
  d.name = "Reshape";
  d.min_inputs = d.max_inputs = 2;
  d.attrs = {{"allowzero", AttrType::kInt}};
  d.shape = [](const InferContext& ctx) -> absl::StatusOr<std::vector<OutputInfo>> {
    RETURN_IF_ERROR(ops::ExpectInteger(ctx, 1));
    if (ctx.rank(1) != 1) return ctx.Error(ctx.InputName(1), " has rank ", ctx.rank(1), ", expected 1");
    auto spec = ctx.DimValues(1);
    if (!spec) {  // a target known only at run time
      ASSIGN_OR_RETURN(int64_t rank, ops::VectorLength(ctx, 1));
      return One(ctx.in(0).dtype, ops::DataDependentShape(ctx, 0, rank));
    }
    ASSIGN_OR_RETURN(Shape out, ReshapeTarget(ctx, ctx.in(0).shape, *spec, ctx.attrs().GetInt("allowzero", 0)));
    OutputInfo o = Out(ctx.in(0).dtype, out);
    if (ctx.in(0).sym_values) o.sym_values = *ctx.in(0).sym_values;
    return std::vector<OutputInfo>{o};
  };
  d.kernel = [](KernelContext& k) -> absl::Status {
    CopyAll(*k.in(0), k.outputs[0]);
    return absl::OkStatus();
  };
  return d;
}

OpDef Flatten() {
  OpDef d;
  d.name = "Flatten";
  d.attrs = {{"axis", AttrType::kInt}};
  d.shape = [](const InferContext& ctx) -> absl::StatusOr<std::vector<OutputInfo>> {
    int64_t r = ctx.rank(0);
    int64_t axis = ctx.attrs().GetInt("axis", 1);
    if (axis < -r || axis > r) return ctx.Error("axis ", axis, " is out of range for rank ", r);
    if (axis < 0) axis += r;
    const Shape& s = ctx.in(0).shape;
    ASSIGN_OR_RETURN(Dim a, NumElements(Shape(s.begin(), s.begin() + axis)));
    ASSIGN_OR_RETURN(Dim b, NumElements(Shape(s.begin() + axis, s.end())));
    return One(ctx.in(0).dtype, {a, b});
  };
  d.kernel = [](KernelContext& k) -> absl::Status {
    CopyAll(*k.in(0), k.outputs[0]);
    return absl::OkStatus();
  };
  return d;
}

// ---- Transpose ----------------------------------------------------------------------------

std::vector<int64_t> PermOf(const Attributes& a, int64_t rank) {
  std::vector<int64_t> def(rank);
  for (int64_t i = 0; i < rank; ++i) def[i] = rank - 1 - i;
  return a.GetInts("perm", def);
}

OpDef Transpose() {
  OpDef d;
  d.name = "Transpose";
  d.attrs = {{"perm", AttrType::kInts}};
  d.shape = [](const InferContext& ctx) -> absl::StatusOr<std::vector<OutputInfo>> {
    int64_t r = ctx.rank(0);
    std::vector<int64_t> perm = PermOf(ctx.attrs(), r);
    std::vector<bool> seen(r, false);
    if (static_cast<int64_t>(perm.size()) != r) {
      return ctx.Error("perm has ", perm.size(), " entries, expected ", r, " (the input rank)");
    }
    Shape out;
    for (int64_t p : perm) {
      if (p < 0 || p >= r || seen[p]) {
        return ctx.Error("perm [", absl::StrJoin(perm, ","), "] is not a permutation of 0..", r - 1);
      }
      seen[p] = true;
      out.push_back(ctx.in(0).shape[p]);
    }
    return One(ctx.in(0).dtype, out);
  };
  d.kernel = [](KernelContext& k) -> absl::Status {
    const Tensor& in = *k.in(0);
    std::vector<int64_t> perm = PermOf(k.attrs(), in.rank());
    std::vector<int64_t> st = RowMajorStrides(in.dims());
    CopyByIndex(in, k.outputs[0], [&](const std::vector<int64_t>& idx) {
      int64_t off = 0;
      for (size_t d = 0; d < idx.size(); ++d) off += idx[d] * st[perm[d]];
      return off;
    });
    return absl::OkStatus();
  };
  return d;
}

// ---- Squeeze / Unsqueeze ------------------------------------------------------------------

absl::StatusOr<std::vector<int64_t>> NormalizedAxes(const InferContext& ctx, const std::vector<int64_t>& axes,
                                                    int64_t rank) {
  std::vector<int64_t> out;
  for (int64_t a : axes) {
    ASSIGN_OR_RETURN(int64_t n, NormalizeAxis(a, rank));
    if (std::find(out.begin(), out.end(), n) != out.end()) {
      return ctx.Error("axes [", absl::StrJoin(axes, ","), "] repeat axis ", a);
    }
    out.push_back(n);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Axes of Squeeze/Unsqueeze: the `axes` attribute, or input 1 (kept as an input by the frontend
// when its values are known only at run time). Sets `*count` and returns nullopt when only the
// number of axes is known.
absl::StatusOr<std::optional<std::vector<int64_t>>> AxesOf(const InferContext& ctx, int64_t* count) {
  if (ctx.attrs().Has("axes") || !ctx.has(1)) {
    std::vector<int64_t> axes = ctx.attrs().GetInts("axes");
    *count = static_cast<int64_t>(axes.size());
    return std::optional<std::vector<int64_t>>(axes);
  }
  RETURN_IF_ERROR(ops::ExpectInteger(ctx, 1));
  ASSIGN_OR_RETURN(*count, ops::VectorLength(ctx, 1));
  if (*count == 0) return std::optional<std::vector<int64_t>>(std::vector<int64_t>{});
  return ctx.IntValues(1);
}

OpDef Squeeze() {
  OpDef d;
  d.name = "Squeeze";
  d.max_inputs = 2;
  d.attrs = {{"axes", AttrType::kInts}};
  d.shape = [](const InferContext& ctx) -> absl::StatusOr<std::vector<OutputInfo>> {
    const Shape& s = ctx.in(0).shape;
    int64_t count = 0;
    ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> given, AxesOf(ctx, &count));
    if (!given) {
      if (count > ctx.rank(0)) return ctx.Error("squeezes ", count, " axes of a rank-", ctx.rank(0), " input");
      return One(ctx.in(0).dtype, ops::DataDependentShape(ctx, 0, ctx.rank(0) - count));
    }
    std::vector<int64_t> axes;
    if (!given->empty()) {
      ASSIGN_OR_RETURN(axes, NormalizedAxes(ctx, *given, ctx.rank(0)));
      for (int64_t a : axes) {
        if (s[a].IsConst() && s[a].value() != 1) {
          return ctx.Error("cannot squeeze axis ", a, " of shape ", ShapeToString(s), ": its size is ", s[a].value(),
                           ", expected 1");
        }
      }
    } else {  // no axes: every axis of size 1
      for (size_t i = 0; i < s.size(); ++i) {
        if (!s[i].IsConst()) return ctx.Error("Squeeze without axes on symbolic shape ", ShapeToString(s));
        if (s[i].value() == 1) axes.push_back(static_cast<int64_t>(i));
      }
    }
    Shape out;
    for (size_t i = 0; i < s.size(); ++i) {
      if (std::find(axes.begin(), axes.end(), static_cast<int64_t>(i)) == axes.end()) out.push_back(s[i]);
    }
    OutputInfo o = Out(ctx.in(0).dtype, out);
    if (ctx.in(0).sym_values) o.sym_values = *ctx.in(0).sym_values;
    return std::vector<OutputInfo>{o};
  };
  d.kernel = [](KernelContext& k) -> absl::Status {
    CopyAll(*k.in(0), k.outputs[0]);
    return absl::OkStatus();
  };
  return d;
}

OpDef Unsqueeze() {
  OpDef d;
  d.name = "Unsqueeze";
  d.max_inputs = 2;
  d.attrs = {{"axes", AttrType::kInts}};
  d.shape = [](const InferContext& ctx) -> absl::StatusOr<std::vector<OutputInfo>> {
    const Shape& s = ctx.in(0).shape;
    if (!ctx.attrs().Has("axes") && !ctx.has(1)) return ctx.Error("axes are missing (attribute or input 1)");
    int64_t count = 0;
    ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> given, AxesOf(ctx, &count));
    int64_t out_rank = ctx.rank(0) + count;
    if (!given) return One(ctx.in(0).dtype, ops::DataDependentShape(ctx, 0, out_rank));
    ASSIGN_OR_RETURN(std::vector<int64_t> axes, NormalizedAxes(ctx, *given, out_rank));
    Shape out;
    size_t src = 0;
    for (int64_t i = 0; i < out_rank; ++i) {
      if (std::binary_search(axes.begin(), axes.end(), i)) {
        out.push_back(Dim(1));
      } else {
        out.push_back(s[src++]);
      }
    }
    OutputInfo o = Out(ctx.in(0).dtype, out);
    if (ctx.in(0).sym_values) o.sym_values = *ctx.in(0).sym_values;
    return std::vector<OutputInfo>{o};
  };
  d.kernel = [](KernelContext& k) -> absl::Status {
    CopyAll(*k.in(0), k.outputs[0]);
    return absl::OkStatus();
  };
  return d;
}

// ---- Concat -------------------------------------------------------------------------------

OpDef Concat() {
  OpDef d;
  d.name = "Concat";
  d.min_inputs = 1;
  d.max_inputs = 1 << 16;
  d.attrs = {{"axis", AttrType::kInt, true}};
  d.shape = [](const InferContext& ctx) -> absl::StatusOr<std::vector<OutputInfo>> {
    int64_t r = ctx.rank(0);
    ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx.attrs().GetInt("axis", 0), r));
    Shape out = ctx.in(0).shape;
    std::optional<std::vector<Dim>> vals = std::vector<Dim>{};
    for (size_t i = 0; i < ctx.num_inputs(); ++i) {
      if (!ctx.has(i)) return ctx.Error("input ", i, " is missing");
      RETURN_IF_ERROR(ops::ExpectSameDType(ctx, 0, i));
      const Shape& s = ctx.in(i).shape;
      if (static_cast<int64_t>(s.size()) != r) {
        return ctx.Error(ctx.InputName(i), " has rank ", s.size(), ", expected ", r);
      }
      for (int64_t dd = 0; dd < r; ++dd) {
        if (dd == axis || s[dd] == out[dd]) continue;
        if (s[dd].IsConst() && out[dd].IsConst()) {
          return ctx.Error(ctx.InputName(i), " has shape ", ShapeToString(s), ", expected ",
                           ShapeToString(ctx.in(0).shape), " except on axis ", axis);
        }
      }
      if (i > 0) {
        ASSIGN_OR_RETURN(out[axis], Dim::Add(out[axis], s[axis]));
      }
      auto v = ctx.DimValues(i);
      if (vals && v && r == 1) {
        vals->insert(vals->end(), v->begin(), v->end());
      } else {
        vals.reset();
      }
    }
    OutputInfo o = Out(ctx.in(0).dtype, out);
    if (!IsFloat(o.dtype)) o.sym_values = vals;
    return std::vector<OutputInfo>{o};
  };
  d.kernel = [](KernelContext& k) -> absl::Status {
    Tensor& out = k.outputs[0];
    int64_t axis = k.attrs().GetInt("axis", 0);
    if (axis < 0) axis += out.rank();
    int64_t outer = Product(out.dims(), 0, axis);
    int64_t inner = Product(out.dims(), axis + 1, out.dims().size());
    size_t es = DTypeSize(out.dtype());
    int64_t offset = 0;
    for (const Tensor* in : k.inputs) {
      int64_t len = in->dims()[axis];
      if (len * inner == 0) continue;  // an empty tensor has no storage to copy from
      for (int64_t o = 0; o < outer; ++o) {
        std::memcpy(out.mutable_data() + ((o * out.dims()[axis] + offset) * inner) * es,
                    in->data() + (o * len * inner) * es, len * inner * es);
      }
      offset += len;
    }
    return absl::OkStatus();
  };
  return d;
}

// ---- Split --------------------------------------------------------------------------------

// Split sizes: the `split` attribute or input 1 (opset 13), or `num_outputs` (opset 18:
// ceil-sized chunks), or equal. A split input known only at run time gives data-dependent sizes.
absl::StatusOr<std::vector<Dim>> SplitSizes(const InferContext& ctx, const Dim& len, int64_t n) {
  std::vector<Dim> sizes;
  std::optional<std::vector<int64_t>> given;
  if (ctx.attrs().Has("split")) {
    given = ctx.attrs().GetInts("split");
  } else if (ctx.has(1)) {
    RETURN_IF_ERROR(ops::ExpectInteger(ctx, 1));
    given = ctx.IntValues(1);
    if (!given) {
      for (int64_t i = 0; i < n; ++i) sizes.push_back(ops::DataDependentDim(ctx, static_cast<size_t>(i), 0));
      return sizes;
    }
  }
  if (given) {
    const std::vector<int64_t>& split = *given;
    if (static_cast<int64_t>(split.size()) != n) {
      return ctx.Error("split has ", split.size(), " sizes for ", n, " outputs");
    }
    Dim sum(0);
    for (int64_t s : split) {
      if (s < 0) return ctx.Error("split size ", s, " is negative");
      ASSIGN_OR_RETURN(sum, Dim::Add(sum, Dim(s)));
      sizes.emplace_back(s);
    }
    if (sum != len) {
      return ctx.Error("split sizes [", absl::StrJoin(split, ","), "] add up to ", sum.ToString(), ", expected ",
                       len.ToString(), " (the size of the split axis)");
    }
    return sizes;
  }
  if (ctx.attrs().Has("num_outputs") && len.IsConst()) {
    int64_t chunk = (len.value() + n - 1) / n;
    int64_t left = len.value();
    for (int64_t i = 0; i < n; ++i) {
      sizes.emplace_back(std::min(chunk, left));
      left -= std::min(chunk, left);
    }
    return sizes;
  }
  auto q = Dim::DivExact(len, Dim(n));
  if (!q) return ctx.Error("axis of size ", len.ToString(), " does not split evenly into ", n, " outputs");
  return std::vector<Dim>(n, *q);
}

OpDef Split() {
  OpDef d;
  d.name = "Split";
  d.max_inputs = 2;
  d.max_outputs = 1 << 16;
  d.attrs = {{"axis", AttrType::kInt}, {"split", AttrType::kInts}, {"num_outputs", AttrType::kInt}};
  d.shape = [](const InferContext& ctx) -> absl::StatusOr<std::vector<OutputInfo>> {
    ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx.attrs().GetInt("axis", 0), ctx.rank(0)));
    int64_t n = static_cast<int64_t>(ctx.num_outputs());
    ASSIGN_OR_RETURN(std::vector<Dim> sizes, SplitSizes(ctx, ctx.in(0).shape[axis], n));
    std::vector<OutputInfo> outs;
    for (const Dim& s : sizes) {
      Shape shape = ctx.in(0).shape;
      shape[axis] = s;
      outs.push_back(Out(ctx.in(0).dtype, shape));
    }
    return outs;
  };
  d.kernel = [](KernelContext& k) -> absl::Status {
    const Tensor& in = *k.in(0);
    int64_t axis = k.attrs().GetInt("axis", 0);
    if (axis < 0) axis += in.rank();
    int64_t outer = Product(in.dims(), 0, axis);
    int64_t inner = Product(in.dims(), axis + 1, in.dims().size());
    size_t es = DTypeSize(in.dtype());
    int64_t offset = 0;
    for (Tensor& out : k.outputs) {
      int64_t len = out.dims()[axis];
      if (len * inner == 0) continue;  // an empty output (split size 0) has no storage
      for (int64_t o = 0; o < outer; ++o) {
        std::memcpy(out.mutable_data() + (o * len * inner) * es,
                    in.data() + ((o * in.dims()[axis] + offset) * inner) * es, len * inner * es);
      }
      offset += len;
    }
    return absl::OkStatus();
  };
  return d;
}

// ---- Slice --------------------------------------------------------------------------------

struct SliceSpec {
  std::vector<int64_t> starts, ends, axes, steps;
};

absl::StatusOr<SliceSpec> ReadSliceSpec(const InferContext& ctx) {
  SliceSpec s;
  auto starts = ctx.IntValues(1), ends = ctx.IntValues(2);
  if (!starts || !ends) return ctx.Error("starts and ends must be known at compile time");
  s.starts = *starts;
  s.ends = *ends;
  if (s.starts.size() != s.ends.size()) {
    return ctx.Error("starts has ", s.starts.size(), " entries and ends ", s.ends.size(), ", expected equal");
  }
  size_t n = s.starts.size();
  if (ctx.has(3)) {
    auto axes = ctx.IntValues(3);
    if (!axes) return ctx.Error("axes must be known at compile time");
    s.axes = *axes;
  } else {
    s.axes.resize(n);
    std::iota(s.axes.begin(), s.axes.end(), 0);
  }
  if (ctx.has(4)) {
    auto steps = ctx.IntValues(4);
    if (!steps) return ctx.Error("steps must be known at compile time");
    s.steps = *steps;
  } else {
    s.steps.assign(n, 1);
  }
  if (s.axes.size() != n || s.steps.size() != n) {
    return ctx.Error("axes and steps must have ", n, " entries like starts");
  }
  std::vector<int64_t> seen;
  for (int64_t& a : s.axes) {
    ASSIGN_OR_RETURN(a, NormalizeAxis(a, ctx.rank(0)));
    if (std::find(seen.begin(), seen.end(), a) != seen.end()) return ctx.Error("axis ", a, " is sliced twice");
    seen.push_back(a);
  }
  for (int64_t st : s.steps) {
    if (st == 0) return ctx.Error("slice step is 0");
  }
  return s;
}

OpDef Slice() {
  OpDef d;
  d.name = "Slice";
  d.min_inputs = 3;
  d.max_inputs = 5;
  d.shape = [](const InferContext& ctx) -> absl::StatusOr<std::vector<OutputInfo>> {
    bool known = true;
    for (size_t i = 1; i < 5; ++i) {
      if (!ctx.has(i)) continue;
      RETURN_IF_ERROR(ops::ExpectInteger(ctx, i));
      known = known && ctx.IntValues(i).has_value();
    }
    if (!known) return One(ctx.in(0).dtype, ops::DataDependentShape(ctx, 0, ctx.rank(0)));
    ASSIGN_OR_RETURN(SliceSpec s, ReadSliceSpec(ctx));
    Shape out = ctx.in(0).shape;
    std::vector<SliceAxis> resolved(out.size(), SliceAxis{0, 1, -1});
    for (size_t i = 0; i < s.axes.size(); ++i) {
      const Dim& dim = out[s.axes[i]];
      if (dim.IsConst()) {
        resolved[s.axes[i]] = ResolveSlice(s.starts[i], s.ends[i], s.steps[i], dim.value());
        out[s.axes[i]] = Dim(resolved[s.axes[i]].count);
      } else if (s.steps[i] == 1 && s.starts[i] >= 0 && s.ends[i] >= (int64_t{1} << 31)) {
        ASSIGN_OR_RETURN(out[s.axes[i]], Dim::Sub(dim, Dim(s.starts[i])));  // x[k:] on a symbolic axis
      } else {
        return ctx.Error("cannot slice symbolic axis ", s.axes[i], " of ", ShapeToString(ctx.in(0).shape),
                         " with start ", s.starts[i], ", end ", s.ends[i], ", step ", s.steps[i]);
      }
    }
    OutputInfo o = Out(ctx.in(0).dtype, out);
    auto vals = ctx.DimValues(0);
    if (vals && out.size() == 1 && resolved[0].count >= 0 && !IsFloat(o.dtype)) {
      std::vector<Dim> sliced;
      for (int64_t j = 0; j < resolved[0].count; ++j) sliced.push_back((*vals)[resolved[0].start + j * resolved[0].step]);
      o.sym_values = sliced;
    }
    return std::vector<OutputInfo>{o};
  };
  d.kernel = [](KernelContext& k) -> absl::Status {
    const Tensor& in = *k.in(0);
    std::vector<SliceAxis> ax(in.rank());
    for (int64_t i = 0; i < in.rank(); ++i) ax[i] = {0, 1, in.dims()[i]};
    std::vector<int64_t> starts = k.in(1)->ToI64(), ends = k.in(2)->ToI64();
    std::vector<int64_t> axes(starts.size()), steps(starts.size(), 1);
    std::iota(axes.begin(), axes.end(), 0);
    if (k.in(3)) axes = k.in(3)->ToI64();
    if (k.in(4)) steps = k.in(4)->ToI64();
    for (size_t i = 0; i < starts.size(); ++i) {
      int64_t a = axes[i] < 0 ? axes[i] + in.rank() : axes[i];
      ax[a] = ResolveSlice(starts[i], ends[i], steps[i], in.dims()[a]);
    }
    std::vector<int64_t> st = RowMajorStrides(in.dims());
    CopyByIndex(in, k.outputs[0], [&](const std::vector<int64_t>& idx) {
      int64_t off = 0;
      for (size_t dd = 0; dd < idx.size(); ++dd) off += (ax[dd].start + idx[dd] * ax[dd].step) * st[dd];
      return off;
    });
    return absl::OkStatus();
  };
  return d;
}

// ---- Gather -------------------------------------------------------------------------------

OpDef Gather() {
  OpDef d;
  d.name = "Gather";
  d.min_inputs = d.max_inputs = 2;
  d.attrs = {{"axis", AttrType::kInt}};
  d.shape = [](const InferContext& ctx) -> absl::StatusOr<std::vector<OutputInfo>> {
    RETURN_IF_ERROR(ops::ExpectInteger(ctx, 1));
    const Shape& data = ctx.in(0).shape;
    ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx.attrs().GetInt("axis", 0), ctx.rank(0)));
    Shape out(data.begin(), data.begin() + axis);
    out.insert(out.end(), ctx.in(1).shape.begin(), ctx.in(1).shape.end());
    out.insert(out.end(), data.begin() + axis + 1, data.end());
    auto idx = ctx.IntValues(1);
    if (idx && data[axis].IsConst()) {
      for (int64_t i : *idx) {
        int64_t n = data[axis].value();
        if (i < -n || i >= n) {
          return ctx.Error("index ", i, " in ", ctx.InputName(1), " is out of range for axis ", axis, " of size ", n);
        }
      }
    }
    OutputInfo o = Out(ctx.in(0).dtype, out);
    auto vals = ctx.DimValues(0);
    if (idx && vals && ctx.rank(0) == 1 && !IsFloat(o.dtype)) {
      std::vector<Dim> picked;
      int64_t n = static_cast<int64_t>(vals->size());
      for (int64_t i : *idx) picked.push_back((*vals)[i < 0 ? i + n : i]);
      o.sym_values = picked;
    }
    return std::vector<OutputInfo>{o};
  };
  d.kernel = [](KernelContext& k) -> absl::Status {
    const Tensor& data = *k.in(0);
    const Tensor& indices = *k.in(1);
    int64_t axis = k.attrs().GetInt("axis", 0);
    if (axis < 0) axis += data.rank();
    int64_t outer = Product(data.dims(), 0, axis);
    int64_t n = data.dims()[axis];
    int64_t inner = Product(data.dims(), axis + 1, data.dims().size());
    size_t es = DTypeSize(data.dtype());
    Tensor& out = k.outputs[0];
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t j = 0; j < indices.numel(); ++j) {
        int64_t i = indices.GetI64(j);
        if (i < -n || i >= n) {
          return absl::InvalidArgumentError(absl::StrCat("index ", i, " is out of range for axis ", axis, " of size ", n));
        }
        if (i < 0) i += n;
        if (inner == 0) continue;
        std::memcpy(out.mutable_data() + ((o * indices.numel() + j) * inner) * es,
                    data.data() + ((o * n + i) * inner) * es, inner * es);
      }
    }
    return absl::OkStatus();
  };
  return d;
}

// ---- Expand / ConstantOfShape / Range -----------------------------------------------------

// A shape input's values; nullopt when they are known only at run time.
absl::StatusOr<std::optional<std::vector<Dim>>> ShapeInput(const InferContext& ctx, size_t i) {
  RETURN_IF_ERROR(ops::ExpectInteger(ctx, i));
  if (ctx.rank(i) != 1) return ctx.Error(ctx.InputName(i), " has rank ", ctx.rank(i), ", expected 1");
  auto v = ctx.DimValues(i);
  if (!v) return std::optional<std::vector<Dim>>();
  for (const Dim& d : *v) {
    if (auto c = d.ConstValue(); c && *c < 0) {
      return ctx.Error(ctx.InputName(i), " has negative dimension ", *c);
    }
  }
  return *v;
}

OpDef Expand() {
  OpDef d;
  d.name = "Expand";
  d.min_inputs = d.max_inputs = 2;
  d.shape = [](const InferContext& ctx) -> absl::StatusOr<std::vector<OutputInfo>> {
    ASSIGN_OR_RETURN(std::optional<std::vector<Dim>> target, ShapeInput(ctx, 1));
    if (!target) {
      ASSIGN_OR_RETURN(int64_t n, ops::VectorLength(ctx, 1));
      return One(ctx.in(0).dtype, ops::DataDependentShape(ctx, 0, std::max(n, ctx.rank(0))));
    }
    ASSIGN_OR_RETURN(Shape out, BroadcastShapes(ctx.in(0).shape, Shape(target->begin(), target->end())));
    return One(ctx.in(0).dtype, out);
  };
  d.kernel = [](KernelContext& k) -> absl::Status {
    const Tensor& in = *k.in(0);
    Tensor& out = k.outputs[0];
    std::vector<int64_t> map = ops::BroadcastIndexMap(in.dims(), out.dims());
    for (int64_t i = 0; i < out.numel(); ++i) CopyElement(in, map[i], out, i);
    return absl::OkStatus();
  };
  return d;
}

OpDef ConstantOfShape() {
  OpDef d;
  d.name = "ConstantOfShape";
  d.attrs = {{"value", AttrType::kTensor}};
  d.shape = [](const InferContext& ctx) -> absl::StatusOr<std::vector<OutputInfo>> {
    const Tensor* v = ctx.attrs().GetTensor("value");
    if (v && v->numel() != 1) return ctx.Error("attribute 'value' has ", v->numel(), " elements, expected 1");
    DType t = v ? v->dtype() : DType::kF32;
    ASSIGN_OR_RETURN(std::optional<std::vector<Dim>> known, ShapeInput(ctx, 0));
    if (!known) {
      ASSIGN_OR_RETURN(int64_t n, ops::VectorLength(ctx, 0));
      return One(t, ops::DataDependentShape(ctx, 0, n));
    }
    const std::vector<Dim>& target = *known;
    OutputInfo o = Out(t, Shape(target.begin(), target.end()));
    if (!IsFloat(t) && target.size() == 1 && target[0].IsConst() && target[0].value() <= 64) {
      o.sym_values = std::vector<Dim>(target[0].value(), Dim(v ? v->GetI64(0) : 0));
    }
    return std::vector<OutputInfo>{o};
  };
  d.kernel = [](KernelContext& k) -> absl::Status {
    const Tensor* v = k.attrs().GetTensor("value");
    Tensor& out = k.outputs[0];
    if (!v) return absl::OkStatus();  // zeros
    for (int64_t i = 0; i < out.numel(); ++i) CopyElement(*v, 0, out, i);
    return absl::OkStatus();
  };
  return d;
}

OpDef Range() {
  OpDef d;
  d.name = "Range";
  d.min_inputs = d.max_inputs = 3;
  d.shape = [](const InferContext& ctx) -> absl::StatusOr<std::vector<OutputInfo>> {
    for (size_t i = 0; i < 3; ++i) {
      if (ctx.rank(i) != 0) return ctx.Error(ctx.InputName(i), " has rank ", ctx.rank(i), ", expected a scalar");
      if (i) RETURN_IF_ERROR(ops::ExpectSameDType(ctx, 0, i));
    }
    DType t = ctx.in(0).dtype;
    auto value = [&](size_t i) -> std::optional<double> {
      if (ctx.in(i).constant) {
        // Not `cond ? GetF32 : GetI64`: that would round int64 bounds through float.
        if (IsFloat(t)) return static_cast<double>(ctx.in(i).constant->GetF32(0));
        return static_cast<double>(ctx.in(i).constant->GetI64(0));
      }
      auto v = ctx.IntValues(i);
      if (v) return static_cast<double>((*v)[0]);
      return std::nullopt;
    };
    auto start = value(0), limit = value(1), delta = value(2);
    if (!start || !limit || !delta) return One(t, ops::DataDependentShape(ctx, 0, 1));
    if (*delta == 0) return ctx.Error("delta is 0");
    double n = std::ceil((*limit - *start) / *delta);
    if (!(n < 1e12)) return ctx.Error("range of ", n, " elements is too large, expected fewer than 1e12");
    return One(t, {Dim(std::max<int64_t>(0, static_cast<int64_t>(n)))});
  };
  d.kernel = [](KernelContext& k) -> absl::Status {
    Tensor& out = k.outputs[0];
    if (IsFloat(out.dtype())) {
      float start = k.in(0)->GetF32(0), delta = k.in(2)->GetF32(0);
      for (int64_t i = 0; i < out.numel(); ++i) out.SetF32(i, start + static_cast<float>(i) * delta);
    } else {
      int64_t start = k.in(0)->GetI64(0), delta = k.in(2)->GetI64(0);
      for (int64_t i = 0; i < out.numel(); ++i) out.SetI64(i, start + i * delta);
    }
    return absl::OkStatus();
  };
  return d;
}

// ---- Pad ----------------------------------------------------------------------------------

// Pads for every axis: `pads` covers all axes, or only those listed in `axes` (opset 18).
absl::StatusOr<std::vector<int64_t>> FullPads(const std::vector<int64_t>& pads,
                                              const std::optional<std::vector<int64_t>>& axes, int64_t r) {
  if (!axes) {
    if (static_cast<int64_t>(pads.size()) != 2 * r) {
      return absl::InvalidArgumentError(absl::StrCat("pads has ", pads.size(), " entries, expected ", 2 * r, " (2 x rank)"));
    }
    return pads;
  }
  std::vector<int64_t> full(2 * r, 0);
  if (pads.size() != 2 * axes->size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("pads has ", pads.size(), " entries for ", axes->size(), " axes, expected ", 2 * axes->size()));
  }
  for (size_t k = 0; k < axes->size(); ++k) {
    ASSIGN_OR_RETURN(int64_t ax, NormalizeAxis((*axes)[k], r));
    full[ax] = pads[k];
    full[ax + r] = pads[k + axes->size()];
  }
  return full;
}

absl::StatusOr<std::vector<int64_t>> FullPads(const Attributes& a, int64_t r) {
  std::optional<std::vector<int64_t>> axes;
  if (a.Has("axes")) axes = a.GetInts("axes");
  return FullPads(a.GetInts("pads"), axes, r);
}

OpDef Pad() {
  // Canonical form: attributes mode, pads (2 * rank: all begins, then all ends), value and axes.
  // When pads, the constant value or axes are known only at run time, the frontend keeps them as
  // inputs 1-3 (the opset-11/18 form) and the output shape is data-dependent.
  OpDef d;
  d.name = "Pad";
  d.max_inputs = 4;
  d.attrs = {
      {"mode", AttrType::kString}, {"pads", AttrType::kInts}, {"value", AttrType::kFloat}, {"axes", AttrType::kInts}};
  d.shape = [](const InferContext& ctx) -> absl::StatusOr<std::vector<OutputInfo>> {
    int64_t r = ctx.rank(0);
    std::string mode = ctx.attrs().GetString("mode", "constant");
    if (mode != "constant" && mode != "reflect" && mode != "edge" && mode != "wrap") {
      return ctx.Error("mode '", mode, "' is not one of constant, reflect, edge, wrap");
    }
    std::vector<int64_t> pads;
    if (ctx.has(1)) {
      RETURN_IF_ERROR(ops::ExpectInteger(ctx, 1));
      if (ctx.has(2) && (ctx.in(2).dtype != ctx.in(0).dtype || ctx.in(2).shape.size() > 1)) {
        return ctx.Error(ctx.InputName(2), " has type ", DTypeName(ctx.in(2).dtype), ShapeToString(ctx.in(2).shape),
                         ", expected a ", DTypeName(ctx.in(0).dtype), " scalar");
      }
      if (ctx.has(3)) RETURN_IF_ERROR(ops::ExpectInteger(ctx, 3));
      auto given = ctx.IntValues(1);
      std::optional<std::vector<int64_t>> axes;
      if (ctx.has(3)) axes = ctx.IntValues(3);
      if (!given || (ctx.has(3) && !axes)) return One(ctx.in(0).dtype, ops::DataDependentShape(ctx, 0, r));
      ASSIGN_OR_RETURN(pads, FullPads(*given, axes, r));
    } else {
      if (!ctx.attrs().Has("pads")) return ctx.Error("pads are missing (attribute or input 1)");
      ASSIGN_OR_RETURN(pads, FullPads(ctx.attrs(), r));
    }
    Shape out = ctx.in(0).shape;
    for (int64_t i = 0; i < r; ++i) {
      ASSIGN_OR_RETURN(out[i], Dim::Add(out[i], Dim(pads[i])));
      ASSIGN_OR_RETURN(out[i], Dim::Add(out[i], Dim(pads[i + r])));
      if (auto c = out[i].ConstValue(); c && *c < 0) return ctx.Error("pads make axis ", i, " negative");
      if (mode != "constant" && (pads[i] > 0 || pads[i + r] > 0) && ctx.in(0).shape[i] == Dim(0)) {
        return ctx.Error("cannot ", mode, "-pad an empty axis ", i);
      }
      if (mode != "constant" && (pads[i] < 0 || pads[i + r] < 0)) {
        return ctx.Error("negative pads (", pads[i], ", ", pads[i + r], " on axis ", i, ") with mode '", mode,
                         "' are not supported, expected pads >= 0 (only constant mode crops)");
      }
    }
    return One(ctx.in(0).dtype, out);
  };
  d.kernel = [](KernelContext& k) -> absl::Status {
    const Tensor& in = *k.in(0);
    Tensor& out = k.outputs[0];
    std::vector<int64_t> pads;
    if (k.in(1)) {
      std::optional<std::vector<int64_t>> axes;
      if (k.in(3)) axes = k.in(3)->ToI64();
      ASSIGN_OR_RETURN(pads, FullPads(k.in(1)->ToI64(), axes, in.rank()));
    } else {
      ASSIGN_OR_RETURN(pads, FullPads(k.attrs(), in.rank()));
    }
    std::string mode = k.attrs().GetString("mode", "constant");
    const Tensor* value_input = k.in(2) && k.in(2)->numel() > 0 ? k.in(2) : nullptr;
    float value = value_input ? value_input->GetF32(0) : k.attrs().GetFloat("value", 0.0f);
    int64_t r = in.rank();
    std::vector<int64_t> st = RowMajorStrides(in.dims());
    const auto& od = out.dims();
    std::vector<int64_t> idx(r, 0);
    for (int64_t flat = 0; flat < out.numel(); ++flat) {
      int64_t off = 0;
      bool inside = true;
      for (int64_t dd = 0; dd < r; ++dd) {
        int64_t n = in.dims()[dd];
        int64_t s = idx[dd] - pads[dd];
        if (s < 0 || s >= n) {
          if (mode == "constant") {
            inside = false;
            break;
          } else if (mode == "edge") {
            s = std::clamp(s, int64_t{0}, n - 1);
          } else if (mode == "wrap") {
            s = ((s % n) + n) % n;
          } else {  // reflect
            int64_t period = 2 * (n - 1);
            if (period == 0) {
              s = 0;
            } else {
              s = ((s % period) + period) % period;
              if (s >= n) s = period - s;
            }
          }
        }
        off += s * st[dd];
      }
      if (inside) {
        CopyElement(in, off, out, flat);
      } else if (IsFloat(out.dtype())) {
        out.SetF32(flat, value);
      } else {
        out.SetI64(flat, value_input ? value_input->GetI64(0) : static_cast<int64_t>(value));
      }
      for (int64_t dd = r - 1; dd >= 0; --dd) {
        if (++idx[dd] < od[dd]) break;
        idx[dd] = 0;
      }
    }
    return absl::OkStatus();
  };
  return d;
}

}  // namespace

void RegisterShapeOps(OpTableBuilder& t) {
  t.Add(ShapeOp());
  t.Add(Reshape());
  t.Add(Flatten());
  t.Add(Transpose());
  t.Add(Squeeze());
  t.Add(Unsqueeze());
  t.Add(Concat());
  t.Add(Split());
  t.Add(Slice());
  t.Add(Gather());
  t.Add(Expand());
  t.Add(ConstantOfShape());
  t.Add(Range());
  t.Add(Pad());
}

}  // namespace gcomp
