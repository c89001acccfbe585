#include "passes/rewriter.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "graph/op_def.h"
#include "graph/shape_inference.h"
#include "core/status_macros.h"

namespace gcomp::passes {

absl::StatusOr<Node*> Rewriter::Create(const std::string& op, const std::string& name, std::vector<Value*> inputs,
                                       Attributes attrs, std::vector<std::string> origin, int num_outputs) {
  const OpDef* def = FindOp(op);
  if (!def) return absl::InternalError(absl::StrCat("op table has no entry for ", op));
  std::string node_name = g_.UniqueNodeName(name);
  std::vector<Value*> outs;
  for (int i = 0; i < num_outputs; ++i) {
    ASSIGN_OR_RETURN(Value * v, g_.AddValue(g_.UniqueValueName(num_outputs == 1 ? node_name + "_out"
                                                                                 : absl::StrCat(node_name, "_out", i)),
                                            DType::kF32, {}));
    outs.push_back(v);
  }
  ASSIGN_OR_RETURN(Node * node, g_.AddNode(op, node_name, std::move(inputs), std::move(outs), std::move(attrs)));
  node->def = def;
  node->origin = std::move(origin);
  RETURN_IF_ERROR(InferNode(g_, *node));
  return node;
}

absl::StatusOr<Value*> Rewriter::Constant(const std::string& name, Tensor t) {
  return g_.AddConstant(g_.UniqueValueName(name), std::move(t));
}

void Rewriter::ReplaceAllUses(Value* from, Value* to) { g_.ReplaceAllUses(from, to); }

absl::Status Rewriter::Erase(Node* node) { return g_.EraseNode(node); }

absl::Status Rewriter::EraseAll(std::vector<Node*> nodes, std::set<Node*>* erased) {
  while (!nodes.empty()) {
    bool progress = false;
    for (auto it = nodes.begin(); it != nodes.end();) {
      Node* n = *it;
      bool used = std::any_of(n->outputs.begin(), n->outputs.end(),
                              [&](const Value* o) { return o && (!o->users.empty() || g_.IsGraphOutput(o)); });
      if (used) {
        ++it;
        continue;
      }
      RETURN_IF_ERROR(g_.EraseNode(n));
      if (erased) erased->insert(n);
      it = nodes.erase(it);
      progress = true;
    }
    if (!progress) {
      return absl::InternalError(absl::StrCat(nodes.front()->Describe(), " of a matched pattern is still used outside it"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Node*> Rewriter::RecreateWithInputs(Node* old, std::vector<Value*> inputs) {
  const std::string name = old->name;
  ASSIGN_OR_RETURN(Node * nn, Create(old->op, name, std::move(inputs), old->attrs, old->origin,
                                     static_cast<int>(old->outputs.size())));
  for (size_t k = 0; k < old->outputs.size(); ++k) {
    if (old->outputs[k]) ReplaceAllUses(old->outputs[k], nn->outputs[k]);
  }
  nn->decisions = old->decisions;
  nn->precision = old->precision;
  RETURN_IF_ERROR(g_.EraseNode(old));
  nn->name = name;  // the old node is gone, so its name is free again
  return nn;
}

absl::Status Rewriter::EraseWithDeadInputs(Node* node) {
  std::vector<Value*> inputs = node->inputs;
  RETURN_IF_ERROR(g_.EraseNode(node));
  for (Value* in : inputs) {
    if (!in || !in->producer || !in->users.empty() || g_.IsGraphOutput(in)) continue;
    Node* p = in->producer;
    bool dead = std::all_of(p->outputs.begin(), p->outputs.end(),
                            [&](const Value* o) { return !o || (o->users.empty() && !g_.IsGraphOutput(o)); });
    if (dead) RETURN_IF_ERROR(EraseWithDeadInputs(p));
  }
  return absl::OkStatus();
}

absl::Status Rewriter::Finish() {
  RETURN_IF_ERROR(g_.TopologicalSort());
  g_.RemoveUnusedValues();
  return absl::OkStatus();
}

RuleSweep::RuleSweep(Graph& g, const PassContext& ctx) : g_(g), rw_(g), ctx_(ctx) {
  const std::vector<Node*> nodes = g.nodes();
  for (size_t i = 0; i < nodes.size(); ++i) order_[nodes[i]] = i;
}

void RuleSweep::Explain(const Node& at, const std::string& why, const std::string& step) const {
  ctx_.Explain(absl::StrCat(rule_ ? rule_->name : "", step), at, why);
}

int64_t RuleSweep::Position(const Node* n) const {
  auto it = order_.find(n);
  return it == order_.end() ? -1 : static_cast<int64_t>(it->second);
}

absl::Status RuleSweep::EraseAll(std::vector<Node*> nodes) {
  std::set<Node*> now;
  absl::Status status = rw_.EraseAll(std::move(nodes), &now);
  for (Node* n : now) {
    order_.erase(n);  // a node created later may reuse the address
    erased_.insert(n);
  }
  return status;
}

absl::StatusOr<bool> ApplyRules(Graph& g, const PassContext& ctx, const std::vector<RewriteRule>& rules) {
  RuleSweep sweep(g, ctx);
  bool changed = false;
  for (Node* n : g.nodes()) {
    for (const RewriteRule& rule : rules) {
      if (sweep.erased_.count(n)) break;
      if (std::find(rule.root_ops.begin(), rule.root_ops.end(), n->op) == rule.root_ops.end()) continue;
      sweep.rule_ = &rule;
      ASSIGN_OR_RETURN(bool fired, rule.apply(sweep, n));
      changed |= fired;
    }
  }
  if (changed) RETURN_IF_ERROR(sweep.rw_.Finish());
  return changed;
}

std::vector<std::string> MergeOrigins(const std::vector<const Node*>& nodes) {
  std::vector<std::string> out;
  for (const Node* n : nodes) {
    if (!n) continue;
    for (const std::string& o : n->origin) {
      if (std::find(out.begin(), out.end(), o) == out.end()) out.push_back(o);
    }
  }
  return out;
}

std::vector<std::string> MergeOrigins(std::initializer_list<const Node*> nodes) {
  return MergeOrigins(std::vector<const Node*>(nodes));
}

Node* SingleUser(const Graph& g, const Value* v) {
  if (!v || v->users.size() != 1 || g.IsGraphOutput(v)) return nullptr;
  Node* u = v->users[0];
  return std::count(u->inputs.begin(), u->inputs.end(), v) == 1 ? u : nullptr;
}

std::optional<float> ScalarConstant(const Value* v) {
  if (!v || !v->is_constant() || v->constant->numel() != 1) return std::nullopt;
  return v->constant->GetF32(0);
}

}  // namespace gcomp::passes
