#include "passes/passes.h"

namespace gcomp::passes {

const std::vector<PassInfo>& AllPasses() {
  static const std::vector<PassInfo> kPasses = {
      {"canonicalize", Canonicalize, "one IR form per op"},
      {"remove-identity", RemoveIdentity, "remove Identity and inference Dropout"},
      {"fold-constants", FoldConstants, "evaluate nodes whose inputs are all known"},
      {"fold-guards", FoldGuards, "constant-condition Where, x + 0, and SDPA NaN guards on unmasked softmax"},
      {"fold-batchnorm", FoldBatchNorm, "BatchNormalization into the preceding Conv, else a scale/bias"},
      {"cse", EliminateCommonSubexpressions, "merge identical nodes and constants"},
      {"dce", EliminateDeadCode, "remove nodes whose outputs are unused"},
      {"fuse-layernorm", FuseLayerNorm, "decomposed LayerNorm -> LayerNorm"},
      {"fuse-gelu", FuseGelu, "erf/tanh GELU chains -> Gelu"},
      {"fuse-attention", FuseAttention, "softmax(Q K^T scale) V -> Attention"},
      {"fuse-gemm", FuseGemm, "MatMul/Gemm + bias + activation + residual -> FusedGemm"},
      {"fuse-conv", FuseConv, "Conv + bias + residual + activation -> FusedConv"},
      {"narrow-rows", NarrowRows, "row-wise LayerNorm/FusedGemm compute only the rows their Gather readers take"},
      {"layout-nhwc", LayoutNhwc, "conv chains in NHWC for targets preferring it; inverse Transposes cancelled"},
      {"lower-conv", LowerConv, "FusedConv -> GEMM (1x1), implicit GEMM or im2col + GEMM, by target"},
      {"lower-attention", LowerAttention, "Attention -> fused kernel or batched GEMMs + softmax, by target"},
      {"fold-attention-layout", FoldAttentionLayout,
       "Attention reads Q/K/V and writes Y in place where view chains only cut heads out of token rows"},
      {"lower-fp8", LowerFp8, "FusedGemms with fp8 operands read e4m3 bytes where the target has an fp8 GEMM kernel"},
      {"lower-gemm", LowerGemm, "records whether each FusedGemm activation is a fused epilogue on the target"},
      {"assign-precision", AssignPrecision, "storage precision per node for --precision/--keep-fp32, with casts"},
      {"schedule-late", ScheduleLate, "each node just before its first reader"},
  };
  return kPasses;
}

}  // namespace gcomp::passes
