// gcomp's own fused ops, produced by the O2 fusion passes:
//   FusedConv  = act(Conv(X, W) + B + Z)       Z: optional residual, same shape as the output;
//                layout "NHWC" (O3's layout-nhwc): X, Z and Y are [N,H,W,C], W stays [Cout,Cin,kh,kw]
//   FusedGemm  = act(alpha * A x B + bias + Z)  A: [..., K], B: [K, N] (or [N, K] with transB=1)
//                fp8 form (O3's lower-fp8): A and B f8e4m3 (the quantized values), input 4
//                `scale_b` f32 [N] = B's dequantization factor per output column, A's folded into
//                alpha: Y = act(alpha * scale_b[j] * sum_k A[i,k] B[k,j] + bias + Z), Y/bias/Z f16
//   QuantizeFp8 = RoundToStorage(X * scale, f8e4m3) as an f8e4m3 tensor (saturating at +-448)
//   LayerNorm  = LayerNormalization's Y alone (statistics are not outputs); with attribute
//                fp8_scale (O3's lower-fp8, fused with the QuantizeFp8 that read it) Y is
//                f8e4m3: RoundToStorage(LayerNorm(X) * fp8_scale, f8e4m3), from the fp32 value
//   Im2Col     = the patches of a 2-D conv as GEMM rows (O3's lower-conv for targets without an
//                implicit-GEMM conv): X [N,C,H,W] (layout NCHW) or [N,H,W,C] (layout NHWC) ->
//                [N*Ho*Wo, C*kh*kw], rows (n, ho, wo); columns (c, ky, kx) for NCHW and
//                (ky, kx, c) for NHWC; padding taps are 0.
//   Pool       = MaxPool / AveragePool (attribute kind) on NHWC or NCHW activations, Y only
// act is one of none, relu, clip (clip_min/clip_max), gelu (erf), gelu_tanh. Their reference
// kernels compose the ONNX ops' reference semantics so that fusion tests compare like with like.
#include <cmath>

#include "core/epilogue.h"
#include "graph/ops/op_helpers.h"
#include "core/status_macros.h"

namespace gcomp {
namespace {

using ops::NormalizeAxis;
using ops::ReadF32;
using ops::WriteF32;

absl::Status CheckActivation(const InferContext& ctx) {
  absl::StatusOr<gcomp::Epilogue> e = EpilogueFromAttributes(ctx.attrs());
  if (!e.ok()) return ctx.Error(e.status().message());
  return absl::OkStatus();
}

// Adds the optional residual (broadcast to the output) and applies the activation, in fp32.
void Epilogue(KernelContext& k, size_t residual_index, std::vector<float>& y) {
  const Tensor& out = k.outputs[0];
  if (const Tensor* z = k.in(residual_index)) {
    std::vector<float> zv = ReadF32(*z);
    std::vector<int64_t> map = ops::BroadcastIndexMap(z->dims(), out.dims());
    for (size_t i = 0; i < y.size(); ++i) y[i] += zv[map[i]];
  }
  const gcomp::Epilogue e = EpilogueFromAttributes(k.attrs()).value_or(gcomp::Epilogue{});
  for (float& v : y) v = ApplyActivation(e.act, v, e.clip_min, e.clip_max);
}

absl::Status CheckResidual(const InferContext& ctx, size_t i, const Shape& out, DType dtype) {
  if (!ctx.has(i)) return absl::OkStatus();
  if (ctx.in(i).dtype != dtype) {
    return ctx.Error("residual ", ctx.InputName(i), " is ", DTypeName(ctx.in(i).dtype), ", expected ", DTypeName(dtype));
  }
  ASSIGN_OR_RETURN(Shape b, ops::BroadcastShapes(out, ctx.in(i).shape));
  if (b != out) {
    return ctx.Error("residual ", ctx.InputName(i), " has shape ", ShapeToString(ctx.in(i).shape),
                     ", expected one that broadcasts to the output ", ShapeToString(out));
  }
  return absl::OkStatus();
}

std::vector<AttrSpec> EpilogueAttrs() {
  return {{kActivationAttr, AttrType::kString}, {kClipMinAttr, AttrType::kFloat}, {kClipMaxAttr, AttrType::kFloat}};
}

// ---- layouts (FusedConv and Im2Col take NHWC activations too) ----
const std::vector<int64_t> kNhwcToNchw = {0, 3, 1, 2};
const std::vector<int64_t> kNchwToNhwc = {0, 2, 3, 1};

absl::StatusOr<bool> IsNhwc(const Attributes& a) {
  std::string layout = a.GetString("layout", "NCHW");
  if (layout != "NCHW" && layout != "NHWC") {
    return absl::InvalidArgumentError(absl::StrCat("attribute 'layout' is '", layout, "', expected NCHW or NHWC"));
  }
  return layout == "NHWC";
}

Shape PermuteShape(const Shape& s, const std::vector<int64_t>& perm) {
  Shape out;
  for (int64_t p : perm) out.push_back(s[p]);
  return out;
}

// out[i] = in[perm[i]] over the axes of a rank-4 tensor.
Tensor Permute4(const Tensor& t, const std::vector<int64_t>& perm) {
  const std::vector<int64_t>& d = t.dims();
  std::vector<int64_t> od(4);
  for (int i = 0; i < 4; ++i) od[i] = d[perm[i]];
  std::vector<int64_t> is = RowMajorStrides(d);
  std::vector<float> in = ReadF32(t), out(in.size());
  int64_t o = 0;
  for (int64_t a = 0; a < od[0]; ++a)
    for (int64_t b = 0; b < od[1]; ++b)
      for (int64_t c = 0; c < od[2]; ++c)
        for (int64_t e = 0; e < od[3]; ++e) {
          out[o++] = in[a * is[perm[0]] + b * is[perm[1]] + c * is[perm[2]] + e * is[perm[3]]];
        }
  return Tensor::FromF32(od, out);
}

OpDef FusedConv() {
  OpDef d;
  d.name = "FusedConv";
  d.min_inputs = 2;
  d.max_inputs = 4;  // X, W, B, Z
  d.attrs = {{"auto_pad", AttrType::kString}, {"dilations", AttrType::kInts}, {"group", AttrType::kInt},
             {"kernel_shape", AttrType::kInts}, {"pads", AttrType::kInts}, {"strides", AttrType::kInts}};
  for (const AttrSpec& a : EpilogueAttrs()) d.attrs.push_back(a);
  d.attrs.push_back({"layout", AttrType::kString});
  d.shape = [](const InferContext& ctx) -> absl::StatusOr<std::vector<OutputInfo>> {
    RETURN_IF_ERROR(CheckActivation(ctx));
    ASSIGN_OR_RETURN(bool nhwc, IsNhwc(ctx.attrs()));
    if (!nhwc) {
      ASSIGN_OR_RETURN(std::vector<OutputInfo> outs, FindOp("Conv")->shape(ctx));
      RETURN_IF_ERROR(CheckResidual(ctx, 3, outs[0].shape, ctx.in(0).dtype));
      return outs;
    }
    // NHWC: the NCHW conv's shape function on the permuted X, its output permuted back.
    if (ctx.rank(0) != 4) return ctx.Error(ctx.InputName(0), " has rank ", ctx.rank(0), ", expected 4 for layout NHWC");
    ValueInfo x = ctx.in(0);
    x.shape = PermuteShape(x.shape, kNhwcToNchw);
    x.constant = nullptr;
    x.sym_values = nullptr;
    std::vector<const ValueInfo*> ins = {&x, &ctx.in(1)};
    if (ctx.has(2)) ins.push_back(&ctx.in(2));
    InferContext nchw(ctx.node(), ins);
    ASSIGN_OR_RETURN(std::vector<OutputInfo> outs, FindOp("Conv")->shape(nchw));
    outs[0].shape = PermuteShape(outs[0].shape, kNchwToNhwc);
    RETURN_IF_ERROR(CheckResidual(ctx, 3, outs[0].shape, ctx.in(0).dtype));
    return outs;
  };
  d.kernel = [](KernelContext& k) -> absl::Status {
    ASSIGN_OR_RETURN(bool nhwc, IsNhwc(k.attrs()));
    if (!nhwc) {
      RETURN_IF_ERROR(FindOp("Conv")->kernel(k));
    } else {
      Tensor x = Permute4(*k.in(0), kNhwcToNchw);
      const std::vector<int64_t>& od = k.outputs[0].dims();
      ASSIGN_OR_RETURN(Tensor y, Tensor::Zeros(k.outputs[0].dtype(), {od[0], od[3], od[1], od[2]}));
      std::vector<const Tensor*> ins = {&x, k.in(1), k.in(2)};
      KernelContext nchw{k.node, ins, std::span<Tensor>(&y, 1)};
      RETURN_IF_ERROR(FindOp("Conv")->kernel(nchw));
      // Permute4 returns f32: written into the output, which keeps its own (storage) dtype.
      WriteF32(k.outputs[0], ReadF32(Permute4(y, kNchwToNhwc)));
    }
    std::vector<float> y = ReadF32(k.outputs[0]);
    Epilogue(k, 3, y);
    WriteF32(k.outputs[0], y);
    return absl::OkStatus();
  };
  return d;
}

OpDef FusedGemm() {
  OpDef d;
  d.name = "FusedGemm";
  d.min_inputs = 2;
  d.max_inputs = 5;  // A, B, bias, Z, scale_b (fp8 form)
  d.attrs = {{"transB", AttrType::kInt}, {"alpha", AttrType::kFloat}};
  for (const AttrSpec& a : EpilogueAttrs()) d.attrs.push_back(a);
  d.shape = [](const InferContext& ctx) -> absl::StatusOr<std::vector<OutputInfo>> {
    RETURN_IF_ERROR(CheckActivation(ctx));
    RETURN_IF_ERROR(ops::ExpectFloat(ctx, 0));
    RETURN_IF_ERROR(ops::ExpectSameDType(ctx, 0, 1));
    if (ctx.rank(0) < 1) return ctx.Error(ctx.InputName(0), " is a scalar, expected rank >= 1");
    RETURN_IF_ERROR(ops::ExpectRank(ctx, 1, 2));
    bool trans_b = ctx.attrs().GetInt("transB", 0) != 0;
    const Shape& a = ctx.in(0).shape;
    const Shape& b = ctx.in(1).shape;
    const Dim& k_a = a.back();
    const Dim& k_b = trans_b ? b[1] : b[0];
    const Dim& n = trans_b ? b[0] : b[1];
    if (k_a != k_b && k_a.IsConst() && k_b.IsConst()) {
      return ctx.Error(ctx.InputName(1), " has ", k_b.ToString(), " rows, expected ", k_a.ToString(),
                       " (the last dim of ", ctx.InputName(0), ")");
    }
    // The fp8 form: e4m3 operands with B's per-column dequantization factors, f16 output.
    const bool fp8 = ctx.in(0).dtype == DType::kF8E4M3;
    if (fp8 != ctx.has(4)) {
      return ctx.Error(fp8 ? "f8e4m3 operands need input 4 (scale_b, B's dequantization factors)"
                           : "input 4 (scale_b) belongs to the fp8 form, whose operands are f8e4m3");
    }
    if (fp8 && (ctx.in(4).dtype != DType::kF32 || ctx.rank(4) != 1 || ctx.in(4).shape[0] != n)) {
      return ctx.Error("scale_b ", ctx.InputName(4), " must be f32 [", n.ToString(), "], not ",
                       DTypeName(ctx.in(4).dtype), " ", ShapeToString(ctx.in(4).shape));
    }
    const DType y_type = fp8 ? DType::kF16 : ctx.in(0).dtype;
    Shape out = a;
    out.back() = n;
    if (ctx.has(2)) {
      if (ctx.in(2).dtype != y_type) {
        return ctx.Error("bias ", ctx.InputName(2), " is ", DTypeName(ctx.in(2).dtype), ", expected ", DTypeName(y_type));
      }
      if (ctx.rank(2) != 1 || (ctx.in(2).shape[0] != n && ctx.in(2).shape[0] != Dim(1))) {
        return ctx.Error("bias ", ctx.InputName(2), " has shape ", ShapeToString(ctx.in(2).shape), ", expected [",
                         n.ToString(), "]");
      }
    }
    RETURN_IF_ERROR(CheckResidual(ctx, 3, out, y_type));
    return ops::One(y_type, out);
  };
  d.kernel = [](KernelContext& k) -> absl::Status {
    const Tensor& at = *k.in(0);
    const Tensor& bt = *k.in(1);
    bool trans_b = k.attrs().GetInt("transB", 0) != 0;
    const double alpha = k.attrs().GetFloat("alpha", 1.0f);
    const int64_t kk = at.dims().back();
    const int64_t m = kk ? at.numel() / kk : 0;
    const int64_t n = trans_b ? bt.dims()[0] : bt.dims()[1];
    std::vector<float> a = ReadF32(at), b = ReadF32(bt);
    std::vector<float> bias = k.in(2) ? ReadF32(*k.in(2)) : std::vector<float>{};
    std::vector<float> scale_b = k.in(4) ? ReadF32(*k.in(4)) : std::vector<float>(static_cast<size_t>(n), 1.0f);
    std::vector<float> y(static_cast<size_t>(m * n));
    std::vector<double> row(static_cast<size_t>(n));
    for (int64_t i = 0; i < m; ++i) {
      std::fill(row.begin(), row.end(), 0.0);
      for (int64_t p = 0; p < kk; ++p) {
        const double av = a[i * kk + p];
        for (int64_t j = 0; j < n; ++j) row[j] += av * b[trans_b ? j * kk + p : p * n + j];
      }
      for (int64_t j = 0; j < n; ++j) {
        double v = alpha * scale_b[j] * row[j];
        if (!bias.empty()) v += bias[bias.size() == 1 ? 0 : j];
        y[i * n + j] = static_cast<float>(v);
      }
    }
    Epilogue(k, 3, y);
    WriteF32(k.outputs[0], y);
    return absl::OkStatus();
  };
  return d;
}

OpDef LayerNorm() {
  OpDef d;
  d.name = "LayerNorm";
  d.min_inputs = 2;
  d.max_inputs = 3;
  d.attrs = {{"axis", AttrType::kInt}, {"epsilon", AttrType::kFloat}, {"fp8_scale", AttrType::kFloat}};
  d.shape = [](const InferContext& ctx) -> absl::StatusOr<std::vector<OutputInfo>> {
    ASSIGN_OR_RETURN(std::vector<OutputInfo> outs, FindOp("LayerNormalization")->shape(ctx));
    outs.resize(1);
    if (ctx.attrs().Has("fp8_scale")) {
      const float s = ctx.attrs().GetFloat("fp8_scale", 0);
      if (!(s > 0) || !std::isfinite(s)) return ctx.Error("fp8_scale must be positive and finite");
      outs[0].dtype = DType::kF8E4M3;
    }
    return outs;
  };
  d.kernel = [](KernelContext& k) -> absl::Status {
    if (!k.attrs().Has("fp8_scale")) return FindOp("LayerNormalization")->kernel(k);
    // The fp32 result, then its e4m3 bytes at the scale (no storage rounding in between).
    Tensor out = std::move(k.outputs[0]);
    ASSIGN_OR_RETURN(k.outputs[0], Tensor::Zeros(DType::kF32, out.dims()));
    absl::Status s = FindOp("LayerNormalization")->kernel(k);
    std::swap(out, k.outputs[0]);
    RETURN_IF_ERROR(s);
    const float scale = k.attrs().GetFloat("fp8_scale", 1);
    for (int64_t i = 0; i < out.numel(); ++i) k.outputs[0].SetF32(i, out.GetF32(i) * scale);
    return absl::OkStatus();
  };
  return d;
}

// Output size of one spatial axis of Im2Col.
absl::StatusOr<Dim> Im2ColAxis(const InferContext& ctx, const Dim& in, int64_t k, int64_t s, int64_t d, int64_t p0,
                               int64_t p1) {
  const int64_t span = d * (k - 1) + 1;
  ASSIGN_OR_RETURN(Dim padded, Dim::Add(in, Dim(p0 + p1)));
  if (auto v = padded.ConstValue(); v && *v < span) {
    return ctx.Error(ctx.InputName(0), " has a spatial size ", in.ToString(), " smaller than the window ", span);
  }
  ASSIGN_OR_RETURN(Dim rest, Dim::Sub(padded, Dim(span)));
  std::optional<Dim> q = Dim::FloorDiv(rest, s);
  if (!q) return ctx.Error("cannot divide ", rest.ToString(), " by the stride ", s);
  return Dim::Add(*q, Dim(1));
}

struct Im2ColGeometry {
  bool nhwc;
  std::vector<int64_t> k, s, d, p;
};

absl::StatusOr<Im2ColGeometry> ReadIm2Col(const Attributes& a) {
  Im2ColGeometry g;
  std::string layout = a.GetString("layout", "NCHW");
  if (layout != "NCHW" && layout != "NHWC") {
    return absl::InvalidArgumentError(absl::StrCat("attribute 'layout' is '", layout, "', expected NCHW or NHWC"));
  }
  g.nhwc = layout == "NHWC";
  g.k = a.GetInts("kernel_shape");
  g.s = a.GetInts("strides", {1, 1});
  g.d = a.GetInts("dilations", {1, 1});
  g.p = a.GetInts("pads", {0, 0, 0, 0});
  if (g.k.size() != 2 || g.s.size() != 2 || g.d.size() != 2 || g.p.size() != 4) {
    return absl::InvalidArgumentError(
        "attributes kernel_shape, strides, dilations need 2 values and pads 4 (2-D windows only)");
  }
  for (int i = 0; i < 2; ++i) {
    if (g.k[i] < 1 || g.s[i] < 1 || g.d[i] < 1) {
      return absl::InvalidArgumentError("kernel_shape, strides and dilations must be >= 1");
    }
  }
  for (int64_t v : g.p) {
    if (v < 0) return absl::InvalidArgumentError("pads must be >= 0");
  }
  return g;
}

OpDef Im2Col() {
  OpDef d;
  d.name = "Im2Col";
  d.attrs = {{"kernel_shape", AttrType::kInts, true}, {"strides", AttrType::kInts}, {"dilations", AttrType::kInts},
             {"pads", AttrType::kInts}, {"layout", AttrType::kString}};
  d.shape = [](const InferContext& ctx) -> absl::StatusOr<std::vector<OutputInfo>> {
    RETURN_IF_ERROR(ops::ExpectFloat(ctx, 0));
    RETURN_IF_ERROR(ops::ExpectRank(ctx, 0, 4));
    auto g = ReadIm2Col(ctx.attrs());
    if (!g.ok()) return ctx.Error(g.status().message());
    const Shape& x = ctx.in(0).shape;
    const Dim& c = g->nhwc ? x[3] : x[1];
    const Dim& h = g->nhwc ? x[1] : x[2];
    const Dim& w = g->nhwc ? x[2] : x[3];
    ASSIGN_OR_RETURN(Dim ho, Im2ColAxis(ctx, h, g->k[0], g->s[0], g->d[0], g->p[0], g->p[2]));
    ASSIGN_OR_RETURN(Dim wo, Im2ColAxis(ctx, w, g->k[1], g->s[1], g->d[1], g->p[1], g->p[3]));
    ASSIGN_OR_RETURN(Dim rows, Dim::Mul(x[0], ho));
    ASSIGN_OR_RETURN(rows, Dim::Mul(rows, wo));
    ASSIGN_OR_RETURN(Dim cols, Dim::Mul(c, Dim(g->k[0] * g->k[1])));
    return ops::One(ctx.in(0).dtype, Shape{rows, cols});
  };
  d.kernel = [](KernelContext& k) -> absl::Status {
    ASSIGN_OR_RETURN(Im2ColGeometry g, ReadIm2Col(k.attrs()));
    const Tensor& xt = *k.in(0);
    const std::vector<int64_t>& xd = xt.dims();
    const int64_t n = xd[0], c = g.nhwc ? xd[3] : xd[1], h = g.nhwc ? xd[1] : xd[2], w = g.nhwc ? xd[2] : xd[3];
    const int64_t kh = g.k[0], kw = g.k[1];
    const int64_t ho = (h + g.p[0] + g.p[2] - g.d[0] * (kh - 1) - 1) / g.s[0] + 1;
    const int64_t wo = (w + g.p[1] + g.p[3] - g.d[1] * (kw - 1) - 1) / g.s[1] + 1;
    const int64_t cols = c * kh * kw;
    std::vector<float> x = ReadF32(xt);
    std::vector<float> y(static_cast<size_t>(n * ho * wo * cols), 0.0f);
    for (int64_t b = 0; b < n; ++b) {
      for (int64_t oy = 0; oy < ho; ++oy) {
        for (int64_t ox = 0; ox < wo; ++ox) {
          const int64_t row = (b * ho + oy) * wo + ox;
          for (int64_t ch = 0; ch < c; ++ch) {
            for (int64_t ky = 0; ky < kh; ++ky) {
              const int64_t iy = oy * g.s[0] - g.p[0] + ky * g.d[0];
              for (int64_t kx = 0; kx < kw; ++kx) {
                const int64_t ix = ox * g.s[1] - g.p[1] + kx * g.d[1];
                if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
                const int64_t col = g.nhwc ? (ky * kw + kx) * c + ch : (ch * kh + ky) * kw + kx;
                const int64_t src = g.nhwc ? ((b * h + iy) * w + ix) * c + ch : ((b * c + ch) * h + iy) * w + ix;
                y[row * cols + col] = x[src];
              }
            }
          }
        }
      }
    }
    WriteF32(k.outputs[0], y);
    return absl::OkStatus();
  };
  return d;
}

// Pool: MaxPool or AveragePool (kind "max" | "average", their attributes) on NHWC (layout "NHWC")
// or NCHW activations; Y only. O3's layout-nhwc uses it to keep pooling inside NHWC chains.
const char* PoolOpName(const Attributes& a) { return a.GetString("kind", "max") == "average" ? "AveragePool" : "MaxPool"; }

absl::Status CheckPoolKind(const Attributes& a) {
  std::string kind = a.GetString("kind", "max");
  if (kind != "max" && kind != "average") {
    return absl::InvalidArgumentError(absl::StrCat("attribute 'kind' is '", kind, "', expected max or average"));
  }
  return absl::OkStatus();
}

OpDef Pool() {
  OpDef d;
  d.name = "Pool";
  d.attrs = {{"kind", AttrType::kString},          {"layout", AttrType::kString}, {"auto_pad", AttrType::kString},
             {"ceil_mode", AttrType::kInt},         {"dilations", AttrType::kInts}, {"kernel_shape", AttrType::kInts},
             {"pads", AttrType::kInts},             {"strides", AttrType::kInts},   {"count_include_pad", AttrType::kInt},
             {"storage_order", AttrType::kInt}};
  d.shape = [](const InferContext& ctx) -> absl::StatusOr<std::vector<OutputInfo>> {
    if (absl::Status s = CheckPoolKind(ctx.attrs()); !s.ok()) return ctx.Error(s.message());
    ASSIGN_OR_RETURN(bool nhwc, IsNhwc(ctx.attrs()));
    const OpDef* def = FindOp(PoolOpName(ctx.attrs()));
    if (!nhwc) {
      ASSIGN_OR_RETURN(std::vector<OutputInfo> outs, def->shape(ctx));
      outs.resize(1);
      return outs;
    }
    if (ctx.rank(0) != 4) return ctx.Error(ctx.InputName(0), " has rank ", ctx.rank(0), ", expected 4 for layout NHWC");
    ValueInfo x = ctx.in(0);
    x.shape = PermuteShape(x.shape, kNhwcToNchw);
    x.constant = nullptr;
    x.sym_values = nullptr;
    InferContext nchw(ctx.node(), {&x});
    ASSIGN_OR_RETURN(std::vector<OutputInfo> outs, def->shape(nchw));
    outs.resize(1);
    outs[0].shape = PermuteShape(outs[0].shape, kNchwToNhwc);
    return outs;
  };
  d.kernel = [](KernelContext& k) -> absl::Status {
    RETURN_IF_ERROR(CheckPoolKind(k.attrs()));
    ASSIGN_OR_RETURN(bool nhwc, IsNhwc(k.attrs()));
    const OpDef* def = FindOp(PoolOpName(k.attrs()));
    if (!nhwc) return def->kernel(k);
    Tensor x = Permute4(*k.in(0), kNhwcToNchw);
    const std::vector<int64_t>& od = k.outputs[0].dims();
    ASSIGN_OR_RETURN(Tensor y, Tensor::Zeros(k.outputs[0].dtype(), {od[0], od[3], od[1], od[2]}));
    std::vector<const Tensor*> ins = {&x};
    KernelContext nchw{k.node, ins, std::span<Tensor>(&y, 1)};
    RETURN_IF_ERROR(def->kernel(nchw));
    WriteF32(k.outputs[0], ReadF32(Permute4(y, kNchwToNhwc)));  // keeps the output's storage dtype
    return absl::OkStatus();
  };
  return d;
}

}  // namespace

// FakeQuantFp8: a GEMM operand stored as fp8 e4m3fn with a scale, as the GEMM reads it:
// y = RoundToStorage(x * s, f8e4m3) / s (saturating at +-448), held in fp16 for the consumer.
// Per-tensor: attribute `scale` = s. Per-channel (weights): input 1 `scales` (f32, 1-D) gives s
// for each index along attribute `axis` of x (the GEMM's output-channel axis), and `scale` is
// absent.
OpDef FakeQuantFp8() {
  OpDef d;
  d.name = "FakeQuantFp8";
  d.min_inputs = 1;
  d.max_inputs = 2;
  d.attrs = {{"scale", AttrType::kFloat, false}, {"axis", AttrType::kInt, false}};
  d.shape = [](const InferContext& ctx) -> absl::StatusOr<std::vector<OutputInfo>> {
    if (!IsFloat(ctx.in(0).dtype)) return ctx.Error("input ", ctx.InputName(0), " is not a float tensor");
    const bool per_channel = ctx.has(1);
    if (per_channel == ctx.attrs().Has("scale")) {
      return ctx.Error("expected exactly one of attribute 'scale' (per-tensor) and input 'scales' (per-channel)");
    }
    if (!per_channel) {
      if (!(ctx.attrs().GetFloat("scale", 0) > 0)) return ctx.Error("scale must be positive");
      return std::vector<OutputInfo>{{DType::kF16, ctx.in(0).shape}};
    }
    if (ctx.in(1).dtype != DType::kF32 || ctx.rank(1) != 1) {
      return ctx.Error("input ", ctx.InputName(1), " must be a 1-D f32 tensor of per-channel scales");
    }
    ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx.attrs().GetInt("axis", 0), ctx.rank(0)));
    if (ctx.in(1).shape[0] != ctx.in(0).shape[axis]) {
      return ctx.Error(ctx.InputName(1), " has ", ctx.in(1).shape[0].ToString(), " scales, expected ",
                       ctx.in(0).shape[axis].ToString(), " (the size of axis ", axis, " of ", ctx.InputName(0), ")");
    }
    return std::vector<OutputInfo>{{DType::kF16, ctx.in(0).shape}};
  };
  d.kernel = [](KernelContext& k) -> absl::Status {
    const Tensor& x = *k.in(0);
    if (const Tensor* scales = k.in(1)) {
      ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(k.attrs().GetInt("axis", 0), x.rank()));
      int64_t inner = 1;
      for (int64_t i = axis + 1; i < x.rank(); ++i) inner *= x.dims()[i];
      const int64_t channels = x.dims()[axis];
      for (int64_t i = 0; i < x.numel(); ++i) {
        const float s = scales->GetF32((i / inner) % channels);
        if (!(s > 0)) return absl::InvalidArgumentError("FakeQuantFp8: per-channel scales must be positive");
        k.outputs[0].SetF32(i, RoundToStorage(x.GetF32(i) * s, DType::kF8E4M3) / s);
      }
      return absl::OkStatus();
    }
    const float scale = k.attrs().GetFloat("scale", 1);
    for (int64_t i = 0; i < x.numel(); ++i) {
      k.outputs[0].SetF32(i, RoundToStorage(x.GetF32(i) * scale, DType::kF8E4M3) / scale);
    }
    return absl::OkStatus();
  };
  return d;
}

// QuantizeFp8: the e4m3 values a real fp8 GEMM reads: y = RoundToStorage(x * scale, f8e4m3),
// saturating at +-448, stored as f8e4m3 (O3's lower-fp8 makes it from a FakeQuantFp8 whose
// reader became the fp8 form of FusedGemm, which applies 1 / scale through its alpha).
OpDef QuantizeFp8() {
  OpDef d;
  d.name = "QuantizeFp8";
  d.min_inputs = 1;
  d.max_inputs = 1;
  d.attrs = {{"scale", AttrType::kFloat, true}};
  d.shape = [](const InferContext& ctx) -> absl::StatusOr<std::vector<OutputInfo>> {
    if (!IsFloat(ctx.in(0).dtype)) return ctx.Error("input ", ctx.InputName(0), " is not a float tensor");
    const float scale = ctx.attrs().GetFloat("scale", 0);
    if (!(scale > 0) || !std::isfinite(scale)) return ctx.Error("scale must be positive and finite");
    return ops::One(DType::kF8E4M3, ctx.in(0).shape);
  };
  d.kernel = [](KernelContext& k) -> absl::Status {
    const Tensor& x = *k.in(0);
    const float scale = k.attrs().GetFloat("scale", 1);
    for (int64_t i = 0; i < x.numel(); ++i) k.outputs[0].SetF32(i, x.GetF32(i) * scale);
    return absl::OkStatus();
  };
  return d;
}

void RegisterFusedOps(OpTableBuilder& t) {
  t.Add(QuantizeFp8());
  t.Add(FakeQuantFp8());
  t.Add(FusedConv());
  t.Add(FusedGemm());
  t.Add(LayerNorm());
  t.Add(Im2Col());
  t.Add(Pool());
}

}  // namespace gcomp
