// fuse-gemm: a GEMM with a constant weight and its epilogue become one FusedGemm
// (act(alpha * A x B + bias + Z)). The epilogue walk is passes/epilogue_matcher.h's; this file keeps
// what is the GEMM's own: the MatMul and Gemm forms (transB, alpha, C as the bias), the row bias,
// Gelu as an activation, and a residual reached through layout ops that move to A. One rule,
// FuseGemm (below).
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/status_macros.h"
#include "passes/epilogue_matcher.h"
#include "passes/passes.h"
#include "passes/rewriter.h"

namespace gcomp::passes {
namespace {

struct LayoutStep {
  Node* node;                   // the Reshape or Transpose moved from the output to A
  std::vector<int64_t> target;  // Reshape: the new target
  Shape shape;                  // its output shape on the A side
};

// The GEMM being assembled from a root and the epilogue ops after it.
struct GemmFusion {
  EpilogueMatch m;
  Value* a = nullptr;
  Value* b = nullptr;
  bool trans_b = false;
  float alpha = 1.0f;
  std::vector<LayoutStep> layout;

  int64_t n() const { return b->shape[trans_b ? 0 : 1].value(); }
  int64_t k() const { return b->shape[trans_b ? 1 : 0].value(); }
};

bool IsConstWeight(const Value* v) {
  return v && v->is_constant() && v->shape.size() == 2 && IsFloat(v->dtype) && v->shape[0].IsConst() &&
         v->shape[1].IsConst();
}

// A constant broadcast along the rows of a GEMM output of last dim n: rank <= out_rank, leading
// dims 1, last dim n or 1. Returns its values as a vector of n or 1 elements.
std::optional<std::vector<float>> RowBias(const Value& c, size_t out_rank, int64_t n) {
  if (!c.is_constant() || !IsFloat(c.dtype) || c.shape.size() > out_rank) return std::nullopt;
  const std::vector<int64_t>& d = c.constant->dims();
  for (size_t i = 0; i + 1 < d.size(); ++i) {
    if (d[i] != 1) return std::nullopt;
  }
  const int64_t last = d.empty() ? 1 : d.back();
  if (last != n && last != 1) return std::nullopt;
  return c.constant->ToF32();
}

// Sets up `f` from a MatMul, Gemm or FusedGemm; false (with `why`) when it is not a GEMM root.
bool InitRoot(Node* n, GemmFusion& f, std::string& why) {
  f.a = n->input(0);
  f.b = n->input(1);
  if (!f.a || !IsFloat(f.a->dtype) || f.a->shape.empty()) {
    why = "A is not a float tensor of rank >= 1";
    return false;
  }
  if (!IsConstWeight(f.b) || f.b->dtype != f.a->dtype) {
    why = "B is not a constant 2-D float weight";
    return false;
  }
  EpilogueMatch& m = f.m;
  if (!StartEpilogue(n, "FusedGemm", m)) return false;
  if (n->op == "MatMul") {
    m.reasons.push_back(absl::StrCat("MatMul with constant weight ", ShapeToString(f.b->shape)));
    return true;
  }
  f.trans_b = n->attrs.GetInt("transB", 0) != 0;
  f.alpha = n->attrs.GetFloat("alpha", 1.0f);
  if (n->op == "FusedGemm") return true;
  // Gemm
  if (n->attrs.GetInt("transA", 0) != 0) {
    why = "transA=1 (only A untransposed is fused)";
    return false;
  }
  if (Value* c = n->input(2)) {
    if (n->attrs.GetFloat("beta", 1.0f) != 1.0f) {
      why = absl::StrCat("beta=", n->attrs.GetFloat("beta", 1.0f), " with C (only beta=1 is fused)");
      return false;
    }
    std::optional<std::vector<float>> bias = c->shape.size() <= 2 ? RowBias(*c, 2, f.n()) : std::nullopt;
    if (!bias || c->dtype != f.a->dtype) {
      why = absl::StrCat("C has shape ", ShapeToString(c->shape), ", expected a constant [", f.n(), "] or [1,", f.n(),
                         "]");
      return false;
    }
    if (c->shape.size() == 1) {
      m.bias = c;
    } else {
      m.bias_values = *bias;
    }
    m.steps.push_back("bias");
  }
  m.reasons.push_back(absl::StrCat("Gemm with constant B ", ShapeToString(f.b->shape), f.trans_b ? " (transB=1)" : "",
                                   f.alpha != 1.0f ? absl::StrCat(", alpha=", f.alpha) : "",
                                   n->input(2) ? ", C as bias" : ""));
  return true;
}

// Reshape target for the A side: the original's output dims with the last replaced by k.
std::optional<std::vector<int64_t>> ReshapeTarget(const Shape& in, const Shape& out, int64_t k) {
  std::vector<int64_t> t;
  bool used_infer = false;
  for (size_t i = 0; i < out.size(); ++i) {
    if (i + 1 == out.size()) {
      t.push_back(k);
    } else if (out[i].IsConst() && out[i].value() > 0) {
      t.push_back(out[i].value());
    } else if (!out[i].IsConst() && i + 1 < in.size() && in[i] == out[i]) {
      t.push_back(0);  // copy the input's dim (allowzero=0)
    } else if (!out[i].IsConst() && !used_infer) {
      t.push_back(-1);
      used_infer = true;
    } else {
      return std::nullopt;
    }
  }
  return t;
}

// Reshape/Transpose ops from `v` that keep the last dim, ending in an Add of a non-constant
// operand of exactly the chain's output shape. Fills f.layout and returns that Add.
Node* MatchLayoutResidual(const Graph& g, Value* v, GemmFusion& f, std::string& why) {
  Shape a_side = f.a->shape;
  std::vector<LayoutStep> steps;
  while (v) {
    Node* u = SingleUser(g, v);
    if (!u) {
      why = absl::StrCat("'", v->name, "' has ", v->users.size(), " users");
      return nullptr;
    }
    if (u->op == "Add") {
      Value* z = u->input(0) == v ? u->input(1) : u->input(0);
      if (!z) return nullptr;
      if (z->is_constant() || z->shape != v->shape || z->dtype != v->dtype) {
        why = absl::StrCat("the Add after the layout ops adds '", z->name, "' ", ShapeToString(z->shape),
                           ", expected a non-constant tensor of shape ", ShapeToString(v->shape));
        return nullptr;
      }
      f.layout = std::move(steps);
      return u;
    }
    if (u->input(0) != v || !u->output(0)) return nullptr;
    const Shape& in = v->shape;
    const Shape& out = u->output(0)->shape;
    LayoutStep step{u, {}, {}};
    if (u->op == "Transpose") {
      std::vector<int64_t> perm = u->attrs.GetInts("perm");
      if (perm.size() != in.size() || perm.back() != static_cast<int64_t>(in.size()) - 1) {
        why = absl::StrCat("Transpose '", u->name, "' moves the last axis");
        return nullptr;
      }
      for (int64_t p : perm) step.shape.push_back(a_side[p]);
    } else if (u->op == "Reshape") {
      if (out.empty() || out.back() != in.back()) {
        why = absl::StrCat("Reshape '", u->name, "' changes the last dim");
        return nullptr;
      }
      std::optional<std::vector<int64_t>> target = ReshapeTarget(a_side, out, f.k());
      if (!target) {
        why = absl::StrCat("Reshape '", u->name, "' to ", ShapeToString(out),
                           " has more than one symbolic dim that cannot be copied");
        return nullptr;
      }
      step.target = *target;
      step.shape = out;
      step.shape.back() = Dim(f.k());
    } else {
      return nullptr;
    }
    a_side = step.shape;
    steps.push_back(std::move(step));
    v = u->output(0);
  }
  return nullptr;
}

// The residual Add after layout ops from `u` on: they join the match (moved to A in Apply) and the
// Add is the step's last node; nullptr (explained) when they do not commute with the GEMM.
Node* LayoutResidual(const RuleSweep& sweep, Node& u, GemmFusion& f) {
  EpilogueMatch& m = f.m;
  if (m.z || !f.layout.empty()) return nullptr;
  std::string why;
  Node* add = MatchLayoutResidual(sweep.graph(), m.out, f, why);
  if (!add) {
    if (!why.empty()) sweep.Explain(u, absl::StrCat("through layout ops: ", why), "Residual");
    return nullptr;
  }
  std::vector<std::string> ops;
  for (const LayoutStep& s : f.layout) {
    m.nodes.push_back(s.node);
    ops.push_back(s.node->op == "Reshape"
                      ? absl::StrCat("Reshape to ", ShapeToString(s.node->output(0)->shape))
                      : absl::StrCat("Transpose perm [", absl::StrJoin(s.node->attrs.GetInts("perm"), ","), "]"));
  }
  m.z = add->input(0) == f.layout.back().node->output(0) ? add->input(1) : add->input(0);
  m.steps.push_back("residual");
  m.reasons.push_back(absl::StrCat("residual Add of '", m.z->name, "' ", ShapeToString(m.z->shape), " after ",
                                   absl::StrJoin(ops, ", "), " (moved to A)"));
  return add;
}

// The GEMM's part of the epilogue: a row bias (a first one of rank 1 used as it is), Relu, Clip
// and Gelu, and the residual through layout ops.
EpilogueSpec GemmEpilogue(const RuleSweep& sweep, GemmFusion& f) {
  return {
      .noun = "GEMM",
      .bias_name = "bias",
      .output_noun = "output",
      .activations = {Activation::kRelu, Activation::kClip, Activation::kGelu, Activation::kGeluTanh},
      .bias_of = [n = f.n()](const Value& c, size_t rank) { return RowBias(c, rank, n); },
      .expected_bias = absl::StrCat("[", f.n(), "]"),
      .bias_reason =
          [](const Value& c, bool summed) {
            return absl::StrCat(summed ? "bias Add summed into the bias: " : "bias Add of constant ",
                                ShapeToString(c.shape));
          },
      .reuse_rank1_bias = true,
      .activation_reason =
          [](const Node& op, const EpilogueMatch& m) {
            return absl::StrCat(op.op, " as activation ", ActivationName(m.act));
          },
      .other_ops = {"Reshape", "Transpose"},
      .other_step = [&sweep, &f](Node& u) { return LayoutResidual(sweep, u, f); },
  };
}

absl::Status Apply(RuleSweep& sweep, GemmFusion& f) {
  Rewriter& rw = sweep.rewriter();
  const std::string name = f.m.root->name;
  std::vector<std::pair<Node*, std::string>> renames;
  Value* a = f.a;
  for (const LayoutStep& s : f.layout) {
    Node* moved;
    if (s.node->op == "Transpose") {
      ASSIGN_OR_RETURN(moved, rw.Create("Transpose", s.node->name + "_moved", {a}, s.node->attrs, s.node->origin));
    } else {
      ASSIGN_OR_RETURN(Value * shape, rw.Constant(s.node->name + "_target",
                                                  Tensor::FromI64({static_cast<int64_t>(s.target.size())}, s.target)));
      ASSIGN_OR_RETURN(moved, rw.Create("Reshape", s.node->name + "_moved", {a, shape}, {}, s.node->origin));
    }
    if (moved->output(0)->shape != s.shape) {
      return absl::InternalError(absl::StrCat("fuse-gemm: moved ", moved->Describe(), " has shape ",
                                              ShapeToString(moved->output(0)->shape), ", expected ",
                                              ShapeToString(s.shape)));
    }
    moved->decisions.push_back({"layout", "moved to the GEMM input",
                                absl::StrCat("keeps the last dim, so it commutes with the GEMM '", name, "'")});
    renames.push_back({moved, s.node->name});
    a = moved->output(0);
  }
  Attributes attrs;
  if (f.trans_b) attrs.Set("transB", int64_t{1});
  if (f.alpha != 1.0f) attrs.Set("alpha", f.alpha);
  std::vector<const Node*> parts;
  for (const Node* n : f.m.nodes) {
    if (n->op != "Reshape" && n->op != "Transpose") parts.push_back(n);  // moved ones keep their own origin
  }
  ASSIGN_OR_RETURN(Node * fused, CreateFusedNode(sweep, f.m, {a, f.b}, std::move(attrs), parts, "fuse-gemm"));
  renames.push_back({fused, name});
  RETURN_IF_ERROR(ReplaceMatch(sweep, f.m, fused));
  for (auto& [node, want] : renames) node->name = sweep.graph().UniqueNodeName(want);
  return absl::OkStatus();
}

// Rule FuseGemm:
//   %g = MatMul(%A, %B)              B: constant 2-D [K, N]; A: [..., K] (any rank, symbolic dims)
//      | Gemm(%A, %B, %C)            transA=0; transB and alpha kept; C: constant [N] or [1, N],
//                                    beta=1 when C is used; B constant
//   %b = Add(%g, %bias)              optional; constant [N] (any rank of leading 1s), either order
//   %r = Add(%b, %Z)                 optional residual: non-constant Z with exactly %b's shape
//   %y = Relu | Gelu | Clip(%r)      optional activation (Clip bounds constant)
//   ->  %y = FusedGemm(%A, %B, %bias, %Z) {activation, transB, alpha}
// Steps apply in dataflow order while they are exact: a bias or residual Add only before any
// activation (bias and residual commute with each other), at most one residual and one activation;
// relu(gemm + z) folds, gemm -> relu -> + z does not.
//
// Residual through layout ops (the torchvision ViT attention output projection):
//   %g [17*batch, 64] = Gemm(%A [17*batch, K], ...)
//   %s [17, batch, 64] = Reshape(%g); %t [batch, 17, 64] = Transpose(%s) {perm=[1,0,2]}
//   %r = Add(%t, %Z)
// Reshapes that keep the last dim and Transposes that keep the last axis only regroup or reorder
// the rows of the GEMM, which it computes independently; they move to A
// (A' = Transpose(Reshape(A, [17, -1, K]))) and the Add becomes the residual. The Reshape target
// comes from the original's output dims with the last replaced by K; a symbolic dim becomes 0 (copy,
// where the input has the same dim at that index) or the single -1, never a fixed batch.
// Preconditions: float tensors; every removed intermediate has one user and is not a graph output.
// An existing FusedGemm is extended by the same steps; a lone MatMul/Gemm still becomes FusedGemm.
// Only MatMuls with a constant 2-D B match, so attention's activation x activation MatMuls stay.
absl::StatusOr<bool> FuseGemmRule(RuleSweep& sweep, Node* n) {
  GemmFusion f;
  std::string why;
  if (!InitRoot(n, f, why)) {
    if (!why.empty()) sweep.Explain(*n, why);
    return false;
  }
  MatchEpilogue(sweep, GemmEpilogue(sweep, f), f.m);
  if (n->op == "FusedGemm" && f.m.nodes.size() == 1) return false;
  RETURN_IF_ERROR(Apply(sweep, f));
  return true;
}

}  // namespace

absl::StatusOr<bool> FuseGemm(Graph& g, const PassContext& ctx) {
  static const std::vector<RewriteRule> kRules = {{"FuseGemm", {"MatMul", "Gemm", "FusedGemm"}, FuseGemmRule}};
  return ApplyRules(g, ctx, kRules);
}

}  // namespace gcomp::passes
