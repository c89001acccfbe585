// fuse-layernorm: layer normalization over the last axis becomes one LayerNorm(X, scale, bias).
//
// Rule FuseLayerNormOp (ONNX op):
//   %y, _, _ = LayerNormalization(%x, %scale, %bias) {axis=-1}   ->  %y = LayerNorm(%x, %scale, %bias)
//   Preconditions: only Y is used (Mean and InvStdDev are unused), axis is the last one, stash_type
//   is float, f32.
//
// Rule FuseLayerNorm (decomposed, as torchvision's opset-13 and HuggingFace's exports write it):
//   %mean = ReduceMean(%x) {axes=[-1], keepdims=1}
//   %d    = Sub(%x, %mean)
//   %sq   = Pow(%d, 2)                 | Mul(%d, %d)
//   %var  = ReduceMean(%sq) {axes=[-1], keepdims=1}
//   %ve   = Add(%var, eps)             | Add(eps, %var)          (absent: eps = 0)
//   %s    = Sqrt(%ve)
//   %n    = Div(%d, %s)                | Mul(%d, Reciprocal(%s)) (either operand order)
//   %g    = Mul(%n, gamma)             (optional, either order; gamma constant [C] or [1,..,1,C])
//   %y    = Add(%g, beta)              (optional, either order; beta constant [C] or [1,..,1,C])
//     ->  %y = LayerNorm(%x, gamma | ones[C], beta) {axis=-1, epsilon=eps}
//   Preconditions: f32; both reductions over the last axis only with keepdims=1; eps a scalar
//   constant; the Pow exponent exactly 2; mean, d, sq, var, ve, s (and the reciprocal, and n and
//   g when gamma/beta are absorbed) have no other users. A Mul of %n by a non-constant is refused
//   (a runtime gamma). Add(Sqrt(var), eps) — eps outside the root — is different math with no
//   exact LayerNorm form and is refused.
#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "passes/passes.h"
#include "passes/rewriter.h"

namespace gcomp::passes {
namespace {

constexpr const char* kOpRule = "FuseLayerNormOp";
constexpr const char* kRule = "FuseLayerNorm";

// `name` with the last occurrence of `from` replaced by `to`, else `name/to`.
std::string DerivedName(const std::string& name, const std::string& from, const std::string& to) {
  size_t at = name.rfind(from);
  if (at == std::string::npos) return absl::StrCat(name, "/", to);
  std::string out = name;
  out.replace(at, from.size(), to);
  return out;
}

bool IsUsed(const Graph& g, const Value* v) { return v && (!v->users.empty() || g.IsGraphOutput(v)); }

// Distinct nodes reading `v`.
std::vector<Node*> DistinctUsers(const Value* v) {
  std::vector<Node*> out;
  for (Node* u : v->users) {
    if (std::find(out.begin(), out.end(), u) == out.end()) out.push_back(u);
  }
  return out;
}

// Whether the reduction of `n` (ReduceMean) is over exactly the last axis with keepdims=1;
// otherwise `why` says what it reduces.
bool ReducesLastAxisKeepDims(const Node& n, std::string* why) {
  const Value* x = n.input(0);
  const int64_t rank = static_cast<int64_t>(x->shape.size());
  std::vector<int64_t> axes = n.attrs.GetInts("axes");
  if (const Value* a = n.input(1)) {
    if (!a->is_constant()) {
      *why = absl::StrCat(n.name, " reduces axes known only at run time");
      return false;
    }
    axes = a->constant->ToI64();
  }
  if (n.attrs.GetInt("keepdims", 1) != 1) {
    *why = absl::StrCat(n.name, " has keepdims=0");
    return false;
  }
  if (axes.size() != 1 || rank < 1 || (axes[0] != -1 && axes[0] != rank - 1)) {
    std::string list;
    for (int64_t a : axes) absl::StrAppend(&list, list.empty() ? "" : ",", a);
    *why = absl::StrCat(n.name, " reduces axes [", list.empty() ? "all" : list, "] of a rank-", rank,
                        " input, expected only the last axis");
    return false;
  }
  return true;
}

// `v` as a per-channel [C] parameter of a LayerNorm over the last axis of a rank-`rank` input
// with C = `channels`: a constant f32 of shape [C] or [1,..,1,C] (rank <= `rank`), reshaped to [C].
std::optional<Tensor> ChannelParameter(const Value* v, const Dim& channels, int64_t rank) {
  if (!v || !v->is_constant() || v->dtype != DType::kF32) return std::nullopt;
  std::optional<int64_t> c = channels.ConstValue();
  const std::vector<int64_t>& dims = v->constant->dims();
  if (!c || dims.empty() || static_cast<int64_t>(dims.size()) > rank || dims.back() != *c) return std::nullopt;
  for (size_t i = 0; i + 1 < dims.size(); ++i) {
    if (dims[i] != 1) return std::nullopt;
  }
  return v->constant->Reshaped({*c});
}

// The operand of binary `n` that is not `v`, or nullptr if `v` is not exactly one operand.
Value* OtherOperand(const Node& n, const Value* v) {
  if (n.inputs.size() != 2) return nullptr;
  if (n.inputs[0] == v && n.inputs[1] != v) return n.inputs[1];
  if (n.inputs[1] == v && n.inputs[0] != v) return n.inputs[0];
  return nullptr;
}

struct Match {
  Value* x = nullptr;
  float eps = 0.0f;
  std::optional<Tensor> gamma, beta;
  Value* gamma_value = nullptr;  // the original constants, reused when already [C]
  Value* beta_value = nullptr;
  Value* out = nullptr;            // the value the LayerNorm replaces
  std::vector<const Node*> nodes;  // matched nodes, in pattern order
  std::string form;
};

// Matches the decomposed pattern at `mean_node`. Returns nullopt with `why` empty when the node
// is not a candidate (no Sub(x, mean) reads it), or with `why` set when the rule refuses.
std::optional<Match> MatchDecomposed(const Graph& g, Node* mean_node, std::string* why) {
  why->clear();
  Value* x = mean_node->input(0);
  Value* mean = mean_node->output(0);
  if (!x || !mean) return std::nullopt;
  Node* sub = nullptr;
  for (Node* u : mean->users) {
    if (u->op == "Sub" && u->inputs.size() == 2 && u->inputs[0] == x && u->inputs[1] == mean) sub = u;
  }
  if (!sub) return std::nullopt;

  Match m;
  m.x = x;
  if (x->dtype != DType::kF32) {
    *why = absl::StrCat("the input has dtype ", DTypeName(x->dtype), ", expected f32");
    return std::nullopt;
  }
  if (!ReducesLastAxisKeepDims(*mean_node, why)) return std::nullopt;
  if (SingleUser(g, mean) != sub) {
    *why = g.IsGraphOutput(mean) ? std::string("the mean is also a graph output")
                                 : absl::StrCat("the mean has ", mean->users.size(), " users");
    return std::nullopt;
  }
  Value* d = sub->output(0);
  if (d->shape != x->shape) {
    *why = absl::StrCat("x - mean has shape ", ShapeToString(d->shape), ", not the input's ", ShapeToString(x->shape));
    return std::nullopt;
  }
  std::vector<Node*> d_users = DistinctUsers(d);
  if (d_users.size() != 2 || g.IsGraphOutput(d)) {
    *why = absl::StrCat("x - mean (", sub->name, ") has ", d_users.size(),
                        " users, expected 2 (the square and the normalization)");
    return std::nullopt;
  }

  // The square: Pow(d, 2) or Mul(d, d); the other user of d normalizes.
  Node* square = nullptr;
  Node* norm = nullptr;
  for (Node* u : d_users) {
    bool is_pow = u->op == "Pow" && u->inputs.size() == 2 && u->inputs[0] == d;
    bool is_mul_dd = u->op == "Mul" && u->inputs.size() == 2 && u->inputs[0] == d && u->inputs[1] == d;
    if (is_pow || is_mul_dd) {
      square = u;
    } else {
      norm = u;
    }
  }
  if (!square || !norm) {
    *why = absl::StrCat("x - mean (", sub->name, ") is not squared by Pow(d, 2) or Mul(d, d)");
    return std::nullopt;
  }
  if (square->op == "Pow") {
    std::optional<float> e = ScalarConstant(square->input(1));
    if (!e || *e != 2.0f) {
      *why = absl::StrCat(square->name, " raises to ", e ? absl::StrCat(*e) : std::string("a non-constant"),
                          ", expected exactly 2");
      return std::nullopt;
    }
  }
  Node* var_node = SingleUser(g, square->output(0));
  if (!var_node || var_node->op != "ReduceMean") {
    *why = absl::StrCat("the square (", square->name, ") does not feed one ReduceMean alone");
    return std::nullopt;
  }
  if (!ReducesLastAxisKeepDims(*var_node, why)) return std::nullopt;
  Value* var = var_node->output(0);
  Node* after_var = SingleUser(g, var);
  if (!after_var) {
    *why = absl::StrCat("the variance (", var_node->name, ") has ", var->users.size(), " users");
    return std::nullopt;
  }
  m.nodes = {mean_node, sub, square, var_node};

  // eps inside the root: Sqrt(Add(var, eps)) or Sqrt(var) (eps 0).
  Node* sqrt_node = nullptr;
  if (after_var->op == "Add") {
    Value* e = OtherOperand(*after_var, var);
    std::optional<float> eps = ScalarConstant(e);
    if (!eps || e->dtype != DType::kF32 || after_var->output(0)->shape != var->shape) {
      *why = absl::StrCat(after_var->name, " adds ", e ? e->name : std::string("?"),
                          " to the variance, expected a scalar f32 constant epsilon");
      return std::nullopt;
    }
    m.eps = *eps;
    m.nodes.push_back(after_var);
    sqrt_node = SingleUser(g, after_var->output(0));
    if (!sqrt_node || sqrt_node->op != "Sqrt") {
      *why = absl::StrCat("variance + eps (", after_var->name, ") does not feed one Sqrt alone");
      return std::nullopt;
    }
  } else if (after_var->op == "Sqrt") {
    sqrt_node = after_var;
  } else {
    *why = absl::StrCat("the variance feeds ", after_var->op, " ", after_var->name, ", expected Add(var, eps) or Sqrt");
    return std::nullopt;
  }
  m.nodes.push_back(sqrt_node);
  Value* s = sqrt_node->output(0);
  Node* after_sqrt = SingleUser(g, s);
  if (!after_sqrt) {
    *why = absl::StrCat("the standard deviation (", sqrt_node->name, ") has ", s->users.size(), " users");
    return std::nullopt;
  }
  if (after_sqrt->op == "Add" && after_var->op == "Sqrt") {
    *why = absl::StrCat(after_sqrt->name,
                        " adds epsilon after the Sqrt: (x - mean) / (sqrt(var) + eps) has no exact LayerNorm form "
                        "(LayerNorm adds epsilon inside the square root)");
    return std::nullopt;
  }
  // The normalization: Div(d, s) or Mul(d, Reciprocal(s)).
  Node* norm_expected = nullptr;
  if (after_sqrt->op == "Div" && after_sqrt->inputs.size() == 2 && after_sqrt->inputs[0] == d &&
      after_sqrt->inputs[1] == s) {
    norm_expected = after_sqrt;
    m.form = "Div(x - mean, Sqrt(var + eps))";
  } else if (after_sqrt->op == "Reciprocal") {
    m.nodes.push_back(after_sqrt);
    Node* mul = SingleUser(g, after_sqrt->output(0));
    if (mul && mul->op == "Mul" && OtherOperand(*mul, after_sqrt->output(0)) == d) norm_expected = mul;
    m.form = "Mul(x - mean, Reciprocal(Sqrt(var + eps)))";
  }
  if (!norm_expected || norm_expected != norm) {
    *why = absl::StrCat("the standard deviation (", sqrt_node->name, ") feeds ", after_sqrt->op, " ", after_sqrt->name,
                        ", expected Div(x - mean, std) or Mul(x - mean, Reciprocal(std))");
    return std::nullopt;
  }
  m.nodes.push_back(norm);
  Value* n = norm->output(0);
  if (n->shape != x->shape) {
    *why = absl::StrCat("the normalized value has shape ", ShapeToString(n->shape), ", not the input's ",
                        ShapeToString(x->shape));
    return std::nullopt;
  }
  if (after_var->op == "Sqrt") m.form = absl::StrCat(m.form, " without epsilon");

  // Optional gamma and beta.
  const int64_t rank = static_cast<int64_t>(x->shape.size());
  const Dim& channels = x->shape.back();
  m.out = n;
  if (Node* mul = SingleUser(g, n); mul && mul->op == "Mul") {
    Value* gamma = OtherOperand(*mul, n);
    if (gamma && !gamma->is_constant()) {
      *why = absl::StrCat("the scale (gamma) ", gamma->name, " of ", mul->name, " is not a constant");
      return std::nullopt;
    }
    if (std::optional<Tensor> t = ChannelParameter(gamma, channels, rank); t && mul->output(0)->shape == x->shape) {
      m.gamma = std::move(t);
      m.gamma_value = gamma;
      m.nodes.push_back(mul);
      m.out = mul->output(0);
    }
  }
  if (Node* add = SingleUser(g, m.out); add && add->op == "Add") {
    Value* beta = OtherOperand(*add, m.out);
    if (std::optional<Tensor> t = ChannelParameter(beta, channels, rank); t && add->output(0)->shape == x->shape) {
      m.beta = std::move(t);
      m.beta_value = beta;
      m.nodes.push_back(add);
      m.out = add->output(0);
    }
  }
  if (!m.gamma) {
    std::optional<int64_t> c = channels.ConstValue();
    if (!c) {
      *why = absl::StrCat("the normalized axis has symbolic size ", channels.ToString(),
                          " and there is no gamma to take the channel count from");
      return std::nullopt;
    }
    m.gamma = Tensor::FromF32({*c}, std::vector<float>(static_cast<size_t>(*c), 1.0f));
  }
  return m;
}

// A [C] constant for `t`: `original` itself when it already has that shape.
absl::StatusOr<Value*> ParameterValue(Rewriter& rw, Value* original, const Tensor& t, const std::string& name) {
  if (original && original->constant->dims() == t.dims()) return original;
  return rw.Constant(name, t);
}

absl::Status ApplyDecomposed(Rewriter& rw, const Match& m) {
  const Node* first = m.nodes.front();
  const std::string name = DerivedName(first->name, "ReduceMean", "LayerNorm");
  ASSIGN_OR_RETURN(Value * gamma, ParameterValue(rw, m.gamma_value, *m.gamma, name + "_scale"));
  std::vector<Value*> inputs = {m.x, gamma};
  if (m.beta) {
    ASSIGN_OR_RETURN(Value * beta, ParameterValue(rw, m.beta_value, *m.beta, name + "_bias"));
    inputs.push_back(beta);
  }
  Attributes attrs;
  attrs.Set("axis", int64_t{-1});
  attrs.Set("epsilon", m.eps);
  ASSIGN_OR_RETURN(Node * ln, rw.Create("LayerNorm", name, inputs, std::move(attrs), MergeOrigins(m.nodes)));
  const int64_t c = m.gamma->dims()[0];
  ln->decisions.push_back(
      {"fusion", "LayerNorm",
       absl::StrCat("decomposed ", m.form, " over the last axis (C=", c, "), epsilon ", m.eps,
                    m.gamma_value ? absl::StrCat("; gamma ", m.gamma_value->name) : std::string("; no gamma (ones)"),
                    m.beta_value ? absl::StrCat(", beta ", m.beta_value->name) : std::string(", no beta"),
                    "; every intermediate has one user")});
  Node* last = m.out->producer;
  rw.ReplaceAllUses(m.out, ln->output(0));
  return rw.EraseWithDeadInputs(last);
}

// The ONNX LayerNormalization op with only Y used, as a LayerNorm; why not in `why`.
bool OpIsFusible(const Graph& g, const Node& n, std::string* why) {
  const Value* x = n.input(0);
  if (x->dtype != DType::kF32) {
    *why = absl::StrCat("the input has dtype ", DTypeName(x->dtype), ", expected f32");
    return false;
  }
  for (size_t i = 1; i < n.outputs.size(); ++i) {
    if (IsUsed(g, n.output(i))) {
      *why = absl::StrCat("output ", i, " (", i == 1 ? "Mean" : "InvStdDev", ") is used");
      return false;
    }
  }
  const int64_t rank = static_cast<int64_t>(x->shape.size());
  const int64_t axis = n.attrs.GetInt("axis", -1);
  if (axis != -1 && axis != rank - 1) {
    *why = absl::StrCat("axis ", axis, " of a rank-", rank, " input normalizes several axes, expected the last only");
    return false;
  }
  if (n.attrs.GetInt("stash_type", 1) != 1) {
    *why = absl::StrCat("stash_type ", n.attrs.GetInt("stash_type", 1),
                        " computes the statistics in another precision than f32");
    return false;
  }
  return true;
}

absl::Status ApplyOp(Rewriter& rw, Node* n) {
  Attributes attrs;
  attrs.Set("axis", int64_t{-1});
  const float eps = n->attrs.GetFloat("epsilon", 1e-5f);
  attrs.Set("epsilon", eps);
  std::vector<Value*> inputs = {n->input(0), n->input(1)};
  if (n->input(2)) inputs.push_back(n->input(2));
  ASSIGN_OR_RETURN(Node * ln, rw.Create("LayerNorm", DerivedName(n->name, "LayerNormalization", "LayerNorm"), inputs,
                                        std::move(attrs), n->origin));
  ln->decisions.push_back(
      {"fusion", "LayerNorm",
       absl::StrCat("LayerNormalization with only Y used, last axis, f32 statistics, epsilon ", eps)});
  rw.ReplaceAllUses(n->output(0), ln->output(0));
  return rw.Erase(n);
}

}  // namespace

absl::StatusOr<bool> FuseLayerNorm(Graph& g, const PassContext& ctx) {
  Rewriter rw(g);
  bool changed = false;
  // One rewrite per scan: a rewrite erases nodes, so each scan starts from a fresh node list.
  // Refusals are reported from the last scan only (the one that rewrote nothing).
  for (;;) {
    bool applied = false;
    std::vector<std::pair<const Node*, std::pair<const char*, std::string>>> refused;
    for (Node* n : g.nodes()) {
      std::string why;
      if (n->op == "LayerNormalization") {
        if (!OpIsFusible(g, *n, &why)) {
          refused.push_back({n, {kOpRule, why}});
          continue;
        }
        RETURN_IF_ERROR(ApplyOp(rw, n));
        applied = true;
        break;
      }
      if (n->op != "ReduceMean") continue;
      std::optional<Match> m = MatchDecomposed(g, n, &why);
      if (!m) {
        if (!why.empty()) refused.push_back({n, {kRule, why}});
        continue;
      }
      RETURN_IF_ERROR(ApplyDecomposed(rw, *m));
      applied = true;
      break;
    }
    if (!applied) {
      for (const auto& [node, reason] : refused) ctx.Explain(reason.first, *node, reason.second);
      break;
    }
    changed = true;
  }
  if (changed) RETURN_IF_ERROR(rw.Finish());
  return changed;
}

}  // namespace gcomp::passes
