// Shape and dtype inference over a whole graph, driven by the op table's shape functions.
#pragma once

#include "absl/status/status.h"
#include "graph/graph.h"

namespace gcomp {

// Infers dtype, shape and (for small integer tensors) element values of every node output, in
// topological order. Errors read "<source>: node 'n' (Op): <what was expected vs found>".
absl::Status InferShapes(Graph& graph);
// Re-infers one node's outputs (passes call it after creating or changing a node).
absl::Status InferNode(const Graph& graph, Node& node);

}  // namespace gcomp
