#include <algorithm>
#include <map>
#include <memory>

#include "graph/op_def.h"

namespace gcomp {
namespace {

const std::map<std::string, OpDef>& Table() {
  static const auto* table = [] {
    OpTableBuilder b;
    RegisterElementwiseOps(b);
    RegisterShapeOps(b);
    RegisterNnOps(b);
    RegisterFusedOps(b);
    auto* m = new std::map<std::string, OpDef>();
    for (OpDef& d : b.defs()) {
      std::string name = d.name;
      m->emplace(name, std::move(d));
    }
    return m;
  }();
  return *table;
}

}  // namespace

void OpTableBuilder::Add(OpDef def) { defs_.push_back(std::move(def)); }

const OpDef* FindOp(const std::string& name) {
  const auto& t = Table();
  auto it = t.find(name);
  return it == t.end() ? nullptr : &it->second;
}

std::vector<std::string> AllOpNames() {
  std::vector<std::string> out;
  for (const auto& [name, def] : Table()) out.push_back(name);
  return out;
}

absl::Status CheckNodeAgainstDef(const Node& node, const OpDef& def) {
  // Trailing omitted inputs do not count.
  int n_in = static_cast<int>(node.inputs.size());
  while (n_in > 0 && node.inputs[n_in - 1] == nullptr) --n_in;
  if (n_in < def.min_inputs || n_in > def.max_inputs) {
    return absl::InvalidArgumentError(absl::StrCat("has ", n_in, " inputs, expected ",
                                                   def.min_inputs == def.max_inputs ? "" : "between ",
                                                   def.min_inputs,
                                                   def.min_inputs == def.max_inputs ? "" : absl::StrCat(" and ", def.max_inputs)));
  }
  for (int i = 0; i < def.min_inputs; ++i) {
    if (node.inputs[i] == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("required input ", i, " is missing"));
    }
  }
  int n_out = static_cast<int>(node.outputs.size());
  if (n_out < def.min_outputs || n_out > def.max_outputs) {
    return absl::InvalidArgumentError(absl::StrCat("has ", n_out, " outputs, expected between ",
                                                   def.min_outputs, " and ", def.max_outputs));
  }
  if (n_out == 0 || node.outputs[0] == nullptr) {
    return absl::InvalidArgumentError("its first output is missing");
  }
  return CheckAttributes(node.attrs, def.attrs, /*allow_unknown=*/true);
}

std::optional<std::vector<Dim>> InferContext::DimValues(size_t i) const {
  if (!has(i)) return std::nullopt;
  const ValueInfo& v = in(i);
  if (v.constant && !IsFloat(v.constant->dtype())) {
    std::vector<Dim> out;
    for (int64_t x : v.constant->ToI64()) out.emplace_back(x);
    return out;
  }
  if (v.sym_values) return *v.sym_values;
  return std::nullopt;
}

std::optional<std::vector<int64_t>> InferContext::IntValues(size_t i) const {
  auto dims = DimValues(i);
  if (!dims) return std::nullopt;
  std::vector<int64_t> out;
  for (const Dim& d : *dims) {
    if (!d.IsConst()) return std::nullopt;
    out.push_back(d.value());
  }
  return out;
}

}  // namespace gcomp
