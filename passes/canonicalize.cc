// canonicalize: being written.
#include "passes/passes.h"

namespace gcomp::passes {

absl::StatusOr<bool> Canonicalize(Graph& g, const PassContext& ctx) { return false; }

}  // namespace gcomp::passes
