// fold-guards: the selects and guards that exporters put around attention and that cannot change a
// value here. Three rules, repeated until none fires:
//
// ConstantSelect — a Where whose condition is a constant (or an Expand of one) that is all true or
// all false selects one operand everywhere:
//   %m = Expand(%all_true: const bool, %shape);  %b = Where(%m, %x, %y)  ->  uses of %b read %x
//   Where %b's shape differs from %x's (the condition or %y broadcast it), only users that
//   broadcast anyway are rewired: an Add/Sub/Mul/Div whose output shape stays the same with %x
//   in %b's place (its elements then read the same values of %x that %b held).
//   (The dynamo exporter writes the attention mask of an unmasked SDPA call this way:
//   Where(Expand(ones), 0, -FLT_MAX) added to the scores.)
//
// AddZero — %y = Add(%x, %z) or Sub(%x, %z) with %z a constant of zeros, and %y's shape equal to
// %x's, is %x where that is exact: x + (-0) and x - (+0) for every x; x + (+0) (which turns -0 into
// +0) only when every reader of %y is a Softmax, which cannot tell -0 from +0 (the SDPA export's
// zero mask added to the scores).
//
// SoftmaxNanGuard — the NaN guard of torch's SDPA exports:
//   %p = Softmax(%s);  %g = Where(IsNaN(%p), %zero, %p)   ->  uses of %g read %p
//   The guard replaces the NaN rows of a softmax by zeros: the rows whose scores are all -inf, i.e.
//   fully masked rows. Precondition: %s is a MatMul's output, possibly scaled by finite constants
//   (Mul/Div), with no additive term: no mask reaches the scores, so no row is masked and every
//   row of finite scores has a finite softmax. The fold is exact for finite scores; a NaN or +inf
//   score (an overflow upstream) gives a NaN row either way before the guard, which the guard
//   would have hidden as zeros. The decision on the Softmax records this.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "graph/ops/op_helpers.h"
#include "passes/passes.h"
#include "passes/rewriter.h"

namespace gcomp::passes {
namespace {

// The value of a constant bool condition when all its elements agree, through Expand.
std::optional<bool> UniformCondition(const Value* c) {
  if (c && !c->is_constant() && c->producer && c->producer->op == "Expand") c = c->producer->input(0);
  if (!c || !c->is_constant() || c->dtype != DType::kBool || c->constant->numel() == 0) return std::nullopt;
  const Tensor& t = *c->constant;
  const bool first = t.GetI64(0) != 0;
  for (int64_t i = 1; i < t.numel(); ++i) {
    if ((t.GetI64(i) != 0) != first) return std::nullopt;
  }
  return first;
}

bool AllZero(const Value* v) {
  if (!v || !v->is_constant() || !IsFloat(v->dtype)) return false;
  const Tensor& t = *v->constant;
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (t.GetF32(i) != 0.0f) return false;
  }
  return true;
}

bool IsBroadcastingBinary(const Node* n) {
  return n->op == "Add" || n->op == "Sub" || n->op == "Mul" || n->op == "Div";
}

absl::StatusOr<bool> ConstantSelect(RuleSweep& sweep, Node* n) {
  const Graph& g = sweep.graph();
  std::optional<bool> cond = UniformCondition(n->input(0));
  if (!cond) return false;
  Value* out = n->output(0);
  Value* pick = n->input(*cond ? 1 : 2);
  if (pick->dtype != out->dtype) return false;
  Rewriter& rw = sweep.rewriter();
  if (pick->shape == out->shape && !g.IsGraphOutput(out)) {
    rw.ReplaceAllUses(out, pick);
    RETURN_IF_ERROR(sweep.EraseAll({n}));
    return true;
  }
  bool changed = false;
  const std::vector<Node*> users = out->users;
  for (Node* u : users) {
    if (!IsBroadcastingBinary(u) || u->inputs.size() != 2) {
      sweep.Explain(*n, absl::StrCat("the select broadcasts its operand and '", u->name, "' (", u->op,
                                     ") is not a broadcasting Add/Sub/Mul/Div"));
      continue;
    }
    std::vector<Value*> inputs = u->inputs;
    for (Value*& in : inputs) {
      if (in == out) in = pick;
    }
    absl::StatusOr<Shape> s = ops::BroadcastShapes(inputs[0]->shape, inputs[1]->shape);
    if (!s.ok() || *s != u->output(0)->shape) {
      sweep.Explain(*n, absl::StrCat("'", u->name, "' would change shape reading '", pick->name, "'"));
      continue;
    }
    for (size_t i = 0; i < u->inputs.size(); ++i) {  // same op, same output shape: rewired in place
      if (u->input(i) == out) rw.graph().SetInput(u, i, pick);
    }
    changed = true;
  }
  if (changed && out->users.empty() && !g.IsGraphOutput(out)) RETURN_IF_ERROR(sweep.EraseAll({n}));
  return changed;
}

// The sign of every element of an all-zero constant, if they agree.
std::optional<bool> ZeroSign(const Value* v) {
  const Tensor& t = *v->constant;
  const bool negative = std::signbit(t.GetF32(0));
  for (int64_t i = 1; i < t.numel(); ++i) {
    if (std::signbit(t.GetF32(i)) != negative) return std::nullopt;
  }
  return negative;
}

absl::StatusOr<bool> AddZero(RuleSweep& sweep, Node* n) {
  const Graph& g = sweep.graph();
  Value* x = n->input(0);
  if (!x || !AllZero(n->input(1)) || x->shape != n->output(0)->shape || x->dtype != n->output(0)->dtype) return false;
  if (g.IsGraphOutput(n->output(0))) return false;
  // x + (-0) and x - (+0) are x for every x; x + (+0) and x - (-0) turn -0 into +0, which only
  // readers that cannot tell the two apart may see.
  const std::optional<bool> negative = ZeroSign(n->input(1));
  const bool exact = negative && *negative == (n->op == "Add");
  const std::vector<Node*>& users = n->output(0)->users;
  const bool sign_blind = !users.empty() && std::all_of(users.begin(), users.end(), [](const Node* u) {
    return u->op == "Softmax";  // exp(-0) == exp(+0): softmax rows are the same
  });
  if (!exact && !sign_blind) {
    sweep.Explain(*n, "the zero would turn -0 into +0 and a reader other than a Softmax could tell");
    return false;
  }
  sweep.rewriter().ReplaceAllUses(n->output(0), x);
  RETURN_IF_ERROR(sweep.EraseAll({n}));
  return true;
}

// The MatMul under finite scalar Mul/Div factors, or nullptr.
const Node* ScoresMatMul(const Value* s) {
  while (s && s->producer) {
    const Node* p = s->producer;
    if (p->op == "MatMul") return p;
    if (p->op != "Mul" && p->op != "Div") return nullptr;
    std::optional<float> f = ScalarConstant(p->input(1));
    if (!f || !std::isfinite(*f) || (p->op == "Div" && *f == 0.0f)) return nullptr;
    s = p->input(0);
  }
  return nullptr;
}

absl::StatusOr<bool> SoftmaxNanGuard(RuleSweep& sweep, Node* n) {
  const Graph& g = sweep.graph();
  const Node* isnan = n->input(0)->producer;
  Value* p = n->input(2);
  if (!isnan || isnan->op != "IsNaN" || isnan->input(0) != p || !AllZero(n->input(1))) return false;
  Node* softmax = p->producer;
  if (!softmax || softmax->op != "Softmax") {
    sweep.Explain(*n, "the guarded value is not a Softmax output", "Softmax");
    return false;
  }
  const Node* mm = ScoresMatMul(softmax->input(0));
  if (!mm) {
    sweep.Explain(*n, absl::StrCat("the scores of '", softmax->name,
                                   "' are not a MatMul scaled by finite constants (a mask may reach them)"),
                  "Scores");
    return false;
  }
  if (n->output(0)->shape != p->shape || g.IsGraphOutput(n->output(0))) return false;
  softmax->decisions.push_back(
      {"guard", "NaN guard folded",
       absl::StrCat("'", n->name, "' = Where(IsNaN(softmax), 0, softmax) zeroes fully masked (all -inf) rows; the "
                    "scores are MatMul '", mm->name, "' times finite constants with no mask, so no row is masked: "
                    "exact for finite scores")});
  sweep.rewriter().ReplaceAllUses(n->output(0), p);
  RETURN_IF_ERROR(sweep.EraseAll({n}));
  // The IsNaN goes with the guard unless something else reads it (then DCE keeps it).
  if (isnan->output(0)->users.empty() && !g.IsGraphOutput(isnan->output(0))) {
    RETURN_IF_ERROR(sweep.EraseAll({const_cast<Node*>(isnan)}));
  }
  return true;
}

const std::vector<RewriteRule>& Rules() {
  static const std::vector<RewriteRule> kRules = {
      {"ConstantSelect", {"Where"}, ConstantSelect},
      {"AddZero", {"Add", "Sub"}, AddZero},
      {"SoftmaxNanGuard", {"Where"}, SoftmaxNanGuard},
  };
  return kRules;
}

}  // namespace

absl::StatusOr<bool> FoldGuards(Graph& g, const PassContext& ctx) {
  bool changed = false;
  for (int sweep = 0; sweep < 8; ++sweep) {  // each sweep can expose the next rule's pattern
    ASSIGN_OR_RETURN(bool fired, ApplyRules(g, ctx, Rules()));
    if (!fired) break;
    changed = true;
  }
  return changed;
}

}  // namespace gcomp::passes
