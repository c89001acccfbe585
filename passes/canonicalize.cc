// canonicalize: one form per op, so that later rules match fewer shapes.
//
//   %y = Add(%c, %x)  (%c constant, %x not)    ->  %y = Add(%x, %c)        (Mul likewise)
//   %y = Reshape(%x, %s)  (y's shape == x's)    ->  uses of %y read %x
//   %y = Flatten(%x)      (y's shape == x's, e.g. axis=1 of a rank-2 input)  ->  uses of %y read %x
//   %y = Transpose(%x) {perm = 0,1,..,r-1}      ->  uses of %y read %x
//   %y = ReduceMean(%x: rank 4) {axes = 2,3 in any order or sign, keepdims=1}
//                                                ->  %y = GlobalAveragePool(%x)
//        (keepdims=0: Flatten(GlobalAveragePool(%x), axis=1)): the dynamo exporter's
//        adaptive_avg_pool2d((1, 1)), the form conv-chain layouts and kernels know
//   %a, %b = Split(%x) {axis}  (the outputs' extents along axis constant)
//                                                ->  %a = Slice(%x, 0, n_a, axis), %b = Slice(%x, n_a, n_a + n_b, axis)
//        (torch's chunk/GLU exports): slices are views the layout folds and the backends run
//   %y = Gemm(%a, %b, %c) {alpha, beta, transA, transB}  (%b not a constant: fuse-gemm's FusedGemm
//        needs constant weights)  ->  %y = Add(Mul(MatMul(A', B'), alpha), Mul(%c, beta))
//        (Transposes for transA/transB; factors of 1 and an absent C leave their op out): the
//        GEMM of two run-time operands that every backend runs as MatMul
//
// Preconditions: the shape rules compare the inferred shapes exactly (symbolic dims as
// expressions: [batch,197,768] equals [batch,197,768] only), so they are exact at every batch
// size. A node whose output is a graph output and whose input is a graph input, constant or
// output stays (a graph output needs a producer to keep its name).
// Left alone on purpose: Gemm (C absent, alpha = beta = 1 is already the form fuse-gemm matches),
// Sub(x, c) and Div(x, c) (not commutative), LayerNormalization (fuse-layernorm owns it).
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "passes/passes.h"
#include "passes/rewriter.h"

namespace gcomp::passes {
namespace {

bool IsGraphInput(const Graph& g, const Value* v) {
  return std::find(g.inputs().begin(), g.inputs().end(), v) != g.inputs().end();
}

// Whether `n` (Reshape, Flatten, Transpose) copies its input unchanged.
bool IsIdentityShapeOp(const Node& n) {
  const Value* in = n.input(0);
  const Value* out = n.output(0);
  if (!in || !out || in->dtype != out->dtype || in->shape != out->shape) return false;
  if (n.op == "Reshape" || n.op == "Flatten") return true;
  // Transpose: only the identity permutation keeps the data order.
  const int64_t rank = static_cast<int64_t>(in->shape.size());
  std::vector<int64_t> def(rank);
  for (int64_t i = 0; i < rank; ++i) def[i] = rank - 1 - i;
  std::vector<int64_t> perm = n.attrs.GetInts("perm", def);
  for (int64_t i = 0; i < rank; ++i) {
    if (perm[i] != i) return false;
  }
  return true;
}

// ReduceMean over H and W of an NCHW tensor as GlobalAveragePool (see the file comment).
absl::StatusOr<bool> SpatialMeanToPool(Graph& g, Rewriter& rw, Node* n, const PassContext& ctx) {
  Value* x = n->input(0);
  if (!x || x->shape.size() != 4 || x->dtype != DType::kF32 || n->input(1)) return false;
  std::vector<int64_t> axes = n->attrs.GetInts("axes", {});
  for (int64_t& a : axes) a = a < 0 ? a + 4 : a;
  std::sort(axes.begin(), axes.end());
  if (axes != std::vector<int64_t>{2, 3}) return false;
  if (g.IsGraphOutput(n->output(0))) {
    ctx.Explain("SpatialMeanToPool", *n, "its output is a graph output");
    return false;
  }
  const bool keep = n->attrs.GetInt("keepdims", 1) != 0;
  ASSIGN_OR_RETURN(Node * pool, rw.Create("GlobalAveragePool", keep ? n->name : n->name + "/pool", {x}, Attributes(),
                                          n->origin));
  Value* out = pool->output(0);
  if (!keep) {
    Attributes flat;
    flat.Set("axis", int64_t{1});
    ASSIGN_OR_RETURN(Node * f, rw.Create("Flatten", n->name + "/flatten", {out}, std::move(flat), n->origin));
    out = f->output(0);
  }
  if (out->shape != n->output(0)->shape) return absl::InternalError("SpatialMeanToPool: shape mismatch");
  rw.ReplaceAllUses(n->output(0), out);
  RETURN_IF_ERROR(rw.Erase(n));
  return true;
}

// Gemm of a run-time B as MatMul and elementwise ops (see the file comment).
absl::StatusOr<bool> RuntimeGemmToMatMul(Graph& g, Rewriter& rw, Node* n, const PassContext& ctx) {
  Value *a = n->input(0), *b = n->input(1), *c = n->input(2);
  if (!a || !b || b->is_constant() || a->shape.size() != 2 || b->shape.size() != 2 || a->dtype != DType::kF32) {
    return false;
  }
  const float alpha = n->attrs.GetFloat("alpha", 1.0f), beta = n->attrs.GetFloat("beta", 1.0f);
  const bool trans_a = n->attrs.GetInt("transA", 0) != 0, trans_b = n->attrs.GetInt("transB", 0) != 0;
  // The product's shape [M, N], and C broadcast to it, must be the Gemm's output shape as written:
  // C's dims equal to [M, N]'s or 1 (Gemm broadcasts C one way only). A C that would broadcast only
  // if a symbolic dim took a particular value stays a Gemm.
  const Shape product = {a->shape[trans_a ? 1 : 0], b->shape[trans_b ? 0 : 1]};
  bool c_fits = true;
  if (c && beta != 0.0f) {
    c_fits = c->shape.size() <= 2;
    for (size_t k = 0; c_fits && k < c->shape.size(); ++k) {
      const Dim& cd = c->shape[c->shape.size() - 1 - k];
      c_fits = cd == Dim(1) || cd == product[1 - k];
    }
  }
  if (product != n->output(0)->shape || !c_fits) {
    ctx.Explain("RuntimeGemmToMatMul", *n, "C or the product's shape differs from the Gemm's output shape");
    return false;
  }
  const std::string& name = n->name;
  auto transpose = [&](Value* v, const char* suffix) -> absl::StatusOr<Value*> {
    Attributes t;
    t.Set("perm", std::vector<int64_t>{1, 0});
    ASSIGN_OR_RETURN(Node * tn, rw.Create("Transpose", name + suffix, {v}, std::move(t), n->origin));
    return tn->output(0);
  };
  if (trans_a) {
    ASSIGN_OR_RETURN(a, transpose(a, "/a_t"));
  }
  if (trans_b) {
    ASSIGN_OR_RETURN(b, transpose(b, "/b_t"));
  }
  ASSIGN_OR_RETURN(Node * mm, rw.Create("MatMul", name + "/matmul", {a, b}, Attributes(), n->origin));
  Value* y = mm->output(0);
  auto scaled = [&](Value* v, float f, const char* suffix) -> absl::StatusOr<Value*> {
    if (f == 1.0f) return v;
    ASSIGN_OR_RETURN(Value * k, rw.Constant(name + suffix + std::string("/factor"), Tensor::FromF32({}, {f})));
    ASSIGN_OR_RETURN(Node * m, rw.Create("Mul", name + suffix, {v, k}, Attributes(), n->origin));
    return m->output(0);
  };
  ASSIGN_OR_RETURN(y, scaled(y, alpha, "/alpha"));
  if (c && beta != 0.0f) {
    ASSIGN_OR_RETURN(Value * cb, scaled(c, beta, "/beta"));
    ASSIGN_OR_RETURN(Node * add, rw.Create("Add", name + "/add_c", {y, cb}, Attributes(), n->origin));
    y = add->output(0);
  }
  if (y->shape != n->output(0)->shape) return absl::InternalError("RuntimeGemmToMatMul: shape mismatch");
  mm->decisions.push_back({"canonical form", "MatMul",
                           absl::StrCat("Gemm '", name, "' with run-time B '", n->input(1)->name,
                                        "' (no constant weights to pack): MatMul",
                                        alpha != 1.0f ? " x alpha" : "", c && beta != 0.0f ? " + beta C" : "")});
  rw.ReplaceAllUses(n->output(0), y);
  RETURN_IF_ERROR(rw.Erase(n));
  return true;
}

// Split as one Slice per output (see the file comment).
absl::StatusOr<bool> SplitToSlices(Graph& g, Rewriter& rw, Node* n, const PassContext& ctx) {
  Value* x = n->input(0);
  if (!x || x->shape.empty()) return false;
  const int64_t rank = static_cast<int64_t>(x->shape.size());
  int64_t axis = n->attrs.GetInt("axis", 0);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return false;
  std::vector<int64_t> extents;
  for (size_t i = 0; i < n->outputs.size(); ++i) {
    const Value* y = n->output(i);
    if (!y || y->shape.size() != x->shape.size() || !y->shape[axis].IsConst()) {
      ctx.Explain("SplitToSlices", *n, "an output's extent along the split axis is not a constant");
      return false;
    }
    extents.push_back(*y->shape[axis].ConstValue());
  }
  int64_t offset = 0;
  for (size_t i = 0; i < n->outputs.size(); ++i) {
    Value* y = n->output(i);
    const std::string name = absl::StrCat(n->name, "/slice_", i);
    ASSIGN_OR_RETURN(Value * starts, rw.Constant(name + "/starts", Tensor::FromI64({1}, {offset})));
    ASSIGN_OR_RETURN(Value * ends, rw.Constant(name + "/ends", Tensor::FromI64({1}, {offset + extents[i]})));
    ASSIGN_OR_RETURN(Value * axes, rw.Constant(name + "/axes", Tensor::FromI64({1}, {axis})));
    offset += extents[i];
    if (y->users.empty() && !g.IsGraphOutput(y)) continue;
    ASSIGN_OR_RETURN(Node * slice, rw.Create("Slice", name, {x, starts, ends, axes}, Attributes(), n->origin));
    if (slice->output(0)->shape != y->shape) return absl::InternalError("SplitToSlices: shape mismatch");
    rw.ReplaceAllUses(y, slice->output(0));
  }
  RETURN_IF_ERROR(rw.Erase(n));
  return true;
}

}  // namespace

absl::StatusOr<bool> Canonicalize(Graph& g, const PassContext& ctx) {
  Rewriter rw(g);
  bool changed = false;
  for (Node* n : g.nodes()) {
    if (n->op == "Add" || n->op == "Mul") {
      Value* a = n->input(0);
      Value* b = n->input(1);
      if (!a || !b || !a->is_constant()) continue;
      if (b->is_constant()) {
        ctx.Explain("ConstantOperandSecond", *n, "both operands are constants (fold-constants evaluates it)");
        continue;
      }
      RETURN_IF_ERROR(rw.RecreateWithInputs(n, {b, a}).status());
      changed = true;
      continue;
    }
    if (n->op == "Gemm") {
      ASSIGN_OR_RETURN(bool split, RuntimeGemmToMatMul(g, rw, n, ctx));
      changed |= split;
      continue;
    }
    if (n->op == "Split") {
      ASSIGN_OR_RETURN(bool sliced, SplitToSlices(g, rw, n, ctx));
      changed |= sliced;
      continue;
    }
    if (n->op == "ReduceMean") {
      ASSIGN_OR_RETURN(bool pooled, SpatialMeanToPool(g, rw, n, ctx));
      changed |= pooled;
      continue;
    }
    if (n->op != "Reshape" && n->op != "Flatten" && n->op != "Transpose") continue;
    if (!IsIdentityShapeOp(*n)) continue;
    Value* in = n->input(0);
    Value* out = n->output(0);
    if (g.IsGraphOutput(out) && (g.IsGraphOutput(in) || in->is_constant() || IsGraphInput(g, in))) {
      ctx.Explain("RemoveIdentityShapeOp", *n, "it copies a graph input, constant or output to a graph output");
      continue;
    }
    rw.ReplaceAllUses(out, in);
    RETURN_IF_ERROR(rw.EraseWithDeadInputs(n));
    changed = true;
  }
  if (changed) RETURN_IF_ERROR(rw.Finish());
  return changed;
}

}  // namespace gcomp::passes
