// ONNX model -> graph IR. Opset differences are normalized here (import loose, then the strict
// typed IR): later layers never see protobuf types or per-opset operator signatures.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "graph/graph.h"

namespace gcomp::frontend {

// Opsets 1-6 are read as ONNX Runtime reads them: their attribute forms (consumed_inputs, the
// broadcast/axis of binary ops, Reshape's shape, Concat's default axis, Cast's type names, ...) are
// normalized into the current ops at import.
inline constexpr int64_t kMinOpset = 1;
inline constexpr int64_t kMaxOpset = 23;

// Imports a model file; external data is resolved inside the file's folder.
absl::StatusOr<std::unique_ptr<Graph>> ImportOnnxFile(const std::string& path);

// Imports a serialized model. `source` names it in messages; `base_dir` is the folder external
// data must come from (empty: external data is refused).
absl::StatusOr<std::unique_ptr<Graph>> ImportOnnxBytes(const std::string& bytes, const std::string& source,
                                                       const std::string& base_dir);

}  // namespace gcomp::frontend
