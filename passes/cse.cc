// cse: merges what is computed twice, keeping the first.
//
// MergeEqualConstants — constants of at most 1024 elements with the same dtype, dims and bytes:
//   const %a = i64[1] {0};  const %b = i64[1] {0}   ->  uses of %b read %a
// so that the nodes reading them (exports repeat Constant nodes per use) become equal too.
//
// MergeEqualNodes — same op, same inputs (the same values, position by position), the same
// attributes (compared exactly: floats bit for bit, tensors by dtype, dims and bytes), the same
// outputs present and the same storage precision:
//   %s1 = Shape(%x);  %g1 = Gather(%s1, %i)          %s1 = Shape(%x);  %g1 = Gather(%s1, %i)
//   %s2 = Shape(%x);  %g2 = Gather(%s2, %i)    ->    uses of %s2 read %s1, of %g2 read %g1
// Nodes are visited in topological order, so merging a node makes its users' inputs equal and
// whole duplicated chains merge in one sweep. The kept node's origin gains the merged node's.
// Never merged: nodes without outputs, nodes with different output counts, and a node whose
// output is a graph output (the output keeps its producer and name).
#include <cstring>
#include <functional>
#include <string_view>
#include <unordered_map>

#include "core/status_macros.h"
#include "passes/passes.h"
#include "passes/rewriter.h"

namespace gcomp::passes {
namespace {

constexpr int64_t kMaxMergedConstantElements = 1024;

size_t Combine(size_t seed, size_t h) { return seed ^ (h + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2)); }

size_t HashTensor(const Tensor& t) {
  size_t h = std::hash<int>()(static_cast<int>(t.dtype()));
  for (int64_t d : t.dims()) h = Combine(h, std::hash<int64_t>()(d));
  std::string_view bytes(reinterpret_cast<const char*>(t.data()), t.nbytes());
  return Combine(h, std::hash<std::string_view>()(bytes));
}

bool SameTensor(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.dims() == b.dims() && a.nbytes() == b.nbytes() &&
         (a.nbytes() == 0 || std::memcmp(a.data(), b.data(), a.nbytes()) == 0);
}

bool SameFloats(const float* a, const float* b, size_t n) {
  return n == 0 || std::memcmp(a, b, n * sizeof(float)) == 0;
}

bool SameAttr(const AttrValue& a, const AttrValue& b) {
  if (a.index() != b.index()) return false;
  if (const auto* x = std::get_if<float>(&a)) return SameFloats(x, &std::get<float>(b), 1);
  if (const auto* x = std::get_if<std::vector<float>>(&a)) {
    const auto& y = std::get<std::vector<float>>(b);
    return x->size() == y.size() && SameFloats(x->data(), y.data(), x->size());
  }
  if (const auto* x = std::get_if<Tensor>(&a)) return SameTensor(*x, std::get<Tensor>(b));
  if (const auto* x = std::get_if<int64_t>(&a)) return *x == std::get<int64_t>(b);
  if (const auto* x = std::get_if<std::string>(&a)) return *x == std::get<std::string>(b);
  if (const auto* x = std::get_if<std::vector<int64_t>>(&a)) return *x == std::get<std::vector<int64_t>>(b);
  return std::get<std::vector<std::string>>(a) == std::get<std::vector<std::string>>(b);
}

bool SameAttrs(const Attributes& a, const Attributes& b) {
  if (a.all().size() != b.all().size()) return false;
  for (auto ia = a.all().begin(), ib = b.all().begin(); ia != a.all().end(); ++ia, ++ib) {
    if (ia->first != ib->first || !SameAttr(ia->second, ib->second)) return false;
  }
  return true;
}

// Hash of what MergeEqualNodes compares (attribute values only by name and int value).
size_t HashNode(const Node& n) {
  size_t h = std::hash<std::string>()(n.op);
  for (const Value* in : n.inputs) h = Combine(h, std::hash<const void*>()(in));
  h = Combine(h, n.outputs.size());
  for (const auto& [name, value] : n.attrs.all()) {
    h = Combine(h, std::hash<std::string>()(name));
    if (const auto* x = std::get_if<int64_t>(&value)) h = Combine(h, std::hash<int64_t>()(*x));
  }
  return h;
}

bool SameComputation(const Node& a, const Node& b) {
  if (a.op != b.op || a.inputs != b.inputs || a.outputs.size() != b.outputs.size() || a.precision != b.precision) {
    return false;
  }
  for (size_t k = 0; k < a.outputs.size(); ++k) {
    if ((a.outputs[k] == nullptr) != (b.outputs[k] == nullptr)) return false;
  }
  return SameAttrs(a.attrs, b.attrs);
}

bool MergeEqualConstants(Graph& g, Rewriter& rw) {
  bool changed = false;
  std::unordered_map<size_t, std::vector<Value*>> kept;
  for (Value* v : g.values()) {
    if (!v->is_constant() || v->users.empty() || g.IsGraphOutput(v)) continue;
    if (v->constant->numel() > kMaxMergedConstantElements) continue;
    std::vector<Value*>& bucket = kept[HashTensor(*v->constant)];
    Value* same = nullptr;
    for (Value* k : bucket) {
      if (SameTensor(*k->constant, *v->constant)) {
        same = k;
        break;
      }
    }
    if (!same) {
      bucket.push_back(v);
      continue;
    }
    rw.ReplaceAllUses(v, same);
    changed = true;
  }
  return changed;
}

absl::StatusOr<bool> MergeEqualNodes(Graph& g, Rewriter& rw, const PassContext& ctx) {
  bool changed = false;
  std::unordered_map<size_t, std::vector<Node*>> kept;
  for (Node* n : g.nodes()) {
    if (n->outputs.empty()) continue;
    std::vector<Node*>& bucket = kept[HashNode(*n)];
    Node* same = nullptr;
    for (Node* k : bucket) {
      if (SameComputation(*k, *n)) {
        same = k;
        break;
      }
    }
    if (!same) {
      bucket.push_back(n);
      continue;
    }
    bool to_graph_output = false;
    for (const Value* o : n->outputs) to_graph_output |= o && g.IsGraphOutput(o);
    if (to_graph_output) {
      ctx.Explain("MergeEqualNodes", *n, "its output is a graph output");
      continue;
    }
    for (size_t k = 0; k < n->outputs.size(); ++k) {
      if (n->outputs[k]) rw.ReplaceAllUses(n->outputs[k], same->outputs[k]);
    }
    same->origin = MergeOrigins({same, n});
    RETURN_IF_ERROR(rw.Erase(n));
    changed = true;
  }
  return changed;
}

}  // namespace

absl::StatusOr<bool> EliminateCommonSubexpressions(Graph& g, const PassContext& ctx) {
  Rewriter rw(g);
  const bool constants = MergeEqualConstants(g, rw);
  ASSIGN_OR_RETURN(bool nodes, MergeEqualNodes(g, rw, ctx));
  const bool changed = constants || nodes;
  if (changed) RETURN_IF_ERROR(rw.Finish());
  return changed;
}

}  // namespace gcomp::passes
