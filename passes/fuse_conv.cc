// fuse-conv: a convolution and its epilogue become one FusedConv (act(Conv(X, W) + B + Z)).
//
//   %c = Conv(%X, %W, %B?)
//   %b = Add(%c, %bias)        optional; constant [C,1,1] or [1,C,1,1] (leading 1s, 1s after the
//                              channel axis), either order: folded into B
//   %r = Add(%b, %Z)           optional residual: non-constant Z with exactly %c's shape
//   %y = Relu | Clip(%r)       optional activation (Clip bounds constant)
//   ->  %y = FusedConv(%X, %W, %B, %Z) {activation, the Conv's attributes}
// Steps apply in dataflow order while they are exact: bias and residual only before the
// activation, at most one of each of residual and activation. Every removed intermediate has one
// user and is not a graph output; when the conv output has other users the Conv alone still
// becomes a FusedConv (activation none). An existing FusedConv is extended by the same steps.
// Add(conv_a, conv_b) of two single-use conv outputs (ResNet downsample blocks): the residual goes
// into the conv later in graph order, the earlier one's output is its Z.
// Each FusedConv records its GEMM view: M = N*Ho*Wo, N = Cout, K = Cin*kh*kw/groups.
// Preconditions: float tensors; a bias folded into B needs B constant (or absent).
#include <map>
#include <optional>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/status_macros.h"
#include "passes/passes.h"
#include "passes/rewriter.h"

namespace gcomp::passes {
namespace {

struct ConvFusion {
  Node* root = nullptr;
  Value* bias = nullptr;                          // B as it is
  std::optional<std::vector<float>> bias_values;  // a new B (bias Adds folded in)
  Value* z = nullptr;
  std::string act = "none";
  std::optional<float> clip_min, clip_max;
  std::vector<Node*> nodes;  // every node replaced, in dataflow order
  Value* out = nullptr;      // the value the fused node replaces
  std::string choice = "FusedConv";
  std::vector<std::string> reasons;
  std::vector<Decision> old_decisions;

  bool has_bias() const { return bias || bias_values; }
};

bool IsEpilogueOp(const std::string& op) { return op == "Add" || op == "Relu" || op == "Clip"; }

// A conv (or FusedConv still open for a residual) whose output is used only by `add`.
bool IsResidualCandidate(const Graph& g, const Value* v, const Node* add) {
  const Node* p = v ? v->producer : nullptr;
  if (!p || SingleUser(g, v) != add) return false;
  if (p->op == "Conv") return true;
  return p->op == "FusedConv" && !p->input(3) && p->attrs.GetString("activation", "none") == "none";
}

// Per-channel values of a constant broadcast over the channel axis (1) of a rank-`rank` output
// with `channels` channels; nullopt when it broadcasts along any other axis.
std::optional<std::vector<float>> ChannelBias(const Value* c, size_t rank, int64_t channels) {
  if (!c || !c->is_constant() || !IsFloat(c->dtype) || c->shape.size() > rank || rank < 2) return std::nullopt;
  const std::vector<int64_t>& d = c->constant->dims();
  for (size_t j = 0; j < d.size(); ++j) {
    const size_t axis = rank - d.size() + j;
    if (d[j] != 1 && !(axis == 1 && d[j] == channels)) return std::nullopt;
  }
  return c->constant->ToF32();
}

std::optional<std::vector<float>> BiasValues(const ConvFusion& f) {
  if (f.bias_values) return *f.bias_values;
  if (f.bias && f.bias->is_constant()) return f.bias->constant->ToF32();
  return std::nullopt;
}

// "M=N*Ho*Wo=<expr> N=Cout=<n> K=Cin*kh*kw/groups=<k>", or nullopt when the dims are not known.
std::optional<std::string> GemmView(const Node* conv) {
  const Shape& out = conv->output(0)->shape;
  const Value* w = conv->input(1);
  if (out.size() < 3 || !w || w->shape.size() != out.size()) return std::nullopt;
  absl::StatusOr<Dim> m = out[0];
  for (size_t i = 2; i < out.size() && m.ok(); ++i) m = Dim::Mul(*m, out[i]);
  int64_t k = 1;
  for (size_t i = 1; i < w->shape.size(); ++i) {
    if (!w->shape[i].IsConst()) return std::nullopt;
    k *= w->shape[i].value();
  }
  if (!m.ok() || !w->shape[0].IsConst()) return std::nullopt;
  return absl::StrCat("M=N*Ho*Wo=", m->ToString(), " N=Cout=", w->shape[0].value(), " K=Cin*kh*kw/groups=", k);
}

bool InitRoot(Node* n, ConvFusion& f, std::string& why) {
  f.root = n;
  f.out = n->output(0);
  const Value* x = n->input(0);
  const Value* w = n->input(1);
  if (!x || !w || !IsFloat(x->dtype) || w->dtype != x->dtype || f.out->shape.size() < 3 || !f.out->shape[1].IsConst()) {
    why = "X and W are not float tensors with a known channel count";
    return false;
  }
  f.bias = n->input(2);
  f.nodes.push_back(n);
  if (n->op == "FusedConv") {
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
  } else {
    f.reasons.push_back(absl::StrCat("Conv ", ShapeToString(w->shape), f.bias ? " with its bias" : ""));
  }
  return true;
}

// Extends `f` by the epilogue ops after its output while the fusion stays exact.
void MatchEpilogue(const Graph& g, ConvFusion& f, const std::map<const Node*, size_t>& order, const PassContext& ctx) {
  const int64_t channels = f.out->shape[1].value();
  auto position = [&](const Node* n) -> int64_t {
    auto it = order.find(n);
    return it == order.end() ? -1 : static_cast<int64_t>(it->second);  // created in this sweep: earlier
  };
  while (f.act == "none") {
    Value* v = f.out;
    Node* u = v ? SingleUser(g, v) : nullptr;
    if (!v) return;
    if (!u) {
      for (const Node* user : v->users) {
        if (IsEpilogueOp(user->op)) {
          ctx.Explain("FuseConvEpilogue", *f.root,
                      absl::StrCat("the conv output '", v->name, "' has ", v->users.size(), " users",
                                   g.IsGraphOutput(v) ? " and is a graph output" : ""));
          break;
        }
      }
      return;
    }
    if (u->output(0) && u->output(0)->dtype != v->dtype) return;
    if ((u->op == "Relu" || u->op == "Clip") && u->input(0) != v) return;
    std::string step;
    if (u->op == "Add") {
      Value* other = u->input(0) == v ? u->input(1) : u->input(0);
      if (!other) return;
      if (other->is_constant()) {
        std::optional<std::vector<float>> c = ChannelBias(other, v->shape.size(), channels);
        std::optional<std::vector<float>> old = f.has_bias() ? BiasValues(f) : std::vector<float>{};
        if (!c || !old) {
          ctx.Explain("FuseConvBias", *u,
                      !c ? absl::StrCat("the constant has shape ", ShapeToString(other->shape), ", expected [",
                                        channels, ",1,1] or [1,", channels, ",1,1]")
                         : "the conv's B is not constant");
          return;
        }
        std::vector<float> sum(static_cast<size_t>(channels), 0.0f);
        for (size_t j = 0; j < sum.size(); ++j) {
          if (!old->empty()) sum[j] += (*old)[old->size() == 1 ? 0 : j];
          sum[j] += (*c)[c->size() == 1 ? 0 : j];
        }
        f.bias = nullptr;
        f.bias_values = sum;
        step = "bias";
        f.reasons.push_back(absl::StrCat("Add of constant ", ShapeToString(other->shape), " folded into B"));
      } else {
        if (f.z) {
          ctx.Explain("FuseConvResidual", *u, "the conv already has a residual");
          return;
        }
        if (other->shape != v->shape || other->dtype != v->dtype) {
          ctx.Explain("FuseConvResidual", *u,
                      absl::StrCat("the other operand '", other->name, "' has shape ", ShapeToString(other->shape),
                                   ", expected exactly the conv output's ", ShapeToString(v->shape)));
          return;
        }
        std::string note;
        if (IsResidualCandidate(g, other, u)) {
          if (position(other->producer) > position(f.root)) {
            ctx.Explain("FuseConvResidual", *u,
                        absl::StrCat("both operands are conv outputs; the later conv '", other->producer->name,
                                     "' takes the residual"));
            return;
          }
          note = absl::StrCat(" (both operands are conv outputs: fused into the later conv in graph order, '",
                              other->producer->name, "' is the residual)");
        }
        f.z = other;
        step = "residual";
        f.reasons.push_back(absl::StrCat("residual Add of '", other->name, "' ", ShapeToString(other->shape), note));
      }
    } else if (u->op == "Relu") {
      f.act = step = "relu";
      f.reasons.push_back("Relu");
    } else if (u->op == "Clip") {
      std::optional<float> lo, hi;
      for (int i = 1; i <= 2; ++i) {
        if (!u->input(i)) continue;
        std::optional<float> c = ScalarConstant(u->input(i));
        if (!c) {
          ctx.Explain("FuseConvActivation", *u, "a Clip bound is not a constant scalar");
          return;
        }
        (i == 1 ? lo : hi) = c;
      }
      f.act = step = "clip";
      f.clip_min = lo;
      f.clip_max = hi;
      f.reasons.push_back(
          absl::StrCat("Clip [", lo ? absl::StrCat(*lo) : "-inf", ", ", hi ? absl::StrCat(*hi) : "inf", "]"));
    } else {
      return;
    }
    absl::StrAppend(&f.choice, "+", step);
    f.nodes.push_back(u);
    f.out = u->output(0);
  }
}

absl::Status Apply(Graph& g, Rewriter& rw, ConvFusion& f, std::set<Node*>& erased) {
  Node* root = f.root;
  const std::string name = root->name;
  Value* bias = f.bias;
  if (f.bias_values) {
    ASSIGN_OR_RETURN(Tensor t, Tensor::Zeros(root->input(0)->dtype, {static_cast<int64_t>(f.bias_values->size())}));
    for (size_t i = 0; i < f.bias_values->size(); ++i) t.SetF32(static_cast<int64_t>(i), (*f.bias_values)[i]);
    ASSIGN_OR_RETURN(bias, rw.Constant(name + "_bias", std::move(t)));
  }
  std::vector<Value*> inputs = {root->input(0), root->input(1)};
  if (bias || f.z) inputs.push_back(bias);
  if (f.z) inputs.push_back(f.z);
  Attributes attrs = root->attrs;
  for (const char* a : {"activation", "clip_min", "clip_max"}) attrs.Erase(a);
  if (f.act != "none") attrs.Set("activation", f.act);
  if (f.clip_min) attrs.Set("clip_min", *f.clip_min);
  if (f.clip_max) attrs.Set("clip_max", *f.clip_max);
  std::vector<const Node*> parts(f.nodes.begin(), f.nodes.end());
  ASSIGN_OR_RETURN(Node * fused,
                   rw.Create("FusedConv", name + "_fused", inputs, std::move(attrs), MergeOrigins(parts)));
  if (fused->output(0)->shape != f.out->shape) {
    return absl::InternalError(absl::StrCat("fuse-conv: ", fused->Describe(), " has shape ",
                                            ShapeToString(fused->output(0)->shape), ", expected ",
                                            ShapeToString(f.out->shape)));
  }
  bool has_view = false;
  for (const Decision& d : f.old_decisions) {
    if (d.kind == "fusion") continue;
    has_view |= d.kind == "gemm_view";
    fused->decisions.push_back(d);
  }
  std::string reason = absl::StrJoin(f.reasons, "; ");
  if (const Node* next = SingleUser(g, f.out); f.nodes.size() == 1 && next) {
    absl::StrAppend(&reason, "; alone: its one user '", next->name, "' (", next->op, ") does not fold");
  } else if (f.nodes.size() == 1) {
    absl::StrAppend(&reason, "; alone: its output has ", f.out->users.size(), " users",
                    g.IsGraphOutput(f.out) ? " and is a graph output" : "");
  } else {
    absl::StrAppend(&reason, "; every removed intermediate has one user");
  }
  fused->decisions.push_back({"fusion", f.choice, reason});
  if (!has_view) {
    if (std::optional<std::string> view = GemmView(root)) {
      fused->decisions.push_back({"gemm_view", *view, "implicit GEMM of the convolution"});
    }
  }
  rw.ReplaceAllUses(f.out, fused->output(0));
  RETURN_IF_ERROR(rw.EraseAll(f.nodes, &erased));
  fused->name = g.UniqueNodeName(name);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<bool> FuseConv(Graph& g, const PassContext& ctx) {
  Rewriter rw(g);
  bool changed = false;
  std::set<Node*> erased;
  const std::vector<Node*> nodes = g.nodes();
  std::map<const Node*, size_t> order;
  for (size_t i = 0; i < nodes.size(); ++i) order[nodes[i]] = i;
  for (Node* n : nodes) {
    if (erased.count(n) || (n->op != "Conv" && n->op != "FusedConv")) continue;
    ConvFusion f;
    std::string why;
    if (!InitRoot(n, f, why)) {
      ctx.Explain("FuseConv", *n, why);
      continue;
    }
    MatchEpilogue(g, f, order, ctx);
    if (n->op == "FusedConv" && f.nodes.size() == 1) continue;
    RETURN_IF_ERROR(Apply(g, rw, f, erased));
    for (const Node* e : erased) order.erase(e);  // an address may be reused by a new node
    changed = true;
  }
  if (changed) RETURN_IF_ERROR(rw.Finish());
  return changed;
}

}  // namespace gcomp::passes
