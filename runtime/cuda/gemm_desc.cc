#include "runtime/cuda/gemm_desc.h"

#include "absl/strings/str_cat.h"

namespace gcomp::cuda {
namespace {

absl::StatusOr<cudaDataType_t> CudaType(DType t) {
  switch (t) {
    case DType::kF32:
      return CUDA_R_32F;
    case DType::kF16:
      return CUDA_R_16F;
    case DType::kBF16:
      return CUDA_R_16BF;
    default:
      return absl::InvalidArgumentError(absl::StrCat("cuBLASLt GEMMs take f32, f16 or bf16, not ", DTypeName(t)));
  }
}

}  // namespace

const char* EpilogueName(cublasLtEpilogue_t e) {
  switch (e) {
    case CUBLASLT_EPILOGUE_DEFAULT:
      return "DEFAULT";
    case CUBLASLT_EPILOGUE_RELU:
      return "RELU";
    case CUBLASLT_EPILOGUE_BIAS:
      return "BIAS";
    case CUBLASLT_EPILOGUE_RELU_BIAS:
      return "RELU_BIAS";
    case CUBLASLT_EPILOGUE_GELU:
      return "GELU";
    case CUBLASLT_EPILOGUE_GELU_BIAS:
      return "GELU_BIAS";
    default:
      return "OTHER";
  }
}

absl::StatusOr<LtGemm> MapGemm(const RowMajorGemm& g) {
  if (g.m < 1 || g.n < 1 || g.k < 1) {
    return absl::InvalidArgumentError(absl::StrCat("GEMM of M", g.m, " N", g.n, " K", g.k));
  }
  if (g.a_type != g.w_type) {
    return absl::InvalidArgumentError(
        absl::StrCat("GEMM operands of two types (", DTypeName(g.a_type), " and ", DTypeName(g.w_type), ")"));
  }
  if (g.tf32 && g.a_type != DType::kF32) return absl::InvalidArgumentError("TF32 math needs fp32 storage");
  if (g.fp8 && (g.a_type != DType::kF16 || !g.trans_b || g.groups != 1 || g.tf32)) {
    return absl::InvalidArgumentError(
        "cuBLASLt's fp8 GEMM takes e4m3 operands with W stored [N,K] (transposed), fp16 output, no groups");
  }
  const int64_t a_ld = g.a_ld ? g.a_ld : g.k * g.groups, y_ld = g.y_ld ? g.y_ld : g.n * g.groups;
  if (g.groups < 1 || a_ld < g.k * g.groups || y_ld < g.n * g.groups || (g.groups > 1 && !g.trans_b)) {
    return absl::InvalidArgumentError(absl::StrCat("GEMM row strides A ", a_ld, ", Y ", y_ld, " for ", g.groups,
                                                   " groups of K", g.k, " N", g.n));
  }
  LtGemm lt;
  // D = Yᵀ [N,M] = op(W') [N,K] x op(A') [K,M] (see gemm_desc.h).
  lt.m = static_cast<uint64_t>(g.n);
  lt.n = static_cast<uint64_t>(g.m);
  lt.k = static_cast<uint64_t>(g.k);
  // W row-major [K,N] is column-major [N,K] with ld N: used as it is. W row-major [N,K] is
  // column-major [K,N] with ld K: transposed.
  lt.transa = g.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  lt.lda = g.trans_b ? g.k : g.n;
  // A row-major [M,K] is column-major [K,M] with ld K: used as it is.
  lt.transb = CUBLAS_OP_N;
  lt.ldb = a_ld;
  lt.ldc = lt.ldd = y_ld;
  lt.batch_count = static_cast<int32_t>(g.groups);
  if (g.groups > 1) {
    lt.stride_a = g.n * g.k;
    lt.stride_b = g.k;
    lt.stride_d = g.n;
    lt.stride_bias = g.n;
  }
  auto type = CudaType(g.a_type);
  if (!type.ok()) return type.status();
  lt.a_type = lt.b_type = lt.c_type = lt.d_type = lt.bias_type = *type;
  if (g.fp8) {
    lt.a_type = lt.b_type = CUDA_R_8F_E4M3;
    lt.outer_vector_scales = !g.fp32_out;
    if (g.fp32_out) {
      if (g.bias || g.residual || g.act != Activation::kNone) {
        return absl::InvalidArgumentError("an fp8 GEMM into fp32 applies no epilogue");
      }
      lt.c_type = lt.d_type = lt.bias_type = CUDA_R_32F;
    }
  } else if (g.fp32_out) {
    return absl::InvalidArgumentError("fp32 output of an fp8 GEMM without fp8 operands");
  }
  lt.scale_type = CUDA_R_32F;  // fp32 accumulation and scaling for every storage type
  lt.compute = g.tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  lt.alpha = g.alpha;
  lt.beta = g.residual ? 1.0f : 0.0f;
  switch (g.act) {
    case Activation::kNone:
      lt.epilogue = g.bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
      break;
    case Activation::kRelu:
      lt.epilogue = g.bias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU;
      break;
    case Activation::kGeluTanh:
      lt.epilogue = g.bias ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU;
      break;
    case Activation::kGelu:
      return absl::InvalidArgumentError(
          "cuBLASLt's GELU epilogue is the tanh approximation: the exact erf GELU runs as a separate kernel");
    case Activation::kClip:
      return absl::InvalidArgumentError("cuBLASLt has no clip epilogue: Clip runs as a separate kernel");
  }
  const int64_t es = g.fp32_out ? 4 : static_cast<int64_t>(DTypeSize(g.a_type)), in_es = g.fp8 ? 1 : es;
  lt.aligned16 = (lt.lda * in_es) % 16 == 0 && (lt.ldb * in_es) % 16 == 0 && (lt.ldd * es) % 16 == 0 &&
                 (lt.stride_a * in_es) % 16 == 0 && (lt.stride_b * in_es) % 16 == 0 && (lt.stride_d * es) % 16 == 0;
  return lt;
}

std::string LtGemm::Describe() const {
  const char* type = a_type == CUDA_R_8F_E4M3 && d_type == CUDA_R_32F ? "fp8 e4m3 -> fp32"
                     : a_type == CUDA_R_8F_E4M3                  ? "fp8 e4m3 -> fp16"
                     : d_type == CUDA_R_16F                    ? "fp16"
                     : d_type == CUDA_R_16BF                   ? "bf16"
                     : compute == CUBLAS_COMPUTE_32F_FAST_TF32 ? "tf32"
                                                               : "fp32";
  return absl::StrCat(type, outer_vector_scales ? ", outer-vector scales (W per column, alpha per tensor)" : "",
                      ", epilogue ", EpilogueName(epilogue), beta != 0.0f ? ", residual beta=1" : "",
                      ", D = W'·A' (m=", m, " n=", n, " k=", k, transa == CUBLAS_OP_T ? ", W transposed" : "",
                      batch_count > 1 ? absl::StrCat(", ", batch_count, " groups") : "", ")",
                      aligned16 ? "" : ", leading dims not 16-byte aligned");
}

}  // namespace gcomp::cuda
