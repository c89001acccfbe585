#include "graph/interpreter.h"

#include <unordered_map>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/op_def.h"
#include "core/status_macros.h"

namespace gcomp {
namespace {

absl::Status BindInput(const Value& v, const Tensor& t, std::map<std::string, int64_t>& symbols) {
  if (t.dtype() != v.dtype) {
    return absl::InvalidArgumentError(absl::StrCat("input '", v.name, "' has dtype ", DTypeName(t.dtype()),
                                                   ", expected ", DTypeName(v.dtype)));
  }
  std::string shape_str = absl::StrCat("[", absl::StrJoin(t.dims(), ","), "]");
  if (t.rank() != static_cast<int64_t>(v.shape.size())) {
    return absl::InvalidArgumentError(absl::StrCat("input '", v.name, "' has shape ", shape_str,
                                                   ", expected ", ShapeToString(v.shape)));
  }
  for (size_t d = 0; d < v.shape.size(); ++d) {
    const Dim& dim = v.shape[d];
    int64_t actual = t.dims()[d];
    if (dim.IsConst()) {
      if (dim.value() != actual) {
        return absl::InvalidArgumentError(absl::StrCat("input '", v.name, "' has shape ", shape_str,
                                                       ", expected ", ShapeToString(v.shape)));
      }
      continue;
    }
    auto syms = dim.Symbols();
    if (syms.size() == 1 && dim == Dim::Symbol(syms[0])) {
      auto [it, inserted] = symbols.emplace(syms[0], actual);
      if (!inserted && it->second != actual) {
        return absl::InvalidArgumentError(absl::StrCat("input '", v.name, "' has shape ", shape_str, ", expected ",
                                                       ShapeToString(v.shape), " with ", syms[0], " = ", it->second,
                                                       " (bound by an earlier input)"));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::map<std::string, Tensor>> RunReference(const Graph& graph,
                                                           const std::map<std::string, Tensor>& inputs,
                                                           const InterpreterOptions& options) {
  std::unordered_map<const Value*, Tensor> env;
  std::map<std::string, int64_t> symbols;
  for (const Value* v : graph.inputs()) {
    auto it = inputs.find(v->name);
    if (it == inputs.end()) {
      return absl::InvalidArgumentError(absl::StrCat(graph.source, ": missing graph input '", v->name, "' (expected ",
                                                     DTypeName(v->dtype), ShapeToString(v->shape), ")"));
    }
    if (absl::Status s = BindInput(*v, it->second, symbols); !s.ok()) {
      return absl::Status(s.code(), absl::StrCat(graph.source, ": ", s.message()));
    }
    env[v] = it->second;
  }
  for (const auto& [name, t] : inputs) {
    const Value* v = graph.FindValue(name);
    if (!v || v->producer || v->is_constant() ||
        std::find(graph.inputs().begin(), graph.inputs().end(), v) == graph.inputs().end()) {
      std::vector<std::string> names;
      for (const Value* in : graph.inputs()) names.push_back(in->name);
      return absl::InvalidArgumentError(absl::StrCat(
          graph.source, ": '", name,
          "' is not an input of the graph, expected one of: ", names.empty() ? "(none)" : absl::StrJoin(names, ", ")));
    }
  }
  // Remaining uses of each value, to free intermediates early.
  std::unordered_map<const Value*, size_t> uses;
  for (const Node* n : graph.nodes()) {
    for (const Value* in : n->inputs) {
      if (in) ++uses[in];
    }
  }
  for (const Value* out : graph.outputs()) ++uses[out];

  for (const Node* node : graph.nodes()) {
    std::vector<ValueInfo> infos(node->inputs.size());
    std::vector<const ValueInfo*> info_ptrs(node->inputs.size(), nullptr);
    std::vector<const Tensor*> in_tensors(node->inputs.size(), nullptr);
    for (size_t i = 0; i < node->inputs.size(); ++i) {
      const Value* v = node->inputs[i];
      if (!v) continue;
      const Tensor* t = v->constant.get();
      if (!t) {
        auto it = env.find(v);
        if (it == env.end()) {
          return absl::InternalError(absl::StrCat(graph.source, ": ", node->Describe(), ": input '",
                                                  v->name, "' has not been computed"));
        }
        t = &it->second;
      }
      in_tensors[i] = t;
      infos[i] = ValueInfo{v->name, t->dtype(), ShapeFromInts(t->dims()), t, nullptr};
      info_ptrs[i] = &infos[i];
    }
    auto prefix = [&](const absl::Status& s) {
      return absl::Status(s.code(), absl::StrCat(graph.source, ": ", node->Describe(), ": ", s.message()));
    };
    InferContext ctx(*node, info_ptrs);
    auto outs = node->def->shape(ctx);
    if (!outs.ok()) return prefix(outs.status());
    std::vector<Tensor> out_tensors;
    for (size_t k = 0; k < node->outputs.size(); ++k) {
      auto dims = ConcreteDims((*outs)[k].shape);
      if (!dims) {
        return prefix(absl::InternalError(
            absl::StrCat("output shape ", ShapeToString((*outs)[k].shape), " is not concrete")));
      }
      auto t = Tensor::Zeros((*outs)[k].dtype, *dims);
      if (!t.ok()) return prefix(t.status());
      out_tensors.push_back(std::move(*t));
    }
    KernelContext kc{*node, in_tensors, out_tensors};
    if (absl::Status s = node->def->kernel(kc); !s.ok()) return prefix(s);
    for (size_t k = 0; k < node->outputs.size(); ++k) {
      const Value* v = node->outputs[k];
      if (!v) continue;
      Tensor& t = out_tensors[k];
      if (options.emulate_storage && IsFloat(t.dtype()) && node->precision != DType::kF32) {
        for (int64_t i = 0; i < t.numel(); ++i) t.SetF32(i, RoundToStorage(t.GetF32(i), node->precision));
      }
      if (options.observe) options.observe(*v, t);
      env[v] = std::move(t);
    }
    for (const Value* in : node->inputs) {
      if (in && !in->is_constant() && --uses[in] == 0) env.erase(in);
    }
  }
  std::map<std::string, Tensor> results;
  for (const Value* out : graph.outputs()) {
    if (out->is_constant()) {
      results[out->name] = *out->constant;
      continue;
    }
    auto it = env.find(out);
    if (it == env.end()) {
      return absl::InternalError(absl::StrCat("graph output '", out->name, "' was not computed"));
    }
    results[out->name] = it->second;
  }
  return results;
}

}  // namespace gcomp
