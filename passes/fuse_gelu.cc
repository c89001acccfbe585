// fuse-gelu: the erf and tanh forms of GELU become one Gelu node.
//
// erf form (torchvision and HuggingFace exports):
//   %d = Div(%x, sqrt(2))          or  Mul(%x, 1/sqrt(2))
//   %e = Erf(%d)
//   %a = Add(%e, 1)
//   %y = Mul(Mul(%x, %a), 0.5)     or  Mul(%x, Mul(%a, 0.5))  or  Mul(Mul(%x, 0.5), %a)
//   ->  %y = Gelu(%x) {approximate="none"}
// tanh form:
//   %c = Pow(%x, 3)                or  Mul(%x, Mul(%x, %x))
//   %t = Tanh(Mul(sqrt(2/pi), Add(%x, Mul(0.044715, %c))))
//   %a = Add(%t, 1), %y as above
//   ->  %y = Gelu(%x) {approximate="tanh"}
// Every commutative operand order matches. Preconditions: %x is float; each constant is a scalar
// equal to the value named above within 1e-6 relative (the Pow exponent exactly 3); every
// intermediate has one user; %y has %x's dtype and shape (no broadcast by a constant).
#include <cmath>
#include <set>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "passes/passes.h"
#include "passes/rewriter.h"

namespace gcomp::passes {
namespace {

constexpr double kSqrt2 = 1.41421356237309504880;
constexpr double kSqrt2OverPi = 0.79788456080286535588;
constexpr double kTanhCubic = 0.044715;

bool IsConstNear(const Value* v, double want) {
  std::optional<float> c = ScalarConstant(v);
  return c && std::abs(static_cast<double>(*c) - want) <= 1e-6 * std::abs(want);
}

// The other operand of binary `n` given one of them (the same value for Mul(x, x)).
Value* OtherOperand(const Node* n, const Value* v) {
  if (n->inputs.size() != 2) return nullptr;
  if (n->inputs[0] == v) return n->inputs[1];
  if (n->inputs[1] == v) return n->inputs[0];
  return nullptr;
}

// For a binary `n` with a scalar constant operand equal to `want`: the other operand.
Value* OperandBesideConst(const Node* n, double want) {
  if (n->inputs.size() != 2) return nullptr;
  if (IsConstNear(n->inputs[1], want)) return n->inputs[0];
  if (IsConstNear(n->inputs[0], want)) return n->inputs[1];
  return nullptr;
}

// The producer of `v` if it is an `op` node whose output `v` is used only by `user`.
Node* SingleUseProducer(const Graph& g, const Value* v, const char* op, const Node* user) {
  if (!v || !v->producer || v->producer->op != op) return nullptr;
  return SingleUser(g, v) == user ? v->producer : nullptr;
}

struct Match {
  std::vector<Node*> nodes;  // in dataflow order
  Node* last = nullptr;      // the node whose output the Gelu replaces
  std::string why_not;
};

// Matches 0.5 * x * a given the (1 + f(x)) value `a`: Mul(Mul(x, a), 0.5), Mul(x, Mul(a, 0.5))
// or Mul(Mul(x, 0.5), a), in any operand order.
bool MatchHalfProduct(const Graph& g, Value* a, Value* x, Match& m) {
  Node* u = SingleUser(g, a);
  if (!u || u->op != "Mul") {
    m.why_not = "1 + f(x) is not used by exactly one Mul";
    return false;
  }
  Value* other = OtherOperand(u, a);
  if (other == x) {  // Mul(x, a) then Mul(_, 0.5)
    Node* w = SingleUser(g, u->output(0));
    if (!w || w->op != "Mul" || OperandBesideConst(w, 0.5) != u->output(0)) {
      m.why_not = "x * (1 + f(x)) is not used by exactly one Mul by 0.5";
      return false;
    }
    m.nodes.push_back(u);
    m.nodes.push_back(w);
    m.last = w;
    return true;
  }
  if (IsConstNear(other, 0.5)) {  // Mul(a, 0.5) then Mul(x, _)
    Node* w = SingleUser(g, u->output(0));
    if (!w || w->op != "Mul" || OtherOperand(w, u->output(0)) != x) {
      m.why_not = "0.5 * (1 + f(x)) is not used by exactly one Mul by x";
      return false;
    }
    m.nodes.push_back(u);
    m.nodes.push_back(w);
    m.last = w;
    return true;
  }
  if (Node* h = SingleUseProducer(g, other, "Mul", u); h && OperandBesideConst(h, 0.5) == x) {  // Mul(x, 0.5) * a
    m.nodes.push_back(h);
    m.nodes.push_back(u);
    m.last = u;
    return true;
  }
  m.why_not = "the Mul after 1 + f(x) multiplies neither x, 0.5 nor a single-use x * 0.5";
  return false;
}

// `n` = Add(f, 1) with f used only by it: appends `n` and matches the half product.
bool MatchOnePlus(const Graph& g, Value* f, Value* x, Match& m) {
  Node* add = SingleUser(g, f);
  if (!add || add->op != "Add" || OperandBesideConst(add, 1.0) != f) {
    m.why_not = "its output is not used by exactly one Add of 1";
    return false;
  }
  m.nodes.push_back(add);
  return MatchHalfProduct(g, add->output(0), x, m);
}

// erf form, anchored at the Erf node.
bool MatchErf(const Graph& g, Node* erf, Value*& x, Match& m) {
  Value* d = erf->input(0);
  Node* scale = d ? d->producer : nullptr;
  if (!scale || SingleUser(g, d) != erf) {
    m.why_not = "its input is not a single-use Div or Mul";
    return false;
  }
  if (scale->op == "Div" && IsConstNear(scale->input(1), kSqrt2)) {
    x = scale->input(0);
  } else if (scale->op == "Mul") {
    x = OperandBesideConst(scale, 1.0 / kSqrt2);
  }
  if (!x) {
    m.why_not =
        absl::StrCat("its input is ", scale->op, " '", scale->name, "', expected Div by sqrt(2) or Mul by 1/sqrt(2)");
    return false;
  }
  m.nodes = {scale, erf};
  return MatchOnePlus(g, erf->output(0), x, m);
}

// x^3 as Pow(x, 3) or Mul(x, Mul(x, x)) (either order), all single-use, feeding `user`.
bool MatchCube(const Graph& g, Value* c, Value* x, const Node* user, std::vector<Node*>& nodes) {
  if (Node* p = SingleUseProducer(g, c, "Pow", user)) {
    std::optional<float> e = ScalarConstant(p->input(1));
    if (p->input(0) != x || !e || *e != 3.0f) return false;
    nodes.push_back(p);
    return true;
  }
  Node* outer = SingleUseProducer(g, c, "Mul", user);
  if (!outer) return false;
  Value* sq = OtherOperand(outer, x);
  Node* inner = SingleUseProducer(g, sq, "Mul", outer);
  if (!inner || inner->input(0) != x || inner->input(1) != x) return false;
  nodes.push_back(inner);
  nodes.push_back(outer);
  return true;
}

// tanh form, anchored at the Tanh node.
bool MatchTanh(const Graph& g, Node* tanh, Value*& x, Match& m) {
  Node* scale = SingleUseProducer(g, tanh->input(0), "Mul", tanh);
  Value* inner = scale ? OperandBesideConst(scale, kSqrt2OverPi) : nullptr;
  Node* sum = SingleUseProducer(g, inner, "Add", scale);
  if (!sum) {
    m.why_not = "its input is not a single-use Mul by sqrt(2/pi) of a single-use Add";
    return false;
  }
  for (int i = 0; i < 2 && !x; ++i) {
    Value* cand = sum->input(i);
    Node* coef = SingleUseProducer(g, sum->input(1 - i), "Mul", sum);
    Value* cube = coef ? OperandBesideConst(coef, kTanhCubic) : nullptr;
    std::vector<Node*> cube_nodes;
    if (cube && MatchCube(g, cube, cand, coef, cube_nodes)) {
      x = cand;
      m.nodes = cube_nodes;
      m.nodes.insert(m.nodes.end(), {coef, sum, scale, tanh});
    }
  }
  if (!x) {
    m.why_not = "the Add is not x + 0.044715 * x^3 (x^3 as Pow(x, 3) or x * (x * x), single-use)";
    return false;
  }
  return MatchOnePlus(g, tanh->output(0), x, m);
}

}  // namespace

absl::StatusOr<bool> FuseGelu(Graph& g, const PassContext& ctx) {
  Rewriter rw(g);
  bool changed = false;
  std::set<Node*> erased;
  for (Node* n : g.nodes()) {
    if (erased.count(n) || (n->op != "Erf" && n->op != "Tanh")) continue;
    const bool is_erf = n->op == "Erf";
    const char* rule = is_erf ? "FuseGeluErf" : "FuseGeluTanh";
    Value* x = nullptr;
    Match m;
    if (!(is_erf ? MatchErf(g, n, x, m) : MatchTanh(g, n, x, m))) {
      ctx.Explain(rule, *n, m.why_not);
      continue;
    }
    const Value* y = m.last->output(0);
    if (!IsFloat(x->dtype) || y->dtype != x->dtype || y->shape != x->shape) {
      ctx.Explain(rule, *n,
                  absl::StrCat("x is ", DTypeName(x->dtype), ShapeToString(x->shape), " but the result is ",
                               DTypeName(y->dtype), ShapeToString(y->shape), "; expected float and the same shape"));
      continue;
    }
    std::vector<const Node*> parts(m.nodes.begin(), m.nodes.end());
    const std::string name = n->name;
    Attributes attrs;
    attrs.Set("approximate", std::string(is_erf ? "none" : "tanh"));
    ASSIGN_OR_RETURN(Node * gelu, rw.Create("Gelu", name + "_gelu", {x}, std::move(attrs), MergeOrigins(parts)));
    gelu->decisions.push_back(
        {"fusion", is_erf ? "Gelu(erf)" : "Gelu(tanh)",
         absl::StrCat(
             is_erf ? "0.5 * x * (1 + erf(x / sqrt(2)))" : "0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))",
             " over ", m.nodes.size(), " ops; constants match within 1e-6; every intermediate has one user")});
    rw.ReplaceAllUses(m.last->output(0), gelu->output(0));
    RETURN_IF_ERROR(rw.EraseAll(m.nodes, &erased));
    gelu->name = g.UniqueNodeName(name);
    changed = true;
  }
  if (changed) RETURN_IF_ERROR(rw.Finish());
  return changed;
}

}  // namespace gcomp::passes
