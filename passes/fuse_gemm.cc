// fuse-gemm: a GEMM with a constant weight and its epilogue become one FusedGemm
// (act(alpha * A x B + bias + Z)).
//
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
#include <algorithm>
#include <optional>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/status_macros.h"
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
  Node* root = nullptr;
  Value* a = nullptr;
  Value* b = nullptr;
  bool trans_b = false;
  float alpha = 1.0f;
  Value* bias = nullptr;                          // the bias value, when it can be used as it is
  std::optional<std::vector<float>> bias_values;  // a new bias constant (reshaped or summed)
  Value* z = nullptr;
  std::string act = "none";
  std::optional<float> clip_min, clip_max;
  std::vector<Node*> nodes;  // every node replaced, in dataflow order
  std::vector<LayoutStep> layout;
  Value* out = nullptr;            // the value the fused node replaces
  std::vector<std::string> steps;  // "bias", "residual", "gelu", ...
  std::vector<std::string> reasons;
  std::vector<Decision> old_decisions;
  std::string choice = "FusedGemm";  // grows by "+step"

  int64_t n() const { return b->shape[trans_b ? 0 : 1].value(); }
  int64_t k() const { return b->shape[trans_b ? 1 : 0].value(); }
  bool has_bias() const { return bias || bias_values; }
};

bool IsEpilogueOp(const std::string& op) {
  return op == "Add" || op == "Relu" || op == "Gelu" || op == "Clip" || op == "Reshape" || op == "Transpose";
}

bool IsConstWeight(const Value* v) {
  return v && v->is_constant() && v->shape.size() == 2 && IsFloat(v->dtype) && v->shape[0].IsConst() &&
         v->shape[1].IsConst();
}

// A constant broadcast along the rows of a GEMM output of last dim n: rank <= out_rank, leading
// dims 1, last dim n or 1. Returns its values as a vector of n or 1 elements.
std::optional<std::vector<float>> RowBias(const Value* c, size_t out_rank, int64_t n) {
  if (!c || !c->is_constant() || !IsFloat(c->dtype) || c->shape.size() > out_rank) return std::nullopt;
  const std::vector<int64_t>& d = c->constant->dims();
  for (size_t i = 0; i + 1 < d.size(); ++i) {
    if (d[i] != 1) return std::nullopt;
  }
  const int64_t last = d.empty() ? 1 : d.back();
  if (last != n && last != 1) return std::nullopt;
  return c->constant->ToF32();
}

// Bias values of `f` as a vector (n or 1 elements), or nullopt when the bias is not constant.
std::optional<std::vector<float>> BiasValues(const GemmFusion& f) {
  if (f.bias_values) return *f.bias_values;
  if (f.bias && f.bias->is_constant()) return f.bias->constant->ToF32();
  return std::nullopt;
}

// A 1-D bias of `dtype` (the GEMM's float type) holding `v`.
absl::StatusOr<Tensor> BiasTensor(DType dtype, const std::vector<float>& v) {
  ASSIGN_OR_RETURN(Tensor t, Tensor::Zeros(dtype, {static_cast<int64_t>(v.size())}));
  for (size_t i = 0; i < v.size(); ++i) t.SetF32(static_cast<int64_t>(i), v[i]);
  return t;
}

// Sets up `f` from a MatMul, Gemm or FusedGemm; false (with `why`) when it is not a GEMM root.
bool InitRoot(Node* n, GemmFusion& f, std::string& why) {
  f.root = n;
  f.a = n->input(0);
  f.b = n->input(1);
  f.out = n->output(0);
  if (!f.a || !IsFloat(f.a->dtype) || f.a->shape.empty()) {
    why = "A is not a float tensor of rank >= 1";
    return false;
  }
  if (!IsConstWeight(f.b) || f.b->dtype != f.a->dtype) {
    why = "B is not a constant 2-D float weight";
    return false;
  }
  f.nodes.push_back(n);
  if (n->op == "MatMul") {
    f.reasons.push_back(absl::StrCat("MatMul with constant weight ", ShapeToString(f.b->shape)));
    return true;
  }
  f.trans_b = n->attrs.GetInt("transB", 0) != 0;
  f.alpha = n->attrs.GetFloat("alpha", 1.0f);
  if (n->op == "FusedGemm") {
    f.bias = n->input(2);
    f.z = n->input(3);
    f.act = n->attrs.GetString("activation", "none");
    if (n->attrs.Has("clip_min")) f.clip_min = n->attrs.GetFloat("clip_min", 0.0f);
    if (n->attrs.Has("clip_max")) f.clip_max = n->attrs.GetFloat("clip_max", 0.0f);
    f.old_decisions = n->decisions;
    for (const Decision& d : n->decisions) {
      if (d.kind != "fusion") continue;
      f.choice = d.choice;
      f.reasons.push_back(d.reason);
    }
    return true;
  }
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
    std::optional<std::vector<float>> bias = c->shape.size() <= 2 ? RowBias(c, 2, f.n()) : std::nullopt;
    if (!bias || c->dtype != f.a->dtype) {
      why = absl::StrCat("C has shape ", ShapeToString(c->shape), ", expected a constant [", f.n(), "] or [1,", f.n(),
                         "]");
      return false;
    }
    if (c->shape.size() == 1) {
      f.bias = c;
    } else {
      f.bias_values = *bias;
    }
    f.steps.push_back("bias");
  }
  f.reasons.push_back(absl::StrCat("Gemm with constant B ", ShapeToString(f.b->shape), f.trans_b ? " (transB=1)" : "",
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

// Extends `f` by the epilogue ops after its output while the fusion stays exact.
void MatchEpilogue(const Graph& g, GemmFusion& f, const PassContext& ctx) {
  while (f.act == "none") {
    Value* v = f.out;
    Node* u = v ? SingleUser(g, v) : nullptr;
    if (!v) return;
    if (!u) {
      for (const Node* user : v->users) {
        if (IsEpilogueOp(user->op)) {
          ctx.Explain("FuseGemmEpilogue", *f.root,
                      absl::StrCat("the output '", v->name, "' has ", v->users.size(), " users",
                                   g.IsGraphOutput(v) ? " and is a graph output" : ""));
          break;
        }
      }
      return;
    }
    if (u->output(0) && u->output(0)->dtype != v->dtype) return;
    const bool unary = u->op == "Relu" || u->op == "Gelu" || u->op == "Clip";
    if (unary && u->input(0) != v) return;
    if (u->op == "Add") {
      Value* other = u->input(0) == v ? u->input(1) : u->input(0);
      if (!other) return;
      if (other->is_constant()) {
        std::optional<std::vector<float>> c = RowBias(other, v->shape.size(), f.n());
        std::optional<std::vector<float>> old = f.has_bias() ? BiasValues(f) : std::vector<float>{};
        if (!c || !old) {
          ctx.Explain(
              "FuseGemmBias", *u,
              !c ? absl::StrCat("the constant has shape ", ShapeToString(other->shape), ", expected [", f.n(), "]")
                 : "the GEMM's bias is not constant");
          return;
        }
        std::vector<float> sum(std::max(c->size(), old->size()), 0.0f);
        for (size_t j = 0; j < sum.size(); ++j) {
          if (!old->empty()) sum[j] += (*old)[old->size() == 1 ? 0 : j];
          sum[j] += (*c)[c->size() == 1 ? 0 : j];
        }
        if (!f.has_bias() && other->shape.size() == 1) {
          f.bias = other;
        } else {
          f.bias = nullptr;
          f.bias_values = sum;
        }
        f.steps.push_back("bias");
        f.reasons.push_back(absl::StrCat(old->empty() ? "bias Add of constant " : "bias Add summed into the bias: ",
                                         ShapeToString(other->shape)));
      } else {
        if (f.z) {
          ctx.Explain("FuseGemmResidual", *u, "the GEMM already has a residual");
          return;
        }
        if (other->shape != v->shape || other->dtype != v->dtype) {
          ctx.Explain("FuseGemmResidual", *u,
                      absl::StrCat("the other operand '", other->name, "' has shape ", ShapeToString(other->shape),
                                   ", expected exactly the GEMM output's ", ShapeToString(v->shape)));
          return;
        }
        f.z = other;
        f.steps.push_back("residual");
        f.reasons.push_back(absl::StrCat("residual Add of '", other->name, "' ", ShapeToString(other->shape)));
      }
    } else if (u->op == "Relu") {
      f.act = "relu";
    } else if (u->op == "Gelu") {
      std::string approx = u->attrs.GetString("approximate", "none");
      if (approx != "none" && approx != "tanh") return;
      f.act = approx == "none" ? "gelu" : "gelu_tanh";
    } else if (u->op == "Clip") {
      std::optional<float> lo, hi;
      for (int i = 1; i <= 2; ++i) {
        if (!u->input(i)) continue;
        std::optional<float> c = ScalarConstant(u->input(i));
        if (!c) {
          ctx.Explain("FuseGemmActivation", *u, "a Clip bound is not a constant scalar");
          return;
        }
        (i == 1 ? lo : hi) = c;
      }
      f.act = "clip";
      f.clip_min = lo;
      f.clip_max = hi;
    } else if (u->op == "Reshape" || u->op == "Transpose") {
      if (f.z || !f.layout.empty()) return;
      std::string why;
      Node* add = MatchLayoutResidual(g, v, f, why);
      if (!add) {
        if (!why.empty()) ctx.Explain("FuseGemmResidual", *u, absl::StrCat("through layout ops: ", why));
        return;
      }
      std::vector<std::string> ops;
      for (const LayoutStep& s : f.layout) {
        f.nodes.push_back(s.node);
        ops.push_back(s.node->op == "Reshape"
                          ? absl::StrCat("Reshape to ", ShapeToString(s.node->output(0)->shape))
                          : absl::StrCat("Transpose perm [", absl::StrJoin(s.node->attrs.GetInts("perm"), ","), "]"));
      }
      f.z = add->input(0) == f.layout.back().node->output(0) ? add->input(1) : add->input(0);
      f.steps.push_back("residual");
      f.reasons.push_back(absl::StrCat("residual Add of '", f.z->name, "' ", ShapeToString(f.z->shape), " after ",
                                       absl::StrJoin(ops, ", "), " (moved to A)"));
      u = add;
    } else {
      return;
    }
    if (f.act != "none") {
      f.steps.push_back(f.act);
      f.reasons.push_back(absl::StrCat(u->op, " as activation ", f.act));
    }
    f.nodes.push_back(u);
    f.out = u->output(0);
  }
}

absl::Status Apply(Graph& g, Rewriter& rw, GemmFusion& f, std::set<Node*>& erased) {
  const std::string name = f.root->name;
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
  Value* bias = f.bias;
  if (f.bias_values) {
    ASSIGN_OR_RETURN(Tensor t, BiasTensor(f.a->dtype, *f.bias_values));
    ASSIGN_OR_RETURN(bias, rw.Constant(name + "_bias", std::move(t)));
  }
  std::vector<Value*> inputs = {a, f.b};
  if (bias || f.z) inputs.push_back(bias);
  if (f.z) inputs.push_back(f.z);
  Attributes attrs;
  if (f.act != "none") attrs.Set("activation", f.act);
  if (f.clip_min) attrs.Set("clip_min", *f.clip_min);
  if (f.clip_max) attrs.Set("clip_max", *f.clip_max);
  if (f.trans_b) attrs.Set("transB", int64_t{1});
  if (f.alpha != 1.0f) attrs.Set("alpha", f.alpha);
  std::vector<const Node*> parts;
  for (const Node* n : f.nodes) {
    if (n->op != "Reshape" && n->op != "Transpose") parts.push_back(n);  // moved ones keep their own origin
  }
  ASSIGN_OR_RETURN(Node * fused,
                   rw.Create("FusedGemm", name + "_fused", inputs, std::move(attrs), MergeOrigins(parts)));
  if (fused->output(0)->shape != f.out->shape) {
    return absl::InternalError(absl::StrCat("fuse-gemm: ", fused->Describe(), " has shape ",
                                            ShapeToString(fused->output(0)->shape), ", expected ",
                                            ShapeToString(f.out->shape)));
  }
  for (const Decision& d : f.old_decisions) {
    if (d.kind != "fusion") fused->decisions.push_back(d);
  }
  std::string choice = f.choice;
  for (const std::string& s : f.steps) absl::StrAppend(&choice, "+", s);
  std::string reason = absl::StrJoin(f.reasons, "; ");
  if (f.nodes.size() > 1) absl::StrAppend(&reason, "; every removed intermediate has one user");
  fused->decisions.push_back({"fusion", choice, reason});
  renames.push_back({fused, name});
  rw.ReplaceAllUses(f.out, fused->output(0));
  RETURN_IF_ERROR(rw.EraseAll(f.nodes, &erased));
  for (auto& [node, want] : renames) node->name = g.UniqueNodeName(want);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<bool> FuseGemm(Graph& g, const PassContext& ctx) {
  Rewriter rw(g);
  bool changed = false;
  std::set<Node*> erased;
  for (Node* n : g.nodes()) {
    if (erased.count(n) || (n->op != "MatMul" && n->op != "Gemm" && n->op != "FusedGemm")) continue;
    GemmFusion f;
    std::string why;
    if (!InitRoot(n, f, why)) {
      ctx.Explain("FuseGemm", *n, why);
      continue;
    }
    MatchEpilogue(g, f, ctx);
    if (n->op == "FusedGemm" && f.nodes.size() == 1) continue;
    RETURN_IF_ERROR(Apply(g, rw, f, erased));
    changed = true;
  }
  if (changed) RETURN_IF_ERROR(rw.Finish());
  return changed;
}

}  // namespace gcomp::passes
