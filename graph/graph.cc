#include "graph/graph.h"

#include <algorithm>
#include <map>
#include <set>

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

absl::Status Graph::EraseNode(Node* node) {
  for (Value* out : node->outputs) {
    if (!out) continue;
    if (!out->users.empty() || IsGraphOutput(out)) {
      return absl::InternalError(absl::StrCat("cannot erase ", node->Describe(), ": output '", out->name, "' is still used"));
    }
  }
  for (Value* in : node->inputs) {
    if (!in) continue;
    auto it = std::find(in->users.begin(), in->users.end(), node);
    if (it != in->users.end()) in->users.erase(it);
  }
  for (Value* out : node->outputs) {
    if (out) out->producer = nullptr;
  }
  auto it = std::find_if(nodes_.begin(), nodes_.end(), [&](const auto& n) { return n.get() == node; });
  if (it != nodes_.end()) nodes_.erase(it);
  return absl::OkStatus();
}

void Graph::SetInput(Node* node, size_t index, Value* v) {
  Value* old = node->inputs[index];
  if (old == v) return;
  node->inputs[index] = v;
  if (old && std::count(node->inputs.begin(), node->inputs.end(), old) == 0) {
    old->users.erase(std::remove(old->users.begin(), old->users.end(), node), old->users.end());
  }
  if (v && std::find(v->users.begin(), v->users.end(), node) == v->users.end()) v->users.push_back(node);
}

void Graph::Rename(Value* v, const std::string& name) {
  value_by_name_.erase(v->name);
  v->name = name;
  value_by_name_[name] = v;
}

void Graph::ReplaceAllUses(Value* from, Value* to) {
  if (from == to) return;
  std::vector<Node*> users = from->users;
  for (Node* user : users) {
    for (size_t i = 0; i < user->inputs.size(); ++i) {
      if (user->inputs[i] == from) SetInput(user, i, to);
    }
  }
  bool renamed = false;
  for (Value*& out : outputs_) {
    if (out != from) continue;
    out = to;
    if (!renamed && !to->is_constant() && std::find(inputs_.begin(), inputs_.end(), to) == inputs_.end()) {
      std::string keep = from->name;
      Rename(from, UniqueValueName(from->name + "_replaced"));
      Rename(to, keep);
      renamed = true;
    }
  }
}

absl::Status Graph::TopologicalSort() {
  // Kahn's algorithm, always taking the ready node that came first: stable for valid orders.
  std::map<const Node*, size_t> index;
  for (size_t i = 0; i < nodes_.size(); ++i) index[nodes_[i].get()] = i;
  std::vector<size_t> pending(nodes_.size(), 0);
  std::vector<std::vector<size_t>> users(nodes_.size());
  for (size_t i = 0; i < nodes_.size(); ++i) {
    std::set<const Node*> producers;
    for (const Value* in : nodes_[i]->inputs) {
      if (in && in->producer && index.count(in->producer)) producers.insert(in->producer);
    }
    for (const Node* p : producers) {
      users[index[p]].push_back(i);
      ++pending[i];
    }
  }
  std::set<size_t> ready;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (pending[i] == 0) ready.insert(i);
  }
  std::vector<size_t> order;
  while (!ready.empty()) {
    size_t i = *ready.begin();
    ready.erase(ready.begin());
    order.push_back(i);
    for (size_t u : users[i]) {
      if (--pending[u] == 0) ready.insert(u);
    }
  }
  if (order.size() != nodes_.size()) {
    for (size_t i = 0; i < nodes_.size(); ++i) {
      if (pending[i]) return absl::InternalError(absl::StrCat("graph has a cycle through ", nodes_[i]->Describe()));
    }
  }
  std::vector<std::unique_ptr<Node>> sorted;
  sorted.reserve(nodes_.size());
  for (size_t i : order) sorted.push_back(std::move(nodes_[i]));
  nodes_ = std::move(sorted);
  return absl::OkStatus();
}

absl::Status Graph::Reorder(const std::vector<Node*>& order) {
  if (order.size() != nodes_.size()) {
    return absl::InternalError(absl::StrCat("reorder: ", order.size(), " nodes for a graph of ", nodes_.size()));
  }
  std::map<const Node*, size_t> owned;
  for (size_t i = 0; i < nodes_.size(); ++i) owned[nodes_[i].get()] = i;
  std::set<const Node*> placed;
  for (const Node* n : order) {
    if (!owned.count(n) || placed.count(n)) return absl::InternalError("reorder: not a permutation of the graph's nodes");
    for (const Value* in : n->inputs) {
      if (in && in->producer && !placed.count(in->producer)) {
        return absl::InternalError(absl::StrCat("reorder: ", n->Describe(), " before the producer of its input '",
                                                in->name, "'"));
      }
    }
    placed.insert(n);
  }
  std::vector<std::unique_ptr<Node>> sorted;
  sorted.reserve(nodes_.size());
  for (const Node* n : order) sorted.push_back(std::move(nodes_[owned[n]]));
  nodes_ = std::move(sorted);
  return absl::OkStatus();
}

void Graph::RemoveUnusedValues() {
  std::vector<std::unique_ptr<Value>> kept;
  for (auto& v : values_) {
    bool used = v->producer || !v->users.empty() || IsGraphOutput(v.get()) ||
                std::find(inputs_.begin(), inputs_.end(), v.get()) != inputs_.end();
    if (used) {
      kept.push_back(std::move(v));
    } else {
      value_by_name_.erase(v->name);
    }
  }
  values_ = std::move(kept);
}

std::string Graph::UniqueNodeName(const std::string& base) {
  std::set<std::string> names;
  for (const auto& n : nodes_) names.insert(n->name);
  std::string name = base;
  for (int k = 1; names.count(name); ++k) name = absl::StrCat(base, "_", k);
  return name;
}

bool Graph::IsGraphOutput(const Value* v) const {
  return std::find(outputs_.begin(), outputs_.end(), v) != outputs_.end();
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
