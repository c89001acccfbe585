// fold-attention-layout (O3): an Attention whose Q, K and V are cut out of wider tensors by view
// chains (Slice, Reshape, Transpose, Squeeze, Unsqueeze, Identity, Gather at constant indices: the
// exporters' head split) and whose output goes through a view chain back to rows of tokens (or is
// such rows) reads and writes them in place, as Attention's strided form:
//
//   %qkv: [S, batch, 3E]  (torchvision: sequence first; HuggingFace: three [batch, S, E] projections)
//   %q = Transpose(Reshape(Slice(%qkv, 0..E), [S, batch*H, D]), [1,0,2])      likewise %k, %v
//   %o = Attention(%q, %k, %v)  [batch*H, S, D]
//   (the dynamo exporter: %q = Gather(Squeeze(Transpose(Unsqueeze(Reshape(%qkv, [S, batch, 3, E])))), 0))
//   %y = Reshape(Transpose(%o, [1,0,2]), [S, batch, E])
//     ->  %y = Attention(%qkv, %qkv, %qkv) {qkv_layout=SBW, q_num_heads=H, kv_num_heads=H,
//                                         head_size=D, v_head_size=D, q/k/v_offset=0/E/2E}
//
// Which chains qualify is decided by what they compute, not by their op sequence: for every
// candidate root (each value up the chain, farthest first) the chain is evaluated as a layout of
// the root (per dim, the root strides of its index's mixed-radix digits) at two bindings of the
// graph's symbols (each to a distinct prime, then to other ones; once for static shapes), and the
// fold fires only where every element of Q, K and V is the element of the root that the strided
// form addresses ([B, S, W] or [S, B, W] rows, heads side by side from one column), and every
// element of the output chain's end is the one the strided form writes: the canonical layouts
// (digits of size 1 dropped, evenly stepping digits merged) are equal exactly when the elements
// are.
// Q, K and V's layouts (batch or sequence first) and batch sizes must agree. Where sequence-first
// rows come from a row-wise QKV projection of Transpose([1,0,2]) tokens and the output goes back
// through Transpose [1,0,2] (torchvision), the projection reads the tokens as they are and the
// attention works batch first: those two Transposes go as well. Attention nodes with a
// mask, past K/V, causal flag, softcap or extra outputs, and those already strided, are left alone
// (with the reason in --explain); so are those that read and write rows already (nothing to fold,
// no line).
// The decision records the roots, the columns and the view steps folded.
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/slice.h"
#include "core/status_macros.h"
#include "passes/passes.h"
#include "passes/rewriter.h"
#include "passes/view_layout.h"

namespace gcomp::passes {
namespace {

constexpr const char* kRule = "FoldAttentionLayout";
using Bindings = std::map<std::string, int64_t>;

// The chains are checked symbolically: every value of a chain is a layout of the root's elements
// (per dim, the strides of its mixed-radix digits), pushed through each view node and compared
// with the layout the strided form addresses. The work is a few steps per dim and node, whatever
// the dims are. A view the layout algebra cannot express (a Reshape that splits a digit unevenly,
// a Gather at indices that are not a progression) declines the fold; nothing is left unchecked.
// Dims are bounded (2^48 elements per value) so that no stride or offset overflows.
constexpr int64_t kMaxElements = int64_t{1} << 48;

bool IsView(const Node* n) {
  return n && (n->op == "Transpose" || n->op == "Reshape" || n->op == "Slice" || n->op == "Identity" ||
               n->op == "Flatten" || n->op == "Squeeze" || n->op == "Unsqueeze" ||
               (n->op == "Gather" && n->input(1) && n->input(1)->is_constant()));
}

// The dims of `s` at bindings `b`; none where a dim does not evaluate or is 0 (no empty operand
// folds), or the value has more than kMaxElements elements (then `too_large` is set).
std::optional<std::vector<int64_t>> DimsAt(const Shape& s, const Bindings& b, bool& too_large) {
  std::vector<int64_t> d;
  int64_t n = 1;
  for (const Dim& x : s) {
    absl::StatusOr<int64_t> v = x.Evaluate(b);
    if (!v.ok() || *v <= 0) return std::nullopt;
    if (n > kMaxElements / *v) {
      too_large = true;
      return std::nullopt;
    }
    n *= *v;
    d.push_back(*v);
  }
  return d;
}

std::optional<std::vector<int64_t>> ConstInts(const Value* v) {
  if (!v || !v->is_constant() || v->constant->dtype() != DType::kI64) return std::nullopt;
  return v->constant->ToI64();
}

// `x` through view node `n` (its data input 0).
std::optional<Layout> Through(const Node* n, const Layout& x, const Bindings& b, bool& too_large) {
  const size_t r = x.dims.size();
  std::optional<std::vector<int64_t>> out_dims = DimsAt(n->output(0)->shape, b, too_large);
  if (!out_dims) return std::nullopt;
  if (n->op == "Transpose") {
    std::vector<int64_t> perm = n->attrs.GetInts("perm", {});
    if (perm.empty()) {
      for (size_t k = 0; k < r; ++k) perm.push_back(static_cast<int64_t>(r - 1 - k));
    }
    if (perm.size() != r) return std::nullopt;
    Layout y;
    y.offset = x.offset;
    for (int64_t p : perm) {
      if (p < 0 || p >= static_cast<int64_t>(r)) return std::nullopt;
      y.dims.push_back(x.dims[p]);
      y.modes.push_back(x.modes[p]);
    }
    if (y.dims != *out_dims) return std::nullopt;
    return y;
  }
  if (n->op == "Slice") {
    std::optional<std::vector<int64_t>> starts = ConstInts(n->input(1)), ends = ConstInts(n->input(2));
    if (!starts || !ends || starts->size() != ends->size()) return std::nullopt;
    std::vector<int64_t> axes, steps(starts->size(), 1);
    if (n->input(3)) {
      std::optional<std::vector<int64_t>> a = ConstInts(n->input(3));
      if (!a) return std::nullopt;
      axes = *a;
    } else {
      for (size_t k = 0; k < starts->size(); ++k) axes.push_back(static_cast<int64_t>(k));
    }
    if (n->input(4)) {
      std::optional<std::vector<int64_t>> s = ConstInts(n->input(4));
      if (!s) return std::nullopt;
      steps = *s;
    }
    if (axes.size() != starts->size() || steps.size() != starts->size()) return std::nullopt;
    std::vector<SliceAxis> per(r);
    for (size_t k = 0; k < r; ++k) per[k] = {0, 1, x.dims[k]};
    for (size_t j = 0; j < axes.size(); ++j) {
      int64_t a = axes[j] < 0 ? axes[j] + static_cast<int64_t>(r) : axes[j];
      if (a < 0 || a >= static_cast<int64_t>(r) || steps[j] == 0) return std::nullopt;
      per[a] = ResolveSlice((*starts)[j], (*ends)[j], steps[j], x.dims[a]);
    }
    Layout y = x;
    for (size_t k = 0; k < r; ++k) {
      if (per[k].count <= 0 || !Narrow(y, k, per[k].start, per[k].step, per[k].count)) return std::nullopt;
    }
    if (y.dims != *out_dims) return std::nullopt;
    return y;
  }
  if (n->op == "Gather") {  // constant indices (the dynamo exporter's q, k, v = qkv[0], qkv[1], qkv[2])
    std::optional<std::vector<int64_t>> index = ConstInts(n->input(1));
    if (!index || index->empty()) return std::nullopt;
    const std::vector<int64_t>& index_dims = n->input(1)->constant->dims();
    int64_t a = n->attrs.GetInt("axis", 0);
    if (a < 0) a += static_cast<int64_t>(r);
    if (index_dims.size() > 1 || a < 0 || a >= static_cast<int64_t>(r)) return std::nullopt;
    const int64_t extent = x.dims[a];
    for (int64_t& i : *index) {
      if (i < 0) i += extent;
      if (i < 0 || i >= extent) return std::nullopt;
    }
    // Indices in a progression are a Slice of the axis; a scalar index then drops it.
    const int64_t count = static_cast<int64_t>(index->size());
    const int64_t step = count > 1 ? (*index)[1] - (*index)[0] : 1;
    for (int64_t j = 1; j < count; ++j) {
      if ((*index)[j] - (*index)[j - 1] != step) return std::nullopt;
    }
    Layout y = x;
    if (step == 0 || !Narrow(y, static_cast<size_t>(a), (*index)[0], step, count)) return std::nullopt;
    if (index_dims.empty()) {
      y.dims.erase(y.dims.begin() + a);
      y.modes.erase(y.modes.begin() + a);
    }
    if (y.dims != *out_dims) return std::nullopt;
    return y;
  }
  // Reshape and the other views keep the elements in order.
  return Regroup(x, *out_dims);
}

// How Attention's operands are laid out: 4-D [B, H, S, D], ONNX's 3-D [B, S, H*D], or 3-D with
// the heads folded into the batch ([B*H, S, D], one "head" per attention batch).
enum class Form { kHeads, kPacked, kFolded };

// The strided form of one operand: rows of `width` at column `offset`.
struct Rows {
  Value* root = nullptr;
  bool seq_first = false;
  int64_t batch = 0, heads = 0, width = 0, offset = 0;
  int steps = 0;             // view nodes folded
  std::vector<Node*> nodes;  // those nodes, from the operand up
};

// The operand's view chain from `v` up: v, its view producer's input, ... (nearest first).
std::vector<Value*> ChainUp(Value* v) {
  std::vector<Value*> chain = {v};
  while (v->producer && IsView(v->producer) && v->producer->input(0) && !v->producer->input(0)->is_constant()) {
    v = v->producer->input(0);
    chain.push_back(v);
  }
  return chain;
}

// The layout of chain[0] as a view of chain[k] (its root), through the view nodes between.
std::optional<Layout> EvalDown(const std::vector<Value*>& chain, size_t k, const Bindings& b, bool& too_large) {
  std::optional<std::vector<int64_t>> root = DimsAt(chain[k]->shape, b, too_large);
  if (!root) return std::nullopt;
  std::optional<Layout> x = RowMajor(*root);
  for (size_t j = k; j-- > 0 && x;) x = Through(chain[j]->producer, *x, b, too_large);
  return x;
}

// The layout of the strided form's (b, h, s, d) element over an operand's dims `dims` in `form`:
// head h of token (b, s) at column offset + h * size + d of row (s, b) or (b, s) of `width`.
Layout StridedOperand(Form form, const std::vector<int64_t>& dims, int64_t batch, int64_t seq, int64_t heads,
                      int64_t size, int64_t width, int64_t offset, bool seq_first) {
  const Mode b{batch, seq_first ? width : seq * width}, h{heads, size}, s{seq, seq_first ? batch * width : width},
      d{size, 1};
  Layout x;
  x.dims = dims;
  x.offset = offset;
  if (form == Form::kHeads) {
    x.modes = {{b}, {h}, {s}, {d}};
  } else if (form == Form::kPacked) {
    x.modes = {{b}, {s}, {h, d}};
  } else {
    x.modes = {{b, h}, {s}, {d}};
  }
  return x;
}

// The strided rows of operand `x` (Attention's input in `form`, heads `heads` or 0 when folded,
// head size `size`, rows sequence first when `seq_first`), from the farthest root up its view
// chain that realizes it.
std::optional<Rows> OperandRows(Value* x, Form form, int64_t heads, int64_t size, bool seq_first,
                                const std::vector<Bindings>& all, bool& too_large) {
  const std::vector<Value*> chain = ChainUp(x);
  for (size_t k = chain.size(); k-- > 0;) {
    Value* root = chain[k];
    if (root->shape.size() != 3 || !root->shape[2].IsConst()) continue;
    Rows rows;
    rows.root = root;
    rows.seq_first = seq_first;
    rows.width = *root->shape[2].ConstValue();
    rows.steps = static_cast<int>(k);
    for (size_t j = 0; j < k; ++j) rows.nodes.push_back(chain[j]->producer);
    bool ok = true;
    for (const Bindings& b : all) {
      std::optional<std::vector<int64_t>> rd = DimsAt(root->shape, b, too_large), xd = DimsAt(x->shape, b, too_large);
      if (!rd || !xd) {
        ok = false;
        break;
      }
      const int64_t batch = (*rd)[seq_first ? 1 : 0], seq = (*rd)[seq_first ? 0 : 1];
      int64_t h = heads;
      if (form == Form::kFolded) {
        if ((*xd)[0] % batch != 0) {
          ok = false;
          break;
        }
        h = (*xd)[0] / batch;
      }
      const int64_t xseq = form == Form::kHeads ? (*xd)[2] : (*xd)[1];
      const int64_t xbatch = form == Form::kHeads || form == Form::kPacked ? (*xd)[0] : batch;
      if (xseq != seq || xbatch != batch || h < 1 || (form == Form::kPacked && (*xd)[2] != h * size)) {
        ok = false;
        break;
      }
      std::optional<Layout> got = EvalDown(chain, k, b, too_large);
      if (!got) {
        ok = false;
        break;
      }
      const int64_t offset = got->offset;
      if (offset < 0 || offset > rows.width - h * size || (rows.heads && rows.heads != h) ||
          (rows.offset != offset && &b != &all[0]) ||
          !SameElements(*got, StridedOperand(form, *xd, batch, seq, h, size, rows.width, offset, seq_first))) {
        ok = false;
        break;
      }
      rows.heads = h;
      rows.offset = offset;
      rows.batch = batch;
    }
    if (ok) return rows;
  }
  return std::nullopt;
}

// The end of Y's view chain that holds Y as strided rows [S, B, H*Dv] (seq_first) or [B, S, H*Dv]:
// the farthest such value down its single-user view chain (Y itself when it is those rows), and
// the nodes to it.
struct OutputEnd {
  Value* end = nullptr;
  std::vector<Node*> nodes;  // from Y's user down to end's producer
};

std::optional<OutputEnd> OutputRows(const Graph& g, Value* y, Form form, int64_t heads, int64_t v_size, bool seq_first,
                                    const std::vector<Bindings>& all, bool& too_large) {
  std::vector<Value*> chain = {y};
  std::vector<Node*> nodes;
  for (Value* v = y; v->users.size() == 1 && !g.IsGraphOutput(v) && IsView(v->users[0]) && v->users[0]->op != "Slice" &&
                     v->users[0]->op != "Gather" && v->users[0]->input(0) == v;) {
    nodes.push_back(v->users[0]);
    v = v->users[0]->output(0);
    chain.push_back(v);
  }
  for (size_t k = chain.size(); k-- > 0;) {  // k = 0: Y itself is the rows
    Value* end = chain[k];
    if (end->shape.size() != 3) continue;
    bool ok = true;
    for (const Bindings& b : all) {
      std::optional<std::vector<int64_t>> yd = DimsAt(y->shape, b, too_large), ed = DimsAt(end->shape, b, too_large);
      if (!yd || !ed) {
        ok = false;
        break;
      }
      // The end as a view of Y.
      std::optional<Layout> x = RowMajor(*yd);
      for (size_t j = 1; j <= k && x; ++j) x = Through(chain[j]->producer, *x, b, too_large);
      // Y's own dims in (b, h, s) terms, and where the strided form writes (b, s, h, e) in Y.
      const int64_t seq = form == Form::kHeads ? (*yd)[2] : (*yd)[1];
      const int64_t batch = form == Form::kFolded ? (*yd)[0] / heads : (*yd)[0];
      if (!x || (*ed)[2] != heads * v_size || (*ed)[seq_first ? 0 : 1] != seq || (*ed)[seq_first ? 1 : 0] != batch) {
        ok = false;
        break;
      }
      const bool packed = form == Form::kPacked;
      const Mode bm{batch, heads * seq * v_size}, hm{heads, packed ? v_size : seq * v_size},
          sm{seq, packed ? heads * v_size : v_size}, em{v_size, 1};
      Layout want;
      want.dims = *ed;
      want.modes = seq_first ? std::vector<Modes>{{sm}, {bm}, {hm, em}} : std::vector<Modes>{{bm}, {sm}, {hm, em}};
      if (!SameElements(*x, want)) {
        ok = false;
        break;
      }
    }
    if (ok) return OutputEnd{end, std::vector<Node*>(nodes.begin(), nodes.begin() + static_cast<long>(k))};
  }
  return std::nullopt;
}

// Sequence-first rows made by a row-wise GEMM from Transpose([1,0,2]) of batch-first tokens, whose
// output goes back to batch first through a Transpose [1,0,2]: the GEMM can read the tokens as
// they are and the attention can work batch first, and both Transposes go.
struct BatchFirst {
  Node* gemm = nullptr;     // the QKV projection
  Value* tokens = nullptr;  // its input before the Transpose
  Node* out_transpose = nullptr;
};

bool IsPerm102(const Node* n) {
  return n && n->op == "Transpose" && n->attrs.GetInts("perm", {}) == std::vector<int64_t>{1, 0, 2};
}

std::optional<BatchFirst> FindBatchFirst(const Graph& g, const Node* attention, const Rows& q, const Rows& k,
                                         const Rows& v, const OutputEnd& out) {
  if (!q.seq_first || q.root != k.root || k.root != v.root) return std::nullopt;
  Value* root = q.root;
  Node* gemm = root->producer;
  if (!gemm || g.IsGraphOutput(root) || (gemm->op != "FusedGemm" && gemm->op != "MatMul")) return std::nullopt;
  if (gemm->op == "FusedGemm" && gemm->input(3)) return std::nullopt;  // a residual would need transposing too
  if (gemm->op == "MatMul" && (!gemm->input(1) || gemm->input(1)->shape.size() != 2)) return std::nullopt;
  Value* a = gemm->input(0);
  if (!a || !IsPerm102(a->producer) || a->shape.size() != 3) return std::nullopt;
  // The projection and the chains feed nothing but the chains and the attention (so that all of
  // them go with the old attention).
  auto in_chains = [&](const Node* u) {
    bool chain = u == attention;
    for (const Rows* r : {&q, &k, &v}) chain |= std::find(r->nodes.begin(), r->nodes.end(), u) != r->nodes.end();
    return chain;
  };
  std::vector<const Value*> values = {root};
  for (const Rows* r : {&q, &k, &v}) {
    for (const Node* c : r->nodes) values.push_back(c->output(0));
  }
  for (const Value* x : values) {
    if (g.IsGraphOutput(x)) return std::nullopt;
    for (const Node* u : x->users) {
      if (!in_chains(u)) return std::nullopt;
    }
  }
  Value* end = out.end;
  if (g.IsGraphOutput(end) || end->users.size() != 1 || !IsPerm102(end->users[0])) return std::nullopt;
  return BatchFirst{gemm, a->producer->input(0), end->users[0]};
}

// Why `n` is not a plain Q, K, V attention the strided form can express ("" when it is).
std::string Ineligible(const Graph& g, const Node* n) {
  if (n->attrs.Has("qkv_layout")) return "already strided";
  for (size_t i = 3; i < n->inputs.size(); ++i) {
    if (n->input(i)) return "a mask or past key/value";
  }
  for (size_t i = 1; i < n->outputs.size(); ++i) {
    if (n->output(i) && (!n->output(i)->users.empty() || g.IsGraphOutput(n->output(i)))) return "extra outputs in use";
  }
  if (n->attrs.GetInt("is_causal", 0) != 0 || n->attrs.GetFloat("softcap", 0.0f) != 0.0f) return "causal or softcap";
  const size_t rank = n->input(0)->shape.size();
  if (rank != 3 && rank != 4) return "rank";
  for (size_t i = 0; i < 3; ++i) {
    const Shape& s = n->input(i)->shape;
    if (s.size() != rank || !s.back().IsConst()) return "operand ranks or head sizes";
  }
  if (rank == 4 && (!n->input(0)->shape[1].IsConst() || !n->input(1)->shape[1].IsConst())) return "head counts";
  return "";
}

absl::StatusOr<bool> Fold(Graph& g, Rewriter& rw, Node* n, const std::vector<Bindings>& all, const PassContext& ctx) {
  if (std::string why = Ineligible(g, n); !why.empty()) {
    if (why != "already strided") ctx.Explain(kRule, *n, absl::StrCat("not folded: ", why));
    return false;
  }
  Value *q = n->input(0), *k = n->input(1), *v = n->input(2);
  const size_t rank = q->shape.size();
  const int64_t qh_attr = n->attrs.GetInt("q_num_heads", 1), kvh_attr = n->attrs.GetInt("kv_num_heads", 1);
  const Form form = rank == 4 ? Form::kHeads : (qh_attr == 1 && kvh_attr == 1) ? Form::kFolded : Form::kPacked;
  int64_t qh = 0, kvh = 0;  // 0: found from the roots (folded)
  if (form == Form::kHeads) {
    qh = *q->shape[1].ConstValue();
    kvh = *k->shape[1].ConstValue();
  } else if (form == Form::kPacked) {
    qh = qh_attr;
    kvh = kvh_attr;
  }
  const int64_t last_q = *q->shape.back().ConstValue(), last_v = *v->shape.back().ConstValue();
  const int64_t d = form == Form::kPacked ? last_q / qh : last_q;
  const int64_t dv = form == Form::kPacked ? last_v / kvh : last_v;
  // Sequence-first rows, then batch-first (with a batch of 1 both may fit the inputs; the output
  // decides).
  std::optional<Rows> rq, rk, rv;
  std::optional<OutputEnd> out;
  bool too_large = false;
  for (bool seq_first : {true, false}) {
    rq = OperandRows(q, form, qh, d, seq_first, all, too_large);
    rk = rq ? OperandRows(k, form, kvh, d, seq_first, all, too_large) : std::nullopt;
    rv = rk ? OperandRows(v, form, kvh, dv, seq_first, all, too_large) : std::nullopt;
    if (!rq || !rk || !rv || rq->batch != rk->batch || rk->batch != rv->batch ||
        (form == Form::kFolded && (rq->heads != rk->heads || rk->heads != rv->heads))) {
      continue;
    }
    out = OutputRows(g, n->output(0), form, rq->heads, dv, seq_first, all, too_large);
    if (out) break;
  }
  if (!out && too_large) {
    ctx.Explain(kRule, *n,
                absl::StrCat("not folded: a value of the view chains has more than 2^48 elements at the batch "
                             "sizes checked"));
    return false;
  }
  if (!out) {
    ctx.Explain(kRule, *n,
                "not folded: Q, K, V and Y are not all strided views of [B, S, W] or [S, B, W] rows of one layout");
    return false;
  }
  int steps = rq->steps + rk->steps + rv->steps + static_cast<int>(out->nodes.size());
  if (steps == 0) return false;  // already in place
  const std::string name = n->name;
  std::optional<BatchFirst> flip = FindBatchFirst(g, n, *rq, *rk, *rv, *out);
  std::string flipped;
  if (flip) {
    // The projection on the batch-first tokens: [B, S, 3E] rows, read batch first.
    std::vector<Value*> inputs = flip->gemm->inputs;
    inputs[0] = flip->tokens;
    ASSIGN_OR_RETURN(Node * gemm, rw.Create(flip->gemm->op, flip->gemm->name + "/batch_first", std::move(inputs),
                                            flip->gemm->attrs, flip->gemm->origin));
    gemm->decisions = flip->gemm->decisions;
    gemm->precision = flip->gemm->precision;
    gemm->decisions.push_back({"layout", "batch-first tokens",
                               absl::StrCat("reads '", flip->tokens->name,
                                            "' as it is: the Transpose [1,0,2] before "
                                            "it commutes with the row-wise GEMM and is folded into ",
                                            name, "'s batch-first reads")});
    rq->root = rk->root = rv->root = gemm->output(0);
    rq->seq_first = false;
    out->nodes.push_back(flip->out_transpose);
    out->end = flip->out_transpose->output(0);
    steps += 2;
    flipped = absl::StrCat("; the Transposes [1,0,2] before the projection '", flip->gemm->name,
                           "' and after the attention go (the projection reads the batch-first tokens)");
  }
  const char* layout = rq->seq_first ? "SBW" : "BSW";
  Attributes a;
  a.Set("qkv_layout", std::string(layout));
  a.Set("q_num_heads", rq->heads);
  a.Set("kv_num_heads", rk->heads);
  a.Set("head_size", d);
  a.Set("v_head_size", dv);
  a.Set("q_offset", rq->offset);
  a.Set("k_offset", rk->offset);
  a.Set("v_offset", rv->offset);
  a.Set("scale", n->attrs.Has("scale") ? n->attrs.GetFloat("scale", 1.0f)
                                       : static_cast<float>(1.0 / std::sqrt(static_cast<double>(d))));
  if (n->attrs.Has("softmax_precision")) a.Set("softmax_precision", n->attrs.GetInt("softmax_precision", 1));
  ASSIGN_OR_RETURN(Node * nn,
                   rw.Create("Attention", name + "/strided", {rq->root, rk->root, rv->root}, std::move(a), n->origin));
  nn->decisions = n->decisions;
  nn->precision = n->precision;
  const char* rows = rq->seq_first ? "[S,B," : "[B,S,";
  nn->decisions.push_back(
      {"layout", absl::StrCat("Q/K/V in place, ", layout),
       absl::StrCat(steps, " view steps (Slice/Reshape/Transpose) folded: Q, K, V read from ", rows, "W] rows of '",
                    rq->root->name, "'", rk->root == rq->root ? "" : absl::StrCat(", '", rk->root->name, "'"),
                    rv->root == rq->root || rv->root == rk->root ? "" : absl::StrCat(", '", rv->root->name, "'"),
                    " at columns ", rq->offset, "/", rk->offset, "/", rv->offset, ", ", rq->heads, " heads of ", d,
                    "; Y written as ", rows, rq->heads * dv, "] for '", out->end->name, "'", flipped)});
  rw.ReplaceAllUses(out->end, nn->output(0));
  for (size_t i = out->nodes.size(); i-- > 0;) RETURN_IF_ERROR(rw.Erase(out->nodes[i]));
  const std::string gemm_name = flip ? flip->gemm->name : "";
  RETURN_IF_ERROR(rw.EraseWithDeadInputs(n));  // the view chains, and a flipped projection's old form
  // The old nodes are gone, so their names are free again.
  nn->name = name;
  if (flip) nn->input(0)->producer->name = gemm_name;
  return true;
}

// The first `n` primes.
std::vector<int64_t> Primes(size_t n) {
  std::vector<int64_t> p;
  for (int64_t c = 2; p.size() < n; ++c) {
    bool prime = true;
    for (int64_t q : p) {
      if (q * q > c) break;
      if (c % q == 0) {
        prime = false;
        break;
      }
    }
    if (prime) p.push_back(c);
  }
  return p;
}

}  // namespace

absl::StatusOr<bool> FoldAttentionLayout(Graph& g, const PassContext& ctx) {
  // Concrete values to evaluate the chains at (static shapes: once): the symbols at distinct primes,
  // then at other distinct primes, so that a chain that mixes two symbols up (a batch taken for a
  // sequence) addresses other elements at one of them, and each symbol takes two values.
  std::vector<Bindings> all(1);
  if (!g.symbols.empty()) {
    all.resize(2);
    const std::vector<int64_t> primes = Primes(2 * g.symbols.size());
    for (size_t i = 0; i < g.symbols.size(); ++i) {
      all[0][g.symbols[i]] = primes[i];
      all[1][g.symbols[i]] = primes[i + g.symbols.size()];
    }
  }
  // The Attention nodes first: a fold erases its view chains, which a snapshot of all the nodes
  // would still hold (no fold erases another Attention).
  std::vector<Node*> attention;
  for (Node* n : g.nodes()) {
    if (n->op == "Attention") attention.push_back(n);
  }
  if (attention.empty()) return false;
  Rewriter rw(g);
  bool changed = false;
  for (Node* n : attention) {
    ASSIGN_OR_RETURN(bool folded, Fold(g, rw, n, all, ctx));
    changed |= folded;
  }
  if (changed) RETURN_IF_ERROR(rw.Finish());
  return changed;
}

}  // namespace gcomp::passes
