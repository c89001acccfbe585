// The one API through which passes change a graph: create nodes (shapes inferred at once),
// replace all uses of a value, erase nodes, and restore order at the end; and the declared form of
// a pass's rewrite rules with the driver that offers them the graph's nodes.
#pragma once

#include <initializer_list>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "passes/pass.h"

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

// ---- rules ----
class RuleSweep;

// A rewrite rule, declared as ONNX Runtime's rewrite rules are: its name (the rule of `--explain`),
// the op types its pattern starts at, and the rule itself, which matches at `root` and rewrites;
// it returns whether it changed the graph ("no match" is not an error). A driver offers a node
// only to the rules whose root_ops hold its op.
struct RewriteRule {
  const char* name;
  std::vector<std::string> root_ops;
  absl::StatusOr<bool> (*apply)(RuleSweep& sweep, Node* root);
};

// What a rule sees during one sweep of its pass over the graph.
class RuleSweep {
 public:
  RuleSweep(Graph& g, const PassContext& ctx);
  Graph& graph() { return rw_.graph(); }
  const Graph& graph() const { return g_; }
  Rewriter& rewriter() { return rw_; }
  // Records that the rule offered the node did not fire at `at`; `step` names the part of its
  // pattern that failed ("Bias": the rule FuseConv explains as FuseConvBias).
  void Explain(const Node& at, const std::string& why, const std::string& step = "") const;
  // Where `n` stood in graph order when the sweep began; -1 for a node created during it.
  int64_t Position(const Node* n) const;
  // Rewriter::EraseAll; the sweep offers no erased node to a rule.
  absl::Status EraseAll(std::vector<Node*> nodes);

 private:
  friend absl::StatusOr<bool> ApplyRules(Graph& g, const PassContext& ctx, const std::vector<RewriteRule>& rules);
  Graph& g_;
  Rewriter rw_;
  const PassContext& ctx_;
  const RewriteRule* rule_ = nullptr;
  std::map<const Node*, size_t> order_;
  std::set<Node*> erased_;
};

// One sweep: every node of `g`, in graph order as the sweep begins, is offered to each rule of
// `rules` (in their order) whose root_ops hold its op, unless an earlier rewrite erased it. Restores
// order (Rewriter::Finish) when a rule changed the graph; returns whether one did.
absl::StatusOr<bool> ApplyRules(Graph& g, const PassContext& ctx, const std::vector<RewriteRule>& rules);

// The union of the origins of `nodes`, in order, without repeats.
std::vector<std::string> MergeOrigins(std::initializer_list<const Node*> nodes);
std::vector<std::string> MergeOrigins(const std::vector<const Node*>& nodes);

// Pattern helpers for rules.
// The only user of `v`, or nullptr if it has none or several (graph outputs count as a user).
Node* SingleUser(const Graph& g, const Value* v);
// The constant scalar value of `v` (any rank, one element), if it is a constant.
std::optional<float> ScalarConstant(const Value* v);

}  // namespace gcomp::passes
