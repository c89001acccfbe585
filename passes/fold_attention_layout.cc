// fold-attention-layout (O3): an Attention whose Q, K and V are cut out of wider tensors by view
// chains (Slice, Reshape, Transpose, Squeeze, Unsqueeze, Identity, Gather at constant indices: the exporters' head split) and whose output goes
// through a view chain back to rows of tokens reads and writes them in place, as Attention's
// strided form:
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
// candidate root (each value up the chain, farthest first) the chain is evaluated on element
// indices of the root at two batch sizes (the graph's symbols bound to 2 and 3; once for static
// shapes), and the fold fires only where every element of Q, K and V is the element of the root
// that the strided form addresses ([B, S, W] or [S, B, W] rows, heads side by side from one
// column), and every element of the output chain's end is the one the strided form writes.
// Q, K and V's layouts (batch or sequence first) and batch sizes must agree. Where sequence-first
// rows come from a row-wise QKV projection of Transpose([1,0,2]) tokens and the output goes back
// through Transpose [1,0,2] (torchvision), the projection reads the tokens as they are and the
// attention works batch first: those two Transposes go as well. Attention nodes with a
// mask, past K/V, causal flag, softcap or extra outputs, and those already strided, are left alone.
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

namespace gcomp::passes {
namespace {

constexpr const char* kRule = "FoldAttentionLayout";
using Bindings = std::map<std::string, int64_t>;

// The chains are checked element by element, so that work is bounded by the model's size: the
// pass may visit kVisitsPerWeight elements per element of the constants in the model file
// (Graph::file_constant_elements), and at least kMinVisits. ViT-B/16's dynamo export needs about
// 5e7 visits per attention, 6e8 in all, against a budget of 2.2e10; a model file's dims cost
// nothing to declare, its weights do.
constexpr int64_t kVisitsPerWeight = 256;
constexpr int64_t kMinVisits = int64_t{1} << 25;
// No tensor of more elements than this is evaluated (2^25: 256 MiB of indices; a ViT-g/14's
// packed QKV at 518 px and batch 3 is 1.9e7).
constexpr int64_t kMaxElements = int64_t{1} << 25;

struct Budget {
  int64_t left = kMinVisits;
  bool spent = false;      // a check needed more visits than were left
  bool too_large = false;  // a value had more than kMaxElements elements
  // Takes `n` element visits; false (and spent) when they are not left.
  bool Take(int64_t n) {
    if (n < 0 || n > left) {
      spent = true;
      return false;
    }
    left -= n;
    return true;
  }
};

bool IsView(const Node* n) {
  return n && (n->op == "Transpose" || n->op == "Reshape" || n->op == "Slice" || n->op == "Identity" ||
               n->op == "Flatten" || n->op == "Squeeze" || n->op == "Unsqueeze" ||
               (n->op == "Gather" && n->input(1) && n->input(1)->is_constant()));
}

// The dims of `s` at bindings `b`; none where a dim does not evaluate or is 0 (no empty operand
// folds), or the tensor is past kMaxElements (noted in `budget`).
std::optional<std::vector<int64_t>> DimsAt(const Shape& s, const Bindings& b, Budget& budget) {
  std::vector<int64_t> d;
  int64_t n = 1;
  for (const Dim& x : s) {
    absl::StatusOr<int64_t> v = x.Evaluate(b);
    if (!v.ok() || *v <= 0) return std::nullopt;
    if (n > kMaxElements / *v) {
      budget.too_large = true;
      return std::nullopt;
    }
    n *= *v;
    d.push_back(*v);
  }
  return d;
}

int64_t Numel(const std::vector<int64_t>& d) {
  int64_t n = 1;
  for (int64_t x : d) n *= x;
  return n;
}

// A tensor's elements as element indices of a root tensor: at[i] is the root element that
// element i (row-major over dims) is.
struct Indexed {
  std::vector<int64_t> dims;
  std::vector<int64_t> at;
};

std::optional<Indexed> Iota(std::vector<int64_t> dims, Budget& budget) {
  if (!budget.Take(Numel(dims))) return std::nullopt;
  Indexed x;
  x.dims = std::move(dims);
  x.at.resize(static_cast<size_t>(Numel(x.dims)));
  for (size_t i = 0; i < x.at.size(); ++i) x.at[i] = static_cast<int64_t>(i);
  return x;
}

std::optional<std::vector<int64_t>> ConstInts(const Value* v) {
  if (!v || !v->is_constant() || v->constant->dtype() != DType::kI64) return std::nullopt;
  return v->constant->ToI64();
}

// `x` through view node `n` (its data input 0).
std::optional<Indexed> Through(const Node* n, const Indexed& x, const Bindings& b, Budget& budget) {
  const size_t r = x.dims.size();
  std::optional<std::vector<int64_t>> out_dims = DimsAt(n->output(0)->shape, b, budget);
  if (!out_dims || !budget.Take(Numel(*out_dims))) return std::nullopt;
  if (n->op == "Transpose") {
    std::vector<int64_t> perm = n->attrs.GetInts("perm", {});
    if (perm.empty()) {
      for (size_t k = 0; k < r; ++k) perm.push_back(static_cast<int64_t>(r - 1 - k));
    }
    if (perm.size() != r) return std::nullopt;
    std::vector<int64_t> in_strides(r, 1);
    for (size_t k = r; k-- > 1;) in_strides[k - 1] = in_strides[k] * x.dims[k];
    Indexed y;
    for (size_t k = 0; k < r; ++k) {
      if (perm[k] < 0 || perm[k] >= static_cast<int64_t>(r)) return std::nullopt;
      y.dims.push_back(x.dims[perm[k]]);
    }
    if (y.dims != *out_dims) return std::nullopt;
    y.at.resize(x.at.size());
    std::vector<int64_t> idx(r, 0);
    for (size_t i = 0; i < y.at.size(); ++i) {
      int64_t src = 0;
      for (size_t k = 0; k < r; ++k) src += idx[k] * in_strides[perm[k]];
      y.at[i] = x.at[src];
      for (size_t k = r; k-- > 0;) {
        if (++idx[k] < y.dims[k]) break;
        idx[k] = 0;
      }
    }
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
    Indexed y;
    for (const SliceAxis& s : per) y.dims.push_back(s.count);
    if (y.dims != *out_dims) return std::nullopt;
    std::vector<int64_t> in_strides(r, 1);
    for (size_t k = r; k-- > 1;) in_strides[k - 1] = in_strides[k] * x.dims[k];
    y.at.resize(static_cast<size_t>(Numel(y.dims)));
    std::vector<int64_t> idx(r, 0);
    for (size_t i = 0; i < y.at.size(); ++i) {
      int64_t src = 0;
      for (size_t k = 0; k < r; ++k) src += (per[k].start + idx[k] * per[k].step) * in_strides[k];
      y.at[i] = x.at[src];
      for (size_t k = r; k-- > 0;) {
        if (++idx[k] < y.dims[k]) break;
        idx[k] = 0;
      }
    }
    return y;
  }
  if (n->op == "Gather") {  // constant indices (the dynamo exporter's q, k, v = qkv[0], qkv[1], qkv[2])
    std::optional<std::vector<int64_t>> index = ConstInts(n->input(1));
    int64_t a = n->attrs.GetInt("axis", 0);
    if (a < 0) a += static_cast<int64_t>(r);
    if (!index || a < 0 || a >= static_cast<int64_t>(r)) return std::nullopt;
    const int64_t extent = x.dims[a];
    int64_t inner = 1;
    for (size_t k = static_cast<size_t>(a) + 1; k < r; ++k) inner *= x.dims[k];
    const int64_t outer = Numel(x.dims) / std::max<int64_t>(1, extent * inner);
    Indexed y;
    y.dims = *out_dims;
    if (Numel(y.dims) != outer * static_cast<int64_t>(index->size()) * inner) return std::nullopt;
    y.at.reserve(static_cast<size_t>(Numel(y.dims)));
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i : *index) {
        if (i < 0) i += extent;
        if (i < 0 || i >= extent) return std::nullopt;
        for (int64_t e = 0; e < inner; ++e) y.at.push_back(x.at[static_cast<size_t>((o * extent + i) * inner + e)]);
      }
    }
    return y;
  }
  // Reshape and the other views keep the elements in order.
  if (Numel(*out_dims) != Numel(x.dims)) return std::nullopt;
  return Indexed{*out_dims, x.at};
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

// (b, h, s, d) of element i of an operand with `dims` in `form` (heads `heads`).
void Coordinates(Form form, const std::vector<int64_t>& dims, int64_t heads, int64_t i, int64_t* b, int64_t* h,
                 int64_t* s, int64_t* d) {
  const int64_t last = dims.back();
  if (form == Form::kHeads) {
    *d = i % dims[3];
    *s = (i / dims[3]) % dims[2];
    *h = (i / (dims[3] * dims[2])) % dims[1];
    *b = i / (dims[3] * dims[2] * dims[1]);
  } else if (form == Form::kPacked) {
    const int64_t size = last / heads;
    *d = i % size;
    *h = (i % last) / size;
    *s = (i / last) % dims[1];
    *b = i / (last * dims[1]);
  } else {
    *d = i % last;
    *s = (i / last) % dims[1];
    const int64_t n = i / (last * dims[1]);
    *b = n / heads;
    *h = n % heads;
  }
}

// The operand's view chain from `v` up: v, its view producer's input, ... (nearest first).
std::vector<Value*> ChainUp(Value* v) {
  std::vector<Value*> chain = {v};
  while (v->producer && IsView(v->producer) && v->producer->input(0) && !v->producer->input(0)->is_constant()) {
    v = v->producer->input(0);
    chain.push_back(v);
  }
  return chain;
}

// Evaluates the view nodes from chain[k] (root) down to chain[0] on the root's element indices.
std::optional<Indexed> EvalDown(const std::vector<Value*>& chain, size_t k, const Bindings& b, Budget& budget) {
  std::optional<std::vector<int64_t>> root = DimsAt(chain[k]->shape, b, budget);
  if (!root) return std::nullopt;
  std::optional<Indexed> x = Iota(*root, budget);
  for (size_t j = k; j-- > 0 && x;) x = Through(chain[j]->producer, *x, b, budget);
  return x;
}

// The strided rows of operand `x` (Attention's input in `form`, heads `heads` or 0 when folded,
// head size `size`, sequence `seq`), from the farthest root up its view chain that realizes it.
std::optional<Rows> OperandRows(Value* x, Form form, int64_t heads, int64_t size, bool seq_first,
                                const std::vector<Bindings>& all, Budget& budget) {
  const std::vector<Value*> chain = ChainUp(x);
  for (size_t k = chain.size(); k-- > 0;) {
    Value* root = chain[k];
    if (root->shape.size() != 3 || !root->shape[2].IsConst()) continue;
    {
      Rows rows;
      rows.root = root;
      rows.seq_first = seq_first;
      rows.width = *root->shape[2].ConstValue();
      rows.steps = static_cast<int>(k);
      for (size_t j = 0; j < k; ++j) rows.nodes.push_back(chain[j]->producer);
      bool ok = true;
      for (const Bindings& b : all) {
        std::optional<std::vector<int64_t>> rd = DimsAt(root->shape, b, budget), xd = DimsAt(x->shape, b, budget);
        if (!rd || !xd) {
          ok = false;
          break;
        }
        const int64_t batch = (*rd)[seq_first ? 1 : 0], seq = (*rd)[seq_first ? 0 : 1];
        int64_t h = heads;
        if (form == Form::kFolded) {
          if (batch == 0 || (*xd)[0] % batch != 0) {
            ok = false;
            break;
          }
          h = (*xd)[0] / batch;
        }
        const int64_t xseq = form == Form::kHeads ? (*xd)[2] : (*xd)[1];
        const int64_t xbatch = form == Form::kHeads || form == Form::kPacked ? (*xd)[0] : batch;
        if (xseq != seq || xbatch != batch || h < 1) {
          ok = false;
          break;
        }
        // The dims fit this root: only now the chain is evaluated.
        std::optional<Indexed> got = EvalDown(chain, k, b, budget);
        if (!got || got->at.empty()) {
          ok = false;
          break;
        }
        const int64_t offset = got->at[0];
        if (offset < 0 || offset + h * size > rows.width || (rows.heads && rows.heads != h) ||
            (rows.offset != offset && &b != &all[0])) {
          ok = false;
          break;
        }
        rows.heads = h;
        rows.offset = offset;
        rows.batch = batch;
        for (size_t i = 0; i < got->at.size(); ++i) {
          int64_t bi, hi, si, di;
          Coordinates(form, *xd, h, static_cast<int64_t>(i), &bi, &hi, &si, &di);
          const int64_t row = seq_first ? si * batch + bi : bi * seq + si;
          if (got->at[i] != row * rows.width + offset + hi * size + di) {
            ok = false;
            break;
          }
        }
        if (!ok) break;
      }
      if (ok) return rows;
    }
  }
  return std::nullopt;
}

// The end of Y's view chain that holds Y as strided rows [S, B, H*Dv] (seq_first) or [B, S, H*Dv]:
// the farthest such value down its single-user view chain, and the nodes to it.
struct OutputEnd {
  Value* end = nullptr;
  std::vector<Node*> nodes;  // from Y's user down to end's producer
};

std::optional<OutputEnd> OutputRows(const Graph& g, Value* y, Form form, int64_t heads, int64_t v_size, bool seq_first,
                                    const std::vector<Bindings>& all, Budget& budget) {
  std::vector<Value*> chain = {y};
  std::vector<Node*> nodes;
  for (Value* v = y; v->users.size() == 1 && !g.IsGraphOutput(v) && IsView(v->users[0]) && v->users[0]->op != "Slice" &&
                     v->users[0]->op != "Gather" &&
                     v->users[0]->input(0) == v;) {
    nodes.push_back(v->users[0]);
    v = v->users[0]->output(0);
    chain.push_back(v);
  }
  for (size_t k = chain.size(); k-- > 1;) {
    Value* end = chain[k];
    if (end->shape.size() != 3) continue;
    bool ok = true;
    for (const Bindings& b : all) {
      std::optional<std::vector<int64_t>> yd = DimsAt(y->shape, b, budget), ed = DimsAt(end->shape, b, budget);
      if (!yd || !ed) {
        ok = false;
        break;
      }
      std::optional<Indexed> x = Iota(*yd, budget);
      for (size_t j = 1; j <= k && x; ++j) x = Through(chain[j]->producer, *x, b, budget);
      if (!x) {
        ok = false;
        break;
      }
      // Y's own dims in (b, h, s) terms.
      const int64_t seq = form == Form::kHeads ? (*yd)[2] : (*yd)[1];
      const int64_t batch = form == Form::kFolded ? (*yd)[0] / heads : (*yd)[0];
      const int64_t width = heads * v_size;
      if ((*ed)[2] != width || (*ed)[seq_first ? 0 : 1] != seq || (*ed)[seq_first ? 1 : 0] != batch) {
        ok = false;
        break;
      }
      for (size_t j = 0; j < x->at.size(); ++j) {
        const int64_t row = static_cast<int64_t>(j) / width, col = static_cast<int64_t>(j) % width;
        const int64_t bi = seq_first ? row % batch : row / seq, si = seq_first ? row / batch : row % seq;
        const int64_t hi = col / v_size, ei = col % v_size;
        const int64_t want = form == Form::kPacked ? ((bi * seq + si) * heads + hi) * v_size + ei
                                                   : ((bi * heads + hi) * seq + si) * v_size + ei;
        if (x->at[j] != want) {
          ok = false;
          break;
        }
      }
      if (!ok) break;
    }
    if (ok) return OutputEnd{end, std::vector<Node*>(nodes.begin(), nodes.begin() + static_cast<long>(k))};
  }
  return std::nullopt;
}

// Sequence-first rows made by a row-wise GEMM from Transpose([1,0,2]) of batch-first tokens, whose
// output goes back to batch first through a Transpose [1,0,2]: the GEMM can read the tokens as
// they are and the attention can work batch first, and both Transposes go.
struct BatchFirst {
  Node* gemm = nullptr;    // the QKV projection
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

absl::StatusOr<bool> Fold(Graph& g, Rewriter& rw, Node* n, const std::vector<Bindings>& all, Budget& budget,
                          const PassContext& ctx) {
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
  budget.spent = budget.too_large = false;
  for (bool seq_first : {true, false}) {
    rq = OperandRows(q, form, qh, d, seq_first, all, budget);
    rk = rq ? OperandRows(k, form, kvh, d, seq_first, all, budget) : std::nullopt;
    rv = rk ? OperandRows(v, form, kvh, dv, seq_first, all, budget) : std::nullopt;
    if (!rq || !rk || !rv || rq->batch != rk->batch || rk->batch != rv->batch ||
        (form == Form::kFolded && (rq->heads != rk->heads || rk->heads != rv->heads))) {
      continue;
    }
    out = OutputRows(g, n->output(0), form, rq->heads, dv, seq_first, all, budget);
    if (out) break;
  }
  if (!out && budget.too_large) {
    ctx.Explain(kRule, *n,
                absl::StrCat("not folded: a value of the view chains has more than ", kMaxElements,
                             " elements at the batch sizes checked, too many to check element by element"));
    return false;
  }
  if (!out && budget.spent) {
    ctx.Explain(kRule, *n,
                absl::StrCat("not folded: checking the view chains element by element would visit more elements "
                             "than the pass has left (", kVisitsPerWeight,
                             " per element of the model file's constants, at least ", kMinVisits, ")"));
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
                               absl::StrCat("reads '", flip->tokens->name, "' as it is: the Transpose [1,0,2] before "
                                            "it commutes with the row-wise GEMM and is folded into ", name,
                                            "'s batch-first reads")});
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
  ASSIGN_OR_RETURN(Node * nn, rw.Create("Attention", name + "/strided", {rq->root, rk->root, rv->root}, std::move(a),
                                        n->origin));
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
  nn->name = name;  // the old nodes are gone, so their names are free again
  if (flip) nn->input(0)->producer->name = gemm_name;
  return true;
}

}  // namespace

absl::StatusOr<bool> FoldAttentionLayout(Graph& g, const PassContext& ctx) {
  // Concrete batch sizes to evaluate the chains at: each symbol at 2, then at 3 (static: once).
  std::vector<Bindings> all(1);
  if (!g.symbols.empty()) {
    all.resize(2);
    for (const std::string& s : g.symbols) {
      all[0][s] = 2;
      all[1][s] = 3;
    }
  }
  // The Attention nodes first: a fold erases its view chains, which a snapshot of all the nodes
  // would still hold (no fold erases another Attention).
  std::vector<Node*> attention;
  for (Node* n : g.nodes()) {
    if (n->op == "Attention") attention.push_back(n);
  }
  if (attention.empty()) return false;
  Budget budget;
  budget.left = std::max(kMinVisits, std::min(g.file_constant_elements, int64_t{1} << 40) * kVisitsPerWeight);
  Rewriter rw(g);
  bool changed = false;
  for (Node* n : attention) {
    ASSIGN_OR_RETURN(bool folded, Fold(g, rw, n, all, budget, ctx));
    changed |= folded;
  }
  if (changed) RETURN_IF_ERROR(rw.Finish());
  return changed;
}

}  // namespace gcomp::passes
