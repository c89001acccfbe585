// fold_batchnorm: being written.
#include "passes/passes.h"

namespace gcomp::passes {

absl::StatusOr<bool> FoldBatchNorm(Graph& g, const PassContext& ctx) { return false; }

}  // namespace gcomp::passes
