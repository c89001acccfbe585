// lower-attention (O3): an Attention node stays one node where the target has a fused attention
// kernel (cuda); elsewhere it becomes batched GEMMs and a softmax:
//
//   %o = Attention(%q, %k, %v) {scale}
//   ->  %s = MatMul(%q4, Transpose(%k4, [.., D, Skv]));  %p = Softmax(Mul(%s, scale), axis=-1)
//       %o4 = MatMul(%p, %v4)
// 4-D [B,H,S,D] and 3-D with one head ([B*H, S, D], heads folded into the batch) directly;
// 3-D [B, S, H*D] with H > 1 through Reshape [0,0,H,D] + Transpose [0,2,1,3] and back.
// The decision and its reason (from the target description) are on the node, or on the Softmax.
// Preconditions for the rewrite: Q, K, V only (no mask, past, causal, softcap, extra outputs),
// q_num_heads == kv_num_heads, fp32. For targets that do not rewrite (ref) only the decision.
#include <cmath>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "passes/passes.h"
#include "passes/rewriter.h"
#include "passes/target.h"

namespace gcomp::passes {
namespace {

bool HasLowering(const Node* n) {
  for (const Decision& d : n->decisions) {
    if (d.kind == "lowering") return true;
  }
  return false;
}

// Why `n` cannot be decomposed, or "" when it can.
std::string Unsupported(const Node* n) {
  for (size_t i = 3; i < n->inputs.size(); ++i) {
    if (n->input(i)) return "it has a mask or past key/value input";
  }
  for (size_t i = 1; i < n->outputs.size(); ++i) {
    if (n->output(i) && (!n->output(i)->users.empty())) return "it has present or qk outputs in use";
  }
  if (n->attrs.GetInt("is_causal", 0) != 0) return "it is causal";
  if (n->attrs.GetFloat("softcap", 0.0f) != 0.0f) return "it has a softcap";
  if (n->input(0)->dtype != DType::kF32) return "Q is not fp32";
  const size_t rank = n->input(0)->shape.size();
  if (rank == 3 && n->attrs.GetInt("q_num_heads", 1) != n->attrs.GetInt("kv_num_heads", 1)) {
    return "grouped-query heads";
  }
  if (rank == 4 && n->input(0)->shape[1] != n->input(1)->shape[1]) return "grouped-query heads";
  if (rank == 4 && !n->input(0)->shape[3].IsConst()) return "the head size is not known";
  if (rank == 3 && !n->input(0)->shape[2].IsConst()) return "the hidden size is not known";
  return "";
}

absl::StatusOr<Value*> Op(Rewriter& rw, const Node* at, const std::string& op, const std::string& suffix,
                          std::vector<Value*> inputs, Attributes attrs = {}) {
  ASSIGN_OR_RETURN(Node * n, rw.Create(op, at->name + suffix, std::move(inputs), std::move(attrs), at->origin));
  return n->output(0);
}

absl::StatusOr<Value*> Permute(Rewriter& rw, const Node* at, const std::string& suffix, Value* v,
                               std::vector<int64_t> perm) {
  Attributes a;
  a.Set("perm", std::move(perm));
  return Op(rw, at, "Transpose", suffix, {v}, std::move(a));
}

absl::StatusOr<Value*> Reshape(Rewriter& rw, const Node* at, const std::string& suffix, Value* v,
                               std::vector<int64_t> shape) {
  ASSIGN_OR_RETURN(Value * s, rw.Constant(at->name + suffix + "_shape",
                                          Tensor::FromI64({static_cast<int64_t>(shape.size())}, shape)));
  return Op(rw, at, "Reshape", suffix, {v, s});
}

absl::Status Decompose(Rewriter& rw, Node* n, const std::string& reason) {
  Value* q = n->input(0);
  Value* k = n->input(1);
  Value* v = n->input(2);
  const size_t rank = q->shape.size();
  const int64_t heads = n->attrs.GetInt("q_num_heads", 1);
  const bool split = rank == 3 && heads > 1;
  int64_t head_size = rank == 4 ? q->shape[3].value() : q->shape[2].value() / heads;
  if (split) {
    const int64_t dv = v->shape[2].value() / heads;
    ASSIGN_OR_RETURN(q, Reshape(rw, n, "/q_heads", q, {0, 0, heads, head_size}));
    ASSIGN_OR_RETURN(q, Permute(rw, n, "/q_bhsd", q, {0, 2, 1, 3}));
    ASSIGN_OR_RETURN(k, Reshape(rw, n, "/k_heads", k, {0, 0, heads, head_size}));
    ASSIGN_OR_RETURN(k, Permute(rw, n, "/k_bhsd", k, {0, 2, 1, 3}));
    ASSIGN_OR_RETURN(v, Reshape(rw, n, "/v_heads", v, {0, 0, heads, dv}));
    ASSIGN_OR_RETURN(v, Permute(rw, n, "/v_bhsd", v, {0, 2, 1, 3}));
  }
  const size_t r = q->shape.size();
  std::vector<int64_t> perm(r);
  for (size_t i = 0; i < r; ++i) perm[i] = static_cast<int64_t>(i);
  std::swap(perm[r - 1], perm[r - 2]);
  const float scale =
      n->attrs.Has("scale") ? n->attrs.GetFloat("scale", 1.0f) : 1.0f / std::sqrt(static_cast<float>(head_size));
  ASSIGN_OR_RETURN(Value * kt, Permute(rw, n, "/k_t", k, perm));
  ASSIGN_OR_RETURN(Value * scores, Op(rw, n, "MatMul", "/qk", {q, kt}));
  ASSIGN_OR_RETURN(Value * sc, rw.Constant(n->name + "/scale", Tensor::FromF32({}, {scale})));
  ASSIGN_OR_RETURN(scores, Op(rw, n, "Mul", "/scale", {scores, sc}));
  Attributes sa;
  sa.Set("axis", int64_t{-1});
  ASSIGN_OR_RETURN(Node * softmax, rw.Create("Softmax", n->name + "/softmax", {scores}, std::move(sa), n->origin));
  softmax->decisions = n->decisions;
  softmax->decisions.push_back({"lowering", "batched GEMM + softmax", reason});
  ASSIGN_OR_RETURN(Value * o, Op(rw, n, "MatMul", "/pv", {softmax->output(0), v}));
  if (split) {
    ASSIGN_OR_RETURN(o, Permute(rw, n, "/o_bshd", o, {0, 2, 1, 3}));
    ASSIGN_OR_RETURN(o, Reshape(rw, n, "/o_merge", o, {0, 0, -1}));
  }
  rw.ReplaceAllUses(n->output(0), o);
  return rw.EraseWithDeadInputs(n);
}

}  // namespace

absl::StatusOr<bool> LowerAttention(Graph& g, const PassContext& ctx) {
  ASSIGN_OR_RETURN(const TargetDescription* target, FindTarget(ctx.options().target));
  Rewriter rw(g);
  bool changed = false;
  const std::string where = absl::StrCat(target->name, " (", target->source, ")");
  for (Node* n : g.nodes()) {
    if (n->op != "Attention" || HasLowering(n)) continue;
    if (!target->fused_attention.empty()) {
      n->decisions.push_back({"lowering", "fused attention", absl::StrCat(where, ": ", target->fused_attention)});
      changed = true;
      continue;
    }
    const std::string reason = absl::StrCat(where, " has no fused attention kernel");
    std::string why = Unsupported(n);
    if (!target->rewrite || !why.empty()) {
      if (!why.empty()) ctx.Explain("LowerAttention", *n, absl::StrCat("kept as one node: ", why));
      n->decisions.push_back({"lowering", "batched GEMM + softmax",
                              absl::StrCat(reason, why.empty() ? "" : absl::StrCat("; kept as one node: ", why))});
      changed = true;
      continue;
    }
    RETURN_IF_ERROR(Decompose(rw, n, reason));
    changed = true;
  }
  if (changed) RETURN_IF_ERROR(rw.Finish());
  return changed;
}

}  // namespace gcomp::passes
