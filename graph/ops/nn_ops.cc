#include "graph/ops/op_helpers.h"

namespace gcomp {
void RegisterNnOps(OpTableBuilder& t) {}
}  // namespace gcomp
