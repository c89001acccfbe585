// Entry points of every pass; each lives in its own file of the same name.
#pragma once

#include "passes/pass.h"

namespace gcomp::passes {

absl::StatusOr<bool> Canonicalize(Graph& g, const PassContext& ctx);
absl::StatusOr<bool> RemoveIdentity(Graph& g, const PassContext& ctx);
absl::StatusOr<bool> FoldConstants(Graph& g, const PassContext& ctx);
absl::StatusOr<bool> FoldGuards(Graph& g, const PassContext& ctx);
absl::StatusOr<bool> FoldBatchNorm(Graph& g, const PassContext& ctx);
absl::StatusOr<bool> EliminateCommonSubexpressions(Graph& g, const PassContext& ctx);
absl::StatusOr<bool> EliminateDeadCode(Graph& g, const PassContext& ctx);
absl::StatusOr<bool> FuseLayerNorm(Graph& g, const PassContext& ctx);
absl::StatusOr<bool> FuseGelu(Graph& g, const PassContext& ctx);
absl::StatusOr<bool> FuseAttention(Graph& g, const PassContext& ctx);
absl::StatusOr<bool> FuseGemm(Graph& g, const PassContext& ctx);
absl::StatusOr<bool> FuseConv(Graph& g, const PassContext& ctx);
absl::StatusOr<bool> NarrowRows(Graph& g, const PassContext& ctx);
absl::StatusOr<bool> LayoutNhwc(Graph& g, const PassContext& ctx);
absl::StatusOr<bool> LowerConv(Graph& g, const PassContext& ctx);
absl::StatusOr<bool> LowerAttention(Graph& g, const PassContext& ctx);
absl::StatusOr<bool> FoldAttentionLayout(Graph& g, const PassContext& ctx);
absl::StatusOr<bool> LowerGemm(Graph& g, const PassContext& ctx);
absl::StatusOr<bool> LowerFp8(Graph& g, const PassContext& ctx);
absl::StatusOr<bool> AssignPrecision(Graph& g, const PassContext& ctx);
absl::StatusOr<bool> ScheduleLate(Graph& g, const PassContext& ctx);

}  // namespace gcomp::passes
