// The one API through which passes change a graph: create nodes (shapes inferred at once),
// replace all uses of a value, erase nodes, and restore order at the end.
#pragma once

#include <initializer_list>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"

namespace gcomp::passes {

class Rewriter {
 public:
  explicit Rewriter(Graph& g) : g_(g) {}
  Graph& graph() { return g_; }

  // Adds a node with fresh outputs named after `name`, infers their shapes, and sets its origin.
  absl::StatusOr<Node*> Create(const std::string& op, const std::string& name, std::vector<Value*> inputs,
                               Attributes attrs, std::vector<std::string> origin, int num_outputs = 1);
  absl::StatusOr<Value*> Constant(const std::string& name, Tensor t);
  // Every use of `from` now reads `to` (graph outputs keep their names).
  void ReplaceAllUses(Value* from, Value* to);
  // Erases `node` and then every producer chain that became unused because of it.
  absl::Status EraseWithDeadInputs(Node* node);
  absl::Status Erase(Node* node);
  // Erases a matched pattern: each node once nothing outside the set still uses its output.
  // Erased nodes are added to `erased` when given (drivers skip them in their node lists).
  absl::Status EraseAll(std::vector<Node*> nodes, std::set<Node*>* erased = nullptr);
  // Replaces `old` by a node of the same op, name, attributes, origin and decisions reading
  // `inputs`; uses of its outputs move to the new node's outputs.
  absl::StatusOr<Node*> RecreateWithInputs(Node* old, std::vector<Value*> inputs);
  // Restores topological order and drops unreferenced values; call once after rewriting.
  absl::Status Finish();

 private:
  Graph& g_;
};

// The union of the origins of `nodes`, in order, without repeats.
std::vector<std::string> MergeOrigins(std::initializer_list<const Node*> nodes);
std::vector<std::string> MergeOrigins(const std::vector<const Node*>& nodes);

// Pattern helpers for rules.
// The only user of `v`, or nullptr if it has none or several (graph outputs count as a user).
Node* SingleUser(const Graph& g, const Value* v);
// The constant scalar value of `v` (any rank, one element), if it is a constant.
std::optional<float> ScalarConstant(const Value* v);

}  // namespace gcomp::passes
