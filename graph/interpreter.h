// The reference interpreter: executes any IR graph op by op with the op table's reference
// kernels (simple loops, fp32 math). It is the oracle for passes and backends, never a fast path.
#pragma once

#include <functional>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "graph/graph.h"

namespace gcomp {

struct InterpreterOptions {
  // Round each node's float outputs to the node's `precision` (fp16/bf16/fp8 storage emulation).
  bool emulate_storage = false;
  // Called with every node output once computed (fp8 calibration reads the max |x| of each value).
  std::function<void(const Value&, const Tensor&)> observe;
};

// Runs `graph` on named inputs; returns the graph outputs by name. Input dtypes and shapes are
// checked against the graph (symbols such as `batch` bind to the first value seen).
absl::StatusOr<std::map<std::string, Tensor>> RunReference(
    const Graph& graph, const std::map<std::string, Tensor>& inputs,
    const InterpreterOptions& options = {});

}  // namespace gcomp
