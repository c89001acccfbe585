// lower-conv (O3): each FusedConv is lowered the way the target description says.
//
//   1x1, group 1, no padding   %y = FusedConv(%X, %W, %B, %Z)
//     -> [Transpose to NHWC] -> [Slice steps s on H, W] -> FusedGemm(A [N,Ho,Wo,Cin], W [Cout,Cin],
//        B, Z in NHWC) {transB=1} -> [Transpose to NCHW]           decision "GEMM (1x1)"
//   k x k, target with an implicit-GEMM conv (cuDNN): stays a FusedConv  "implicit GEMM"
//   k x k, group 1, target without one: Im2Col (same layout) -> FusedGemm (W as [Cout, K] in the
//        patch column order) -> Reshape [N,Ho,Wo,Cout] -> [Transpose to NCHW]   "im2col + GEMM"
//   grouped k x k without an implicit-GEMM conv: stays a FusedConv (runs per group)  "direct (grouped)"
// The bracketed Transposes appear only for a FusedConv still in NCHW; after layout-nhwc the
// conv is NHWC already and the GEMM reads it as it is. For targets that do not rewrite (ref)
// only the decision is recorded. Every lowered node keeps the conv's origin and decisions and
// records its choice with the target's reason.
// Preconditions for a rewrite: 2-D conv, constant W, explicit pads (no auto_pad), known Ho, Wo.
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/epilogue.h"
#include "core/status_macros.h"
#include "passes/passes.h"
#include "passes/rewriter.h"
#include "passes/target.h"

namespace gcomp::passes {
namespace {

const std::vector<int64_t> kToNhwc = {0, 2, 3, 1};
const std::vector<int64_t> kToNchw = {0, 3, 1, 2};

bool HasLowering(const Node* n) {
  for (const Decision& d : n->decisions) {
    if (d.kind == "lowering") return true;
  }
  return false;
}

struct ConvGeometry {
  bool nhwc = false;
  int64_t cout = 0, cin_per_group = 0, kh = 0, kw = 0, group = 1;
  std::vector<int64_t> strides, pads, dilations;
  bool explicit_pads = true;
};

std::optional<ConvGeometry> Geometry(const Node* n) {
  const Value* w = n->input(1);
  if (!w || w->shape.size() != 4 || n->input(0)->shape.size() != 4) return std::nullopt;
  for (const Dim& d : w->shape) {
    if (!d.IsConst()) return std::nullopt;
  }
  ConvGeometry g;
  g.nhwc = n->attrs.GetString("layout", "NCHW") == "NHWC";
  g.cout = w->shape[0].value();
  g.cin_per_group = w->shape[1].value();
  g.kh = w->shape[2].value();
  g.kw = w->shape[3].value();
  g.group = n->attrs.GetInt("group", 1);
  g.strides = n->attrs.GetInts("strides", {1, 1});
  g.dilations = n->attrs.GetInts("dilations", {1, 1});
  g.pads = n->attrs.GetInts("pads", {0, 0, 0, 0});
  std::string auto_pad = n->attrs.GetString("auto_pad", "NOTSET");
  g.explicit_pads = auto_pad == "NOTSET" || auto_pad.empty() || auto_pad == "VALID";
  return g;
}

bool AllEqual(const std::vector<int64_t>& v, int64_t x) {
  for (int64_t e : v) {
    if (e != x) return false;
  }
  return true;
}

std::string EpilogueNote(const TargetDescription& t, const Node* n) {
  std::string act = n->attrs.GetString(kActivationAttr, ActivationName(Activation::kNone));
  const GemmEpilogue* e = t.Epilogue(act);
  if (!e)
    return absl::StrCat("; activation ", act, " is not a GEMM epilogue of ", t.name,
                        ": a separate pass over the output");
  if (!e->exact) return absl::StrCat("; activation ", act, " epilogue is approximate on ", t.name, " (", e->note, ")");
  return "";
}

struct Lowering {
  std::string choice, reason;
  bool rewrite = false;
};

Lowering Decide(const TargetDescription& t, const Node* n, const ConvGeometry& g) {
  const bool is_1x1 = g.kh == 1 && g.kw == 1 && g.group == 1 && AllEqual(g.pads, 0);
  const std::string where = absl::StrCat(t.name, " (", t.source, ")");
  if (is_1x1) {
    const bool strided = !AllEqual(g.strides, 1);
    return {"GEMM (1x1)",
            absl::StrCat(
                "a 1x1 conv is a GEMM of the NHWC activations by W [Cout, Cin]",
                strided ? absl::StrCat(" after a strided gather (stride ", absl::StrJoin(g.strides, "x"), ")") : "",
                "; ", where, EpilogueNote(t, n)),
            t.rewrite};
  }
  if (!t.implicit_gemm_conv.empty()) {
    return {"implicit GEMM", absl::StrCat(where, " runs k x k convs natively: ", t.implicit_gemm_conv), false};
  }
  if (g.group != 1) {
    return {"direct (grouped)",
            absl::StrCat(where, " has no implicit-GEMM conv and im2col + GEMM is per group (group=", g.group,
                         "): kept as a grouped FusedConv"),
            false};
  }
  return {"im2col + GEMM",
          absl::StrCat(where, " has no implicit-GEMM conv kernel: patches [N*Ho*Wo, Cin*kh*kw] by W [Cout, K]",
                       EpilogueNote(t, n)),
          t.rewrite && t.im2col};
}

absl::StatusOr<Value*> Transposed(Rewriter& rw, const Node* conv, Value* v, const std::vector<int64_t>& perm) {
  Attributes a;
  a.Set("perm", perm);
  ASSIGN_OR_RETURN(Node * t, rw.Create("Transpose", conv->name + "_layout", {v}, std::move(a), conv->origin));
  t->decisions.push_back(
      {"layout", perm == kToNhwc ? "NCHW->NHWC" : "NHWC->NCHW", "lower-conv: the GEMM reads and writes NHWC"});
  return t->output(0);
}

absl::StatusOr<Value*> I64Constant(Rewriter& rw, const std::string& name, const std::vector<int64_t>& v) {
  return rw.Constant(name, Tensor::FromI64({static_cast<int64_t>(v.size())}, v));
}

Attributes GemmAttrs(const Node* conv) {
  Attributes a;
  a.Set("transB", int64_t{1});
  for (const char* k : {kActivationAttr, kClipMinAttr, kClipMaxAttr}) {
    if (const AttrValue* v = conv->attrs.Find(k)) a.Set(k, *v);
  }
  return a;
}

// Rewrites `conv` per `l`; returns false when a precondition does not hold.
absl::StatusOr<bool> Rewrite(Rewriter& rw, Node* conv, const ConvGeometry& g, const Lowering& l,
                             const PassContext& ctx) {
  Value* w = conv->input(1);
  const Shape& out_shape = conv->output(0)->shape;
  if (!w->is_constant() || !g.explicit_pads || !out_shape[2].IsConst() || !out_shape[3].IsConst() ||
      conv->input(0)->dtype != DType::kF32) {
    ctx.Explain("LowerConv", *conv, "W is not a constant, auto_pad is SAME_*, Ho/Wo are symbolic or X is not fp32");
    return false;
  }
  const int64_t ho = g.nhwc ? out_shape[1].value() : out_shape[2].value();
  const int64_t wo = g.nhwc ? out_shape[2].value() : out_shape[3].value();
  std::vector<float> wv = w->constant->ToF32();
  Value* x = conv->input(0);
  if (!g.nhwc && l.choice == "GEMM (1x1)") {
    ASSIGN_OR_RETURN(x, Transposed(rw, conv, x, kToNhwc));
  }
  Value* z = conv->input(3);
  if (z && !g.nhwc) {
    ASSIGN_OR_RETURN(z, Transposed(rw, conv, z, kToNhwc));
  }
  Value* a = x;
  Tensor wm;
  if (l.choice == "GEMM (1x1)") {
    if (!AllEqual(g.strides, 1)) {
      ASSIGN_OR_RETURN(Value * starts, I64Constant(rw, conv->name + "_starts", {0, 0}));
      ASSIGN_OR_RETURN(Value * ends, I64Constant(rw, conv->name + "_ends", {INT64_MAX, INT64_MAX}));
      ASSIGN_OR_RETURN(Value * axes, I64Constant(rw, conv->name + "_axes", {1, 2}));
      ASSIGN_OR_RETURN(Value * steps, I64Constant(rw, conv->name + "_steps", g.strides));
      ASSIGN_OR_RETURN(Node * s,
                       rw.Create("Slice", conv->name + "_gather", {a, starts, ends, axes, steps}, {}, conv->origin));
      s->decisions.push_back(
          {"lowering", "strided gather", absl::StrCat("stride ", absl::StrJoin(g.strides, "x"), " of the 1x1 conv")});
      a = s->output(0);
    }
    wm = Tensor::FromF32({g.cout, g.cin_per_group}, wv);
  } else {
    Attributes ia;
    ia.Set("kernel_shape", std::vector<int64_t>{g.kh, g.kw});
    ia.Set("strides", g.strides);
    ia.Set("pads", g.pads);
    ia.Set("dilations", g.dilations);
    ia.Set("layout", std::string(g.nhwc ? "NHWC" : "NCHW"));
    ASSIGN_OR_RETURN(Node * im, rw.Create("Im2Col", conv->name + "_im2col", {x}, std::move(ia), conv->origin));
    im->decisions.push_back({"lowering", "im2col", l.reason});
    a = im->output(0);
    const int64_t c = g.cin_per_group, k = c * g.kh * g.kw;
    if (g.nhwc) {  // columns (ky, kx, c)
      std::vector<float> t(wv.size());
      for (int64_t o = 0; o < g.cout; ++o)
        for (int64_t ch = 0; ch < c; ++ch)
          for (int64_t ky = 0; ky < g.kh; ++ky)
            for (int64_t kx = 0; kx < g.kw; ++kx)
              t[o * k + (ky * g.kw + kx) * c + ch] = wv[((o * c + ch) * g.kh + ky) * g.kw + kx];
      wv = std::move(t);
    }
    wm = Tensor::FromF32({g.cout, k}, wv);
    if (z) {
      ASSIGN_OR_RETURN(Value * zshape, I64Constant(rw, conv->name + "_zshape", {-1, g.cout}));
      ASSIGN_OR_RETURN(Node * zr, rw.Create("Reshape", conv->name + "_zrows", {z, zshape}, {}, conv->origin));
      z = zr->output(0);
    }
  }
  ASSIGN_OR_RETURN(Value * wc, rw.Constant(w->name + "_gemm", std::move(wm)));
  ASSIGN_OR_RETURN(Node * gemm,
                   rw.Create("FusedGemm", conv->name, {a, wc, conv->input(2), z}, GemmAttrs(conv), conv->origin));
  gemm->decisions = conv->decisions;
  gemm->decisions.push_back({"lowering", l.choice, l.reason});
  Value* y = gemm->output(0);
  if (l.choice != "GEMM (1x1)") {
    ASSIGN_OR_RETURN(Value * yshape, I64Constant(rw, conv->name + "_yshape", {-1, ho, wo, g.cout}));
    ASSIGN_OR_RETURN(Node * yr, rw.Create("Reshape", conv->name + "_nhwc", {y, yshape}, {}, conv->origin));
    y = yr->output(0);
  }
  if (!g.nhwc) {
    ASSIGN_OR_RETURN(y, Transposed(rw, conv, y, kToNchw));
  }
  const std::string name = conv->name;
  rw.ReplaceAllUses(conv->output(0), y);
  RETURN_IF_ERROR(rw.EraseWithDeadInputs(conv));
  gemm->name = name;  // the GEMM is the conv now: --keep-fp32 and reports find it by its name
  return true;
}

}  // namespace

absl::StatusOr<bool> LowerConv(Graph& g, const PassContext& ctx) {
  ASSIGN_OR_RETURN(const TargetDescription* target, FindTarget(ctx.options().target));
  Rewriter rw(g);
  bool changed = false;
  for (Node* n : g.nodes()) {
    if (n->op != "FusedConv" || HasLowering(n)) continue;
    std::optional<ConvGeometry> geo = Geometry(n);
    if (!geo) {
      ctx.Explain("LowerConv", *n, "not a 2-D conv with a weight of known shape");
      continue;
    }
    Lowering l = Decide(*target, n, *geo);
    if (l.rewrite) {
      ASSIGN_OR_RETURN(bool done, Rewrite(rw, n, *geo, l, ctx));
      if (done) {
        changed = true;
        continue;
      }
    }
    n->decisions.push_back({"lowering", l.choice, l.reason});
    changed = true;
  }
  if (changed) RETURN_IF_ERROR(rw.Finish());
  return changed;
}

}  // namespace gcomp::passes
