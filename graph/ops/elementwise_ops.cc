// Elementwise ops: unary math, binary arithmetic with broadcasting, comparisons, Where, Cast,
// Identity and inference-mode Dropout.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "graph/ops/op_helpers.h"
#include "core/status_macros.h"

namespace gcomp {
namespace {

using ops::BroadcastIndexMap;
using ops::BroadcastShapes;
using ops::ExpectFloat;
using ops::One;
using ops::ReadF32;
using ops::WriteF32;

// ---- unary float ops --------------------------------------------------------------------

using UnaryFn = float (*)(float, const Attributes&);

OpDef Unary(const std::string& name, UnaryFn fn, std::vector<AttrSpec> attrs = {}) {
  OpDef d;
  d.name = name;
  d.attrs = std::move(attrs);
  d.shape = [](const InferContext& ctx) -> absl::StatusOr<std::vector<OutputInfo>> {
    RETURN_IF_ERROR(ExpectFloat(ctx, 0));
    return One(ctx.in(0).dtype, ctx.in(0).shape);
  };
  d.kernel = [fn](KernelContext& k) -> absl::Status {
    std::vector<float> x = ReadF32(*k.in(0));
    for (float& v : x) v = fn(v, k.attrs());
    WriteF32(k.outputs[0], x);
    return absl::OkStatus();
  };
  return d;
}

float GeluErf(float x) { return 0.5f * x * (1.0f + std::erf(x / std::sqrt(2.0f))); }
float GeluTanh(float x) {
  const float c = std::sqrt(2.0f / static_cast<float>(M_PI));
  return 0.5f * x * (1.0f + std::tanh(c * (x + 0.044715f * x * x * x)));
}

// ---- binary ops ---------------------------------------------------------------------------

// kMod is ONNX Mod with fmod=0 (integers: the remainder takes the divisor's sign, as Python's %),
// kFmod with fmod=1 (C's fmod: the dividend's sign; the only form ONNX allows for floats).
enum class BinKind { kAdd, kSub, kMul, kDiv, kPow, kMod, kFmod };

float ApplyF(BinKind k, float a, float b) {
  switch (k) {
    case BinKind::kAdd: return a + b;
    case BinKind::kSub: return a - b;
    case BinKind::kMul: return a * b;
    case BinKind::kDiv: return a / b;
    case BinKind::kPow: return std::pow(a, b);
    case BinKind::kMod:
    case BinKind::kFmod: return std::fmod(a, b);
  }
  return 0;
}

absl::StatusOr<int64_t> ApplyI(BinKind k, int64_t a, int64_t b) {
  int64_t r = 0;
  switch (k) {
    case BinKind::kAdd:
      if (__builtin_add_overflow(a, b, &r)) return absl::InvalidArgumentError("integer overflow in Add");
      return r;
    case BinKind::kSub:
      if (__builtin_sub_overflow(a, b, &r)) return absl::InvalidArgumentError("integer overflow in Sub");
      return r;
    case BinKind::kMul:
      if (__builtin_mul_overflow(a, b, &r)) return absl::InvalidArgumentError("integer overflow in Mul");
      return r;
    case BinKind::kDiv:
      if (b == 0) return absl::InvalidArgumentError("integer division by zero");
      if (a == INT64_MIN && b == -1) return absl::InvalidArgumentError("integer overflow in Div");
      return a / b;
    case BinKind::kPow: {
      if (b < 0) return a == 1 ? 1 : 0;
      r = 1;
      for (int64_t i = 0; i < b; ++i) {
        if (__builtin_mul_overflow(r, a, &r)) return absl::InvalidArgumentError("integer overflow in Pow");
      }
      return r;
    }
    case BinKind::kMod:
    case BinKind::kFmod: {
      if (b == 0) return absl::InvalidArgumentError("integer modulo by zero");
      if (b == -1) return 0;  // INT64_MIN % -1 overflows in C++
      r = a % b;
      if (k == BinKind::kMod && r != 0 && ((r < 0) != (b < 0))) r += b;
      return r;
    }
  }
  return r;
}

// Symbolic values of Add/Sub/Mul/Div on shape arithmetic (e.g. batch * 12).
std::optional<std::vector<Dim>> SymBinary(BinKind kind, const InferContext& ctx, const Shape& out_shape) {
  auto a = ctx.DimValues(0);
  auto b = ctx.DimValues(1);
  if (!a || !b || out_shape.size() > 1) return std::nullopt;
  size_t n = std::max(a->size(), b->size());
  if ((a->size() != n && a->size() != 1) || (b->size() != n && b->size() != 1)) return std::nullopt;
  std::vector<Dim> out;
  for (size_t i = 0; i < n; ++i) {
    const Dim& x = (*a)[a->size() == 1 ? 0 : i];
    const Dim& y = (*b)[b->size() == 1 ? 0 : i];
    absl::StatusOr<Dim> r;
    switch (kind) {
      case BinKind::kAdd: r = Dim::Add(x, y); break;
      case BinKind::kSub: r = Dim::Sub(x, y); break;
      case BinKind::kMul: r = Dim::Mul(x, y); break;
      case BinKind::kDiv: {
        auto q = y.IsConst() ? Dim::FloorDiv(x, y.value()) : Dim::DivExact(x, y);
        if (!q) return std::nullopt;
        r = *q;
        break;
      }
      case BinKind::kPow:
      case BinKind::kMod:
      case BinKind::kFmod: return std::nullopt;
    }
    if (!r.ok()) return std::nullopt;
    out.push_back(*r);
  }
  return out;
}

OpDef Binary(const std::string& name, BinKind kind) {
  OpDef d;
  d.name = name;
  d.min_inputs = d.max_inputs = 2;
  d.shape = [kind](const InferContext& ctx) -> absl::StatusOr<std::vector<OutputInfo>> {
    if (kind != BinKind::kPow) RETURN_IF_ERROR(ops::ExpectSameDType(ctx, 0, 1));
    if (ctx.in(0).dtype == DType::kBool) return ctx.Error(ctx.InputName(0), " has dtype bool, expected a number type");
    if (kind == BinKind::kMod) {
      const int64_t fmod = ctx.attrs().GetInt("fmod", 0);
      if (fmod != 0 && fmod != 1) return ctx.Error("fmod is ", fmod, ", expected 0 or 1");
      if (IsFloat(ctx.in(0).dtype) && fmod != 1) {
        return ctx.Error("Mod of floating-point inputs needs fmod=1 (ONNX), got fmod=0");
      }
    }
    ASSIGN_OR_RETURN(Shape shape, BroadcastShapes(ctx.in(0).shape, ctx.in(1).shape));
    OutputInfo out{ctx.in(0).dtype, shape, std::nullopt};
    if (!IsFloat(out.dtype)) out.sym_values = SymBinary(kind, ctx, shape);
    return std::vector<OutputInfo>{out};
  };
  d.kernel = [kind](KernelContext& k) -> absl::Status {
    const Tensor& a = *k.in(0);
    const Tensor& b = *k.in(1);
    Tensor& out = k.outputs[0];
    const BinKind op = kind == BinKind::kMod && k.attrs().GetInt("fmod", 0) == 1 ? BinKind::kFmod : kind;
    std::vector<int64_t> ia = BroadcastIndexMap(a.dims(), out.dims());
    std::vector<int64_t> ib = BroadcastIndexMap(b.dims(), out.dims());
    if (IsFloat(out.dtype())) {
      std::vector<float> fa = ReadF32(a), fb = ReadF32(b), r(out.numel());
      for (int64_t i = 0; i < out.numel(); ++i) r[i] = ApplyF(op, fa[ia[i]], fb[ib[i]]);
      WriteF32(out, r);
    } else {
      for (int64_t i = 0; i < out.numel(); ++i) {
        ASSIGN_OR_RETURN(int64_t v, ApplyI(op, a.GetI64(ia[i]), b.GetI64(ib[i])));
        out.SetI64(i, v);
      }
    }
    return absl::OkStatus();
  };
  return d;
}

OpDef Equal() {
  OpDef d;
  d.name = "Equal";
  d.min_inputs = d.max_inputs = 2;
  d.shape = [](const InferContext& ctx) -> absl::StatusOr<std::vector<OutputInfo>> {
    RETURN_IF_ERROR(ops::ExpectSameDType(ctx, 0, 1));
    ASSIGN_OR_RETURN(Shape shape, BroadcastShapes(ctx.in(0).shape, ctx.in(1).shape));
    OutputInfo out = ops::Out(DType::kBool, shape);
    // Shape arithmetic: Equal(Concat(batch, -1, -1), -1) in expand/reshape chains. A symbolic
    // dim is never negative, so it differs from any negative constant.
    auto a = ctx.DimValues(0), b = ctx.DimValues(1);
    if (a && b && shape.size() <= 1 && !IsFloat(ctx.in(0).dtype)) {
      size_t n = std::max(a->size(), b->size());
      std::vector<Dim> vals;
      for (size_t i = 0; i < n; ++i) {
        const Dim& x = (*a)[a->size() == 1 ? 0 : i];
        const Dim& y = (*b)[b->size() == 1 ? 0 : i];
        if (x == y) {
          vals.emplace_back(1);
        } else if (x.IsConst() && y.IsConst()) {
          vals.emplace_back(0);
        } else if ((x.IsConst() && x.value() < 0) || (y.IsConst() && y.value() < 0)) {
          vals.emplace_back(0);
        } else {
          return std::vector<OutputInfo>{out};
        }
      }
      if (vals.size() == n) out.sym_values = vals;
    }
    return std::vector<OutputInfo>{out};
  };
  d.kernel = [](KernelContext& k) -> absl::Status {
    const Tensor& a = *k.in(0);
    const Tensor& b = *k.in(1);
    Tensor& out = k.outputs[0];
    auto ia = BroadcastIndexMap(a.dims(), out.dims());
    auto ib = BroadcastIndexMap(b.dims(), out.dims());
    bool fl = IsFloat(a.dtype());
    for (int64_t i = 0; i < out.numel(); ++i) {
      bool eq = fl ? a.GetF32(ia[i]) == b.GetF32(ib[i]) : a.GetI64(ia[i]) == b.GetI64(ib[i]);
      out.SetI64(i, eq);
    }
    return absl::OkStatus();
  };
  return d;
}

// IsNaN: true where the float input is NaN (torch's SDPA exports guard their softmax with it).
OpDef IsNaN() {
  OpDef d;
  d.name = "IsNaN";
  d.min_inputs = d.max_inputs = 1;
  d.shape = [](const InferContext& ctx) -> absl::StatusOr<std::vector<OutputInfo>> {
    RETURN_IF_ERROR(ops::ExpectFloat(ctx, 0));
    return std::vector<OutputInfo>{ops::Out(DType::kBool, ctx.in(0).shape)};
  };
  d.kernel = [](KernelContext& k) -> absl::Status {
    const Tensor& x = *k.in(0);
    for (int64_t i = 0; i < x.numel(); ++i) k.outputs[0].SetI64(i, std::isnan(x.GetF32(i)) ? 1 : 0);
    return absl::OkStatus();
  };
  return d;
}

OpDef Where() {
  OpDef d;
  d.name = "Where";
  d.min_inputs = d.max_inputs = 3;
  d.shape = [](const InferContext& ctx) -> absl::StatusOr<std::vector<OutputInfo>> {
    if (ctx.in(0).dtype != DType::kBool) {
      return ctx.Error(ctx.InputName(0), " has dtype ", DTypeName(ctx.in(0).dtype), ", expected bool");
    }
    RETURN_IF_ERROR(ops::ExpectSameDType(ctx, 1, 2));
    ASSIGN_OR_RETURN(Shape s, BroadcastShapes(ctx.in(0).shape, ctx.in(1).shape));
    ASSIGN_OR_RETURN(s, BroadcastShapes(s, ctx.in(2).shape));
    OutputInfo out{ctx.in(1).dtype, s, std::nullopt};
    // Symbolic select for shape arithmetic (Where(Equal(shape, 0), ..., ...)).
    auto c = ctx.DimValues(0), x = ctx.DimValues(1), y = ctx.DimValues(2);
    if (c && x && y && s.size() <= 1 && !IsFloat(out.dtype)) {
      size_t n = std::max({c->size(), x->size(), y->size()});
      std::vector<Dim> vals;
      bool ok = true;
      for (size_t i = 0; i < n && ok; ++i) {
        const Dim& ci = (*c)[c->size() == 1 ? 0 : i];
        if (!ci.IsConst() || (x->size() != 1 && x->size() != n) || (y->size() != 1 && y->size() != n)) {
          ok = false;
          break;
        }
        vals.push_back(ci.value() ? (*x)[x->size() == 1 ? 0 : i] : (*y)[y->size() == 1 ? 0 : i]);
      }
      if (ok) out.sym_values = vals;
    }
    return std::vector<OutputInfo>{out};
  };
  d.kernel = [](KernelContext& k) -> absl::Status {
    const Tensor& c = *k.in(0);
    const Tensor& x = *k.in(1);
    const Tensor& y = *k.in(2);
    Tensor& out = k.outputs[0];
    auto ic = BroadcastIndexMap(c.dims(), out.dims());
    auto ix = BroadcastIndexMap(x.dims(), out.dims());
    auto iy = BroadcastIndexMap(y.dims(), out.dims());
    bool fl = IsFloat(out.dtype());
    for (int64_t i = 0; i < out.numel(); ++i) {
      bool pick_x = c.GetI64(ic[i]) != 0;
      if (fl) {
        out.SetF32(i, pick_x ? x.GetF32(ix[i]) : y.GetF32(iy[i]));
      } else {
        out.SetI64(i, pick_x ? x.GetI64(ix[i]) : y.GetI64(iy[i]));
      }
    }
    return absl::OkStatus();
  };
  return d;
}

OpDef Cast() {
  OpDef d;
  d.name = "Cast";
  // `to` holds a gcomp DType name ("f32", "i64", ...); the frontend maps ONNX numbers to it.
  d.attrs = {{"to", AttrType::kString, true}};
  d.shape = [](const InferContext& ctx) -> absl::StatusOr<std::vector<OutputInfo>> {
    std::string to = ctx.attrs().GetString("to", "");
    auto t = DTypeFromName(to);
    if (!t) return ctx.Error("attribute 'to' is '", to, "', expected a dtype name");
    OutputInfo out{*t, ctx.in(0).shape, std::nullopt};
    if (!IsFloat(*t) && !IsFloat(ctx.in(0).dtype) && *t != DType::kBool && ctx.in(0).sym_values) {
      out.sym_values = *ctx.in(0).sym_values;
    }
    return std::vector<OutputInfo>{out};
  };
  d.kernel = [](KernelContext& k) -> absl::Status {
    const Tensor& in = *k.in(0);
    Tensor& out = k.outputs[0];
    for (int64_t i = 0; i < in.numel(); ++i) {
      if (IsFloat(in.dtype()) && out.dtype() == DType::kBool) {
        out.SetI64(i, in.GetF32(i) != 0.0f);
      } else if (IsFloat(in.dtype()) || IsFloat(out.dtype())) {
        out.SetF32(i, in.GetF32(i));
      } else {
        out.SetI64(i, in.GetI64(i));
      }
    }
    return absl::OkStatus();
  };
  return d;
}

// Identity and inference-mode Dropout copy their input (Dropout's mask output is all true).
OpDef CopyOp(const std::string& name, int max_inputs, int max_outputs) {
  OpDef d;
  d.name = name;
  d.max_inputs = max_inputs;
  d.max_outputs = max_outputs;
  d.attrs = {{"ratio", AttrType::kFloat}, {"seed", AttrType::kInt}};
  d.shape = [](const InferContext& ctx) -> absl::StatusOr<std::vector<OutputInfo>> {
    OutputInfo out{ctx.in(0).dtype, ctx.in(0).shape, std::nullopt};
    if (ctx.in(0).sym_values) out.sym_values = *ctx.in(0).sym_values;
    return std::vector<OutputInfo>{out, ops::Out(DType::kBool, ctx.in(0).shape)};
  };
  d.kernel = [](KernelContext& k) -> absl::Status {
    const Tensor& in = *k.in(0);
    std::copy(in.data(), in.data() + in.nbytes(), k.outputs[0].mutable_data());
    if (k.outputs.size() > 1) {
      for (int64_t i = 0; i < k.outputs[1].numel(); ++i) k.outputs[1].SetI64(i, 1);
    }
    return absl::OkStatus();
  };
  return d;
}

OpDef Clip() {
  // Canonical form (opset 11+): optional scalar inputs min and max. Opset 12+ also clips
  // integers, compared exactly in int64.
  OpDef d = Unary("Clip", nullptr);
  d.max_inputs = 3;
  d.shape = [](const InferContext& ctx) -> absl::StatusOr<std::vector<OutputInfo>> {
    if (ctx.in(0).dtype == DType::kBool) {
      return ctx.Error(ctx.InputName(0), " has dtype bool, expected a number type");
    }
    for (size_t i = 1; i < 3; ++i) {
      if (!ctx.has(i)) continue;
      RETURN_IF_ERROR(ops::ExpectSameDType(ctx, 0, i));
      if (ctx.rank(i) > 1 || !(ctx.in(i).shape.empty() || ctx.in(i).shape[0] == Dim(1))) {
        return ctx.Error(ctx.InputName(i), " has shape ", ShapeToString(ctx.in(i).shape), ", expected a scalar");
      }
    }
    return One(ctx.in(0).dtype, ctx.in(0).shape);
  };
  d.kernel = [](KernelContext& k) -> absl::Status {
    if (!IsFloat(k.in(0)->dtype())) {
      const Tensor& x = *k.in(0);
      const int64_t lo = k.in(1) ? k.in(1)->GetI64(0) : INT64_MIN;
      const int64_t hi = k.in(2) ? k.in(2)->GetI64(0) : INT64_MAX;
      for (int64_t i = 0; i < x.numel(); ++i) k.outputs[0].SetI64(i, std::min(std::max(x.GetI64(i), lo), hi));
      return absl::OkStatus();
    }
    float lo = k.in(1) ? k.in(1)->GetF32(0) : -INFINITY;
    float hi = k.in(2) ? k.in(2)->GetF32(0) : INFINITY;
    std::vector<float> x = ReadF32(*k.in(0));
    for (float& v : x) v = std::isnan(v) ? v : std::min(std::max(v, lo), hi);
    WriteF32(k.outputs[0], x);
    return absl::OkStatus();
  };
  return d;
}

}  // namespace

void RegisterElementwiseOps(OpTableBuilder& t) {
  t.Add(Unary("Relu", [](float x, const Attributes&) { return x > 0.0f ? x : (x < 0.0f ? 0.0f : x); }));
  t.Add(Unary("Sigmoid", [](float x, const Attributes&) { return 1.0f / (1.0f + std::exp(-x)); }));
  t.Add(Unary("Tanh", [](float x, const Attributes&) { return std::tanh(x); }));
  t.Add(Unary("Erf", [](float x, const Attributes&) { return std::erf(x); }));
  t.Add(Unary("Sqrt", [](float x, const Attributes&) { return std::sqrt(x); }));
  t.Add(Unary("Reciprocal", [](float x, const Attributes&) { return 1.0f / x; }));
  t.Add(Unary("Exp", [](float x, const Attributes&) { return std::exp(x); }));
  t.Add(Unary(
      "Gelu",
      [](float x, const Attributes& a) {
        return a.GetString("approximate", "none") == "tanh" ? GeluTanh(x) : GeluErf(x);
      },
      {{"approximate", AttrType::kString}}));
  OpDef neg = Unary("Neg", [](float x, const Attributes&) { return -x; });
  // Neg also applies to integers.
  neg.shape = [](const InferContext& ctx) -> absl::StatusOr<std::vector<OutputInfo>> {
    return One(ctx.in(0).dtype, ctx.in(0).shape);
  };
  neg.kernel = [](KernelContext& k) -> absl::Status {
    const Tensor& in = *k.in(0);
    for (int64_t i = 0; i < in.numel(); ++i) {
      if (IsFloat(in.dtype())) {
        k.outputs[0].SetF32(i, -in.GetF32(i));
      } else {
        k.outputs[0].SetI64(i, -in.GetI64(i));
      }
    }
    return absl::OkStatus();
  };
  t.Add(std::move(neg));
  t.Add(Clip());
  t.Add(Binary("Add", BinKind::kAdd));
  t.Add(Binary("Sub", BinKind::kSub));
  t.Add(Binary("Mul", BinKind::kMul));
  t.Add(Binary("Div", BinKind::kDiv));
  t.Add(Binary("Pow", BinKind::kPow));
  OpDef mod = Binary("Mod", BinKind::kMod);
  mod.attrs = {{"fmod", AttrType::kInt}};
  t.Add(std::move(mod));
  t.Add(Equal());
  t.Add(Where());
  t.Add(IsNaN());
  t.Add(Cast());
  t.Add(CopyOp("Identity", 1, 1));
  t.Add(CopyOp("Dropout", 3, 2));
}

}  // namespace gcomp
