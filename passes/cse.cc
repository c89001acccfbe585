// cse: being written.
#include "passes/passes.h"

namespace gcomp::passes {

absl::StatusOr<bool> EliminateCommonSubexpressions(Graph& g, const PassContext& ctx) { return false; }

}  // namespace gcomp::passes
