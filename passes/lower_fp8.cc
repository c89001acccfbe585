// lower-fp8 (O3, after assign-precision): on a target with an fp8 GEMM kernel (the description's
// `fp8-gemm` line), each FusedGemm that assign-precision gave fp8 operands reads real e4m3 bytes:
//
//   %qa = FakeQuantFp8(%x){scale=Sa}                %qa = QuantizeFp8(%x){scale=Sa}      (f8e4m3)
//   %qw = FakeQuantFp8(W, scales Sw){axis}    ->    Wq  = const f8e4m3 [N,K] = RoundToStorage(W·Sw[j])
//   %y  = FusedGemm(%qa, %qw, bias, Z){alpha}       %y  = FusedGemm(%qa, Wq, bias, Z, 1/Sw){alpha/Sa, transB=1}
//
// The fp8 form of FusedGemm (graph/ops/fused_ops.cc) computes y = alpha/Sa · (1/Sw[j]) · Σ qa·qw
// in fp32, then bias, residual and activation, stored fp16: what cuBLASLt's fp8 GEMM computes with
// A's per-column scale vector and alpha, so the reference interpreter runs the kernel's numbers
// (the FakeQuantFp8 form held each dequantized operand in fp16 first, an extra rounding the
// kernel does not make). A per-tensor weight scale becomes the same value in every column.
//
// Where cuBLASLt's fp8 layout does not fit (K not a multiple of 16, N not a multiple of 8: its
// rows must start 16-byte aligned) the GEMM stays fp16, as do the other readers of FakeQuantFp8
// (FusedConv, Attention, MatMul): the target has no fp8 kernel for them, so rounding their operands
// through fp8 would cost a pass over memory and accuracy and gain nothing. Their FakeQuantFp8
// becomes the fp16 value itself (a Cast where the value is stored in another type; constants fold),
// and the reader records "fp8 = fp16 operands" with the reason.
// A QuantizeFp8 that is the only reader of a LayerNorm's output (ViT's pre-norm LayerNorms feed
// the QKV and FC1 GEMMs) fuses into it: LayerNorm{fp8_scale} writes the e4m3 bytes of its fp32
// result directly, one pass over memory instead of two (and no fp16 rounding before e4m3).
// Preconditions: runs after assign-precision (FakeQuantFp8 nodes exist only with --precision fp8).
#include <cmath>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/status_macros.h"
#include "passes/passes.h"
#include "passes/rewriter.h"
#include "passes/target.h"

namespace gcomp::passes {
namespace {

bool HasDecision(const Node* n, const std::string& kind) {
  for (const Decision& d : n->decisions) {
    if (d.kind == kind) return true;
  }
  return false;
}

const Node* FakeQuant(const Value* v) {
  return v && v->producer && v->producer->op == "FakeQuantFp8" ? v->producer : nullptr;
}

// The weight as e4m3 bytes [N, K] and the per-column dequantization factors, from B's FakeQuantFp8.
struct Fp8Weight {
  Tensor q;
  Tensor dequant;
  float lo = INFINITY, hi = 0;
};

absl::StatusOr<Fp8Weight> QuantizeWeight(const Node& fq, bool trans_b) {
  const Tensor& w = *fq.input(0)->constant;
  const int64_t k = trans_b ? w.dims()[1] : w.dims()[0], n = trans_b ? w.dims()[0] : w.dims()[1];
  std::vector<float> scale(static_cast<size_t>(n));
  if (const Value* s = fq.input(1)) {
    const int64_t axis = fq.attrs.GetInt("axis", 0);
    if (!s->is_constant() || axis != (trans_b ? 0 : 1) || s->constant->numel() != n) {
      return absl::InvalidArgumentError("per-channel scales not along the GEMM's output columns");
    }
    for (int64_t j = 0; j < n; ++j) scale[j] = s->constant->GetF32(j);
  } else {
    std::fill(scale.begin(), scale.end(), fq.attrs.GetFloat("scale", 1.0f));
  }
  Fp8Weight out;
  ASSIGN_OR_RETURN(out.q, Tensor::Zeros(DType::kF8E4M3, {n, k}));
  ASSIGN_OR_RETURN(out.dequant, Tensor::Zeros(DType::kF32, {n}));
  for (int64_t j = 0; j < n; ++j) {
    if (!(scale[j] > 0) || !std::isfinite(scale[j])) return absl::InvalidArgumentError("a weight scale is not positive");
    for (int64_t p = 0; p < k; ++p) out.q.SetF32(j * k + p, w.GetF32(trans_b ? j * k + p : p * n + j) * scale[j]);
    const float d = 1.0f / scale[j];
    out.dequant.SetF32(j, d);
    out.lo = std::min(out.lo, d);
    out.hi = std::max(out.hi, d);
  }
  return out;
}

}  // namespace

absl::StatusOr<bool> LowerFp8(Graph& g, const PassContext& ctx) {
  ASSIGN_OR_RETURN(const TargetDescription* target, FindTarget(ctx.options().target));
  if (!target->rewrite || target->fp8_gemm.empty()) return false;
  const std::string where = absl::StrCat(target->name, " (", target->source, ")");
  Rewriter rw(g);
  std::map<const Value*, Value*> quantized;  // FakeQuantFp8 output -> QuantizeFp8 output
  bool changed = false;
  const std::vector<Node*> gemms = [&] {
    std::vector<Node*> out;
    for (Node* n : g.nodes()) {
      if (n->op == "FusedGemm" && !HasDecision(n, "fp8")) out.push_back(n);
    }
    return out;
  }();
  for (Node* n : gemms) {
    const Node* qa = FakeQuant(n->input(0));
    const Node* qb = FakeQuant(n->input(1));
    if (!qa || !qb || qa->input(1) || !qb->input(0)->is_constant() || n->inputs.size() > 4) continue;
    const bool trans_b = n->attrs.GetInt("transB", 0) != 0;
    const Tensor& w = *qb->input(0)->constant;
    if (w.rank() != 2) continue;
    const int64_t k = trans_b ? w.dims()[1] : w.dims()[0], cols = trans_b ? w.dims()[0] : w.dims()[1];
    if (k % 16 != 0 || cols % 8 != 0) {
      n->decisions.push_back(
          {"fp8", "fp16 operands",
           absl::StrCat(where, "'s fp8 GEMM needs K a multiple of 16 and N of 8 (16-byte aligned e4m3 and fp16 rows); "
                               "here K ", k, ", N ", cols, ": an fp16 GEMM on the unrounded fp16 operands")});
      changed = true;
      continue;
    }
    ASSIGN_OR_RETURN(Fp8Weight fw, QuantizeWeight(*qb, trans_b));
    const float sa = qa->attrs.GetFloat("scale", 1.0f);
    Value*& a = quantized[qa->output(0)];
    if (!a) {
      Attributes attrs;
      attrs.Set("scale", sa);
      ASSIGN_OR_RETURN(Node * q, rw.Create("QuantizeFp8", qa->name + "_q", {qa->input(0)}, std::move(attrs), qa->origin));
      q->precision = DType::kF8E4M3;
      q->decisions.push_back({"precision", "fp8",
                              absl::StrFormat("e4m3 bytes x·%.6g for the fp8 GEMM, which applies 1/%.6g in its alpha", sa,
                                              sa)});
      a = q->output(0);
    }
    ASSIGN_OR_RETURN(Value * wq, rw.Constant(qb->input(0)->name + "_e4m3", std::move(fw.q)));
    ASSIGN_OR_RETURN(Value * dq, rw.Constant(qb->input(0)->name + "_dequant", std::move(fw.dequant)));
    const float alpha = n->attrs.GetFloat("alpha", 1.0f);
    std::vector<Value*> inputs = {a, wq, n->input(2), n->input(3), dq};
    n->attrs.Set("transB", int64_t{1});  // the node is replaced: its attributes are the new node's
    n->attrs.Set("alpha", alpha / sa);
    ASSIGN_OR_RETURN(Node * y, rw.RecreateWithInputs(n, inputs));
    y->decisions.push_back(
        {"fp8", "e4m3 GEMM",
         absl::StrFormat("%s: %s; A = QuantizeFp8('%s', scale %.6g), W = e4m3 [%d, %d] with per-column "
                         "dequantization %.4g..%.4g (scale_b), alpha %.6g = %.6g / %.6g; y = alpha·scale_b[j]·Σ A·W "
                         "accumulated in fp32, then bias, residual and activation, stored fp16",
                         where, target->fp8_gemm, qa->input(0)->name, sa, cols, k, fw.lo, fw.hi, alpha / sa, alpha,
                         sa)});
    changed = true;
  }
  for (Node* n : g.nodes()) {
    if (n->op == "FakeQuantFp8" || HasDecision(n, "fp8")) continue;
    bool reads = false;
    for (const Value* v : n->inputs) reads |= FakeQuant(v) != nullptr;
    if (!reads) continue;
    n->decisions.push_back({"fp8", "fp16 operands",
                            absl::StrCat(where, " has no fp8 kernel for ", n->op, ": its ", DTypeName(n->precision),
                                         " kernel reads the operands unrounded (no pass through fp8)")});
    changed = true;
  }
  // Every FakeQuantFp8 still read (by the nodes above) becomes its fp16 input.
  for (Node* q : g.nodes()) {
    if (q->op != "FakeQuantFp8" || q->output(0)->users.empty()) continue;
    Value* x = q->input(0);
    if (x->dtype != DType::kF16) {
      Attributes attrs;
      attrs.Set("to", std::string(DTypeName(DType::kF16)));
      ASSIGN_OR_RETURN(Node * cast, rw.Create("Cast", q->name + "_f16", {x}, std::move(attrs), q->origin));
      cast->precision = DType::kF16;
      cast->decisions.push_back({"precision", "fp16", absl::StrCat("storage cast: '", x->name, "' is stored ",
                                                                   DTypeName(x->dtype), ", its fp16 readers have no fp8 kernel")});
      x = cast->output(0);
    }
    rw.ReplaceAllUses(q->output(0), x);
    changed = true;
  }
  if (!changed) return false;
  // The FakeQuantFp8 nodes nothing reads any more.
  for (Node* n : g.nodes()) {
    if (n->op == "FakeQuantFp8" && n->output(0)->users.empty() && !g.IsGraphOutput(n->output(0))) {
      RETURN_IF_ERROR(rw.EraseWithDeadInputs(n));
    }
  }
  // LayerNorm -> QuantizeFp8 (its only reader) -> LayerNorm{fp8_scale}.
  std::vector<Node*> quantizes;
  for (Node* n : g.nodes()) {
    if (n->op == "QuantizeFp8") quantizes.push_back(n);
  }
  for (Node* q : quantizes) {
    Node* ln = q->input(0)->producer;
    if (!ln || ln->op != "LayerNorm" || ln->attrs.Has("fp8_scale") || ln->output(0)->users.size() != 1 ||
        g.IsGraphOutput(ln->output(0))) {
      continue;
    }
    const float scale = q->attrs.GetFloat("scale", 1.0f);
    ln->attrs.Set("fp8_scale", scale);
    ASSIGN_OR_RETURN(Node * fused, rw.RecreateWithInputs(ln, std::vector<Value*>(ln->inputs.begin(), ln->inputs.end())));
    fused->precision = DType::kF8E4M3;
    fused->decisions.push_back(
        {"fp8", "fused quantization",
         absl::StrFormat("writes the e4m3 bytes of y·%.6g for the fp8 GEMM that reads it (QuantizeFp8 '%s' fused)",
                         scale, q->name)});
    rw.ReplaceAllUses(q->output(0), fused->output(0));
    RETURN_IF_ERROR(rw.Erase(q));
  }
  RETURN_IF_ERROR(rw.Finish());
  return true;
}

}  // namespace gcomp::passes
