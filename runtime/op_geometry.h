// Backend-independent geometry of the data-movement and pooling steps: what a step computes, with
// its attributes and constant inputs checked, for every backend's kernels (the cpu's own kernels
// and the cuda backend's generated ones). Each returns nullopt when the step is outside what it
// describes (the kernel table then asks the next entry).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "runtime/kernel.h"

namespace gcomp::runtime {

// The storage types the float kernels load and store (math is fp32).
inline bool IsStorageFloat(DType t) { return t == DType::kF32 || t == DType::kF16 || t == DType::kBF16; }

// Whether every output is present and none shares its memory with an input (spec.in_place).
bool PresentAndNotInPlace(const KernelSpec& spec);

// The int64 values of a constant integer operand (i64 or i32, plain layout); nullopt otherwise.
std::optional<std::vector<int64_t>> ConstantInts(const Operand& op);

// A 1-D window op (pooling or convolution over [N, C, W]) as the 2-D one over [N, C, 1, W], the
// same memory: `attrs` with kernel_shape, strides, dilations and pads widened by a unit H axis
// (kernel 1, stride 1, dilation 1, no padding; `kernel` stands in for an absent kernel_shape,
// -1: it is required), nullopt when one has the wrong length; and every rank-3 operand of `spec`
// given that axis.
std::optional<Attributes> WidenWindowAttrsTo2d(const Attributes& attrs, int64_t kernel);
void InsertUnitHeight(KernelSpec* spec);

// 2-D max/average pooling: gcomp Pool (NHWC or NCHW), ONNX MaxPool without Indices, AveragePool,
// GlobalAveragePool.
struct PoolGeometry {
  bool max = true, nhwc = false, include_pad = false;
  int64_t n = 0, c = 0, h = 0, w = 0, oh = 0, ow = 0;
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, pt = 0, pl = 0, pb = 0, pr = 0;
  DType x_type = DType::kF32, y_type = DType::kF32;
};
std::optional<PoolGeometry> ResolvePool(const KernelSpec& spec);

// ReduceMean (ReduceSum) as y[o, i] = mean (sum) over r of x[o, r, i] (the reduced axes, unit dims aside, one
// contiguous block).
struct ReduceGeometry {
  bool mean = true;  // ReduceMean; false: ReduceSum
  int64_t outer = 1, reduced = 1, inner = 1;
  DType x_type = DType::kF32, y_type = DType::kF32;
};
std::optional<ReduceGeometry> ResolveReduce(const KernelSpec& spec);

// Slice with constant starts/ends/axes/steps: per input axis, `count` elements from `start` by
// `step` (ONNX clamping applied), whole axes included.
struct SliceAxisPlan {
  int64_t dim, start, step, count;
};
std::optional<std::vector<SliceAxisPlan>> ResolveSliceAxes(const KernelSpec& spec);

// Transpose: the permutation (default: reversed axes), checked against the operand dims.
std::optional<std::vector<int64_t>> ResolvePerm(const KernelSpec& spec);

// `axis` of a rank-`rank` tensor in [0, rank), or nullopt.
std::optional<int64_t> NormalizedAxis(int64_t axis, size_t rank);

// LayerNorm (and LayerNormalization with only its Y output): `rows` rows of `len` values (the
// dims from `axis` on), Scale and B one value per position of the row.
struct LayerNormShape {
  int64_t rows = 0, len = 0;
  float epsilon = 1e-5f;
  bool has_bias = false;
  DType x_type = DType::kF32, s_type = DType::kF32, b_type = DType::kF32, y_type = DType::kF32;
  // LayerNorm's fp8 output (O3's lower-fp8): y_type f8e4m3 holds the e4m3 bytes of y * fp8_scale.
  float fp8_scale = 0.0f;
};
// LayerNormalization/LayerNorm; the fp8 output only for a caller that writes it (`fp8`).
std::optional<LayerNormShape> ResolveLayerNorm(const KernelSpec& spec, bool fp8 = false);

// ONNX Attention Y = softmax(scale * Q K^T) V for 3-D [B, S, H*D] (`packed`) or 4-D [B, H, S, D]
// inputs, grouped-query heads included; no mask, causal, past K/V or softcap (`why_not` says which).
// Packed operands are rows of `width` elements with the heads side by side from column `offset`,
// [B, S, width] or, `seq_first`, [S, B, width]: ONNX's 3-D form (width H*D, offset 0, batch first)
// and gcomp's strided form (qkv_layout BSW/SBW), which reads Q, K and V in place.
struct AttentionShape {
  bool packed = false;
  bool seq_first = false;
  int64_t batch = 0, q_heads = 0, kv_heads = 0, q_seq = 0, kv_seq = 0, head = 0, v_head = 0;
  struct Rows {
    int64_t width = 0, offset = 0;
  };
  Rows q, k, v, y;  // packed only
  float scale = 1.0f;
  DType q_type = DType::kF32, k_type = DType::kF32, v_type = DType::kF32, y_type = DType::kF32;
  // Element offset of (b, head h, position s, 0) in an operand with `heads` heads of `size`
  // elements over `seq` positions laid out as `rows`.
  int64_t Offset(const Rows& rows, int64_t b, int64_t h, int64_t s, int64_t heads, int64_t seq, int64_t size) const {
    if (!packed) return ((b * heads + h) * seq + s) * size;
    return (seq_first ? s * batch + b : b * seq + s) * rows.width + rows.offset + h * size;
  }
};
std::optional<AttentionShape> ResolveAttention(const KernelSpec& spec, std::string* why_not);
// ", Q/K/V read in place from [S,B,2304] rows at columns 0/768/1536, Y as [S,B,768]" for the strided
// form ("" otherwise).
std::string DescribeStridedAttention(const AttentionShape& a);
// The parameter blob of the attention entries: ONNX Attention's attributes and the strided form's.
std::vector<AttrSpec> AttentionParamSpecs();

}  // namespace gcomp::runtime
