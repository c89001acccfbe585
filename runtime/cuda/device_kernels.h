// The cuda backend's generated kernels: CUDA C++ specialized to one step's dims and dtypes, which
// codegen compiles with NVRTC at plan-compile time (runtime::DeviceSource) and the executor
// launches. Each generator is a pure function of the step, so the executor regenerates the same
// function name and launch geometry from the plan's step and finds the code in the plan.
//
// Every generated function has the signature
//   extern "C" __global__ void NAME(GcompArgs a)
// with GcompArgs { const void* in[4]; void* out[2]; long long batch; long long total; }: the step's
// operand pointers, the run's batch size and the number of work items. Dims that do not depend on
// the batch are compiled in; a dim that does is computed from `batch` as per_batch * batch + fixed
// (the plan's linear dims), wherever it sits ([S, batch, E] transposes included), so one function
// serves every batch size. A function walks its `total` items in a grid-stride loop over blocks of
// `block` threads; the executor sets total = elements of output 0 / `vector` (im2col: of its
// columns).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/dtype.h"
#include "core/epilogue.h"
#include "runtime/kernel.h"

namespace gcomp::cuda {

inline constexpr int kMaxGeneratedInputs = 4;
inline constexpr int kMaxGeneratedOutputs = 2;

struct GeneratedKernel {
  runtime::DeviceSource code;
  int64_t vector = 1;  // output elements per work item
  int block = 256;
  int threads_per_item = 1;  // 32: one warp per item (a LayerNorm row); 128: a block per item (a tile)
  // >= 0: the work items at the dims it was generated for (tiles of a flash-attention kernel);
  // otherwise elements of output 0 / vector.
  int64_t items = -1;
  // The leading inputs its code reads: the rest of the step's inputs (Slice's starts, ends, axes
  // and steps, Reshape's shape) are compiled in and not passed.
  int inputs_read = kMaxGeneratedInputs;
  // The alignment in bytes its operand pointers need (4: pairs of halves, 16: vector loads); the
  // launch refuses others with an error instead of a misaligned access on the device.
  int64_t alignment = 1;
  std::string description;  // "max pool 3x3 stride 2x2 NHWC f16"
};

// GcompArgs as the host lays them out.
struct GeneratedArgs {
  const void* in[kMaxGeneratedInputs];
  void* out[kMaxGeneratedOutputs];
  long long batch;
  long long total;
};

// The arguments of one launch of `k`: the inputs it reads (an error where the step has more than
// GcompArgs holds and the code reads them), the outputs, the batch and the work items.
absl::StatusOr<GeneratedArgs> PackGeneratedArgs(const GeneratedKernel& k, int64_t batch, int64_t total,
                                                std::span<const void* const> inputs,
                                                std::span<void* const> outputs);

// The work items of `k` for a step whose output 0 has `elements` elements.
inline int64_t WorkItems(const GeneratedKernel& k, int64_t elements) {
  return k.items >= 0 ? k.items : elements / k.vector;
}

// A copy of a strided view of input 0 into output 0, with a cast between float storage types and
// an optional activation: Transpose, Slice, Cast, Expand, Identity and the view ops when they must
// copy, and a separate activation (Relu, ...).
std::optional<GeneratedKernel> MapKernel(const runtime::KernelSpec& spec, std::string* why_not);
// QuantizeFp8, and FakeQuantFp8 with a per-tensor scale (--precision fp8 on sm_90).
// The fp8 GEMM's epilogue where cuBLASLt offers no outer-vector-scale algorithm: in[0] the fp32
// alpha·A·W [M, n], in[1] the f32 [n] column scales, in[2] the f16 bias, in[3] the f16 residual;
// out[0] = act(in0 · in1[j] + bias[j] + Z) in f16, one element per item.
GeneratedKernel Fp8EpilogueKernel(int64_t n, bool bias, bool residual, const Epilogue& epi);
std::optional<GeneratedKernel> Fp8Kernel(const runtime::KernelSpec& spec, std::string* why_not);
// Add/Sub/Mul/Div of two float operands with ONNX broadcasting.
std::optional<GeneratedKernel> BinaryKernel(const runtime::KernelSpec& spec, std::string* why_not);
// 2-D max/average pooling, NHWC or NCHW, GlobalAveragePool.
std::optional<GeneratedKernel> PoolKernel(const runtime::KernelSpec& spec, std::string* why_not);
// Shape (start/end attributes), written from the batch at run time.
std::optional<GeneratedKernel> ShapeKernel(const runtime::KernelSpec& spec, std::string* why_not);
// Gather with constant indices (1..64 of them) along an axis that does not depend on the batch.
std::optional<GeneratedKernel> GatherKernel(const runtime::KernelSpec& spec, std::string* why_not);
// Concat of 1..4 inputs along an axis that does not depend on the batch.
std::optional<GeneratedKernel> ConcatKernel(const runtime::KernelSpec& spec, std::string* why_not);
// LayerNorm / LayerNormalization (Y only) over rows whose length does not depend on the batch.
std::optional<GeneratedKernel> LayerNormKernel(const runtime::KernelSpec& spec, std::string* why_not);
// Attention computed exactly in fp32 without Tensor Cores (the fp32 plans' kernel): one warp per
// query row, Q, K and V read through their layouts' strides, online softmax.
std::optional<GeneratedKernel> ExactAttentionKernel(const runtime::KernelSpec& spec, std::string* why_not);
// Attention on Tensor Cores for fp16/bf16 (head sizes multiples of 16 up to 128): a flash-attention
// kernel with mma.sync tiles for Q*K^T and P*V, an fp32 online softmax, no score matrix in memory;
// Q, K and V read through their layouts' strides. A work item is a block of 64 queries of one head.
std::optional<GeneratedKernel> FlashAttentionKernel(const runtime::KernelSpec& spec, std::string* why_not);
// ReduceMean over one contiguous block of axes.
std::optional<GeneratedKernel> ReduceMeanKernel(const runtime::KernelSpec& spec, std::string* why_not);
// A separate activation over a [rows, n] tensor in place (after a GEMM whose epilogue cannot
// apply it): y = act(y).
GeneratedKernel ActivationKernel(DType dtype, const Epilogue& epi);

// im2col of an NHWC convolution input for the im2col + GEMM fallback: the workspace as
// [N*Ho*Wo][group][kh*kw*Cin/group] (tap-major, channels innermost, matching the KRSC-packed
// weights), zero outside the input. Work items: N*Ho*Wo*kh*kw*Cin.
struct Im2ColGeometry {
  int64_t c = 0, h = 0, w = 0, ho = 0, wo = 0;
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1, pt = 0, pl = 0;
  int64_t group = 1;
  DType dtype = DType::kF32;
};
GeneratedKernel Im2ColKernel(const Im2ColGeometry& g);

}  // namespace gcomp::cuda
