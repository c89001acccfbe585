// remove-identity: Identity and inference-mode Dropout copy their input.
//
//   %y = Identity(%x)   ->  uses of %y read %x
//   %y, %mask = Dropout(%x)  (mask unused)  ->  uses of %y read %x
// Precondition: a Dropout's mask output is unused (a used mask keeps the node).
#include <algorithm>

#include "core/status_macros.h"
#include "passes/passes.h"
#include "passes/rewriter.h"

namespace gcomp::passes {

absl::StatusOr<bool> RemoveIdentity(Graph& g, const PassContext& ctx) {
  Rewriter rw(g);
  bool changed = false;
  for (Node* n : g.nodes()) {
    if (n->op != "Identity" && n->op != "Dropout") continue;
    Value* mask = n->output(1);
    if (mask && (!mask->users.empty() || g.IsGraphOutput(mask))) {
      ctx.Explain("RemoveIdentity", *n, "the Dropout mask output is used");
      continue;
    }
    Value* in = n->input(0);
    Value* out = n->output(0);
    if (g.IsGraphOutput(out) && (g.IsGraphOutput(in) || in->is_constant() ||
                                 std::find(g.inputs().begin(), g.inputs().end(), in) != g.inputs().end())) {
      ctx.Explain("RemoveIdentity", *n, "it copies a graph input, constant or output to a graph output");
      continue;
    }
    rw.ReplaceAllUses(out, in);
    RETURN_IF_ERROR(rw.Erase(n));
    changed = true;
  }
  if (changed) RETURN_IF_ERROR(rw.Finish());
  return changed;
}

}  // namespace gcomp::passes
