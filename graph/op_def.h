// The op table: every op (ONNX-level and gcomp's own) is defined once, with its arity,
// attribute types, shape function and reference kernel.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "graph/graph.h"

namespace gcomp {

// What shape inference knows about one input.
struct ValueInfo {
  std::string name;
  DType dtype = DType::kF32;
  Shape shape;
  const Tensor* constant = nullptr;              // concrete data when known
  const std::vector<Dim>* sym_values = nullptr;  // symbolic element values when known
};

// What a shape function says about one output.
struct OutputInfo {
  DType dtype = DType::kF32;
  Shape shape;
  std::optional<std::vector<Dim>> sym_values;
};

class InferContext {
 public:
  InferContext(const Node& node, std::vector<const ValueInfo*> inputs)
      : node_(node), inputs_(std::move(inputs)) {}

  const Node& node() const { return node_; }
  const Attributes& attrs() const { return node_.attrs; }
  size_t num_inputs() const { return inputs_.size(); }
  bool has(size_t i) const { return i < inputs_.size() && inputs_[i] != nullptr; }
  const ValueInfo& in(size_t i) const { return *inputs_[i]; }
  int64_t rank(size_t i) const { return static_cast<int64_t>(inputs_[i]->shape.size()); }
  size_t num_outputs() const { return node_.outputs.size(); }

  // Element values of integer input i as dims (constant data or symbolic values), if known.
  std::optional<std::vector<Dim>> DimValues(size_t i) const;
  // Element values of integer input i when it is a concrete constant.
  std::optional<std::vector<int64_t>> IntValues(size_t i) const;

  // InvalidArgument error whose text is the concatenation of the arguments.
  template <typename... Args>
  absl::Status Error(const Args&... args) const {
    return absl::InvalidArgumentError(absl::StrCat(args...));
  }
  // "input 'X'" for messages.
  std::string InputName(size_t i) const { return absl::StrCat("input '", inputs_[i]->name, "'"); }

 private:
  const Node& node_;
  std::vector<const ValueInfo*> inputs_;
};

struct KernelContext {
  const Node& node;
  std::span<const Tensor* const> inputs;  // nullptr for omitted optional inputs
  std::span<Tensor> outputs;              // allocated by the interpreter with inferred shapes
  const Attributes& attrs() const { return node.attrs; }
  const Tensor* in(size_t i) const { return i < inputs.size() ? inputs[i] : nullptr; }
};

using ShapeFn = std::function<absl::StatusOr<std::vector<OutputInfo>>(const InferContext&)>;
using RefKernel = std::function<absl::Status(KernelContext&)>;

struct OpDef {
  std::string name;
  int min_inputs = 1;
  int max_inputs = 1;
  int min_outputs = 1;
  int max_outputs = 1;
  std::vector<AttrSpec> attrs;
  ShapeFn shape;
  RefKernel kernel;
};

// The op table, built once on first use.
const OpDef* FindOp(const std::string& name);
std::vector<std::string> AllOpNames();

// Checks a node against its op definition (arity, attribute names and types).
absl::Status CheckNodeAgainstDef(const Node& node, const OpDef& def);

// Registration of op families; each lives in graph/ops/<family>.cc.
class OpTableBuilder {
 public:
  void Add(OpDef def);
  std::vector<OpDef>& defs() { return defs_; }

 private:
  std::vector<OpDef> defs_;
};
void RegisterElementwiseOps(OpTableBuilder& t);
void RegisterShapeOps(OpTableBuilder& t);
void RegisterNnOps(OpTableBuilder& t);
void RegisterFusedOps(OpTableBuilder& t);

}  // namespace gcomp
