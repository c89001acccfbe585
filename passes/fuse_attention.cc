// fuse_attention: being written.
#include "passes/passes.h"

namespace gcomp::passes {

absl::StatusOr<bool> FuseAttention(Graph& g, const PassContext& ctx) { return false; }

}  // namespace gcomp::passes
