// fuse-conv: a convolution and its epilogue become one FusedConv (act(Conv(X, W) + B + Z)). The
// epilogue walk is passes/epilogue_matcher.h's; this file keeps what is the convolution's own: a
// per-channel bias folded into B, which of two conv outputs added together takes the residual,
// and the GEMM view each FusedConv records. One rule, FuseConv (below).
#include <algorithm>
#include <optional>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "passes/epilogue_matcher.h"
#include "passes/passes.h"
#include "passes/rewriter.h"

namespace gcomp::passes {
namespace {

// A conv (or FusedConv still open for a residual) whose output is used only by `add`.
bool IsResidualCandidate(const Graph& g, const Value* v, const Node* add) {
  const Node* p = v ? v->producer : nullptr;
  if (!p || SingleUser(g, v) != add) return false;
  if (p->op == "Conv") return true;
  return p->op == "FusedConv" && !p->input(3) && FusedActivation(*p) == Activation::kNone;
}

// Per-channel values (`channels` of them) of a constant broadcast over the channel axis (1) of a
// rank-`rank` output; nullopt when it broadcasts along any other axis.
std::optional<std::vector<float>> ChannelBias(const Value& c, size_t rank, int64_t channels) {
  if (!c.is_constant() || !IsFloat(c.dtype) || c.shape.size() > rank || rank < 2) return std::nullopt;
  const std::vector<int64_t>& d = c.constant->dims();
  for (size_t j = 0; j < d.size(); ++j) {
    const size_t axis = rank - d.size() + j;
    if (d[j] != 1 && !(axis == 1 && d[j] == channels)) return std::nullopt;
  }
  std::vector<float> v = c.constant->ToF32();
  if (v.size() == 1) v.assign(static_cast<size_t>(channels), v[0]);
  return v;
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

// The convolution's part of the epilogue: bias folded into B per channel, Relu and Clip, and the
// residual of two conv outputs added together going into the later conv in graph order.
EpilogueSpec ConvEpilogue(const RuleSweep& sweep, const Node* root, int64_t channels) {
  return {
      .noun = "conv",
      .bias_name = "B",
      .output_noun = "conv output",
      .activations = {Activation::kRelu, Activation::kClip},
      .bias_of = [channels](const Value& c, size_t rank) { return ChannelBias(c, rank, channels); },
      .expected_bias = absl::StrCat("[", channels, ",1,1] or [1,", channels, ",1,1]"),
      .bias_reason =
          [](const Value& c, bool /*summed*/) {
            return absl::StrCat("Add of constant ", ShapeToString(c.shape), " folded into B");
          },
      .residual_ok =
          [&sweep, root](const Node& add, const Value& z, std::string& note) {
            if (!IsResidualCandidate(sweep.graph(), &z, &add)) return true;
            if (sweep.Position(z.producer) > sweep.Position(root)) {
              sweep.Explain(add,
                            absl::StrCat("both operands are conv outputs; the later conv '", z.producer->name,
                                         "' takes the residual"),
                            "Residual");
              return false;
            }
            note = absl::StrCat(" (both operands are conv outputs: fused into the later conv in graph order, '",
                                z.producer->name, "' is the residual)");
            return true;
          },
      .activation_reason =
          [](const Node& op, const EpilogueMatch& m) {
            if (m.act != Activation::kClip) return op.op;
            return absl::StrCat("Clip [", m.clip_min ? absl::StrCat(*m.clip_min) : "-inf", ", ",
                                m.clip_max ? absl::StrCat(*m.clip_max) : "inf", "]");
          },
  };
}

absl::Status Apply(RuleSweep& sweep, EpilogueMatch& m) {
  const Graph& g = sweep.graph();
  const std::string name = m.root->name;
  if (const Node* next = SingleUser(g, m.out); m.nodes.size() == 1 && next) {
    m.reasons.push_back(absl::StrCat("alone: its one user '", next->name, "' (", next->op, ") does not fold"));
  } else if (m.nodes.size() == 1) {
    m.reasons.push_back(absl::StrCat("alone: its output has ", m.out->users.size(), " users",
                                     g.IsGraphOutput(m.out) ? " and is a graph output" : ""));
  }
  std::vector<const Node*> parts(m.nodes.begin(), m.nodes.end());
  ASSIGN_OR_RETURN(Node * fused,
                   CreateFusedNode(sweep, m, {m.root->input(0), m.root->input(1)}, m.root->attrs, parts, "fuse-conv"));
  const bool has_view = std::any_of(fused->decisions.begin(), fused->decisions.end(),
                                    [](const Decision& d) { return d.kind == "gemm_view"; });
  if (!has_view) {
    if (std::optional<std::string> view = GemmView(m.root)) {
      fused->decisions.push_back({"gemm_view", *view, "implicit GEMM of the convolution"});
    }
  }
  RETURN_IF_ERROR(ReplaceMatch(sweep, m, fused));
  fused->name = sweep.graph().UniqueNodeName(name);
  return absl::OkStatus();
}

// Rule FuseConv:
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
absl::StatusOr<bool> FuseConvRule(RuleSweep& sweep, Node* n) {
  const Value* x = n->input(0);
  const Value* w = n->input(1);
  const Value* y = n->output(0);
  if (!x || !w || !IsFloat(x->dtype) || w->dtype != x->dtype || y->shape.size() < 3 || !y->shape[1].IsConst()) {
    sweep.Explain(*n, "X and W are not float tensors with a known channel count");
    return false;
  }
  EpilogueMatch m;
  if (!StartEpilogue(n, "FusedConv", m)) return false;
  m.bias = n->input(2);
  if (n->op == "Conv") {
    m.reasons.push_back(absl::StrCat("Conv ", ShapeToString(w->shape), m.bias ? " with its bias" : ""));
  }
  MatchEpilogue(sweep, ConvEpilogue(sweep, n, y->shape[1].value()), m);
  if (n->op == "FusedConv" && m.nodes.size() == 1) return false;
  RETURN_IF_ERROR(Apply(sweep, m));
  return true;
}

}  // namespace

absl::StatusOr<bool> FuseConv(Graph& g, const PassContext& ctx) {
  static const std::vector<RewriteRule> kRules = {{"FuseConv", {"Conv", "FusedConv"}, FuseConvRule}};
  return ApplyRules(g, ctx, kRules);
}

}  // namespace gcomp::passes
