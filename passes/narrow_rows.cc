// narrow-rows: where every reader of a row-wise op's output takes a few rows of it (a Gather of
// constant indices along an axis other than the last), the op computes only those rows.
//
//   %y = LayerNorm(%x, ...)        (or FusedGemm(%a, %w, %b, %z), rows = the leading axes of Y)
//   %t = Gather(%y, 0) {axis=1}
// ->
//   %x' = Gather(%x, [0]) {axis=1}
//   %y' = LayerNorm(%x', ...)
//   %t  = Gather(%y', 0) {axis=1}
//
// and again from %x' upwards, as long as the producer is row-wise along that axis and all of its
// output's readers are such Gathers. A ViT's classifier reads the class token only, so its last
// encoder layer's out-projection, MLP and LayerNorms run on 1 row per image instead of 197 (the
// attention itself still reads every token: it stops the walk).
//
// Row-wise along axis a (never the last):
// - LayerNorm over the last axis: scale and bias are per-column constants;
// - FusedGemm: Y[..., n] = epilogue(A[..., :] B + bias + Z[..., n]); A's and Z's axis a are Y's
//   (Z of Y's dims; a broadcast residual stops the walk). B, the bias and fp8 scales are read as
//   they are.
// - Attention in gcomp's strided form (qkv_layout, after O3's fold-attention-layout), along its
//   sequence axis: output row s is query s against every key, so only Q is narrowed; K and V are
//   read whole.
// Values with readers of other kinds, and graph outputs, keep every row.
//
// Where that Attention reads Q, K and V as column blocks of one FusedGemm output (a packed QKV
// projection) that nothing else reads, the Q columns are first split into a FusedGemm of their
// own and K and V into another, so that the walk goes on into the Q projection: a ViT's last
// layer then projects and attends with the class token's query only (its K and V projections
// still take every token).
#include <algorithm>
#include <cstring>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/status_macros.h"
#include "passes/passes.h"
#include "passes/rewriter.h"

namespace gcomp::passes {
namespace {

constexpr char kRule[] = "NarrowRows";

// The row indices a Gather node takes along its axis, normalized to [0, rows), when they are a
// constant scalar or 1-D integer tensor within range; nullopt otherwise.
std::optional<std::vector<int64_t>> GatherRows(const Node& n, int64_t axis, int64_t rows) {
  const Value* idx = n.input(1);
  if (!idx || !idx->is_constant() || idx->constant->dims().size() > 1 || !IsInteger(idx->dtype)) return std::nullopt;
  std::vector<int64_t> v = idx->constant->ToI64();
  if (v.empty()) return std::nullopt;
  for (int64_t& i : v) {
    if (i < 0) i += rows;
    if (i < 0 || i >= rows) return std::nullopt;
  }
  return v;
}

// The axis of a Gather node, normalized against its data's rank; nullopt when out of range.
std::optional<int64_t> GatherAxis(const Node& n) {
  const int64_t rank = static_cast<int64_t>(n.input(0)->shape.size());
  int64_t axis = n.attrs.GetInt("axis", 0);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return std::nullopt;
  return axis;
}

// The inputs of `p` that are row-wise along `axis` of its output (the others are read whole), or
// nullopt with the reason when `p` is not row-wise along it.
std::optional<std::vector<size_t>> RowInputs(const Node& p, int64_t axis, std::string* why) {
  const Value* y = p.output(0);
  const int64_t rank = static_cast<int64_t>(y->shape.size());
  if (axis >= rank - 1) {
    *why = "the rows are along the last axis";
    return std::nullopt;
  }
  for (size_t i = 1; i < p.outputs.size(); ++i) {
    if (p.outputs[i]) {
      *why = absl::StrCat(p.Describe(), " has more than one output");
      return std::nullopt;
    }
  }
  if (p.op == "LayerNorm") {
    int64_t ln_axis = p.attrs.GetInt("axis", -1);
    if (ln_axis < 0) ln_axis += rank;
    if (ln_axis != rank - 1) {
      *why = absl::StrCat(p.Describe(), " normalizes over more than the last axis");
      return std::nullopt;
    }
    for (size_t i = 1; i < p.inputs.size(); ++i) {
      const Value* c = p.inputs[i];
      if (!c) continue;
      // Per column: one value per element of the last axis (a [rows, C] scale would not
      // broadcast over the kept rows).
      const std::optional<int64_t> cols = y->shape.back().ConstValue();
      if (!c->is_constant() || !cols || c->constant->numel() != *cols) {
        *why = absl::StrCat(p.Describe(), " has a scale or bias that is not a per-column constant");
        return std::nullopt;
      }
    }
    return std::vector<size_t>{0};
  }
  if (p.op == "FusedGemm") {
    const Value* a = p.input(0);
    if (!a || a->shape.size() != y->shape.size()) {
      *why = absl::StrCat(p.Describe(), ": A's rank differs from Y's");
      return std::nullopt;
    }
    std::vector<size_t> rows = {0};
    if (const Value* z = p.input(3)) {
      if (z->shape != y->shape) {
        *why = absl::StrCat(p.Describe(), ": the residual is broadcast");
        return std::nullopt;
      }
      rows.push_back(3);
    }
    for (size_t i = 1; i < p.inputs.size(); ++i) {
      if (i != 3 && p.inputs[i] && !p.inputs[i]->is_constant()) {
        *why = absl::StrCat(p.Describe(), ": B, the bias or a scale is not a constant");
        return std::nullopt;
      }
    }
    return rows;
  }
  if (p.op == "Attention") {
    const std::string layout = p.attrs.GetString("qkv_layout", "");
    if (layout != "BSW" && layout != "SBW") {
      *why = absl::StrCat(p.Describe(), " is not in the strided form (its Q rows are not rows of Y)");
      return std::nullopt;
    }
    if (axis != (layout == "SBW" ? 0 : 1)) {
      *why = absl::StrCat(p.Describe(), ": the rows are not along its sequence axis");
      return std::nullopt;
    }
    if (p.attrs.GetInt("is_causal", 0) != 0) {
      *why = absl::StrCat(p.Describe(), " is causal: which keys a query sees depends on its position");
      return std::nullopt;
    }
    return std::vector<size_t>{0};  // Q; K and V are read whole
  }
  *why = absl::StrCat(p.Describe(), " is not row-wise");
  return std::nullopt;
}

// Columns [c0, c1) of a constant 2-D GEMM operand B ([K, N], or [N, K] with `trans_b`), or of a
// bias ([N]; a bias of one element is returned as it is).
Tensor TakeColumns(const Tensor& t, int64_t c0, int64_t c1, bool trans_b) {
  const size_t es = DTypeSize(t.dtype());
  if (t.rank() == 1) {
    if (t.numel() == 1) return t;
    Tensor out = *Tensor::Zeros(t.dtype(), {c1 - c0});
    std::memcpy(out.mutable_data(), t.data() + c0 * es, (c1 - c0) * es);
    return out;
  }
  const int64_t r = t.dims()[0], n = t.dims()[1];
  if (trans_b) {  // rows [c0, c1) of [N, K]
    Tensor out = *Tensor::Zeros(t.dtype(), {c1 - c0, n});
    std::memcpy(out.mutable_data(), t.data() + c0 * n * es, (c1 - c0) * n * es);
    return out;
  }
  Tensor out = *Tensor::Zeros(t.dtype(), {r, c1 - c0});
  for (int64_t i = 0; i < r; ++i) {
    std::memcpy(out.mutable_data() + i * (c1 - c0) * es, t.data() + (i * n + c0) * es, (c1 - c0) * es);
  }
  return out;
}

// The strided Attention `att` reading Q, K and V as column blocks of one FusedGemm output that
// only it reads: that projection becomes two, Q's columns and K's and V's (one contiguous block
// apart from Q's), and `att` reads them at the shifted offsets. Returns the Attention to narrow:
// the new one, or `att` when the projection is not split (explained at `at`).
absl::StatusOr<Node*> SplitQueryProjection(Rewriter& rw, const PassContext& ctx, Node* att, const Node& at) {
  Value* qkv = att->input(0);
  if (!qkv || att->input(1) != qkv || att->input(2) != qkv || !qkv->producer || qkv->producer->op != "FusedGemm") {
    return att;  // separate projections: the walk reaches Q's own
  }
  Node* p = qkv->producer;
  auto keep = [&](const std::string& why) -> Node* {
    ctx.Explain(kRule, at, absl::StrCat("the Q projection '", p->name, "' is not split from K and V: ", why));
    return att;
  };
  if (rw.graph().IsGraphOutput(qkv)) return keep("its output is a graph output");
  for (const Node* u : qkv->users) {
    if (u != att) return keep(absl::StrCat("its output is also read by ", u->Describe()));
  }
  const Value* b = p->input(1);
  const Value* bias = p->input(2);
  if (p->input(3) || p->input(4) || !b || !b->is_constant() || b->constant->rank() != 2 ||
      (bias && (!bias->is_constant() || bias->constant->rank() != 1))) {
    return keep("B and the bias are not plain constants, or it adds a residual");
  }
  const bool trans_b = p->attrs.GetInt("transB", 0) != 0;
  const int64_t n = b->constant->dims()[trans_b ? 0 : 1];
  const int64_t qh = att->attrs.GetInt("q_num_heads", 0), kvh = att->attrs.GetInt("kv_num_heads", 0);
  const int64_t hs = att->attrs.GetInt("head_size", 0), vhs = att->attrs.GetInt("v_head_size", 0);
  const int64_t qo = att->attrs.GetInt("q_offset", 0), ko = att->attrs.GetInt("k_offset", 0),
                vo = att->attrs.GetInt("v_offset", 0);
  const int64_t q1 = qo + qh * hs, c0 = std::min(ko, vo), c1 = std::max(ko + kvh * hs, vo + kvh * vhs);
  const bool bias_ok = !bias || bias->constant->numel() == n || bias->constant->numel() == 1;
  if (c1 - c0 != kvh * (hs + vhs) || (q1 > c0 && qo < c1) || q1 > n || c1 > n || !bias_ok) {
    return keep("Q's columns are not one block apart from K's and V's");
  }
  Graph& g = rw.graph();
  auto part = [&](const std::string& suffix, int64_t from, int64_t to) -> absl::StatusOr<Value*> {
    std::vector<Value*> in = {p->input(0)};
    ASSIGN_OR_RETURN(Value * pb, rw.Constant(absl::StrCat(b->name, "/", suffix),
                                             TakeColumns(*b->constant, from, to, trans_b)));
    in.push_back(pb);
    if (bias) {
      ASSIGN_OR_RETURN(Value * pc, rw.Constant(absl::StrCat(bias->name, "/", suffix),
                                               TakeColumns(*bias->constant, from, to, false)));
      in.push_back(pc);
    }
    ASSIGN_OR_RETURN(Node * np, rw.Create("FusedGemm", absl::StrCat(p->name, "/", suffix), in, p->attrs, p->origin));
    np->decisions = p->decisions;
    np->decisions.push_back(
        {"split", absl::StrCat("columns ", from, "..", to - 1, " of ", n),
         absl::StrCat("'", att->name, "' reads ", suffix == "q" ? "Q" : "K and V",
                      " here: Q's projection is split from K's and V's so that it can take fewer rows")});
    np->precision = p->precision;
    return np->output(0);
  };
  ASSIGN_OR_RETURN(Value * q, part("q", qo, q1));
  ASSIGN_OR_RETURN(Value * kv, part("kv", c0, c1));
  att->attrs.Set("q_offset", int64_t{0});
  att->attrs.Set("k_offset", ko - c0);
  att->attrs.Set("v_offset", vo - c0);
  std::vector<Value*> inputs = att->inputs;
  inputs[0] = q;
  inputs[1] = inputs[2] = kv;
  ASSIGN_OR_RETURN(Node * split, rw.RecreateWithInputs(att, inputs));
  split->decisions.push_back(
      {"split", absl::StrCat("Q from '", p->name, "/q', K and V from '", p->name, "/kv'"),
       absl::StrCat("the packed projection's Q columns ", qo, "..", q1 - 1, " and K/V columns ", c0, "..", c1 - 1,
                    " became two FusedGemms: Q read at column 0, K at ", ko - c0, ", V at ", vo - c0)});
  RETURN_IF_ERROR(g.EraseNode(p));
  return split;
}

// Narrows the producer of `y`, read only by Gathers along one axis, to the rows they take.
// Returns whether it did; explains at `at` when it did not.
absl::StatusOr<bool> Narrow(Rewriter& rw, const PassContext& ctx, Value* y, const Node& at) {
  Graph& g = rw.graph();
  Node* p = y->producer;
  if (!p || (p->op != "LayerNorm" && p->op != "FusedGemm" && (p->op != "Attention" || !p->attrs.Has("qkv_layout")))) {
    return false;  // not a candidate (an Attention before O3's strided form included): no explanation
  }
  if (g.IsGraphOutput(y)) {
    ctx.Explain(kRule, at, absl::StrCat("'", y->name, "' is a graph output"));
    return false;
  }
  // Every reader a Gather of constant rows along one axis.
  std::optional<int64_t> axis;
  std::set<int64_t> wanted;
  for (const Node* u : y->users) {
    std::optional<int64_t> ua = u->op == "Gather" && u->input(0) == y ? GatherAxis(*u) : std::nullopt;
    if (!ua || (axis && *ua != *axis)) {
      ctx.Explain(
          kRule, at,
          absl::StrCat("'", y->name, "' has a reader other than a Gather along one axis (", u->Describe(), ")"));
      return false;
    }
    axis = ua;
    const std::optional<int64_t> rows = y->shape[*axis].ConstValue();
    std::optional<std::vector<int64_t>> idx = rows ? GatherRows(*u, *axis, *rows) : std::nullopt;
    if (!idx) {
      ctx.Explain(kRule, at, absl::StrCat(u->Describe(), " does not take constant rows of a static axis"));
      return false;
    }
    wanted.insert(idx->begin(), idx->end());
  }
  if (!axis) return false;
  const int64_t rows = *y->shape[*axis].ConstValue();
  if (static_cast<int64_t>(wanted.size()) == rows) return false;  // every row is read
  std::string why;
  std::optional<std::vector<size_t>> row_inputs = RowInputs(*p, *axis, &why);
  if (!row_inputs) {
    ctx.Explain(kRule, at, absl::StrCat("'", y->name, "' keeps its rows: ", why));
    return false;
  }
  if (p->op == "Attention") {
    ASSIGN_OR_RETURN(p, SplitQueryProjection(rw, ctx, p, at));
    y = p->output(0);  // the readers moved to the new node's output
  }
  const bool attention = p->op == "Attention";
  const std::vector<int64_t> keep(wanted.begin(), wanted.end());
  const std::string kept = absl::StrCat("rows ", absl::StrJoin(keep, ","), " of ", rows, " along axis ", *axis);
  ASSIGN_OR_RETURN(Value * keep_idx, rw.Constant(absl::StrCat(p->name, "/rows"),
                                                 Tensor::FromI64({static_cast<int64_t>(keep.size())}, keep)));
  Attributes gather_attrs;
  gather_attrs.Set("axis", *axis);
  std::vector<Value*> inputs = p->inputs;
  for (size_t i : *row_inputs) {
    // One Gather per value and rows: a residual is often also the normalized input.
    Value* taken = nullptr;
    for (const Node* u : inputs[i]->users) {
      if (u->op == "Gather" && u->input(0) == inputs[i] && GatherAxis(*u) == *axis && u->input(1) &&
          u->input(1)->is_constant() && u->input(1)->constant->dims().size() == 1 &&
          GatherRows(*u, *axis, rows) == keep) {
        taken = u->output(0);
        break;
      }
    }
    if (!taken) {
      ASSIGN_OR_RETURN(Node * sel, rw.Create("Gather", absl::StrCat(p->name, "/rows_in", i), {inputs[i], keep_idx},
                                             gather_attrs, p->origin));
      taken = sel->output(0);
    }
    inputs[i] = taken;
  }
  const std::vector<Node*> readers = y->users;
  ASSIGN_OR_RETURN(Node * narrowed, rw.RecreateWithInputs(p, inputs));
  narrowed->decisions.push_back(
      {"rows", kept,
       absl::StrCat("its readers take only these rows (", readers.size(), " Gather", readers.size() > 1 ? "s" : "",
                    "): the other rows are not computed",
                    attention ? " (only these queries; K and V keep every row)" : "")});
  // Each reader now takes its rows by their positions among the kept ones.
  Value* out = narrowed->output(0);
  for (Node* u : readers) {
    std::vector<int64_t> idx = *GatherRows(*u, *axis, rows);
    for (int64_t& i : idx) i = std::lower_bound(keep.begin(), keep.end(), i) - keep.begin();
    const bool scalar = u->input(1)->constant->dims().empty();
    if (!scalar && idx.size() == keep.size() && std::is_sorted(idx.begin(), idx.end()) &&
        std::adjacent_find(idx.begin(), idx.end()) == idx.end()) {
      rw.ReplaceAllUses(u->output(0), out);  // takes every kept row, in order
      RETURN_IF_ERROR(rw.Erase(u));
      continue;
    }
    ASSIGN_OR_RETURN(Value * pos, rw.Constant(absl::StrCat(u->name, "/positions"),
                                              scalar ? Tensor::FromI64({}, idx)
                                                     : Tensor::FromI64({static_cast<int64_t>(idx.size())}, idx)));
    g.SetInput(u, 1, pos);
  }
  return true;
}

}  // namespace

absl::StatusOr<bool> NarrowRows(Graph& g, const PassContext& ctx) {
  Rewriter rw(g);
  bool changed = false;
  // Each narrowing creates Gathers further up; walk until none applies. Every step removes rows
  // from one node's output, so the walk ends.
  for (bool again = true; again;) {
    again = false;
    std::set<const Value*> tried;
    for (Node* n : g.nodes()) {
      if (n->op != "Gather" || !n->input(0) || tried.count(n->input(0))) continue;
      tried.insert(n->input(0));
      ASSIGN_OR_RETURN(bool narrowed, Narrow(rw, ctx, n->input(0), *n));
      if (narrowed) {
        again = changed = true;
        break;  // the node list changed
      }
    }
  }
  if (changed) RETURN_IF_ERROR(rw.Finish());
  return changed;
}

}  // namespace gcomp::passes
