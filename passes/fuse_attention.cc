// fuse-attention: the attention core softmax(Q K^T * scale) V becomes one Attention node. The
// projections before it and after it stay MatMul/Gemm (fuse-gemm makes them FusedGemm).
//
// Rule FuseAttention, anchored at the Softmax:
//   %q'  = Mul/Div(%q, c)...            scale factors on q (optional, any number)
//   %kt  = Transpose(%k', perm)         K^T: perm swaps the last two dims of K = Transpose(%k', perm')
//          (%kt itself when K^T has another producer: K = Transpose(%kt, last two swapped))
//   %k'  = Mul/Div(%k, c)...            scale factors on k, before or after the transpose (optional)
//   %s   = MatMul(%q', %kt)
//   %s'  = Mul/Div(%s, c)...            scale factors on the scores (optional)
//   %p   = Softmax(%s') {axis=last}
//   %o   = MatMul(%p, %v)
//     ->  %o = Attention(%q, %k, %v) {scale = product of all factors}
//   3-D [B, S, D] (torchvision's nn.MultiheadAttention folds the heads into the batch: B = batch*H)
//   -> the 3-D Attention with q_num_heads = kv_num_heads = 1 (hidden = D); 4-D [B, H, S, D]
//   (HuggingFace) -> the 4-D Attention. A Decision records the heads and head dim.
//   Preconditions: f32; Q, K, V of the same rank (3 or 4) with equal batch (and head) dims, no
//   broadcasting; every factor a finite scalar constant; the scores, the softmax output and the
//   scale and transpose nodes removed have one user each. Not fired for a masked or causal pattern
//   (an Add or Where between the scores and the Softmax) or a Softmax over another axis: the
//   fused core has neither a mask nor a causal flag, and normalizes over the keys. Not fired
//   either for a Softmax that lower-attention made (the target has no fused kernel for it).
//
// Rule CoreAttention23 (the opset-23 op): an Attention node without mask, past, causal flag or
// softcap, whose extra outputs are unused, is already the core; its `scale` is made explicit
// (the op's default 1/sqrt(head size)).
#include <algorithm>
#include <cmath>
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

constexpr const char* kRule = "FuseAttention";
constexpr const char* kOpRule = "CoreAttention23";

std::string DerivedName(const std::string& name, const std::string& from, const std::string& to) {
  size_t at = name.rfind(from);
  if (at == std::string::npos) return absl::StrCat(name, "/", to);
  std::string out = name;
  out.replace(at, from.size(), to);
  return out;
}

bool IsUsed(const Graph& g, const Value* v) { return v && (!v->users.empty() || g.IsGraphOutput(v)); }

bool AllOnes(const Shape& s) {
  return std::all_of(s.begin(), s.end(), [](const Dim& d) { return d == Dim(1); });
}

// Scale factors (Mul or Div by a scalar) above a value, collected while walking up.
struct ScaleChain {
  Value* base = nullptr;           // the value below the first factor
  double factor = 1.0;             // product of the factors
  std::vector<const Node*> nodes;  // the Mul/Div nodes absorbed
  std::vector<std::string> terms;  // "Div by 8 (name)" for the Decision
  std::string error;               // set when a factor cannot be absorbed
};

// Walks up from `v` through Mul(x, c) / Mul(c, x) / Div(x, c) where c is a scalar-shaped operand
// and the output keeps x's shape. With `strict`, every node passed must have one user (else an
// error); without it, the walk stops at a value with other users. A scalar factor that is not a
// finite nonzero constant is an error.
ScaleChain WalkScales(const Graph& g, Value* v, bool strict, const char* where) {
  ScaleChain c;
  c.base = v;
  for (;;) {
    Node* p = c.base->producer;
    if (!p || (p->op != "Mul" && p->op != "Div") || p->inputs.size() != 2) return c;
    int data = -1;
    for (int i = 0; i < 2; ++i) {
      const Value* other = p->inputs[1 - i];
      if (p->op == "Div" && i == 1) continue;  // Div(c, x) is not a scale of x
      if (other && AllOnes(other->shape) && p->inputs[i] && p->inputs[i]->shape == c.base->shape) data = i;
    }
    if (data < 0) return c;
    const Value* factor = p->inputs[1 - data];
    if (c.base->users.size() != 1 || g.IsGraphOutput(c.base) ||
        std::count(c.base->users[0]->inputs.begin(), c.base->users[0]->inputs.end(), c.base) != 1) {
      if (strict) c.error = absl::StrCat("the scaled ", where, " (", p->name, ") has other users");
      return c;
    }
    std::optional<float> f = ScalarConstant(factor);
    if (!f || factor->dtype != DType::kF32) {
      c.error =
          absl::StrCat("the scale factor ", factor->name, " on the ", where, " (", p->name, ") is not a constant");
      return c;
    }
    if (!std::isfinite(*f) || *f == 0.0f) {
      c.error = absl::StrCat("the scale factor on the ", where, " (", p->name, ") is ", *f);
      return c;
    }
    c.factor *= p->op == "Div" ? 1.0 / static_cast<double>(*f) : static_cast<double>(*f);
    c.terms.push_back(absl::StrCat(p->op, " by ", *f, " on ", where));
    c.nodes.push_back(p);
    c.base = p->inputs[data];
  }
}

struct Match {
  Value* q = nullptr;
  Value* v = nullptr;
  Value* k = nullptr;         // K itself, when no transpose has to be inserted
  Value* k_source = nullptr;  // else: K = Transpose(k_source, k_perm)
  std::vector<int64_t> k_perm;
  const Node* k_transpose = nullptr;  // the K^T Transpose that is replaced
  double scale = 1.0;
  std::vector<std::string> scale_terms;
  std::vector<const Node*> nodes;
  const Node* qk = nullptr;
  Node* pv = nullptr;
  int64_t rank = 0;
};

// `perm` with its last two entries swapped: if Transpose(x, perm) is K^T, then
// Transpose(x, SwapLastTwo(perm)) is K.
std::vector<int64_t> SwapLastTwo(std::vector<int64_t> perm) {
  std::swap(perm[perm.size() - 2], perm[perm.size() - 1]);
  return perm;
}

bool IsIdentity(const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

std::optional<Match> MatchCore(const Graph& g, Node* softmax, std::string* why) {
  for (const Decision& d : softmax->decisions) {
    if (d.kind == "lowering") {
      *why = "lower-attention decomposed this attention for the target (" + d.choice + ")";
      return std::nullopt;
    }
  }
  Value* sin = softmax->input(0);
  const int64_t rank = static_cast<int64_t>(sin->shape.size());
  const int64_t axis = softmax->attrs.GetInt("axis", -1);
  if (axis != -1 && axis != rank - 1) {
    *why = absl::StrCat("the Softmax normalizes axis ", axis, " of a rank-", rank,
                        " tensor, not the last (keys) axis the Attention core normalizes");
    return std::nullopt;
  }
  if (sin->dtype != DType::kF32) {
    *why = absl::StrCat("the scores have dtype ", DTypeName(sin->dtype), ", expected f32");
    return std::nullopt;
  }
  Match m;
  ScaleChain on_scores = WalkScales(g, sin, true, "scores");
  if (!on_scores.error.empty()) {
    *why = on_scores.error;
    return std::nullopt;
  }
  Value* scores = on_scores.base;
  Node* qk = scores->producer;
  if (qk && (qk->op == "Add" || qk->op == "Where")) {
    *why = absl::StrCat(qk->op, " ", qk->name, " before the Softmax ",
                        qk->op == "Add" ? "adds a mask or bias to the scores" : "masks the scores",
                        ": a masked or causal pattern, and the fused core has no mask");
    return std::nullopt;
  }
  if (!qk || qk->op != "MatMul") {
    *why =
        absl::StrCat("the Softmax input comes from ", qk ? qk->op + " " + qk->name : std::string("outside the graph"),
                     ", not from MatMul(Q, K^T) and scale factors");
    return std::nullopt;
  }
  if (SingleUser(g, scores) == nullptr) {
    *why = absl::StrCat("the scores Q K^T (", qk->name, ") have other users");
    return std::nullopt;
  }
  Value* p = softmax->output(0);
  Node* pv = SingleUser(g, p);
  if (!pv || pv->op != "MatMul" || pv->input(0) != p) {
    *why = absl::StrCat("the Softmax output does not feed one MatMul(P, V) alone");
    return std::nullopt;
  }
  if (rank != 3 && rank != 4) {
    *why = absl::StrCat("the scores have rank ", rank, ", expected 3 ([B, S, S]) or 4 ([B, H, S, S])");
    return std::nullopt;
  }

  ScaleChain on_q = WalkScales(g, qk->input(0), false, "q");
  if (!on_q.error.empty()) {
    *why = on_q.error;
    return std::nullopt;
  }
  ScaleChain on_kt = WalkScales(g, qk->input(1), false, "k");
  if (!on_kt.error.empty()) {
    *why = on_kt.error;
    return std::nullopt;
  }
  m.q = on_q.base;
  m.v = pv->input(1);
  Value* kt = on_kt.base;
  ScaleChain on_k;
  Node* t = kt->producer;
  if (t && t->op == "Transpose" && kt->users.size() == 1 && !g.IsGraphOutput(kt)) {
    std::vector<int64_t> perm = t->attrs.GetInts("perm");
    if (perm.empty()) {  // the default reverses the dims
      for (int64_t i = rank - 1; i >= 0; --i) perm.push_back(i);
    }
    if (perm.size() == static_cast<size_t>(rank)) {
      on_k = WalkScales(g, t->input(0), false, "k");
      if (!on_k.error.empty()) {
        *why = on_k.error;
        return std::nullopt;
      }
      m.k_transpose = t;
      std::vector<int64_t> k_perm = SwapLastTwo(perm);
      if (IsIdentity(k_perm)) {
        m.k = on_k.base;
      } else {
        m.k_source = on_k.base;
        m.k_perm = k_perm;
      }
    }
  }
  if (!m.k_transpose) {  // K^T from elsewhere: K = Transpose(K^T) with the last two dims swapped
    std::vector<int64_t> perm(static_cast<size_t>(rank));
    for (int64_t i = 0; i < rank; ++i) perm[i] = i;
    m.k_source = kt;
    m.k_perm = SwapLastTwo(perm);
  }

  // Shapes: Q [.., Sq, D], K^T [.., D, Skv], V [.., Skv, Dv], equal leading dims.
  const Shape& qs = m.q->shape;
  const Shape& kts = kt->shape;
  const Shape& vs = m.v->shape;
  for (const Value* x : {m.q, kt, m.v}) {
    if (x->dtype != DType::kF32) {
      *why = absl::StrCat(x->name, " has dtype ", DTypeName(x->dtype), ", expected f32");
      return std::nullopt;
    }
  }
  if (qs.size() != static_cast<size_t>(rank) || kts.size() != qs.size() || vs.size() != qs.size()) {
    *why = absl::StrCat("Q ", ShapeToString(qs), ", K^T ", ShapeToString(kts), " and V ", ShapeToString(vs),
                        " do not all have rank ", rank);
    return std::nullopt;
  }
  for (int64_t i = 0; i + 2 < rank; ++i) {
    if (qs[i] != kts[i] || qs[i] != vs[i]) {
      *why = absl::StrCat("Q ", ShapeToString(qs), ", K^T ", ShapeToString(kts), " and V ", ShapeToString(vs),
                          " differ in dim ", i, " (broadcast batch or heads)");
      return std::nullopt;
    }
  }
  if (kts[rank - 2] != qs[rank - 1] || vs[rank - 2] != kts[rank - 1]) {
    *why = absl::StrCat("Q ", ShapeToString(qs), ", K^T ", ShapeToString(kts), " and V ", ShapeToString(vs),
                        " do not chain as [.., S, D] x [.., D, Skv] x [.., Skv, Dv]");
    return std::nullopt;
  }
  if (rank == 4 && !qs[1].IsConst()) {
    *why = absl::StrCat("the head count ", qs[1].ToString(), " is not a constant");
    return std::nullopt;
  }

  m.scale = on_q.factor * on_kt.factor * on_k.factor * on_scores.factor;
  if (!std::isfinite(static_cast<float>(m.scale))) {
    *why = absl::StrCat("the combined scale ", m.scale, " is not a finite f32");
    return std::nullopt;
  }
  for (const ScaleChain* c : {&on_q, &on_kt, &on_k, &on_scores}) {
    m.scale_terms.insert(m.scale_terms.end(), c->terms.begin(), c->terms.end());
    m.nodes.insert(m.nodes.end(), c->nodes.begin(), c->nodes.end());
  }
  if (m.k_transpose) m.nodes.push_back(m.k_transpose);
  m.nodes.push_back(qk);
  m.nodes.push_back(softmax);
  m.nodes.push_back(pv);
  m.qk = qk;
  m.pv = pv;
  m.rank = rank;
  return m;
}

// "12 heads x head dim 64" for q [B*H, S, D] made by Transpose(Reshape([S, B, H*D] -> [S, B*H, D])),
// when the producers show it.
std::string FoldedHeads(const Value* q) {
  const Dim& d = q->shape.back();
  const Node* t = q->producer;
  if (t && t->op == "Transpose") {
    const Node* r = t->input(0)->producer;
    if (r && r->op == "Reshape" && r->input(0) && !r->input(0)->shape.empty()) {
      const Dim& hidden = r->input(0)->shape.back();
      if (auto e = hidden.ConstValue(), dv = d.ConstValue(); e && dv && *dv > 0 && *e % *dv == 0) {
        return absl::StrCat("heads folded into the batch: ", *e / *dv, " heads x head dim ", *dv, " (batch dim ",
                            q->shape[0].ToString(), ", split by ", r->name, ")");
      }
    }
  }
  return absl::StrCat("head dim ", d.ToString(), "; no head split visible in the producers of Q (batch dim ",
                      q->shape[0].ToString(), ")");
}

absl::Status ApplyCore(Rewriter& rw, const Match& m) {
  const Node* softmax = m.nodes[m.nodes.size() - 2];
  const std::string name = DerivedName(softmax->name, "Softmax", "Attention");
  Value* k = m.k;
  std::string k_note;
  if (!k) {
    std::vector<std::string> origin = m.k_transpose ? m.k_transpose->origin : m.qk->origin;
    Attributes attrs;
    attrs.Set("perm", m.k_perm);
    ASSIGN_OR_RETURN(Node * kt,
                     rw.Create("Transpose", name + "/k_transpose", {m.k_source}, std::move(attrs), std::move(origin)));
    kt->decisions.push_back({"fusion", "K transpose",
                             m.k_transpose ? absl::StrCat(m.k_transpose->name,
                                                          " produced K^T directly; this transpose gives the "
                                                          "Attention its K [.., Skv, D]")
                                           : std::string("K^T has no Transpose producer; K is its transpose")});
    k = kt->output(0);
    k_note = absl::StrCat("; K = ", kt->name);
  }
  Attributes attrs;
  attrs.Set("scale", static_cast<float>(m.scale));
  if (m.rank == 3) {
    attrs.Set("q_num_heads", int64_t{1});
    attrs.Set("kv_num_heads", int64_t{1});
  }
  ASSIGN_OR_RETURN(Node * attn, rw.Create("Attention", name, {m.q, k, m.v}, std::move(attrs), MergeOrigins(m.nodes)));
  for (const Node* x : m.nodes) {  // what earlier passes decided on the matched nodes (a folded NaN guard)
    for (const Decision& d : x->decisions) {
      if (d.kind == "guard") attn->decisions.push_back(d);
    }
  }
  std::string scale_note = m.scale_terms.empty() ? std::string("no scale factor") : "";
  for (const std::string& s : m.scale_terms) absl::StrAppend(&scale_note, scale_note.empty() ? "" : " x ", s);
  const Shape& qs = m.q->shape;
  if (m.rank == 3) {
    attn->decisions.push_back(
        {"fusion", "Attention (3-D, one head per batch row)",
         absl::StrCat("q_num_heads=kv_num_heads=1 on Q ", ShapeToString(qs), "; ", FoldedHeads(m.q), "; scale ",
                      static_cast<float>(m.scale), " (", scale_note, ")", k_note)});
  } else {
    attn->decisions.push_back(
        {"fusion", "Attention (4-D, heads as a dim)",
         absl::StrCat(qs[1].ToString(), " heads x head dim ", qs[3].ToString(), " on Q ", ShapeToString(qs), "; scale ",
                      static_cast<float>(m.scale), " (", scale_note, ")", k_note)});
  }
  Value* out = m.pv->output(0);
  rw.ReplaceAllUses(out, attn->output(0));
  return rw.EraseWithDeadInputs(m.pv);
}

// The opset-23 op in core form; `why` says otherwise. Sets `explicit_scale` when the op relies on
// its default scale.
bool IsCoreAttention23(const Graph& g, const Node& n, std::string* why) {
  for (size_t i = 3; i < n.inputs.size(); ++i) {
    if (n.inputs[i]) {
      *why = absl::StrCat(i == 3 ? "it has an attention mask" : "it has a past key/value cache",
                          "; kept as the opset-23 op, not the fused core");
      return false;
    }
  }
  for (size_t i = 1; i < n.outputs.size(); ++i) {
    if (IsUsed(g, n.output(i))) {
      *why = absl::StrCat("its output ", i, " (present key/value or QK scores) is used");
      return false;
    }
  }
  if (n.attrs.GetInt("is_causal", 0) != 0) {
    *why = "it is causal; kept as the opset-23 op, not the fused core";
    return false;
  }
  if (n.attrs.GetFloat("softcap", 0.0f) != 0.0f) {
    *why = "it has a softcap; kept as the opset-23 op, not the fused core";
    return false;
  }
  return true;
}

// Head size of an Attention node's Q, when constant.
std::optional<int64_t> HeadSize(const Node& n) {
  const Shape& q = n.input(0)->shape;
  if (q.size() == 4) return q[3].ConstValue();
  std::optional<int64_t> hidden = q.back().ConstValue();
  const int64_t heads = n.attrs.GetInt("q_num_heads", 0);
  if (!hidden || heads < 1 || *hidden % heads != 0) return std::nullopt;
  return *hidden / heads;
}

// Sets the op's default scale 1/sqrt(head size) explicitly, as every fused Attention carries it.
// Only node metadata changes (an attribute and a Decision); no edge does.
bool MakeScaleExplicit(Node* n, std::string* why) {
  std::optional<int64_t> d = HeadSize(*n);
  if (!d || *d < 1) {
    *why = "the head size is not a constant, so the default scale stays implicit";
    return false;
  }
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(*d)));
  n->attrs.Set("scale", scale);
  n->decisions.push_back({"fusion", "Attention (opset-23 op, core form)",
                          absl::StrCat("no mask, past or softcap, not causal; the default scale 1/sqrt(", *d,
                                       ") = ", scale, " made explicit")});
  return true;
}

}  // namespace

absl::StatusOr<bool> FuseAttention(Graph& g, const PassContext& ctx) {
  Rewriter rw(g);
  bool changed = false;
  // One rewrite per scan: a rewrite erases nodes, so each scan starts from a fresh node list.
  // Refusals are reported from the last scan only (the one that rewrote nothing).
  for (;;) {
    bool applied = false;
    std::vector<std::pair<const Node*, std::pair<const char*, std::string>>> refused;
    for (Node* n : g.nodes()) {
      std::string why;
      if (n->op == "Attention") {
        if (!IsCoreAttention23(g, *n, &why)) {
          refused.push_back({n, {kOpRule, why}});
        } else if (!n->attrs.Has("scale")) {
          if (MakeScaleExplicit(n, &why)) {
            changed = true;
          } else {
            refused.push_back({n, {kOpRule, why}});
          }
        }
        continue;
      }
      if (n->op != "Softmax") continue;
      std::optional<Match> m = MatchCore(g, n, &why);
      if (!m) {
        refused.push_back({n, {kRule, why}});
        continue;
      }
      RETURN_IF_ERROR(ApplyCore(rw, *m));
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
