// How a plan's NHWC FusedConv maps onto cuDNN's graph API (conv_fprop -> + bias -> + residual ->
// activation) and onto the im2col + cuBLASLt fallback: pure functions, tested on the CPU.
//
// cuDNN describes every tensor with dims in N, C, H, W order and the memory layout in the strides:
// NHWC activations are dims {N, C, H, W} with strides {H*W*C, 1, W*C, C}. The weights are packed
// at compile time from ONNX's OIHW into KRSC (O, kh, kw, I/group): dims {K, C/g, R, S}, strides
// {R*S*C/g, 1, S*C/g, C/g}. cuDNN infers the groups from C and the filter's C/g.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/dtype.h"
#include "core/epilogue.h"
#include "runtime/cuda/gemm_desc.h"
#include "runtime/fused_op.h"

namespace gcomp::cuda {

struct ConvGraphDesc {
  std::vector<int64_t> x_dims, x_strides;  // {N, C, H, W}
  std::vector<int64_t> w_dims, w_strides;  // {K, C/g, R, S}
  std::vector<int64_t> y_dims, y_strides;  // {N, K, Ho, Wo}
  std::vector<int64_t> bias_dims, bias_strides;  // {1, K, 1, 1}
  std::vector<int64_t> pre_pad, post_pad, stride, dilation;
  DType io_type = DType::kF32;  // X, W, bias, Z and Y
  bool tf32 = false;            // fp32 storage with TF32 math allowed (--precision tf32)
  bool bias = false, residual = false;
  // The activation inside the graph (none or relu); others run as a generated kernel after it.
  Activation graph_act = Activation::kNone;
  Activation after_act = Activation::kNone;
  int64_t group = 1;

  // "conv_fprop 3x3/1 64->64 NHWC fp16, fp32 compute + bias + residual + relu".
  std::string Describe() const;
};

// The graph for `p` (NHWC) at batch `batch`. InvalidArgument for what cuDNN's graph cannot take.
absl::StatusOr<ConvGraphDesc> MapConvGraph(const runtime::ConvParams& p, int64_t batch, bool tf32);

// The fallback: im2col into [batch*Ho*Wo][group][kh*kw*C/g], then one (batched when grouped)
// cuBLASLt GEMM against the KRSC weights with the same epilogue.
absl::StatusOr<RowMajorGemm> ConvAsGemm(const runtime::ConvParams& p, int64_t batch, bool tf32);
// Bytes of the im2col workspace at `batch`.
int64_t Im2ColBytes(const runtime::ConvParams& p, int64_t batch);

// OIHW -> KRSC (O, kh, kw, I/group) for `element_size`-byte elements.
std::vector<uint8_t> PackKrsc(const uint8_t* oihw, int64_t o, int64_t i, int64_t kh, int64_t kw, size_t element_size);

}  // namespace gcomp::cuda
