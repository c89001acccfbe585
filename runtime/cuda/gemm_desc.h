// How a plan's FusedGemm maps onto one cuBLASLt matmul: a pure function, so that the mapping
// (transposes, leading dimensions, data, compute and scale types, epilogue) is tested on the CPU.
//
// The plan's GEMM is row-major: Y[M,N] = act(alpha * A[M,K] x W + bias[N] + Z[M,N]) with W stored
// [K,N], or [N,K] when trans_b. cuBLASLt computes column-major D = epilogue(alpha * op(A') op(B')
// + beta * C). A row-major [r,c] matrix is the column-major [c,r] matrix with ld = c, so the plan's
// GEMM is computed as its transpose: D = Yᵀ [N,M] = Wᵀ [N,K] x Aᵀ [K,M], with A' = W and B' = A.
// The bias then runs along D's rows (length N), which is what cuBLASLt's BIAS epilogues broadcast;
// the bias + activation epilogues also require this column-major D.
// The residual is C = D's storage (beta = 1): in place when the memory plan made Y alias Z.
//
// fp8 (FusedGemm's fp8 form, sm_90): A' = W and B' = A are e4m3 bytes, W stored [N,K] so that
// op(A') is transposed (the "TN" layout cuBLASLt's fp8 kernels require), D, C and the bias fp16.
// W's per-column dequantization factors (length N = cuBLASLt's m) are A's scale vector, and B's
// scale vector (length M = cuBLASLt's n) holds ones, both in CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F
// (D[i,j] = alpha·sA[i]·sB[j]·Σ A'·B' + ...); A's per-tensor factor is in alpha. `fp32_out`: the
// same operands with the default scalar scales (1) into an fp32 D, nothing else.
#pragma once

#include <cublasLt.h>

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "core/dtype.h"
#include "core/epilogue.h"

namespace gcomp::cuda {

struct RowMajorGemm {
  int64_t m = 0, n = 0, k = 0;
  bool trans_b = false;
  float alpha = 1.0f;
  DType a_type = DType::kF32;  // A, Z and Y
  DType w_type = DType::kF32;  // W and the bias
  bool fp8 = false;            // A and W e4m3 (a_type and w_type are then f16: Y, Z and bias)
  // fp8 where cuBLASLt has no outer-vector-scale algorithm: D = alpha·A·W in fp32 (no bias,
  // residual or activation; unit per-tensor scales), for a generated epilogue kernel to finish.
  bool fp32_out = false;
  bool tf32 = false;           // --precision tf32: fp32 storage, TF32 Tensor Core math
  bool bias = false;
  bool residual = false;
  Activation act = Activation::kNone;
  // Row strides of A and of Y/Z in elements (0: k and n, dense). `groups` > 1: `groups`
  // independent GEMMs side by side (a grouped convolution through im2col): group g reads A's
  // columns [g*k, (g+1)*k), W's rows [g*n, (g+1)*n) (trans_b) and the bias from g*n, and writes
  // Y's columns [g*n, (g+1)*n).
  int64_t a_ld = 0, y_ld = 0;
  int64_t groups = 1;
};

struct LtGemm {
  cublasOperation_t transa = CUBLAS_OP_N, transb = CUBLAS_OP_N;
  uint64_t m = 0, n = 0, k = 0;
  int64_t lda = 0, ldb = 0, ldc = 0, ldd = 0;
  cudaDataType_t a_type = CUDA_R_32F, b_type = CUDA_R_32F, c_type = CUDA_R_32F, d_type = CUDA_R_32F;
  cudaDataType_t scale_type = CUDA_R_32F, bias_type = CUDA_R_32F;
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  float alpha = 1.0f, beta = 0.0f;
  // fp8: A' and B' scaled by vectors (OUTER_VEC_32F) of m and n floats.
  bool outer_vector_scales = false;
  // Every leading dimension a multiple of 16 bytes (what Tensor Core kernels want).
  bool aligned16 = false;
  // Strided batch (groups): count and element strides between the batch's matrices.
  int32_t batch_count = 1;
  int64_t stride_a = 0, stride_b = 0, stride_d = 0, stride_bias = 0;

  // "fp16, epilogue RELU_BIAS, residual beta=1, Dᵀ = Wᵀ·Aᵀ (m=256 n=3136 k=64)".
  std::string Describe() const;
};

// The cuBLASLt call computing `g`. InvalidArgument when cuBLASLt cannot apply its epilogue exactly
// (erf GELU, Clip: those run as a separate kernel after the GEMM) or its types mix.
absl::StatusOr<LtGemm> MapGemm(const RowMajorGemm& g);

const char* EpilogueName(cublasLtEpilogue_t e);

}  // namespace gcomp::cuda
