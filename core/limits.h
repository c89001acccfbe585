// The resource limits that bound any model, plan or tensor file gcomp reads (the README's "Limits"
// table lists them with where each is checked). Each is checked where values enter (model import,
// shape inference, codegen, plan loading, tensor files) with a message naming the value, the limit
// and the node or buffer, before anything proportional to the value is allocated.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/status.h"

namespace gcomp {

// Bytes of one tensor (initializer, input, node output, plan buffer at the plan's max batch).
inline constexpr int64_t kMaxTensorBytes = int64_t{4} << 30;
// Dimensions of one tensor.
inline constexpr int64_t kMaxRank = 8;
// One dimension (kernels index dims with 32-bit integers).
inline constexpr int64_t kMaxDim = (int64_t{1} << 31) - 1;
// Nodes of a model graph.
inline constexpr int64_t kMaxNodes = 100000;
// Steps, and buffers, of a plan (a model's nodes, initializers, inputs and outputs, and what the
// passes add: ten times the node limit).
inline constexpr int64_t kMaxPlanEntries = 10 * kMaxNodes;
// A plan's activation memory at its max batch: the batch arena times max_batch plus the fixed arena.
inline constexpr int64_t kMaxArenaBytes = int64_t{64} << 30;
// The workspace one step's kernel may ask for.
inline constexpr int64_t kMaxWorkspaceBytes = int64_t{16} << 30;
// A plan's largest batch (compile --batch).
inline constexpr int64_t kMaxPlanBatch = 4096;
// A symbolic dim's polynomial: its terms (batch*197+1 has 2) and the symbols multiplied in one
// term (batch*seq has 2; the element count of a rank-8 tensor of symbolic dims has 8).
inline constexpr int64_t kMaxDimTerms = 32;
inline constexpr int64_t kMaxDimDegree = kMaxRank;

// InvalidArgument "rank R, over the limit of 8" or "dim D is N, over the limit of 2147483647" (the
// caller names the value and the node); OK when `dims` are within the limits. Negative dims are
// the caller's to refuse.
absl::Status CheckRankAndDims(const std::vector<int64_t>& dims);
absl::Status CheckRank(int64_t rank);

}  // namespace gcomp
