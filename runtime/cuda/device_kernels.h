// The cuda backend's generated kernels: CUDA C++ specialized to one step's dims and dtypes, which
// codegen compiles with NVRTC at plan-compile time (runtime::DeviceSource) and the executor
// launches. Each generator is a pure function of the step, so the executor regenerates the same
// function name and launch geometry from the plan's step and finds the code in the plan.
//
// Every generated function has the signature
//   extern "C" __global__ void NAME(GcompArgs a)
// with GcompArgs { const void* in[4]; void* out[2]; long long outer; }: the step's operand pointers
// and `outer`, the run's size of the leading output axis (the batch axis). Only that axis may
// depend on the batch; every other dim is compiled in. A function runs outer * items_per_outer
// work items in a grid-stride loop over blocks of `block` threads.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/epilogue.h"
#include "runtime/kernel.h"

namespace gcomp::cuda {

inline constexpr int kMaxGeneratedInputs = 4;
inline constexpr int kMaxGeneratedOutputs = 2;

struct GeneratedKernel {
  runtime::DeviceSource code;
  int64_t items_per_outer = 0;  // work items per unit of the leading output axis
  int block = 256;
  // Whether the leading output axis is the batch axis (outer = its size at the run's batch) or
  // fixed (outer = its compiled size).
  bool outer_is_batch = false;
  int64_t fixed_outer = 1;
  std::string description;  // "pool max 3x3/2 NHWC f16"
};

// A copy of a strided view of input 0 into output 0, with a cast between float storage types and
// an optional activation: Transpose, Slice, Cast, Expand, Identity and the view ops when they must
// copy, and a separate activation (Relu, ...).
std::optional<GeneratedKernel> MapKernel(const runtime::KernelSpec& spec, std::string* why_not);
// Add/Sub/Mul/Div of two float operands with ONNX broadcasting.
std::optional<GeneratedKernel> BinaryKernel(const runtime::KernelSpec& spec, std::string* why_not);
// 2-D max/average pooling, NHWC or NCHW, GlobalAveragePool.
std::optional<GeneratedKernel> PoolKernel(const runtime::KernelSpec& spec, std::string* why_not);
// ReduceMean over one contiguous block of axes.
std::optional<GeneratedKernel> ReduceMeanKernel(const runtime::KernelSpec& spec, std::string* why_not);
// A separate activation over a [rows, n] tensor in place (after a GEMM whose epilogue cannot
// apply it): y = act(y).
GeneratedKernel ActivationKernel(DType dtype, int64_t n_per_outer, bool outer_is_batch, int64_t fixed_outer,
                                 const Epilogue& epi);

// im2col of an NHWC convolution input for the im2col + GEMM fallback: the workspace as
// [N*Ho*Wo][group][kh*kw*Cin/group] (tap-major, channels innermost, matching the KRSC-packed
// weights), zero outside the input.
struct Im2ColGeometry {
  int64_t c = 0, h = 0, w = 0, ho = 0, wo = 0;
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1, pt = 0, pl = 0;
  int64_t group = 1;
  DType dtype = DType::kF32;
};
GeneratedKernel Im2ColKernel(const Im2ColGeometry& g);

}  // namespace gcomp::cuda
