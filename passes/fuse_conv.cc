// fuse_conv: being written.
#include "passes/passes.h"

namespace gcomp::passes {

absl::StatusOr<bool> FuseConv(Graph& g, const PassContext& ctx) { return false; }

}  // namespace gcomp::passes
