// gcomp's own fused ops, produced by the O2 fusion passes:
//   FusedConv  = act(Conv(X, W) + B + Z)       Z: optional residual, same shape as the output
//   FusedGemm  = act(alpha * A x B + bias + Z)  A: [..., K], B: [K, N] (or [N, K] with transB=1)
//   LayerNorm  = LayerNormalization's Y alone (statistics are not outputs)
// act is one of none, relu, clip (clip_min/clip_max), gelu (erf), gelu_tanh. Their reference
// kernels compose the ONNX ops' reference semantics so that fusion tests compare like with like.
#include <cmath>

#include "graph/ops/op_helpers.h"
#include "graph/status_macros.h"

namespace gcomp {
namespace {

using ops::ReadF32;
using ops::WriteF32;

const char* const kActivations[] = {"none", "relu", "clip", "gelu", "gelu_tanh"};

absl::Status CheckActivation(const InferContext& ctx) {
  std::string act = ctx.attrs().GetString("activation", "none");
  for (const char* a : kActivations) {
    if (act == a) return absl::OkStatus();
  }
  return ctx.Error("activation '", act, "' is not one of none, relu, clip, gelu, gelu_tanh");
}

float Activate(float x, const std::string& act, float lo, float hi) {
  if (act == "relu") return x > 0.0f ? x : (x < 0.0f ? 0.0f : x);
  if (act == "clip") return std::isnan(x) ? x : std::min(std::max(x, lo), hi);
  if (act == "gelu") return 0.5f * x * (1.0f + std::erf(x / std::sqrt(2.0f)));
  if (act == "gelu_tanh") {
    const float c = std::sqrt(2.0f / static_cast<float>(M_PI));
    return 0.5f * x * (1.0f + std::tanh(c * (x + 0.044715f * x * x * x)));
  }
  return x;
}

// Adds the optional residual (broadcast to the output) and applies the activation, in fp32.
void Epilogue(KernelContext& k, size_t residual_index, std::vector<float>& y) {
  const Tensor& out = k.outputs[0];
  if (const Tensor* z = k.in(residual_index)) {
    std::vector<float> zv = ReadF32(*z);
    std::vector<int64_t> map = ops::BroadcastIndexMap(z->dims(), out.dims());
    for (size_t i = 0; i < y.size(); ++i) y[i] += zv[map[i]];
  }
  std::string act = k.attrs().GetString("activation", "none");
  float lo = k.attrs().GetFloat("clip_min", -INFINITY), hi = k.attrs().GetFloat("clip_max", INFINITY);
  for (float& v : y) v = Activate(v, act, lo, hi);
}

absl::Status CheckResidual(const InferContext& ctx, size_t i, const Shape& out) {
  if (!ctx.has(i)) return absl::OkStatus();
  RETURN_IF_ERROR(ops::ExpectSameDType(ctx, 0, i));
  ASSIGN_OR_RETURN(Shape b, ops::BroadcastShapes(out, ctx.in(i).shape));
  if (b != out) {
    return ctx.Error("residual ", ctx.InputName(i), " has shape ", ShapeToString(ctx.in(i).shape),
                     ", expected one that broadcasts to the output ", ShapeToString(out));
  }
  return absl::OkStatus();
}

std::vector<AttrSpec> EpilogueAttrs() {
  return {{"activation", AttrType::kString}, {"clip_min", AttrType::kFloat}, {"clip_max", AttrType::kFloat}};
}

OpDef FusedConv() {
  OpDef d;
  d.name = "FusedConv";
  d.min_inputs = 2;
  d.max_inputs = 4;  // X, W, B, Z
  d.attrs = {{"auto_pad", AttrType::kString}, {"dilations", AttrType::kInts}, {"group", AttrType::kInt},
             {"kernel_shape", AttrType::kInts}, {"pads", AttrType::kInts}, {"strides", AttrType::kInts}};
  for (const AttrSpec& a : EpilogueAttrs()) d.attrs.push_back(a);
  d.shape = [](const InferContext& ctx) -> absl::StatusOr<std::vector<OutputInfo>> {
    RETURN_IF_ERROR(CheckActivation(ctx));
    ASSIGN_OR_RETURN(std::vector<OutputInfo> outs, FindOp("Conv")->shape(ctx));
    RETURN_IF_ERROR(CheckResidual(ctx, 3, outs[0].shape));
    return outs;
  };
  d.kernel = [](KernelContext& k) -> absl::Status {
    RETURN_IF_ERROR(FindOp("Conv")->kernel(k));
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
  d.max_inputs = 4;  // A, B, bias, Z
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
    Shape out = a;
    out.back() = n;
    if (ctx.has(2)) {
      RETURN_IF_ERROR(ops::ExpectSameDType(ctx, 0, 2));
      if (ctx.rank(2) != 1 || (ctx.in(2).shape[0] != n && ctx.in(2).shape[0] != Dim(1))) {
        return ctx.Error("bias ", ctx.InputName(2), " has shape ", ShapeToString(ctx.in(2).shape), ", expected [",
                         n.ToString(), "]");
      }
    }
    RETURN_IF_ERROR(CheckResidual(ctx, 3, out));
    return ops::One(ctx.in(0).dtype, out);
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
    std::vector<float> y(static_cast<size_t>(m * n));
    std::vector<double> row(static_cast<size_t>(n));
    for (int64_t i = 0; i < m; ++i) {
      std::fill(row.begin(), row.end(), 0.0);
      for (int64_t p = 0; p < kk; ++p) {
        const double av = a[i * kk + p];
        for (int64_t j = 0; j < n; ++j) row[j] += av * b[trans_b ? j * kk + p : p * n + j];
      }
      for (int64_t j = 0; j < n; ++j) {
        double v = alpha * row[j];
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
  d.attrs = {{"axis", AttrType::kInt}, {"epsilon", AttrType::kFloat}};
  d.shape = [](const InferContext& ctx) -> absl::StatusOr<std::vector<OutputInfo>> {
    ASSIGN_OR_RETURN(std::vector<OutputInfo> outs, FindOp("LayerNormalization")->shape(ctx));
    outs.resize(1);
    return outs;
  };
  d.kernel = [](KernelContext& k) -> absl::Status { return FindOp("LayerNormalization")->kernel(k); };
  return d;
}

}  // namespace

void RegisterFusedOps(OpTableBuilder& t) {
  t.Add(FusedConv());
  t.Add(FusedGemm());
  t.Add(LayerNorm());
}

}  // namespace gcomp
