// How a plan's fp16/bf16 Attention step maps onto cuDNN's fused scaled-dot-product attention
// (cudnn-frontend's SDPA node, inference forward): a pure function, tested on the CPU.
//
// cuDNN's SDPA takes Q, K, V and O as 4-D tensors with dims in {B, H, S, D} order and any strides:
// a packed [B, S, H*D] operand (ONNX Attention's 3-D form) is dims {B, H, S, D} with strides
// {S*H*D, D, H*D, 1}; [B, H, S, D] is the dense {H*S*D, S*D, D, 1}; the strided form's rows of W
// (the QKV projection's output read in place) are {S*W, D, W, 1} batch first and {W, D, B*W, 1}
// sequence first, from the head's first column. K/V may have fewer heads than Q (grouped-query).
// Where cuDNN's support check declines the graph on a device, the executor runs gcomp's flash
// attention kernel, which the plan carries for that reason.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/dtype.h"
#include "runtime/op_geometry.h"

namespace gcomp::cuda {

struct SdpaDesc {
  DType io_type = DType::kF16;
  std::vector<int64_t> q_dims, q_strides;  // {B, Hq, Sq, D}
  std::vector<int64_t> k_dims, k_strides;  // {B, Hk, Skv, D}
  std::vector<int64_t> v_dims, v_strides;  // {B, Hk, Skv, Dv}
  std::vector<int64_t> o_dims, o_strides;  // {B, Hq, Sq, Dv}
  // Element offsets of Q, K and V's first head in their buffers (the strided form's columns).
  int64_t q_offset = 0, k_offset = 0, v_offset = 0;
  bool packed = false, seq_first = false;  // the layout, for Describe
  float scale = 1.0f;

  // "cuDNN SDPA fp16: 12 heads (12 K/V heads), 197x197 positions, head 64/64, Q/K/V [S,B,2304] rows at
  // columns 0/768/1536, scale 0.125, fp32 softmax".
  std::string Describe() const;
};

// The SDPA graph for `a` at its dims. InvalidArgument for what cuDNN's fused attention does not
// take (other dtypes, head sizes that are not multiples of 8 up to 128, heads not grouping).
absl::StatusOr<SdpaDesc> MapSdpa(const runtime::AttentionShape& a);

}  // namespace gcomp::cuda
