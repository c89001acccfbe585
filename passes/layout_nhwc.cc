// layout-nhwc (O3): for targets whose preferred layout is NHWC, conv chains run in NHWC.
//
//   %y = FusedConv(%X, %W, %B, %Z)          (NCHW)
//   ->  %t = Transpose(%X, [0,2,3,1]); %yn = FusedConv(%t, %W, %B, Transpose(%Z)) {layout="NHWC"}
//       %y = Transpose(%yn, [0,3,1,2])
// then inverse pairs cancel: Transpose(p2) of Transpose(p1) with p1 then p2 the identity reads
// the first Transpose's input; a Transpose that moves only size-1 axes feeding a Flatten or Reshape is
// dropped (GlobalAveragePool in NHWC gives [N,1,1,C], which flattens to [N,C] as it is). What is
// left are Transposes at the edges of the conv chains (the graph input). MaxPool/AveragePool
// between NHWC convs become Pool{layout=NHWC}; GlobalAveragePool becomes ReduceMean over H, W.
// Preconditions: 2-D convs (rank-4 X), float.
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "passes/passes.h"
#include "passes/rewriter.h"
#include "passes/target.h"

namespace gcomp::passes {
namespace {

const std::vector<int64_t> kToNhwc = {0, 2, 3, 1};
const std::vector<int64_t> kToNchw = {0, 3, 1, 2};

bool IsTranspose(const Node* n, const std::vector<int64_t>& perm) {
  return n && n->op == "Transpose" && n->attrs.GetInts("perm") == perm;
}

absl::StatusOr<Value*> Transposed(Rewriter& rw, const Node* at, Value* v, const std::vector<int64_t>& perm) {
  Attributes a;
  a.Set("perm", perm);
  ASSIGN_OR_RETURN(Node * t, rw.Create("Transpose", at->name + "_layout", {v}, std::move(a), at->origin));
  t->decisions.push_back(
      {"layout", perm == kToNhwc ? "NCHW->NHWC" : "NHWC->NCHW", "layout-nhwc: at the edge of an NHWC conv chain"});
  return t->output(0);
}

// Composition: applying `first` then `second` gives the identity.
bool Inverse(const std::vector<int64_t>& first, const std::vector<int64_t>& second) {
  if (first.size() != second.size()) return false;
  for (size_t i = 0; i < second.size(); ++i) {
    if (second[i] < 0 || second[i] >= static_cast<int64_t>(first.size()) ||
        first[second[i]] != static_cast<int64_t>(i)) {
      return false;
    }
  }
  return true;
}

absl::StatusOr<bool> ConvToNhwc(Rewriter& rw, Node* n, const TargetDescription& t) {
  if (n->attrs.GetString("layout", "NCHW") == "NHWC" || n->input(0)->shape.size() != 4) return false;
  ASSIGN_OR_RETURN(Value * x, Transposed(rw, n, n->input(0), kToNhwc));
  Value* z = n->input(3);
  if (z) {
    ASSIGN_OR_RETURN(z, Transposed(rw, n, z, kToNhwc));
  }
  Attributes a = n->attrs;
  a.Set("layout", std::string("NHWC"));
  ASSIGN_OR_RETURN(Node * c,
                   rw.Create("FusedConv", n->name, {x, n->input(1), n->input(2), z}, std::move(a), n->origin));
  c->decisions = n->decisions;
  c->decisions.push_back({"layout", "NHWC", absl::StrCat(t.name, " (", t.source, ") prefers NHWC")});
  ASSIGN_OR_RETURN(Value * y, Transposed(rw, n, c->output(0), kToNchw));
  const std::string name = n->name;
  rw.ReplaceAllUses(n->output(0), y);
  RETURN_IF_ERROR(rw.Erase(n));
  c->name = name;  // the same conv in another layout keeps its name
  return true;
}

// The input of `v`'s producer when it is a Transpose NHWC->NCHW, else nullptr.
Value* NhwcSource(const Value* v) {
  const Node* p = v ? v->producer : nullptr;
  return IsTranspose(p, kToNchw) ? p->input(0) : nullptr;
}

// MaxPool/AveragePool/GlobalAveragePool reading an NHWC chain run in NHWC:
//   Pool(Transpose(%x, to NCHW)) -> Transpose(Pool{layout=NHWC}(%x), to NCHW)
//   GlobalAveragePool(Transpose(%x, to NCHW)) -> Transpose(ReduceMean(%x){axes=[1,2]}, to NCHW)
absl::StatusOr<bool> PoolToNhwc(Rewriter& rw, Node* n, const TargetDescription& t) {
  Value* x = NhwcSource(n->input(0));
  if (!x) return false;
  for (size_t i = 1; i < n->outputs.size(); ++i) {
    if (n->output(i) && (!n->output(i)->users.empty() || rw.graph().IsGraphOutput(n->output(i)))) return false;
  }
  Node* p = nullptr;
  if (n->op == "GlobalAveragePool") {
    Attributes a;
    a.Set("axes", std::vector<int64_t>{1, 2});
    a.Set("keepdims", int64_t{1});
    ASSIGN_OR_RETURN(p, rw.Create("ReduceMean", n->name, {x}, std::move(a), n->origin));
  } else {
    Attributes a = n->attrs;
    a.Set("kind", std::string(n->op == "MaxPool" ? "max" : "average"));
    a.Set("layout", std::string("NHWC"));
    ASSIGN_OR_RETURN(p, rw.Create("Pool", n->name, {x}, std::move(a), n->origin));
  }
  p->decisions = n->decisions;
  p->decisions.push_back({"layout", "NHWC", absl::StrCat("inside an NHWC conv chain; ", t.name, " prefers NHWC")});
  ASSIGN_OR_RETURN(Value * y, Transposed(rw, n, p->output(0), kToNchw));
  const std::string name = n->name;
  rw.ReplaceAllUses(n->output(0), y);
  RETURN_IF_ERROR(rw.EraseWithDeadInputs(n));
  p->name = name;
  return true;
}

// Whether `perm` on `in` only moves size-1 axes (the data order is unchanged).
bool MovesOnlyUnitAxes(const Shape& in, const std::vector<int64_t>& perm) {
  int64_t last = -1;
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(in.size())) return false;
    if (in[p] == Dim(1)) continue;
    if (p < last) return false;
    last = p;
  }
  return true;
}

// Flatten{axis=1} or Reshape (constant shape) of Transpose(%x) where the Transpose keeps axis 0 and moves only size-1
// axes reads %x: [N,1,1,C] and [N,C,1,1] flatten to the same [N,C].
bool DropUnitTransposeBeforeFlatten(Rewriter& rw, Node* flatten) {
  if (flatten->op == "Reshape") {  // a constant target shape whose 0s ("copy") are only at axis 0
    const Value* shape = flatten->input(1);
    if (!shape || !shape->is_constant()) return false;
    const bool allowzero = flatten->attrs.GetInt("allowzero", 0) != 0;  // then a 0 is a zero-size dim
    std::vector<int64_t> v = shape->constant->ToI64();
    for (size_t i = allowzero ? 0 : 1; i < v.size(); ++i) {
      if (v[i] == 0) return false;
    }
  } else if (flatten->op != "Flatten" || flatten->attrs.GetInt("axis", 1) != 1) {
    return false;
  }
  Node* t = flatten->input(0) ? flatten->input(0)->producer : nullptr;
  if (!t || t->op != "Transpose") return false;
  std::vector<int64_t> perm = t->attrs.GetInts("perm");
  if (perm.empty() || perm[0] != 0 || !MovesOnlyUnitAxes(t->input(0)->shape, perm)) return false;
  rw.graph().SetInput(flatten, 0, t->input(0));
  return true;
}

// Patch tokens of an NHWC conv (ViT's patch embedding): Transpose(%x [N,H,W,C], to NCHW) ->
// Reshape [N, C, H*W] -> Transpose [0,2,1] is Reshape(%x, [0, -1, C]) ([N, H*W, C]) as it is.
absl::StatusOr<bool> TokensFromNhwc(Rewriter& rw, Node* t2) {
  if (!IsTranspose(t2, {0, 2, 1})) return false;
  Node* r = t2->input(0)->producer;
  if (!r || r->op != "Reshape" || SingleUser(rw.graph(), r->output(0)) != t2) return false;
  Node* t1 = r->input(0)->producer;
  if (!IsTranspose(t1, kToNchw) || SingleUser(rw.graph(), t1->output(0)) != r) return false;
  Value* x = t1->input(0);
  const Shape& rs = r->output(0)->shape;
  if (rs.size() != 3 || rs[0] != x->shape[0] || rs[1] != x->shape[3] || !x->shape[3].IsConst()) return false;
  ASSIGN_OR_RETURN(Value * shape,
                   rw.Constant(r->name + "_tokens_shape", Tensor::FromI64({3}, {0, -1, x->shape[3].value()})));
  ASSIGN_OR_RETURN(Node * nr, rw.Create("Reshape", r->name, {x, shape}, {}, MergeOrigins({t1, r, t2})));
  nr->decisions.push_back(
      {"layout", "NHWC tokens", "layout-nhwc: the NHWC conv output is already [N, H*W, C] in memory"});
  rw.ReplaceAllUses(t2->output(0), nr->output(0));
  RETURN_IF_ERROR(rw.EraseWithDeadInputs(t2));
  return true;
}

// Cancels Transpose pairs and merges equal Transposes of one value (a block's input read by its
// conv and its downsample conv); returns whether anything changed.
absl::StatusOr<bool> CancelPairs(Rewriter& rw, Graph& g) {
  bool changed = false;
  for (Node* n : g.nodes()) {
    if (n->op != "Transpose" || !n->input(0) || n->output(0)->users.empty()) continue;
    std::vector<Node*> users = n->input(0)->users;
    for (Node* other : users) {
      if (other == n || other->op != "Transpose" || other->input(0) != n->input(0) ||
          other->attrs.GetInts("perm") != n->attrs.GetInts("perm") || other->output(0)->users.empty() ||
          rw.graph().IsGraphOutput(other->output(0))) {
        continue;
      }
      rw.ReplaceAllUses(other->output(0), n->output(0));
      changed = true;
    }
  }
  for (Node* n : g.nodes()) {
    if (n->op != "Transpose" || !n->input(0) || !n->input(0)->producer) continue;
    const Node* p = n->input(0)->producer;
    if (p->op != "Transpose" || !Inverse(p->attrs.GetInts("perm"), n->attrs.GetInts("perm"))) continue;
    rw.ReplaceAllUses(n->output(0), p->input(0));
    RETURN_IF_ERROR(rw.EraseWithDeadInputs(n));
    changed = true;
  }
  return changed;
}

}  // namespace

absl::StatusOr<bool> LayoutNhwc(Graph& g, const PassContext& ctx) {
  ASSIGN_OR_RETURN(const TargetDescription* target, FindTarget(ctx.options().target));
  if (!target->PrefersNhwc() || !target->rewrite) return false;
  Rewriter rw(g);
  bool changed = false;
  for (Node* n : g.nodes()) {
    if (n->op != "FusedConv") continue;
    ASSIGN_OR_RETURN(bool c, ConvToNhwc(rw, n, *target));
    changed = changed || c;
  }
  if (changed) RETURN_IF_ERROR(rw.Finish());
  for (bool again = true; again;) {  // pools follow the chains as their inputs become NHWC
    again = false;
    for (Node* n : g.nodes()) {
      if (n->op != "MaxPool" && n->op != "AveragePool" && n->op != "GlobalAveragePool") continue;
      ASSIGN_OR_RETURN(bool c, PoolToNhwc(rw, n, *target));
      again = again || c;
    }
    if (again) RETURN_IF_ERROR(rw.Finish());
    changed = changed || again;
  }
  bool flattened = false;
  for (Node* n : g.nodes()) flattened = DropUnitTransposeBeforeFlatten(rw, n) || flattened;
  if (flattened) {
    RETURN_IF_ERROR(rw.Finish());
    changed = true;
  }
  bool tokens = false;
  for (Node* n : g.nodes()) {
    if (n->op != "Transpose" || (n->output(0)->users.empty() && !g.IsGraphOutput(n->output(0)))) continue;
    ASSIGN_OR_RETURN(bool c, TokensFromNhwc(rw, n));
    tokens = tokens || c;
  }
  if (tokens) {
    RETURN_IF_ERROR(rw.Finish());
    changed = true;
  }
  ASSIGN_OR_RETURN(bool cancelled, CancelPairs(rw, g));
  if (cancelled) RETURN_IF_ERROR(rw.Finish());
  return changed || cancelled;
}

}  // namespace gcomp::passes
