#include "passes/epilogue_matcher.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/status_macros.h"

namespace gcomp::passes {
namespace {

// The ONNX op that computes `a` in a model.
const char* OnnxOp(Activation a) {
  switch (a) {
    case Activation::kRelu:
      return "Relu";
    case Activation::kClip:
      return "Clip";
    case Activation::kGelu:
    case Activation::kGeluTanh:
      return "Gelu";
    case Activation::kNone:
      break;
  }
  return "";
}

// The activation `n` computes (a Clip's bounds apart), nullopt when it is none of them.
std::optional<Activation> OnnxActivation(const Node& n) {
  if (n.op == "Relu") return Activation::kRelu;
  if (n.op == "Clip") return Activation::kClip;
  if (n.op == "Gelu") {
    const std::string approx = n.attrs.GetString("approximate", "none");  // ONNX's words, not ours
    if (approx == "none") return Activation::kGelu;
    if (approx == "tanh") return Activation::kGeluTanh;
  }
  return std::nullopt;
}

bool Runs(const EpilogueSpec& spec, Activation a) {
  return std::find(spec.activations.begin(), spec.activations.end(), a) != spec.activations.end();
}

bool IsActivationOp(const EpilogueSpec& spec, const std::string& op) {
  return std::any_of(spec.activations.begin(), spec.activations.end(), [&](Activation a) { return op == OnnxOp(a); });
}

bool IsEpilogueOp(const EpilogueSpec& spec, const std::string& op) {
  return op == "Add" || IsActivationOp(spec, op) ||
         std::find(spec.other_ops.begin(), spec.other_ops.end(), op) != spec.other_ops.end();
}

// The constant `c` of Add `u` as a bias of `m`; false (explained) when it does not fold.
bool FoldBias(const RuleSweep& sweep, const EpilogueSpec& spec, const Node& u, Value& c, EpilogueMatch& m) {
  std::optional<std::vector<float>> add = spec.bias_of(c, m.out->shape.size());
  std::optional<std::vector<float>> old = m.has_bias() ? m.BiasValues() : std::vector<float>{};
  if (!add || !old) {
    sweep.Explain(
        u,
        !add ? absl::StrCat("the constant has shape ", ShapeToString(c.shape), ", expected ", spec.expected_bias)
             : absl::StrCat("the ", spec.noun, "'s ", spec.bias_name, " is not constant"),
        "Bias");
    return false;
  }
  std::vector<float> sum(std::max(add->size(), old->size()), 0.0f);
  for (size_t j = 0; j < sum.size(); ++j) {
    if (!old->empty()) sum[j] += (*old)[old->size() == 1 ? 0 : j];
    sum[j] += (*add)[add->size() == 1 ? 0 : j];
  }
  if (spec.reuse_rank1_bias && !m.has_bias() && c.shape.size() == 1) {
    m.bias = &c;
  } else {
    m.bias = nullptr;
    m.bias_values = std::move(sum);
  }
  m.steps.push_back("bias");
  m.reasons.push_back(spec.bias_reason(c, !old->empty()));
  return true;
}

// Non-constant `z` of Add `u` as the residual of `m`; false (explained) when it does not fold.
bool FoldResidual(const RuleSweep& sweep, const EpilogueSpec& spec, const Node& u, Value& z, EpilogueMatch& m) {
  const Value& v = *m.out;
  if (m.z) {
    sweep.Explain(u, absl::StrCat("the ", spec.noun, " already has a residual"), "Residual");
    return false;
  }
  if (z.shape != v.shape || z.dtype != v.dtype) {
    sweep.Explain(u,
                  absl::StrCat("the other operand '", z.name, "' has shape ", ShapeToString(z.shape),
                               ", expected exactly the ", spec.noun, " output's ", ShapeToString(v.shape)),
                  "Residual");
    return false;
  }
  std::string note;
  if (spec.residual_ok && !spec.residual_ok(u, z, note)) return false;
  m.z = &z;
  m.steps.push_back("residual");
  m.reasons.push_back(absl::StrCat("residual Add of '", z.name, "' ", ShapeToString(z.shape), note));
  return true;
}

// Activation op `u` as the activation of `m`; false (explained where it matters) when it does not fold.
bool FoldActivation(const RuleSweep& sweep, const EpilogueSpec& spec, const Node& u, EpilogueMatch& m) {
  std::optional<Activation> act = OnnxActivation(u);
  if (!act || !Runs(spec, *act)) return false;
  if (*act == Activation::kClip) {
    std::optional<float> lo, hi;
    for (int i = 1; i <= 2; ++i) {
      if (!u.input(i)) continue;
      std::optional<float> c = ScalarConstant(u.input(i));
      if (!c) {
        sweep.Explain(u, "a Clip bound is not a constant scalar", "Activation");
        return false;
      }
      (i == 1 ? lo : hi) = c;
    }
    m.clip_min = lo;
    m.clip_max = hi;
  }
  m.act = *act;
  m.steps.push_back(ActivationName(*act));
  m.reasons.push_back(spec.activation_reason(u, m));
  return true;
}

}  // namespace

std::optional<std::vector<float>> EpilogueMatch::BiasValues() const {
  if (bias_values) return *bias_values;
  if (bias && bias->is_constant()) return bias->constant->ToF32();
  return std::nullopt;
}

std::optional<Activation> FusedActivation(const Node& n) {
  return ParseActivation(n.attrs.GetString(kActivationAttr, ActivationName(Activation::kNone)));
}

bool StartEpilogue(Node* root, const std::string& fused_op, EpilogueMatch& m) {
  m.root = root;
  m.fused_op = fused_op;
  m.choice = fused_op;
  m.out = root->output(0);
  m.nodes = {root};
  if (root->op != fused_op) return true;
  std::optional<Activation> act = FusedActivation(*root);
  if (!act) return false;
  m.act = *act;
  m.bias = root->input(2);
  m.z = root->input(3);
  if (root->attrs.Has(kClipMinAttr)) m.clip_min = root->attrs.GetFloat(kClipMinAttr, 0.0f);
  if (root->attrs.Has(kClipMaxAttr)) m.clip_max = root->attrs.GetFloat(kClipMaxAttr, 0.0f);
  m.old_decisions = root->decisions;
  for (const Decision& d : root->decisions) {
    if (d.kind != "fusion") continue;
    m.choice = d.choice;
    m.reasons.push_back(d.reason);
  }
  return true;
}

void MatchEpilogue(const RuleSweep& sweep, const EpilogueSpec& spec, EpilogueMatch& m) {
  const Graph& g = sweep.graph();
  while (m.act == Activation::kNone && m.out) {
    Value* v = m.out;
    Node* u = SingleUser(g, v);
    if (!u) {
      for (const Node* user : v->users) {
        if (IsEpilogueOp(spec, user->op)) {
          sweep.Explain(*m.root,
                        absl::StrCat("the ", spec.output_noun, " '", v->name, "' has ", v->users.size(), " users",
                                     g.IsGraphOutput(v) ? " and is a graph output" : ""),
                        "Epilogue");
          break;
        }
      }
      return;
    }
    if (u->output(0) && u->output(0)->dtype != v->dtype) return;
    const bool activation_op = IsActivationOp(spec, u->op);
    if (activation_op && u->input(0) != v) return;
    if (u->op == "Add") {
      Value* other = u->input(0) == v ? u->input(1) : u->input(0);
      if (!other) return;
      if (other->is_constant() ? !FoldBias(sweep, spec, *u, *other, m) : !FoldResidual(sweep, spec, *u, *other, m)) {
        return;
      }
    } else if (activation_op) {
      if (!FoldActivation(sweep, spec, *u, m)) return;
    } else if (spec.other_step &&
               std::find(spec.other_ops.begin(), spec.other_ops.end(), u->op) != spec.other_ops.end()) {
      u = spec.other_step(*u);
      if (!u) return;
    } else {
      return;
    }
    m.nodes.push_back(u);
    m.out = u->output(0);
  }
}

void WriteEpilogueAttributes(const EpilogueMatch& m, Attributes& attrs) {
  gcomp::Epilogue e;
  e.act = m.act;
  if (m.clip_min) e.clip_min = *m.clip_min;
  if (m.clip_max) e.clip_max = *m.clip_max;
  SetEpilogueAttributes(e, attrs);
  // The bounds are the match's: one the Clip left out stays out (unbounded), where
  // SetEpilogueAttributes writes it as -inf / inf.
  for (const auto& [name, bound] : {std::pair{kClipMinAttr, m.clip_min}, std::pair{kClipMaxAttr, m.clip_max}}) {
    if (bound) {
      attrs.Set(name, *bound);
    } else {
      attrs.Erase(name);
    }
  }
}

absl::StatusOr<Node*> CreateFusedNode(RuleSweep& sweep, const EpilogueMatch& m, std::vector<Value*> operands,
                                      Attributes attrs, const std::vector<const Node*>& parts,
                                      const std::string& pass) {
  Rewriter& rw = sweep.rewriter();
  const std::string& name = m.root->name;
  Value* bias = m.bias;
  if (m.bias_values) {
    const std::vector<float>& v = *m.bias_values;
    ASSIGN_OR_RETURN(Tensor t, Tensor::Zeros(m.root->input(0)->dtype, {static_cast<int64_t>(v.size())}));
    for (size_t i = 0; i < v.size(); ++i) t.SetF32(static_cast<int64_t>(i), v[i]);
    ASSIGN_OR_RETURN(bias, rw.Constant(name + "_bias", std::move(t)));
  }
  if (bias || m.z) operands.push_back(bias);
  if (m.z) operands.push_back(m.z);
  WriteEpilogueAttributes(m, attrs);
  ASSIGN_OR_RETURN(Node * fused,
                   rw.Create(m.fused_op, name + "_fused", std::move(operands), std::move(attrs), MergeOrigins(parts)));
  if (fused->output(0)->shape != m.out->shape) {
    return absl::InternalError(absl::StrCat(pass, ": ", fused->Describe(), " has shape ",
                                            ShapeToString(fused->output(0)->shape), ", expected ",
                                            ShapeToString(m.out->shape)));
  }
  for (const Decision& d : m.old_decisions) {
    if (d.kind != "fusion") fused->decisions.push_back(d);
  }
  std::string choice = m.choice;
  for (const std::string& s : m.steps) absl::StrAppend(&choice, "+", s);
  std::string reason = absl::StrJoin(m.reasons, "; ");
  if (m.nodes.size() > 1) absl::StrAppend(&reason, "; every removed intermediate has one user");
  fused->decisions.push_back({"fusion", choice, reason});
  return fused;
}

absl::Status ReplaceMatch(RuleSweep& sweep, const EpilogueMatch& m, Node* fused) {
  sweep.rewriter().ReplaceAllUses(m.out, fused->output(0));
  return sweep.EraseAll(m.nodes);
}

}  // namespace gcomp::passes
