// `--target ref` as one more executor: the reference interpreter (graph/interpreter.h) running an
// optimized graph, behind the runtime::Executor interface that the backends' executors implement,
// so that run, check and bench have one code path. It lives with the tools: the runtime does not
// know the IR.
#pragma once

#include <memory>

#include "graph/graph.h"
#include "runtime/backend.h"

namespace gcomp::cli {

// `emulate_storage`: round values to the storage type each node's precision decision names.
std::unique_ptr<runtime::Executor> MakeReferenceExecutor(std::unique_ptr<Graph> graph, bool emulate_storage);

}  // namespace gcomp::cli
