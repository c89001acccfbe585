// Neural-network ops: MatMul, Gemm, BatchNormalization (inference), Softmax, LayerNormalization,
// ReduceMean and ReduceSum. Conv and pooling live in conv_pool_ops.cc, Attention in
// attention_op.cc; RegisterNnOps registers the whole family.
#include <algorithm>
#include <cmath>

#include "graph/ops/op_helpers.h"
#include "core/status_macros.h"

namespace gcomp {

void RegisterConvPoolOps(OpTableBuilder& t);
void RegisterAttentionOp(OpTableBuilder& t);

namespace {

using ops::BroadcastIndexMap;
using ops::ExpectFloat;
using ops::One;
using ops::Out;
using ops::ReadF32;
using ops::WriteF32;

// Whether `from` broadcasts to `to` without changing `to` (ONNX unidirectional broadcasting).
// Symbolic dims are accepted here; the interpreter checks again with concrete shapes.
bool BroadcastsTo(const Shape& from, const Shape& to) {
  if (from.size() > to.size()) return false;
  for (size_t i = 0; i < from.size(); ++i) {
    const Dim& f = from[from.size() - 1 - i];
    const Dim& t = to[to.size() - 1 - i];
    if (f == t || f == Dim(1) || !f.IsConst() || !t.IsConst()) continue;
    return false;
  }
  return true;
}

absl::Status ExpectBroadcastsTo(const InferContext& ctx, size_t i, const Shape& to, const std::string& what) {
  if (BroadcastsTo(ctx.in(i).shape, to)) return absl::OkStatus();
  return ctx.Error(ctx.InputName(i), " has shape ", ShapeToString(ctx.in(i).shape),
                   ", expected a shape that broadcasts to ", ShapeToString(to), " (", what, ")");
}

// An axis attribute normalized into [0, rank).
absl::StatusOr<int64_t> AxisAttr(const InferContext& ctx, const std::string& name, int64_t def) {
  const int64_t axis = ctx.attrs().GetInt(name, def), rank = ctx.rank(0);
  if (axis < -rank || axis >= rank) {
    return ctx.Error("attribute '", name, "' is ", axis, ", expected a value in [", -rank, ", ", rank, ")");
  }
  return axis < 0 ? axis + rank : axis;
}

absl::StatusOr<bool> Flag(const InferContext& ctx, const std::string& name, int64_t def) {
  int64_t v = ctx.attrs().GetInt(name, def);
  if (v != 0 && v != 1) return ctx.Error("attribute '", name, "' is ", v, ", expected 0 or 1");
  return v == 1;
}

// C[m, n] += A[m, k] * B[k, n] for row-major blocks, in i-k-j order. The oracle accumulates in
// double so that its own rounding stays far below the tolerances backends are checked with.
void MatMulAccumulate(const float* a, const float* b, double* c, int64_t m, int64_t k, int64_t n) {
  for (int64_t i = 0; i < m; ++i) {
    double* __restrict crow = c + i * n;
    for (int64_t p = 0; p < k; ++p) {
      const double av = a[i * k + p];
      const float* __restrict brow = b + p * n;
      for (int64_t j = 0; j < n; ++j) crow[j] += av * brow[j];
    }
  }
}

// ---- MatMul -------------------------------------------------------------------------------

absl::StatusOr<std::vector<OutputInfo>> MatMulShape(const InferContext& ctx) {
  RETURN_IF_ERROR(ExpectFloat(ctx, 0));
  RETURN_IF_ERROR(ops::ExpectSameDType(ctx, 0, 1));
  for (size_t i = 0; i < 2; ++i) {
    if (ctx.rank(i) < 1) return ctx.Error(ctx.InputName(i), " has rank 0, expected at least 1");
  }
  Shape a = ctx.in(0).shape, b = ctx.in(1).shape;
  const bool a_vector = a.size() == 1, b_vector = b.size() == 1;
  if (a_vector) a.insert(a.begin(), Dim(1));
  if (b_vector) b.push_back(Dim(1));
  const Dim& ka = a[a.size() - 1];
  const Dim& kb = b[b.size() - 2];
  if (ka != kb && ka.IsConst() && kb.IsConst()) {
    return ctx.Error(ctx.InputName(1), " has ", kb.ToString(), b_vector ? " elements" : " rows", ", expected ",
                     ka.ToString(), " (the columns of ", ctx.InputName(0), ")");
  }
  Shape batch_a(a.begin(), a.end() - 2), batch_b(b.begin(), b.end() - 2);
  absl::StatusOr<Shape> batch = ops::BroadcastShapes(batch_a, batch_b);
  if (!batch.ok()) {
    return ctx.Error("batch dims ", ShapeToString(batch_a), " of ", ctx.InputName(0), " and ", ShapeToString(batch_b),
                     " of ", ctx.InputName(1), " do not broadcast");
  }
  Shape out = *batch;
  if (!a_vector) out.push_back(a[a.size() - 2]);
  if (!b_vector) out.push_back(b[b.size() - 1]);
  return One(ctx.in(0).dtype, out);
}

absl::Status MatMulKernel(KernelContext& k) {
  std::vector<int64_t> ad = k.in(0)->dims(), bd = k.in(1)->dims();
  if (ad.size() == 1) ad.insert(ad.begin(), 1);
  if (bd.size() == 1) bd.push_back(1);
  const int64_t m = ad[ad.size() - 2], kk = ad[ad.size() - 1], n = bd[bd.size() - 1];
  std::vector<int64_t> batch_a(ad.begin(), ad.end() - 2), batch_b(bd.begin(), bd.end() - 2);
  std::vector<int64_t> batch(std::max(batch_a.size(), batch_b.size()), 1);
  for (size_t i = 0; i < batch.size(); ++i) {
    int64_t da = i + batch_a.size() >= batch.size() ? batch_a[i + batch_a.size() - batch.size()] : 1;
    int64_t db = i + batch_b.size() >= batch.size() ? batch_b[i + batch_b.size() - batch.size()] : 1;
    batch[i] = da == 1 ? db : da;
  }
  std::vector<int64_t> map_a = BroadcastIndexMap(batch_a, batch), map_b = BroadcastIndexMap(batch_b, batch);
  std::vector<float> a = ReadF32(*k.in(0)), b = ReadF32(*k.in(1));
  std::vector<double> c(static_cast<size_t>(k.outputs[0].numel()), 0.0);
  for (size_t i = 0; i < map_a.size(); ++i) {
    MatMulAccumulate(a.data() + map_a[i] * m * kk, b.data() + map_b[i] * kk * n, c.data() + i * m * n, m, kk, n);
  }
  WriteF32(k.outputs[0], std::vector<float>(c.begin(), c.end()));
  return absl::OkStatus();
}

OpDef MatMul() {
  OpDef d;
  d.name = "MatMul";
  d.min_inputs = d.max_inputs = 2;
  d.shape = MatMulShape;
  d.kernel = MatMulKernel;
  return d;
}

// ---- Gemm ---------------------------------------------------------------------------------

absl::StatusOr<std::vector<OutputInfo>> GemmShape(const InferContext& ctx) {
  RETURN_IF_ERROR(ExpectFloat(ctx, 0));
  RETURN_IF_ERROR(ops::ExpectSameDType(ctx, 0, 1));
  RETURN_IF_ERROR(ops::ExpectRank(ctx, 0, 2));
  RETURN_IF_ERROR(ops::ExpectRank(ctx, 1, 2));
  ASSIGN_OR_RETURN(bool trans_a, Flag(ctx, "transA", 0));
  ASSIGN_OR_RETURN(bool trans_b, Flag(ctx, "transB", 0));
  const Shape& a = ctx.in(0).shape;
  const Shape& b = ctx.in(1).shape;
  const Dim& m = a[trans_a ? 1 : 0];
  const Dim& ka = a[trans_a ? 0 : 1];
  const Dim& kb = b[trans_b ? 1 : 0];
  const Dim& n = b[trans_b ? 0 : 1];
  if (ka != kb && ka.IsConst() && kb.IsConst()) {
    return ctx.Error(ctx.InputName(1), " has K=", kb.ToString(), " (dim ", trans_b ? 1 : 0, ", transB=", trans_b,
                     "), expected ", ka.ToString(), " like ", ctx.InputName(0), " (dim ", trans_a ? 0 : 1,
                     ", transA=", trans_a, ")");
  }
  if (ctx.has(2)) {
    RETURN_IF_ERROR(ops::ExpectSameDType(ctx, 0, 2));
    RETURN_IF_ERROR(ExpectBroadcastsTo(ctx, 2, {m, n}, "[M, N]"));
  }
  return One(ctx.in(0).dtype, {m, n});
}

absl::Status GemmKernel(KernelContext& k) {
  const bool trans_a = k.attrs().GetInt("transA", 0) != 0, trans_b = k.attrs().GetInt("transB", 0) != 0;
  const float alpha = k.attrs().GetFloat("alpha", 1.0f), beta = k.attrs().GetFloat("beta", 1.0f);
  const std::vector<int64_t>& ad = k.in(0)->dims();
  const std::vector<int64_t>& bd = k.in(1)->dims();
  const int64_t m = k.outputs[0].dims()[0], n = k.outputs[0].dims()[1];
  const int64_t kk = trans_a ? ad[0] : ad[1];
  auto transposed = [](const std::vector<float>& v, int64_t rows, int64_t cols) {
    std::vector<float> t(v.size());
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < cols; ++c) t[c * rows + r] = v[r * cols + c];
    }
    return t;
  };
  std::vector<float> a = ReadF32(*k.in(0)), b = ReadF32(*k.in(1));
  if (trans_a) a = transposed(a, ad[0], ad[1]);
  if (trans_b) b = transposed(b, bd[0], bd[1]);
  std::vector<double> acc(static_cast<size_t>(m * n), 0.0);
  MatMulAccumulate(a.data(), b.data(), acc.data(), m, kk, n);
  std::vector<float> y(acc.size());
  for (size_t i = 0; i < acc.size(); ++i) y[i] = static_cast<float>(alpha * acc[i]);
  if (k.in(2) && beta != 0.0f) {  // beta = 0 ignores C, as ONNX Runtime does
    std::vector<float> c = ReadF32(*k.in(2));
    std::vector<int64_t> map = BroadcastIndexMap(k.in(2)->dims(), {m, n});
    for (int64_t i = 0; i < m * n; ++i) y[i] += beta * c[map[i]];
  }
  WriteF32(k.outputs[0], y);
  return absl::OkStatus();
}

OpDef Gemm() {
  OpDef d;
  d.name = "Gemm";
  d.min_inputs = 2;
  d.max_inputs = 3;
  d.attrs = {
      {"alpha", AttrType::kFloat}, {"beta", AttrType::kFloat}, {"transA", AttrType::kInt}, {"transB", AttrType::kInt}};
  d.shape = GemmShape;
  d.kernel = GemmKernel;
  return d;
}

// ---- BatchNormalization (inference) -------------------------------------------------------

OpDef BatchNormalization() {
  OpDef d;
  d.name = "BatchNormalization";
  d.min_inputs = d.max_inputs = 5;
  d.attrs = {{"epsilon", AttrType::kFloat}, {"momentum", AttrType::kFloat}, {"training_mode", AttrType::kInt}};
  d.shape = [](const InferContext& ctx) -> absl::StatusOr<std::vector<OutputInfo>> {
    RETURN_IF_ERROR(ExpectFloat(ctx, 0));
    if (ctx.rank(0) < 2) return ctx.Error(ctx.InputName(0), " has rank ", ctx.rank(0), ", expected at least 2");
    if (int64_t t = ctx.attrs().GetInt("training_mode", 0); t != 0) {
      return ctx.Error("attribute 'training_mode' is ", t, ", expected 0 (only inference is supported)");
    }
    const Dim& c = ctx.in(0).shape[1];
    for (size_t i = 1; i < 5; ++i) {
      RETURN_IF_ERROR(ExpectFloat(ctx, i));
      RETURN_IF_ERROR(ops::ExpectRank(ctx, i, 1));
      const Dim& n = ctx.in(i).shape[0];
      if (n != c && n.IsConst() && c.IsConst()) {
        return ctx.Error(ctx.InputName(i), " has ", n.ToString(), " elements, expected ", c.ToString(),
                         " (the channels of ", ctx.InputName(0), ")");
      }
    }
    return One(ctx.in(0).dtype, ctx.in(0).shape);
  };
  d.kernel = [](KernelContext& k) -> absl::Status {
    const Tensor& xt = *k.in(0);
    const double eps = k.attrs().GetFloat("epsilon", 1e-5f);
    const int64_t batch = xt.dims()[0], channels = xt.dims()[1];
    const int64_t plane = Product(xt.dims(), 2, xt.dims().size());
    std::vector<float> x = ReadF32(xt), scale = ReadF32(*k.in(1)), bias = ReadF32(*k.in(2));
    std::vector<float> mean = ReadF32(*k.in(3)), var = ReadF32(*k.in(4));
    for (int64_t c = 0; c < channels; ++c) {
      const float mul = static_cast<float>(scale[c] / std::sqrt(static_cast<double>(var[c]) + eps));
      const float add = static_cast<float>(bias[c] - static_cast<double>(mean[c]) * mul);
      for (int64_t n = 0; n < batch; ++n) {
        float* p = x.data() + (n * channels + c) * plane;
        for (int64_t i = 0; i < plane; ++i) p[i] = p[i] * mul + add;
      }
    }
    WriteF32(k.outputs[0], x);
    return absl::OkStatus();
  };
  return d;
}

// ---- Softmax ------------------------------------------------------------------------------

OpDef Softmax() {
  OpDef d;
  d.name = "Softmax";
  d.attrs = {{"axis", AttrType::kInt}};
  d.shape = [](const InferContext& ctx) -> absl::StatusOr<std::vector<OutputInfo>> {
    RETURN_IF_ERROR(ExpectFloat(ctx, 0));
    RETURN_IF_ERROR(AxisAttr(ctx, "axis", -1).status());
    return One(ctx.in(0).dtype, ctx.in(0).shape);
  };
  d.kernel = [](KernelContext& k) -> absl::Status {
    const Tensor& xt = *k.in(0);
    ASSIGN_OR_RETURN(int64_t axis, ops::NormalizeAxis(k.attrs().GetInt("axis", -1), xt.rank()));
    const int64_t outer = Product(xt.dims(), 0, axis), len = xt.dims()[axis];
    const int64_t inner = Product(xt.dims(), axis + 1, xt.dims().size());
    std::vector<float> x = ReadF32(xt);
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        float* p = x.data() + o * len * inner + i;
        float mx = -INFINITY;
        for (int64_t j = 0; j < len; ++j) mx = std::max(mx, p[j * inner]);
        double sum = 0.0;
        for (int64_t j = 0; j < len; ++j) sum += std::exp(static_cast<double>(p[j * inner]) - mx);
        for (int64_t j = 0; j < len; ++j) {
          p[j * inner] = static_cast<float>(std::exp(static_cast<double>(p[j * inner]) - mx) / sum);
        }
      }
    }
    WriteF32(k.outputs[0], x);
    return absl::OkStatus();
  };
  return d;
}

// ---- LayerNormalization -------------------------------------------------------------------

absl::StatusOr<DType> StashType(const InferContext& ctx) {
  int64_t stash = ctx.attrs().GetInt("stash_type", 1);
  std::optional<DType> t =
      stash >= INT32_MIN && stash <= INT32_MAX ? DTypeFromOnnx(static_cast<int32_t>(stash)) : std::nullopt;
  if (!t || !IsFloat(*t)) {
    return ctx.Error("attribute 'stash_type' is ", stash, ", expected an ONNX float type (1 = float)");
  }
  return *t;
}

OpDef LayerNormalization() {
  OpDef d;
  d.name = "LayerNormalization";
  d.min_inputs = 2;
  d.max_inputs = 3;
  d.max_outputs = 3;
  d.attrs = {{"axis", AttrType::kInt}, {"epsilon", AttrType::kFloat}, {"stash_type", AttrType::kInt}};
  d.shape = [](const InferContext& ctx) -> absl::StatusOr<std::vector<OutputInfo>> {
    RETURN_IF_ERROR(ExpectFloat(ctx, 0));
    const Shape& x = ctx.in(0).shape;
    ASSIGN_OR_RETURN(int64_t axis, AxisAttr(ctx, "axis", -1));
    ASSIGN_OR_RETURN(DType stash, StashType(ctx));
    for (size_t i = 1; i < 3; ++i) {
      if (!ctx.has(i)) continue;
      RETURN_IF_ERROR(ops::ExpectSameDType(ctx, 0, i));
      RETURN_IF_ERROR(ExpectBroadcastsTo(ctx, i, x, absl::StrCat("the shape of ", ctx.InputName(0))));
    }
    Shape stats(x.begin(), x.begin() + axis);
    stats.resize(x.size(), Dim(1));
    return std::vector<OutputInfo>{Out(ctx.in(0).dtype, x), Out(stash, stats), Out(stash, stats)};
  };
  d.kernel = [](KernelContext& k) -> absl::Status {
    const Tensor& xt = *k.in(0);
    ASSIGN_OR_RETURN(int64_t axis, ops::NormalizeAxis(k.attrs().GetInt("axis", -1), xt.rank()));
    const double eps = k.attrs().GetFloat("epsilon", 1e-5f);
    const int64_t outer = Product(xt.dims(), 0, axis);
    const int64_t len = Product(xt.dims(), axis, xt.dims().size());
    std::vector<float> x = ReadF32(xt);
    std::vector<float> scale = ReadF32(*k.in(1));
    std::vector<int64_t> scale_map = BroadcastIndexMap(k.in(1)->dims(), xt.dims());
    std::vector<float> bias;
    std::vector<int64_t> bias_map;
    if (k.in(2)) {
      bias = ReadF32(*k.in(2));
      bias_map = BroadcastIndexMap(k.in(2)->dims(), xt.dims());
    }
    std::vector<float> y(x.size()), means(outer), inv_stds(outer);
    for (int64_t o = 0; o < outer; ++o) {
      const float* p = x.data() + o * len;
      double sum = 0.0;
      for (int64_t j = 0; j < len; ++j) sum += p[j];
      const double mean = sum / static_cast<double>(len);
      double sq = 0.0;
      for (int64_t j = 0; j < len; ++j) sq += (p[j] - mean) * (p[j] - mean);
      const double inv_std = 1.0 / std::sqrt(sq / static_cast<double>(len) + eps);
      for (int64_t j = 0; j < len; ++j) {
        const int64_t i = o * len + j;
        double v = (p[j] - mean) * inv_std * scale[scale_map[i]];
        if (!bias.empty()) v += bias[bias_map[i]];
        y[i] = static_cast<float>(v);
      }
      means[o] = static_cast<float>(mean);
      inv_stds[o] = static_cast<float>(inv_std);
    }
    WriteF32(k.outputs[0], y);
    if (k.outputs.size() > 1) WriteF32(k.outputs[1], means);
    if (k.outputs.size() > 2) WriteF32(k.outputs[2], inv_stds);
    return absl::OkStatus();
  };
  return d;
}

// ---- ReduceMean / ReduceSum ---------------------------------------------------------------

// Reduced axes (sorted, normalized) from the `axes` attribute or, when the frontend kept it as
// an input because its values are known only at run time, from input 1; empty with noop means
// identity.
absl::StatusOr<std::vector<int64_t>> ReduceAxes(const Attributes& attrs, std::vector<int64_t> axes, int64_t rank,
                                                bool* noop) {
  *noop = false;
  if (axes.empty()) {
    if (attrs.GetInt("noop_with_empty_axes", 0) == 1) {
      *noop = true;
      return axes;
    }
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
    return axes;
  }
  std::vector<int64_t> normalized;
  for (int64_t a : axes) {
    if (a < -rank || a >= rank) {
      return absl::InvalidArgumentError(
          absl::StrCat("attribute 'axes' has ", a, ", expected a value in [", -rank, ", ", rank, ")"));
    }
    const int64_t n = a < 0 ? a + rank : a;
    if (std::find(normalized.begin(), normalized.end(), n) != normalized.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("attribute 'axes' names axis ", n, " more than once (rank ", rank, ")"));
    }
    normalized.push_back(n);
  }
  std::sort(normalized.begin(), normalized.end());
  return normalized;
}

enum class ReduceKind { kSum, kMean };

OpDef Reduce(const std::string& name, ReduceKind kind) {
  OpDef d;
  d.name = name;
  d.max_inputs = 2;
  d.attrs = {{"axes", AttrType::kInts}, {"keepdims", AttrType::kInt}, {"noop_with_empty_axes", AttrType::kInt}};
  d.shape = [](const InferContext& ctx) -> absl::StatusOr<std::vector<OutputInfo>> {
    DType t = ctx.in(0).dtype;
    if (t == DType::kBool) return ctx.Error(ctx.InputName(0), " has dtype bool, expected a number type");
    ASSIGN_OR_RETURN(bool keep, Flag(ctx, "keepdims", 1));
    RETURN_IF_ERROR(Flag(ctx, "noop_with_empty_axes", 0).status());
    std::vector<int64_t> given = ctx.attrs().GetInts("axes");
    if (ctx.has(1)) {
      RETURN_IF_ERROR(ops::ExpectInteger(ctx, 1));
      ASSIGN_OR_RETURN(int64_t count, ops::VectorLength(ctx, 1));
      std::optional<std::vector<int64_t>> values = ctx.IntValues(1);
      if (count > 0 && !values) {  // axes known only at run time
        if (count > ctx.rank(0)) return ctx.Error("reduces ", count, " axes of a rank-", ctx.rank(0), " input");
        return One(t, ops::DataDependentShape(ctx, 0, keep ? ctx.rank(0) : ctx.rank(0) - count));
      }
      if (values) given = *values;
    }
    bool noop = false;
    ASSIGN_OR_RETURN(std::vector<int64_t> axes, ReduceAxes(ctx.attrs(), given, ctx.rank(0), &noop));
    if (noop) return One(t, ctx.in(0).shape);
    Shape out;
    for (int64_t i = 0; i < ctx.rank(0); ++i) {
      bool reduced = std::binary_search(axes.begin(), axes.end(), i);
      if (!reduced) {
        out.push_back(ctx.in(0).shape[i]);
      } else if (keep) {
        out.push_back(Dim(1));
      }
    }
    return One(t, out);
  };
  d.kernel = [kind](KernelContext& k) -> absl::Status {
    const Tensor& xt = *k.in(0);
    Tensor& yt = k.outputs[0];
    bool noop = false;
    std::vector<int64_t> given = k.in(1) ? k.in(1)->ToI64() : k.attrs().GetInts("axes");
    ASSIGN_OR_RETURN(std::vector<int64_t> axes, ReduceAxes(k.attrs(), given, xt.rank(), &noop));
    if (noop) {
      std::copy(xt.data(), xt.data() + xt.nbytes(), yt.mutable_data());
      return absl::OkStatus();
    }
    // Each input element's output position: the output with reduced axes kept as 1, broadcast back.
    std::vector<int64_t> kept = xt.dims();
    int64_t count = 1;
    for (int64_t a : axes) {
      count *= kept[a];
      kept[a] = 1;
    }
    std::vector<int64_t> target = BroadcastIndexMap(kept, xt.dims());
    const int64_t n_out = yt.numel();
    if (IsFloat(xt.dtype())) {
      std::vector<float> x = ReadF32(xt);
      std::vector<double> acc(static_cast<size_t>(n_out), 0.0);
      for (size_t i = 0; i < x.size(); ++i) acc[target[i]] += x[i];
      std::vector<float> y(static_cast<size_t>(n_out));
      for (int64_t i = 0; i < n_out; ++i) {
        y[i] = static_cast<float>(kind == ReduceKind::kMean ? acc[i] / static_cast<double>(count) : acc[i]);
      }
      WriteF32(yt, y);
      return absl::OkStatus();
    }
    std::vector<int64_t> acc(static_cast<size_t>(n_out), 0);
    for (int64_t i = 0; i < xt.numel(); ++i) {
      if (__builtin_add_overflow(acc[target[i]], xt.GetI64(i), &acc[target[i]])) {
        return absl::InvalidArgumentError("integer overflow in reduction");
      }
    }
    if (kind == ReduceKind::kMean && count == 0) {
      return absl::InvalidArgumentError("integer mean over an empty axis");
    }
    for (int64_t i = 0; i < n_out; ++i) yt.SetI64(i, kind == ReduceKind::kMean ? acc[i] / count : acc[i]);
    return absl::OkStatus();
  };
  return d;
}

}  // namespace

void RegisterNnOps(OpTableBuilder& t) {
  RegisterConvPoolOps(t);
  RegisterAttentionOp(t);
  t.Add(MatMul());
  t.Add(Gemm());
  t.Add(BatchNormalization());
  t.Add(Softmax());
  t.Add(LayerNormalization());
  t.Add(Reduce("ReduceMean", ReduceKind::kMean));
  t.Add(Reduce("ReduceSum", ReduceKind::kSum));
}

}  // namespace gcomp
