// The cuda backend's selection side: one kernel table for cuda:sm_90 and cuda:sm_80 (cuBLASLt
// GEMMs, cuDNN convolution graphs, NVRTC-generated kernels for everything else), the fingerprint
// (architecture; CUDA, cuBLASLt and cuDNN versions of the build) and device memory (256-byte
// aligned). It links no CUDA runtime library: codegen uses it on machines without a GPU, and the
// executor side (cuda_backend.cc) supplies each entry's session kernel.
#pragma once

#include <cstdint>
#include <optional>

#include "runtime/backend_kernels.h"
#include "runtime/cuda/device_kernels.h"
#include "runtime/cuda/gemm_desc.h"
#include "runtime/fused_op.h"

namespace gcomp::cuda {

// The cuBLASLt workspace the GEMM entries allow (cuBLASLt's recommendation for Hopper).
inline constexpr int64_t kCublasLtWorkspace = int64_t{32} << 20;
// The workspace a cuDNN convolution engine may use.
inline constexpr int64_t kCudnnWorkspace = int64_t{256} << 20;

// Kernel ids.
inline constexpr char kGemmId[] = "cuda.cublaslt.gemm";
inline constexpr char kGemmActId[] = "cuda.cublaslt.gemm+act";
inline constexpr char kConvId[] = "cuda.cudnn.conv_graph";
inline constexpr char kSdpaId[] = "cuda.cudnn.sdpa";
inline constexpr char kPoolId[] = "cuda.nvrtc.pool";
inline constexpr char kReduceMeanId[] = "cuda.nvrtc.reduce_mean";
inline constexpr char kLayerNormId[] = "cuda.nvrtc.layernorm";
inline constexpr char kAttentionExactId[] = "cuda.nvrtc.attention_exact";
inline constexpr char kFlashAttentionId[] = "cuda.nvrtc.flash_attention";
inline constexpr char kMapId[] = "cuda.nvrtc.map";
inline constexpr char kFp8QuantizeId[] = "cuda.nvrtc.fp8_quantize";
inline constexpr char kBinaryId[] = "cuda.nvrtc.binary";

const runtime::KernelTable& CudaKernelTable();
// The backends' selection sides, by architecture.
const runtime::BackendKernels& CudaSm90Kernels();
const runtime::BackendKernels& CudaSm80Kernels();

// A FusedGemm/MatMul step as the row-major GEMM of gemm_desc.h (tf32 from the plan's precision).
std::optional<RowMajorGemm> GemmFor(const runtime::KernelSpec& spec, std::string* why_not);
// FusedGemm's fp8 form where cuBLASLt has no outer-vector-scale algorithm: the generated
// epilogue after an fp32-output fp8 GEMM, and the bytes of that fp32 product (256-byte rounded).
std::optional<GeneratedKernel> Fp8EpilogueFor(const runtime::KernelSpec& spec);
int64_t Fp8ProductBytes(int64_t m, int64_t n);
// Whether cuBLASLt's epilogue applies the activation exactly (none, relu, gelu_tanh).
bool LibraryActivation(Activation a);

// The generated kernel of a step run by a generated-kernel entry (pool, reduce_mean, map,
// binary), as codegen compiled it; nullopt with `why_not` otherwise.
std::optional<GeneratedKernel> GeneratedKernelFor(const runtime::KernelSpec& spec, std::string* why_not);
// The separate activation kernel of a GEMM or convolution step whose epilogue its library cannot
// apply (nullopt when it can).
std::optional<GeneratedKernel> AfterActivationKernel(const runtime::KernelSpec& spec);
// The im2col kernel of a convolution step (the fallback when cuDNN offers no engine).
std::optional<GeneratedKernel> Im2ColKernelFor(const runtime::KernelSpec& spec);

}  // namespace gcomp::cuda
