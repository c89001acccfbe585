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
// Values with readers of other kinds, and graph outputs, keep every row.
#include <algorithm>
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
  *why = absl::StrCat(p.Describe(), " is not row-wise");
  return std::nullopt;
}

// Narrows the producer of `y`, read only by Gathers along one axis, to the rows they take.
// Returns whether it did; explains at `at` when it did not.
absl::StatusOr<bool> Narrow(Rewriter& rw, const PassContext& ctx, Value* y, const Node& at) {
  Graph& g = rw.graph();
  Node* p = y->producer;
  if (!p || (p->op != "LayerNorm" && p->op != "FusedGemm")) return false;  // not a candidate: no explanation
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
  narrowed->decisions.push_back({"rows", kept,
                                 absl::StrCat("its readers take only these rows (", readers.size(), " Gather",
                                              readers.size() > 1 ? "s" : "", "): the other rows are not computed")});
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
