// The pass pipeline by optimization level, as data. Each entry says why it is there.
#include <vector>

#include "absl/strings/str_cat.h"
#include "passes/pass_manager.h"

namespace gcomp::passes {
namespace {

struct Entry {
  const char* pass;
  const char* why;
};

// O1: clean-ups every later pass relies on.
const std::vector<Entry> kO1 = {
    {"canonicalize", "one form per op: constant operand of Add/Mul second; identity Reshape/Flatten/Transpose gone"},
    {"remove-identity", "Identity and inference Dropout are copies"},
    {"fold-constants", "shape arithmetic of dynamic-batch exports becomes batch-polymorphic constants"},
    {"fold-guards", "SDPA exports: the unmasked attention's constant mask select and softmax NaN guard cannot change a value"},
    {"fold-batchnorm", "inference BatchNorm is a per-channel affine map: into the conv, else scale/bias"},
    {"cse", "exports repeat Shape/Gather chains and constants"},
    {"dce", "what the rules above left unused"},
};

// O2: fusions into what a Tensor Core kernel executes in one launch.
const std::vector<Entry> kO2 = {
    {"fuse-layernorm", "decomposed mean/variance chains become one LayerNorm"},
    {"fuse-gelu", "erf and tanh GELU chains become one Gelu (folded into FusedGemm next)"},
    {"fuse-attention", "Q, K, V -> softmax(QK^T * scale) V becomes one Attention"},
    {"fuse-gemm", "MatMul/Gemm + bias + activation + residual as one GEMM epilogue"},
    {"fuse-conv", "Conv + bias + residual + ReLU/Clip as one conv epilogue"},
    {"narrow-rows", "rows no reader takes are not computed: a ViT's last layer after its attention runs on the class token only"},
    {"dce", "the matched chains"},
};

// Precision after all rewriting, so that every node the lowerings create gets its rule too.
const std::vector<Entry> kPrecision = {
    {"assign-precision", "--precision fp16/bf16: GEMM operands in P, statistics fp32, casts at storage changes (no-op for fp32)"},
};

// O3: lowering and layout for the target description of --target (passes/targets/).
const std::vector<Entry> kO3 = {
    {"layout-nhwc", "NHWC targets: conv chains in NHWC, Transposes only at the edges, inverse pairs cancelled"},
    {"lower-conv", "1x1 conv -> GEMM; k x k -> implicit GEMM where the target has one, else im2col + GEMM"},
    {"lower-attention", "Attention -> the target's fused kernel, else batched GEMMs + softmax"},
    {"fold-attention-layout", "the Slices/Reshapes/Transposes that cut heads out of QKV rows become strides"},
    {"narrow-rows", "again on the strided attentions: a ViT's last layer attends with the class token's query only, its Q projection split from K and V"},
    {"dce", "what the lowerings left unused"},
};

// O3, after precision: which GEMM epilogues the target applies, and where its math differs.
const std::vector<Entry> kEpilogues = {
    {"lower-fp8", "fp8 GEMMs read e4m3 bytes and scales where the target has an fp8 GEMM kernel"},
    {"lower-gemm", "epilogues by target: cuBLASLt GELU is the tanh form, taken only in fp16/bf16"},
    {"schedule-late", "each node just before its first reader: a residual branch's output is read back from cache"},
};

}  // namespace

absl::StatusOr<std::vector<std::string>> PassesForLevel(const std::string& level) {
  std::vector<std::string> out;
  auto add = [&](const std::vector<Entry>& entries) {
    for (const Entry& e : entries) out.push_back(e.pass);
  };
  if (level == "O0") return out;
  if (level == "O1") {
    add(kO1);
    return out;
  }
  if (level == "O2") {
    add(kO1);
    add(kO2);
    add(kPrecision);
    return out;
  }
  if (level == "O3") {
    add(kO1);
    add(kO2);
    add(kO3);
    add(kPrecision);
    add(kEpilogues);
    return out;
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown level '", level, "', expected O0, O1, O2 or O3"));
}

}  // namespace gcomp::passes
