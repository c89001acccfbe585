#include "graph/shape_inference.h"

#include <deque>

#include "absl/strings/str_cat.h"
#include "core/limits.h"
#include "graph/op_def.h"
#include "core/status_macros.h"

namespace gcomp {
namespace {

// Integer outputs up to this many elements get their values computed during inference, so that
// shape arithmetic (Shape -> Gather -> Concat -> Reshape) resolves to constants or symbols.
constexpr int64_t kMaxEvaluatedElements = 64;

absl::Status Prefixed(const Graph& g, const Node& n, const absl::Status& s) {
  return absl::Status(s.code(), absl::StrCat(g.source, ": ", n.Describe(), ": ", s.message()));
}

// Runs the reference kernel on known small integer inputs to get the output values.
std::optional<std::vector<std::vector<Dim>>> Evaluate(const Node& node, const std::vector<ValueInfo>& infos,
                                                      const std::vector<OutputInfo>& outs) {
  if (!node.def->kernel) return std::nullopt;
  for (const OutputInfo& o : outs) {
    if (IsFloat(o.dtype)) return std::nullopt;
    auto dims = ConcreteDims(o.shape);
    if (!dims) return std::nullopt;
    auto n = CheckedNumElements(*dims);
    if (!n.ok() || *n > kMaxEvaluatedElements) return std::nullopt;
  }
  std::vector<Tensor> materialized(infos.size());
  std::vector<const Tensor*> inputs(node.inputs.size(), nullptr);
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    if (!node.inputs[i]) continue;
    const ValueInfo& v = infos[i];
    if (v.constant) {
      inputs[i] = v.constant;
      continue;
    }
    auto dims = ConcreteDims(v.shape);
    if (!v.sym_values || !dims) return std::nullopt;
    auto t = Tensor::Zeros(v.dtype, *dims);
    if (!t.ok() || t->numel() != static_cast<int64_t>(v.sym_values->size())) return std::nullopt;
    for (size_t k = 0; k < v.sym_values->size(); ++k) {
      if (!(*v.sym_values)[k].IsConst()) return std::nullopt;
      t->SetI64(static_cast<int64_t>(k), (*v.sym_values)[k].value());
    }
    materialized[i] = std::move(*t);
    inputs[i] = &materialized[i];
  }
  std::vector<Tensor> outputs;
  for (const OutputInfo& o : outs) {
    auto t = Tensor::Zeros(o.dtype, *ConcreteDims(o.shape));
    if (!t.ok()) return std::nullopt;
    outputs.push_back(std::move(*t));
  }
  KernelContext kc{node, inputs, outputs};
  if (!node.def->kernel(kc).ok()) return std::nullopt;
  std::vector<std::vector<Dim>> values;
  for (const Tensor& t : outputs) {
    std::vector<Dim> v;
    for (int64_t x : t.ToI64()) v.emplace_back(x);
    values.push_back(std::move(v));
  }
  return values;
}

// Refuses an output no tensor could hold (over kMaxTensorBytes, kMaxRank or kMaxDim, or an
// element count that overflows int64), so that huge Range/ConstantOfShape/Expand requests fail here, not when run.
absl::Status CheckOutputSize(const Graph& g, const Node& n, const std::string& name, const OutputInfo& o) {
  auto too_large = [&](const std::string& size) {
    return Prefixed(
        g, n,
        absl::InvalidArgumentError(absl::StrCat("output '", name, "' has shape ", ShapeToString(o.shape), " (", size,
                                                "), expected at most ", kMaxTensorBytes >> 30, " GiB")));
  };
  auto over_limit = [&](const absl::Status& s) {
    return Prefixed(g, n,
                    absl::InvalidArgumentError(absl::StrCat("output '", name, "' has shape ", ShapeToString(o.shape),
                                                            ": ", s.message())));
  };
  if (absl::Status s = CheckRank(static_cast<int64_t>(o.shape.size())); !s.ok()) return over_limit(s);
  // The constant dims of a partly symbolic shape too ([batch, 2^40] is over the limit at any batch).
  std::vector<int64_t> constants;
  for (const Dim& d : o.shape) constants.push_back(d.ConstValue().value_or(0));
  if (absl::Status s = CheckRankAndDims(constants); !s.ok()) return over_limit(s);
  auto dims = ConcreteDims(o.shape);
  if (!dims) {
    // Its element count: overflow, or a shape expression over the limits.
    if (auto numel = NumElements(o.shape); !numel.ok()) return over_limit(numel.status());
    return absl::OkStatus();
  }
  if (absl::Status s = CheckRankAndDims(*dims); !s.ok()) return over_limit(s);
  auto numel = CheckedNumElements(*dims);
  if (!numel.ok()) return too_large("its element count overflows int64");
  int64_t bytes = 0;
  if (__builtin_mul_overflow(*numel, static_cast<int64_t>(DTypeSize(o.dtype)), &bytes) || bytes > kMaxTensorBytes) {
    return too_large(absl::StrCat(*numel, " ", DTypeName(o.dtype), " elements"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status InferNode(const Graph& graph, Node& node) {
  if (!node.def) {
    return absl::InvalidArgumentError(absl::StrCat(graph.source, ": ", node.Describe(), ": unknown op"));
  }
  if (absl::Status s = CheckNodeAgainstDef(node, *node.def); !s.ok()) return Prefixed(graph, node, s);
  std::vector<ValueInfo> infos(node.inputs.size());
  std::vector<const ValueInfo*> ptrs(node.inputs.size(), nullptr);
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const Value* v = node.inputs[i];
    if (!v) continue;
    infos[i] = ValueInfo{v->name, v->dtype, v->shape, v->constant.get(),
                         v->sym_values ? &*v->sym_values : nullptr};
    ptrs[i] = &infos[i];
  }
  InferContext ctx(node, ptrs);
  auto outs = node.def->shape(ctx);
  if (!outs.ok()) return Prefixed(graph, node, outs.status());
  if (outs->size() < node.outputs.size()) {
    return Prefixed(graph, node, absl::InternalError("shape function returned too few outputs"));
  }
  std::optional<std::vector<std::vector<Dim>>> evaluated;
  bool all_given = true;
  for (size_t k = 0; k < node.outputs.size(); ++k) {
    if (node.outputs[k] && !(*outs)[k].sym_values && !IsFloat((*outs)[k].dtype)) all_given = false;
  }
  if (!all_given) evaluated = Evaluate(node, infos, *outs);
  for (size_t k = 0; k < node.outputs.size(); ++k) {
    Value* v = node.outputs[k];
    if (!v) continue;
    OutputInfo& o = (*outs)[k];
    for (const Dim& d : o.shape) {
      if (auto c = d.ConstValue(); c && *c < 0) {
        return Prefixed(graph, node, absl::InvalidArgumentError(absl::StrCat(
                                         "output '", v->name, "' would have negative dimension ",
                                         *c, " in shape ", ShapeToString(o.shape))));
      }
    }
    RETURN_IF_ERROR(CheckOutputSize(graph, node, v->name, o));
    v->dtype = o.dtype;
    v->shape = o.shape;
    v->sym_values = o.sym_values;
    if (evaluated && !v->sym_values) v->sym_values = (*evaluated)[k];
  }
  return absl::OkStatus();
}

absl::Status InferShapes(Graph& graph) {
  for (Node* node : graph.nodes()) RETURN_IF_ERROR(InferNode(graph, *node));
  return absl::OkStatus();
}

}  // namespace gcomp
