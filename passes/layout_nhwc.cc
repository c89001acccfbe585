// layout-nhwc (O3): for targets whose preferred layout is NHWC, conv chains run in NHWC.
//
//   %y = FusedConv(%X, %W, %B, %Z)          (NCHW)
//   ->  %t = Transpose(%X, [0,2,3,1]); %yn = FusedConv(%t, %W, %B, Transpose(%Z)) {layout="NHWC"}
//       %y = Transpose(%yn, [0,3,1,2])
// then inverse pairs cancel: Transpose(p2) of Transpose(p1) with p1 then p2 the identity reads
// the first Transpose's input; a Transpose that moves only size-1 axes feeding a Flatten is
// dropped (GlobalAveragePool in NHWC gives [N,1,1,C], which flattens to [N,C] as it is). What is
// left are Transposes at the edges of the conv chains (the graph input).
// Preconditions: 2-D convs (rank-4 X), float.
#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
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
  t->decisions.push_back({"layout", perm == kToNhwc ? "NCHW->NHWC" : "NHWC->NCHW",
                          "layout-nhwc: at the edge of an NHWC conv chain"});
  return t->output(0);
}

// Composition: applying `first` then `second` gives the identity.
bool Inverse(const std::vector<int64_t>& first, const std::vector<int64_t>& second) {
  if (first.size() != second.size()) return false;
  for (size_t i = 0; i < second.size(); ++i) {
    if (second[i] < 0 || second[i] >= static_cast<int64_t>(first.size()) || first[second[i]] != static_cast<int64_t>(i)) {
      return false;
    }
  }
  return true;
}

absl::StatusOr<bool> ConvToNhwc(Rewriter& rw, Node* n, const TargetDescription& t) {
  if (n->attrs.GetString("layout", "NCHW") == "NHWC" || n->input(0)->shape.size() != 4) return false;
  ASSIGN_OR_RETURN(Value * x, Transposed(rw, n, n->input(0), kToNhwc));
  Value* z = n->input(3);
  if (z) ASSIGN_OR_RETURN(z, Transposed(rw, n, z, kToNhwc));
  Attributes a = n->attrs;
  a.Set("layout", std::string("NHWC"));
  ASSIGN_OR_RETURN(Node * c, rw.Create("FusedConv", n->name, {x, n->input(1), n->input(2), z}, std::move(a), n->origin));
  c->decisions = n->decisions;
  c->decisions.push_back({"layout", "NHWC", absl::StrCat(t.name, " (", t.source, ") prefers NHWC")});
  ASSIGN_OR_RETURN(Value * y, Transposed(rw, n, c->output(0), kToNchw));
  rw.ReplaceAllUses(n->output(0), y);
  RETURN_IF_ERROR(rw.Erase(n));
  return true;
}

// Cancels Transpose pairs; returns whether anything changed.
absl::StatusOr<bool> CancelPairs(Rewriter& rw, Graph& g) {
  bool changed = false;
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
  ASSIGN_OR_RETURN(bool cancelled, CancelPairs(rw, g));
  if (cancelled) RETURN_IF_ERROR(rw.Finish());
  return changed || cancelled;
}

}  // namespace gcomp::passes
