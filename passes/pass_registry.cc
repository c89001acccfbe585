#include "passes/passes.h"

namespace gcomp::passes {

const std::vector<PassInfo>& AllPasses() {
  static const std::vector<PassInfo> kPasses = {
      {"canonicalize", Canonicalize, "one IR form per op"},
      {"remove-identity", RemoveIdentity, "remove Identity and inference Dropout"},
      {"fold-constants", FoldConstants, "evaluate nodes whose inputs are all known"},
      {"fold-batchnorm", FoldBatchNorm, "BatchNormalization into the preceding Conv, else a scale/bias"},
      {"cse", EliminateCommonSubexpressions, "merge identical nodes and constants"},
      {"dce", EliminateDeadCode, "remove nodes whose outputs are unused"},
      {"fuse-layernorm", FuseLayerNorm, "decomposed LayerNorm -> LayerNorm"},
      {"fuse-gelu", FuseGelu, "erf/tanh GELU chains -> Gelu"},
      {"fuse-attention", FuseAttention, "softmax(Q K^T scale) V -> Attention"},
      {"fuse-gemm", FuseGemm, "MatMul/Gemm + bias + activation + residual -> FusedGemm"},
      {"fuse-conv", FuseConv, "Conv + bias + residual + activation -> FusedConv"},
  };
  return kPasses;
}

}  // namespace gcomp::passes
