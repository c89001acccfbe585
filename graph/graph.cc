#include "graph/graph.h"

#include "absl/strings/str_cat.h"

namespace gcomp {

std::string Node::Describe() const { return absl::StrCat("node '", name, "' (", op, ")"); }

absl::StatusOr<Value*> Graph::AddValue(const std::string& name, DType dtype, Shape shape) {
  if (name.empty()) return absl::InvalidArgumentError("value with an empty name");
  if (value_by_name_.count(name)) {
    return absl::InvalidArgumentError(absl::StrCat("value '", name, "' is defined twice"));
  }
  auto v = std::make_unique<Value>();
  v->name = name;
  v->dtype = dtype;
  v->shape = std::move(shape);
  Value* raw = v.get();
  values_.push_back(std::move(v));
  value_by_name_[name] = raw;
  return raw;
}

absl::StatusOr<Value*> Graph::AddConstant(const std::string& name, Tensor data) {
  auto v = AddValue(name, data.dtype(), ShapeFromInts(data.dims()));
  if (!v.ok()) return v;
  (*v)->constant = std::make_shared<const Tensor>(std::move(data));
  return v;
}

absl::StatusOr<Value*> Graph::AddInput(const std::string& name, DType dtype, Shape shape) {
  auto v = AddValue(name, dtype, std::move(shape));
  if (v.ok()) inputs_.push_back(*v);
  return v;
}

absl::StatusOr<Node*> Graph::AddNode(const std::string& op, const std::string& name,
                                     std::vector<Value*> inputs, std::vector<Value*> outputs,
                                     Attributes attrs) {
  auto node = std::make_unique<Node>();
  node->op = op;
  node->name = name;
  node->attrs = std::move(attrs);
  for (Value* out : outputs) {
    if (out && out->producer) {
      return absl::InvalidArgumentError(
          absl::StrCat("value '", out->name, "' is produced by both ", out->producer->Describe(),
                       " and ", node->Describe()));
    }
    if (out && out->is_constant()) {
      return absl::InvalidArgumentError(absl::StrCat(
          node->Describe(), ": output '", out->name, "' is already an initializer or input"));
    }
  }
  for (Value* out : outputs) {
    if (out) out->producer = node.get();
  }
  for (Value* in : inputs) {
    if (in) in->users.push_back(node.get());
  }
  node->inputs = std::move(inputs);
  node->outputs = std::move(outputs);
  Node* raw = node.get();
  nodes_.push_back(std::move(node));
  return raw;
}

std::string Graph::UniqueValueName(const std::string& base) {
  std::string name = base;
  while (value_by_name_.count(name)) name = absl::StrCat(base, "_", next_unique_++);
  return name;
}

Value* Graph::FindValue(const std::string& name) const {
  auto it = value_by_name_.find(name);
  return it == value_by_name_.end() ? nullptr : it->second;
}

std::vector<Node*> Graph::nodes() const {
  std::vector<Node*> out;
  out.reserve(nodes_.size());
  for (const auto& n : nodes_) out.push_back(n.get());
  return out;
}

std::vector<Value*> Graph::values() const {
  std::vector<Value*> out;
  out.reserve(values_.size());
  for (const auto& v : values_) out.push_back(v.get());
  return out;
}

}  // namespace gcomp
