// schedule-late (O3, last): each node runs just before the first node that reads it.
//
//   %d = Conv(%x)            (a ResNet downsample, first in its block)
//   %a = Conv(%x); %b = Conv(%a)
//   %y = FusedConv(%b, ..., residual %d)
//     -> %a, %b, %d, %y: %d is produced right before its reader, so the block's largest tensor
//        (batch 8: 25.7 MB of f32 at ResNet-50's first stage) is read back from cache rather than
//        after two convolutions have streamed through it, and it is not live while they run.
//
// The order is demand-driven: the nodes no other node reads (the graph's outputs) are taken in
// their order, and each is preceded by its not yet placed producers, input by input, each of those
// preceded by theirs in turn. Every deferred node records where it went.
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "passes/passes.h"

namespace gcomp::passes {
namespace {

bool HasReader(const Node* n) {
  for (const Value* out : n->outputs) {
    if (out && !out->users.empty()) return true;
  }
  return false;
}

}  // namespace

absl::StatusOr<bool> ScheduleLate(Graph& g, const PassContext&) {
  const std::vector<Node*> nodes = g.nodes();
  std::vector<Node*> order;
  order.reserve(nodes.size());
  std::unordered_set<const Node*> placed, open;
  // Explicit stack of (node, next input to visit): graphs may be deep chains.
  std::vector<std::pair<Node*, size_t>> stack;
  for (Node* root : nodes) {
    if (HasReader(root) || placed.count(root)) continue;
    stack.push_back({root, 0});
    open.insert(root);
    while (!stack.empty()) {
      auto& [n, next] = stack.back();
      if (next < n->inputs.size()) {
        const Value* in = n->inputs[next++];
        Node* p = in ? in->producer : nullptr;
        if (p && !placed.count(p)) {
          if (open.count(p)) return absl::InternalError(absl::StrCat("schedule-late: a cycle through ", p->Describe()));
          open.insert(p);
          stack.push_back({p, 0});
        }
        continue;
      }
      placed.insert(n);
      open.erase(n);
      order.push_back(n);
      stack.pop_back();
    }
  }
  // Every node reaches a node without readers; anything else (none in a valid graph) keeps the
  // order it had.
  if (order.size() != nodes.size()) return false;
  if (order == nodes) return false;
  std::unordered_map<const Node*, size_t> before;
  for (size_t i = 0; i < nodes.size(); ++i) before[nodes[i]] = i;
  for (size_t i = 0; i + 1 < order.size(); ++i) {
    if (i > before[order[i]]) {
      order[i]->decisions.push_back({"schedule", "deferred",
                                     absl::StrCat("runs just before its first reader ", order[i + 1]->name,
                                                  " (step ", i, ", was ", before[order[i]], ")")});
    }
  }
  RETURN_IF_ERROR(g.Reorder(order));
  return true;
}

}  // namespace gcomp::passes
