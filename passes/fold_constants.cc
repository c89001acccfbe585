// fold-constants: evaluates what is known before run time, and turns the shape arithmetic of
// dynamic-batch exports into batch-polymorphic forms. Three rules, in this order:
//
// FoldKnownValues — a node whose outputs are all known becomes constants:
//   %s = Shape(%x: f32[batch,197,768]);  %d = Gather(%s, 2)  ->  %d = const i64 {768}
//   %w2 = Transpose(%w: const)                                ->  %w2 = const (evaluated)
//   An output is known when shape inference holds all its element values as constants
//   (Value::sym_values), or when every input is a constant; then the op's reference kernel (the
//   one the interpreter runs) computes it. Float outputs over 16 M elements stay unfolded, and so
//   do nodes whose output is a graph output (it keeps its producer and name).
//
// PolymorphicShapeTarget — a Reshape or Expand whose target holds symbolic values gets a
// constant target that means the same at every batch size:
//   %t = Concat(Unsqueeze(Gather(Shape(%x), 0)), [197,12,64])   {batch,197,12,64}
//   %y = Reshape(%x: f32[batch,197,768], %t)    ->  %y = Reshape(%x, const [0,197,12,64])
//   %y = Reshape(%x: f32[batch,12,197,64], {batch*12,197,64})  ->  Reshape(%x, const [-1,197,64])
//   Reshape (allowzero=0): an entry equal to the input dim at the same position becomes 0 (copy);
//   one remaining symbolic entry becomes -1 (when the target has no -1 yet). Expand: an entry
//   equal to the (right-aligned) input dim becomes 1. The new output shape must equal the old one.
//
// RebuildShapeVector — any other symbolic shape vector that leaves shape arithmetic (Expand,
// ConstantOfShape, Range, Slice, a Reshape the rule above could not encode) is rebuilt with the
// fewest nodes:
//   {batch,1,1} from Where(Equal(...), ConstantOfShape(...), Reshape(Concat(Unsqueeze(Gather(Shape)))))
//     ->  Concat(Shape(%input){start=0,end=1}, const [1,1])
//   {batch*12}  ->  Mul(Shape(%input){start=0,end=1}, const [12])
//   Each symbolic entry must be a positive constant multiple of a dim of a graph input (or of a
//   value the old chain read the shape of); the rebuilt vector's element values must equal the
//   old ones, and the old chain must have more nodes than the new one (so the rule is idempotent).
// Nodes left unused by these rules are erased.
#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/op_def.h"
#include "core/status_macros.h"
#include "passes/passes.h"
#include "passes/rewriter.h"

namespace gcomp::passes {
namespace {

constexpr int64_t kMaxFoldedFloatElements = int64_t{16} << 20;
// Integer results are shape arithmetic or indices; anything larger is not worth a constant.
constexpr int64_t kMaxFoldedIntElements = int64_t{16} << 20;

std::string DimsString(const std::vector<Dim>& dims) {
  return absl::StrCat("{", absl::StrJoin(dims, ",", [](std::string* o, const Dim& d) { o->append(d.ToString()); }),
                      "}");
}

bool AllConst(const std::vector<Dim>& dims) {
  return std::all_of(dims.begin(), dims.end(), [](const Dim& d) { return d.IsConst(); });
}

bool HasSymbolic(const Value* v) { return v && v->sym_values && !AllConst(*v->sym_values); }

bool IsUsed(const Graph& g, const Value* v) { return v && (!v->users.empty() || g.IsGraphOutput(v)); }

// ---- FoldKnownValues ----------------------------------------------------------------------

// The constant tensor that shape inference's element values describe, if they are all known.
std::optional<Tensor> TensorFromSymValues(const Value& v) {
  if (!v.sym_values || IsFloat(v.dtype) || !AllConst(*v.sym_values)) return std::nullopt;
  auto dims = ConcreteDims(v.shape);
  if (!dims) return std::nullopt;
  auto t = Tensor::Zeros(v.dtype, *dims);
  if (!t.ok() || t->numel() != static_cast<int64_t>(v.sym_values->size())) return std::nullopt;
  for (size_t i = 0; i < v.sym_values->size(); ++i) t->SetI64(static_cast<int64_t>(i), (*v.sym_values)[i].value());
  return std::move(*t);
}

// Runs the node's reference kernel on its constant inputs, with output shapes from the op's shape
// function as the interpreter does. Error text is an explanation.
absl::StatusOr<std::vector<Tensor>> Evaluate(const Node& n) {
  if (!n.def || !n.def->kernel) return absl::UnimplementedError("the op has no reference kernel");
  std::vector<ValueInfo> infos(n.inputs.size());
  std::vector<const ValueInfo*> info_ptrs(n.inputs.size(), nullptr);
  std::vector<const Tensor*> inputs(n.inputs.size(), nullptr);
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    const Value* v = n.inputs[i];
    if (!v) continue;
    inputs[i] = v->constant.get();
    infos[i] = ValueInfo{v->name, v->dtype, v->shape, inputs[i], nullptr};
    info_ptrs[i] = &infos[i];
  }
  InferContext ictx(n, info_ptrs);
  ASSIGN_OR_RETURN(std::vector<OutputInfo> outs, n.def->shape(ictx));
  std::vector<Tensor> outputs;
  for (size_t k = 0; k < n.outputs.size() && k < outs.size(); ++k) {
    auto dims = ConcreteDims(outs[k].shape);
    if (!dims)
      return absl::FailedPreconditionError(absl::StrCat("output shape ", ShapeToString(outs[k].shape), " is symbolic"));
    ASSIGN_OR_RETURN(int64_t numel, CheckedNumElements(*dims));
    const int64_t cap = IsFloat(outs[k].dtype) ? kMaxFoldedFloatElements : kMaxFoldedIntElements;
    if (numel > cap) {
      return absl::ResourceExhaustedError(
          absl::StrCat("output ", k, " has ", numel, " elements, more than the folding limit of ", cap));
    }
    ASSIGN_OR_RETURN(Tensor t, Tensor::Zeros(outs[k].dtype, *dims));
    outputs.push_back(std::move(t));
  }
  if (outputs.size() != n.outputs.size()) return absl::InternalError("the shape function returned too few outputs");
  KernelContext kc{n, inputs, outputs};
  RETURN_IF_ERROR(n.def->kernel(kc));
  return outputs;
}

absl::StatusOr<bool> FoldKnownValues(Graph& g, Rewriter& rw, const PassContext& ctx) {
  bool changed = false;
  for (Node* n : g.nodes()) {
    bool used = false, all_known = true, to_graph_output = false;
    for (const Value* o : n->outputs) {
      if (!IsUsed(g, o)) continue;
      used = true;
      to_graph_output |= g.IsGraphOutput(o);
      all_known &= TensorFromSymValues(*o).has_value();
    }
    if (!used) continue;  // dead code is dce's
    bool inputs_constant = true;
    for (const Value* in : n->inputs) inputs_constant &= !in || in->is_constant();
    if (!all_known && !inputs_constant) continue;
    if (to_graph_output) {
      ctx.Explain("FoldKnownValues", *n, "its output is a graph output");
      continue;
    }
    std::vector<std::optional<Tensor>> values(n->outputs.size());
    if (all_known) {
      for (size_t k = 0; k < n->outputs.size(); ++k) {
        if (IsUsed(g, n->outputs[k])) values[k] = TensorFromSymValues(*n->outputs[k]);
      }
    } else {
      absl::StatusOr<std::vector<Tensor>> evaluated = Evaluate(*n);
      if (!evaluated.ok()) {
        ctx.Explain("FoldKnownValues", *n, absl::StrCat("inputs are constant but ", evaluated.status().message()));
        continue;
      }
      for (size_t k = 0; k < n->outputs.size(); ++k) values[k] = std::move((*evaluated)[k]);
    }
    for (size_t k = 0; k < n->outputs.size(); ++k) {
      Value* o = n->outputs[k];
      if (!IsUsed(g, o)) continue;
      ASSIGN_OR_RETURN(Value * c, rw.Constant(o->name + "_folded", std::move(*values[k])));
      rw.ReplaceAllUses(o, c);
    }
    RETURN_IF_ERROR(rw.Erase(n));
    changed = true;
  }
  return changed;
}

// ---- PolymorphicShapeTarget -----------------------------------------------------------------

// A constant Reshape target equivalent to `spec` on input shape `in`, given the inferred output
// `out`; nullopt with `why` set when there is none.
std::optional<std::vector<int64_t>> ReshapeTarget(const Shape& in, const std::vector<Dim>& spec, bool allowzero,
                                                  const Shape& out, std::string* why) {
  std::vector<int64_t> target(spec.size(), 0);
  std::vector<size_t> pending;
  bool has_infer = false, has_zero = false;
  for (size_t i = 0; i < spec.size(); ++i) {
    if (spec[i].IsConst()) {
      target[i] = spec[i].value();
      has_infer |= target[i] == -1;
      has_zero |= target[i] == 0;
    } else if (!allowzero && i < in.size() && in[i] == spec[i]) {
      target[i] = 0;
    } else {
      pending.push_back(i);
    }
  }
  if (pending.size() > 1 || (pending.size() == 1 && (has_infer || (allowzero && has_zero)))) {
    std::vector<std::string> left;
    for (size_t i : pending) left.push_back(absl::StrCat(i, " (", spec[i].ToString(), ")"));
    *why = absl::StrCat("target ", DimsString(spec), " on input ", ShapeToString(in), ": entries ",
                        absl::StrJoin(left, ", "),
                        " are not the input dim at the same position and cannot all be one inferred -1");
    return std::nullopt;
  }
  if (out.size() != spec.size()) {
    *why = "the inferred output rank differs from the target length";
    return std::nullopt;
  }
  if (!pending.empty()) target[pending[0]] = -1;
  // The shape the constant target gives must be the inferred one.
  Shape predicted(spec.size());
  std::optional<size_t> infer_at;
  Dim known(1);
  for (size_t i = 0; i < spec.size(); ++i) {
    if (target[i] == -1) {
      infer_at = i;
      continue;
    }
    if (target[i] == 0 && !allowzero) {
      if (i >= in.size()) {  // an invalid copy; the graph fails at run time anyway
        *why = absl::StrCat("entry ", i, " copies (0) a dim the rank-", in.size(), " input does not have");
        return std::nullopt;
      }
      predicted[i] = in[i];
    } else {
      predicted[i] = Dim(target[i]);
    }
    auto m = Dim::Mul(known, predicted[i]);
    if (!m.ok()) return std::nullopt;
    known = *m;
  }
  if (infer_at) {
    auto total = NumElements(in);
    std::optional<Dim> q = total.ok() && known != Dim(0) ? Dim::DivExact(*total, known) : std::nullopt;
    if (!q) {
      *why = absl::StrCat("-1 at entry ", *infer_at, " would not be inferred exactly");
      return std::nullopt;
    }
    predicted[*infer_at] = *q;
  }
  for (size_t i = 0; i < spec.size(); ++i) {
    if (predicted[i] != out[i]) {
      *why = absl::StrCat("the constant target would give dim ", i, " = ", predicted[i].ToString(), ", expected ",
                          out[i].ToString());
      return std::nullopt;
    }
  }
  return target;
}

// A constant Expand target: symbolic entries equal to the right-aligned input dim become 1.
std::optional<std::vector<int64_t>> ExpandTarget(const Shape& in, const std::vector<Dim>& spec, std::string* why) {
  std::vector<int64_t> target(spec.size());
  const int64_t offset = static_cast<int64_t>(spec.size()) - static_cast<int64_t>(in.size());
  for (size_t i = 0; i < spec.size(); ++i) {
    if (spec[i].IsConst()) {
      target[i] = spec[i].value();
      continue;
    }
    const int64_t j = static_cast<int64_t>(i) - offset;
    if (j < 0 || in[j] != spec[i]) {
      *why = absl::StrCat("target entry ", i, " (", spec[i].ToString(),
                          ") is not the input dim it broadcasts against (RebuildShapeVector handles it)");
      return std::nullopt;
    }
    target[i] = 1;
  }
  return target;
}

absl::StatusOr<bool> EncodeShapeTargets(Graph& g, Rewriter& rw, const PassContext& ctx) {
  bool changed = false;
  for (Node* n : g.nodes()) {
    if (n->op != "Reshape" && n->op != "Expand") continue;
    Value* data = n->input(0);
    Value* spec = n->input(1);
    if (!data || !spec || spec->is_constant() || !spec->sym_values || !n->output(0)) continue;
    std::string why;
    std::optional<std::vector<int64_t>> target;
    if (n->op == "Reshape") {
      target = ReshapeTarget(data->shape, *spec->sym_values, n->attrs.GetInt("allowzero", 0) != 0, n->output(0)->shape,
                             &why);
    } else {
      target = ExpandTarget(data->shape, *spec->sym_values, &why);
    }
    if (!target) {
      ctx.Explain("PolymorphicShapeTarget", *n, why);
      continue;
    }
    ASSIGN_OR_RETURN(Value * c, rw.Constant(absl::StrCat(n->name, "_shape"),
                                            Tensor::FromI64({static_cast<int64_t>(target->size())}, *target)));
    Decision d{"fold", absl::StrCat("shape [", absl::StrJoin(*target, ","), "]"),
               absl::StrCat("batch-polymorphic constant for target ", DimsString(*spec->sym_values), " on input ",
                            ShapeToString(data->shape))};
    if (SingleUser(g, spec) == n && n->input(0) != spec) {
      rw.ReplaceAllUses(spec, c);
      n->decisions.push_back(std::move(d));
    } else {
      ASSIGN_OR_RETURN(Node * nn, rw.RecreateWithInputs(n, {data, c}));
      nn->decisions.push_back(std::move(d));
    }
    changed = true;
  }
  return changed;
}

// ---- RebuildShapeVector ---------------------------------------------------------------------

// Where one symbolic entry comes from: coefficient * (dim `axis` of `source`'s shape).
struct DimSource {
  Value* source = nullptr;
  int64_t axis = 0;
  int64_t coefficient = 1;
};

// Builds shape vectors from Shape/Gather/Mul/Concat nodes, sharing them within one pass run.
class ShapeVectorBuilder {
 public:
  explicit ShapeVectorBuilder(Rewriter& rw) : rw_(rw) {}

  // The number of nodes Build would use for `entries` (shared nodes counted).
  static int64_t Cost(const std::vector<Dim>& entries, const std::vector<std::optional<DimSource>>& src, bool scalar) {
    if (scalar) return 2 + (src[0]->coefficient != 1 ? 1 : 0);
    int64_t pieces = 0, nodes = 0;
    for (size_t i = 0; i < entries.size();) {
      if (!src[i]) {
        while (i < entries.size() && !src[i]) ++i;
        ++pieces;
        continue;
      }
      size_t j = RunEnd(src, i);
      ++pieces;
      nodes += 1 + (src[i]->coefficient != 1 ? 1 : 0);
      i = j;
    }
    return nodes + (pieces > 1 ? 1 : 0);
  }

  absl::StatusOr<Value*> Build(const std::vector<Dim>& entries, const std::vector<std::optional<DimSource>>& src,
                               bool scalar, const std::string& base, const std::vector<std::string>& origin) {
    base_ = base;
    origin_ = origin;
    if (scalar) {
      ASSIGN_OR_RETURN(Value * shape, ShapeOf(src[0]->source, 0, -1));
      auto key = std::make_pair(shape, src[0]->axis);
      Value*& picked = gathered_[key];
      if (!picked) {
        ASSIGN_OR_RETURN(Value * idx, rw_.Constant(base_ + "_index", Tensor::FromI64({}, {src[0]->axis})));
        Attributes a;
        a.Set("axis", int64_t{0});
        ASSIGN_OR_RETURN(Node * gather, rw_.Create("Gather", base_ + "/dim", {shape, idx}, a, origin_));
        picked = gather->output(0);
      }
      return Scaled(picked, src[0]->coefficient, /*scalar=*/true);
    }
    std::vector<Value*> pieces;
    for (size_t i = 0; i < entries.size();) {
      if (!src[i]) {
        std::vector<int64_t> run;
        while (i < entries.size() && !src[i]) run.push_back(entries[i++].value());
        ASSIGN_OR_RETURN(Value * c,
                         rw_.Constant(base_ + "_entries", Tensor::FromI64({static_cast<int64_t>(run.size())}, run)));
        pieces.push_back(c);
        continue;
      }
      size_t j = RunEnd(src, i);
      ASSIGN_OR_RETURN(Value * dims, ShapeOf(src[i]->source, src[i]->axis, src[i]->axis + static_cast<int64_t>(j - i)));
      ASSIGN_OR_RETURN(Value * scaled, Scaled(dims, src[i]->coefficient, /*scalar=*/false));
      pieces.push_back(scaled);
      i = j;
    }
    if (pieces.size() == 1) return pieces[0];
    Attributes a;
    a.Set("axis", int64_t{0});
    ASSIGN_OR_RETURN(Node * concat, rw_.Create("Concat", base_ + "/rebuilt", pieces, a, origin_));
    return concat->output(0);
  }

 private:
  // Entries [i, end) read consecutive axes of one source with one coefficient (1 only: a scaled
  // entry gets its own Mul).
  static size_t RunEnd(const std::vector<std::optional<DimSource>>& src, size_t i) {
    size_t j = i + 1;
    if (src[i]->coefficient != 1) return j;
    while (j < src.size() && src[j] && src[j]->source == src[i]->source && src[j]->coefficient == 1 &&
           src[j]->axis == src[i]->axis + static_cast<int64_t>(j - i)) {
      ++j;
    }
    return j;
  }

  // Shape(source){start, end}; end = -1 means the whole shape.
  absl::StatusOr<Value*> ShapeOf(Value* source, int64_t start, int64_t end) {
    const int64_t rank = static_cast<int64_t>(source->shape.size());
    if (end == -1 || (start == 0 && end == rank)) start = 0, end = rank;
    Value*& v = shapes_[std::make_tuple(source, start, end)];
    if (!v) {
      Attributes a;
      if (start != 0) a.Set("start", start);
      if (end != rank) a.Set("end", end);
      ASSIGN_OR_RETURN(Node * shape, rw_.Create("Shape", base_ + "/shape", {source}, a, origin_));
      v = shape->output(0);
    }
    return v;
  }

  absl::StatusOr<Value*> Scaled(Value* v, int64_t coefficient, bool scalar) {
    if (coefficient == 1) return v;
    Value*& m = scaled_[std::make_pair(v, coefficient)];
    if (!m) {
      Tensor c = scalar ? Tensor::FromI64({}, {coefficient}) : Tensor::FromI64({1}, {coefficient});
      ASSIGN_OR_RETURN(Value * cv, rw_.Constant(base_ + "_coefficient", std::move(c)));
      ASSIGN_OR_RETURN(Node * mul, rw_.Create("Mul", base_ + "/scale", {v, cv}, {}, origin_));
      m = mul->output(0);
    }
    return m;
  }

  Rewriter& rw_;
  std::string base_;
  std::vector<std::string> origin_;
  std::map<std::tuple<Value*, int64_t, int64_t>, Value*> shapes_;
  std::map<std::pair<Value*, int64_t>, Value*> gathered_;
  std::map<std::pair<Value*, int64_t>, Value*> scaled_;
};

// Whether some user of `v` leaves shape arithmetic (has an output whose values are not tracked).
bool FeedsNonShapeArithmetic(const Value* v) {
  for (const Node* u : v->users) {
    for (const Value* o : u->outputs) {
      if (o && !o->sym_values) return true;
    }
  }
  return false;
}

// The integer nodes computing `v` (up to `limit` of them), and the values whose shapes they read.
std::set<const Node*> ShapeChain(const Value* v, int64_t limit, std::vector<Value*>* shape_sources) {
  std::set<const Node*> seen;
  std::vector<const Node*> stack;
  if (v->producer) stack.push_back(v->producer);
  while (!stack.empty() && static_cast<int64_t>(seen.size()) <= limit) {
    const Node* n = stack.back();
    stack.pop_back();
    if (!seen.insert(n).second) continue;
    if (n->op == "Shape" && n->input(0)) {
      shape_sources->push_back(n->input(0));
      continue;
    }
    for (const Value* in : n->inputs) {
      if (in && in->producer && !in->is_constant() && !IsFloat(in->dtype)) stack.push_back(in->producer);
    }
  }
  return seen;
}

std::optional<DimSource> FindDimSource(const Dim& entry, const std::vector<Value*>& sources) {
  std::optional<DimSource> best;
  for (Value* s : sources) {
    for (size_t k = 0; k < s->shape.size(); ++k) {
      const Dim& d = s->shape[k];
      if (d.IsConst()) continue;
      std::optional<Dim> q = Dim::DivExact(entry, d);
      if (!q || !q->IsConst() || q->value() <= 0) continue;
      if (q->value() == 1) return DimSource{s, static_cast<int64_t>(k), 1};
      if (!best) best = DimSource{s, static_cast<int64_t>(k), q->value()};
    }
  }
  return best;
}

absl::StatusOr<bool> RebuildShapeVectors(Graph& g, Rewriter& rw, const PassContext& ctx) {
  bool changed = false;
  ShapeVectorBuilder builder(rw);
  const std::vector<Node*> nodes = g.nodes();
  std::unordered_map<const Node*, size_t> position;
  for (size_t i = 0; i < nodes.size(); ++i) position[nodes[i]] = i;
  for (Node* n : nodes) {
    for (Value* v : n->outputs) {
      if (!v || v->is_constant() || !HasSymbolic(v) || v->users.empty() || !FeedsNonShapeArithmetic(v)) continue;
      if (g.IsGraphOutput(v)) {
        ctx.Explain("RebuildShapeVector", *n, "the shape vector is a graph output");
        continue;
      }
      if (v->dtype != DType::kI64 || v->shape.size() > 1) {
        ctx.Explain("RebuildShapeVector", *n,
                    absl::StrCat("the shape vector is ", DTypeName(v->dtype), ShapeToString(v->shape),
                                 ", expected i64 of rank 0 or 1"));
        continue;
      }
      const std::vector<Dim>& entries = *v->sym_values;
      const bool scalar = v->shape.empty();
      std::vector<Value*> sources = g.inputs();
      std::vector<Value*> chain_sources;
      const std::set<const Node*> chain = ShapeChain(v, 64, &chain_sources);
      const int64_t old_size = static_cast<int64_t>(chain.size());
      sources.insert(sources.end(), chain_sources.begin(), chain_sources.end());
      std::vector<std::optional<DimSource>> src(entries.size());
      std::string missing;
      for (size_t i = 0; i < entries.size(); ++i) {
        if (entries[i].IsConst()) continue;
        src[i] = FindDimSource(entries[i], sources);
        if (!src[i]) missing = entries[i].ToString();
      }
      if (!missing.empty()) {
        ctx.Explain("RebuildShapeVector", *n,
                    absl::StrCat("entry ", missing, " of ", DimsString(entries),
                                 " is not a constant multiple of a graph input dim or of a dim the chain reads"));
        continue;
      }
      if (const int64_t cost = ShapeVectorBuilder::Cost(entries, src, scalar); cost >= old_size) {
        ctx.Explain("RebuildShapeVector", *n,
                    absl::StrCat("the chain computing ", DimsString(entries), " has ", old_size,
                                 " nodes, no more than a rebuild (", cost, ")"));
        continue;
      }
      std::vector<const Node*> replaced(chain.begin(), chain.end());
      std::sort(replaced.begin(), replaced.end(),
                [&](const Node* a, const Node* b) { return position[a] < position[b]; });
      ASSIGN_OR_RETURN(Value * rebuilt, builder.Build(entries, src, scalar, n->name, MergeOrigins(replaced)));
      if (!rebuilt->sym_values || *rebuilt->sym_values != entries || rebuilt->shape != v->shape) {
        return absl::InternalError(absl::StrCat(g.source, ": ", n->Describe(), ": rebuilt shape vector ",
                                                rebuilt->sym_values ? DimsString(*rebuilt->sym_values) : "(unknown)",
                                                " differs from ", DimsString(entries)));
      }
      rw.ReplaceAllUses(v, rebuilt);
      changed = true;
    }
  }
  return changed;
}

// Erases nodes none of whose outputs is used any more, last first.
absl::Status EraseUnused(Graph& g, Rewriter& rw) {
  std::vector<Node*> nodes = g.nodes();
  for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
    bool used = false;
    for (const Value* o : (*it)->outputs) used |= IsUsed(g, o);
    if (!used) RETURN_IF_ERROR(rw.Erase(*it));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<bool> FoldConstants(Graph& g, const PassContext& ctx) {
  Rewriter rw(g);
  ASSIGN_OR_RETURN(bool folded, FoldKnownValues(g, rw, ctx));
  ASSIGN_OR_RETURN(bool encoded, EncodeShapeTargets(g, rw, ctx));
  ASSIGN_OR_RETURN(bool rebuilt, RebuildShapeVectors(g, rw, ctx));
  const bool changed = folded || encoded || rebuilt;
  if (changed) {
    RETURN_IF_ERROR(EraseUnused(g, rw));
    RETURN_IF_ERROR(rw.Finish());
  }
  return changed;
}

}  // namespace gcomp::passes
