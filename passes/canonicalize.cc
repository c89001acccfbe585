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
//
// Preconditions: the shape rules compare the inferred shapes exactly (symbolic dims as
// expressions: [batch,197,768] equals [batch,197,768] only), so they are exact at every batch
// size. A node whose output is a graph output and whose input is a graph input, constant or
// output stays (a graph output needs a producer to keep its name).
// Left alone on purpose: Gemm (C absent, alpha = beta = 1 is already the form fuse-gemm matches),
// Sub(x, c) and Div(x, c) (not commutative), LayerNormalization (fuse-layernorm owns it).
#include <algorithm>

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
