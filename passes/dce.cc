// dce: removes nodes none of whose outputs is used by another node or is a graph output.
//
//   %a = Op(...)      <- no users, not an output: erased, and its inputs' producers if they
//                        became unused too.
#include "core/status_macros.h"
#include "passes/passes.h"
#include "passes/rewriter.h"

namespace gcomp::passes {

absl::StatusOr<bool> EliminateDeadCode(Graph& g, const PassContext& ctx) {
  Rewriter rw(g);
  bool changed = false;
  std::vector<Node*> nodes = g.nodes();
  // Reverse order so that whole dead chains go in one sweep.
  for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
    Node* n = *it;
    bool used = false;
    for (const Value* out : n->outputs) used |= out && (!out->users.empty() || g.IsGraphOutput(out));
    if (used) continue;
    RETURN_IF_ERROR(rw.Erase(n));
    changed = true;
  }
  if (changed) RETURN_IF_ERROR(rw.Finish());
  return changed;
}

}  // namespace gcomp::passes
