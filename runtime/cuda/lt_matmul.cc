#include "runtime/cuda/lt_matmul.h"

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "runtime/cuda/cuda_status.h"

namespace gcomp::cuda {
namespace {

template <typename T>
absl::Status SetDesc(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t attr, const T& v, const char* what) {
  return CublasOk(cublasLtMatmulDescSetAttribute(d, attr, &v, sizeof(v)), what);
}

absl::StatusOr<cublasLtMatrixLayout_t> Layout(cudaDataType_t type, uint64_t rows, uint64_t cols, int64_t ld,
                                              int32_t batch, int64_t stride) {
  cublasLtMatrixLayout_t l = nullptr;
  GCOMP_CUBLAS(cublasLtMatrixLayoutCreate(&l, type, rows, cols, ld));
  if (batch > 1) {
    cublasStatus_t s = cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof(batch));
    if (s == CUBLAS_STATUS_SUCCESS) {
      s = cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof(stride));
    }
    if (s != CUBLAS_STATUS_SUCCESS) {
      cublasLtMatrixLayoutDestroy(l);
      return CublasOk(s, "cublasLtMatrixLayoutSetAttribute(batch)");
    }
  }
  return l;
}

int AlgoConfig(const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoConfigAttributes_t attr) {
  int v = 0;
  size_t written = 0;
  if (cublasLtMatmulAlgoConfigGetAttribute(&algo, attr, &v, sizeof(v), &written) != CUBLAS_STATUS_SUCCESS) return -1;
  return v;
}

}  // namespace

LtMatmul::~LtMatmul() { Release(); }

void LtMatmul::Release() {
  for (cublasLtMatrixLayout_t* l : {&a_, &b_, &c_, &d_}) {
    if (*l) cublasLtMatrixLayoutDestroy(*l);
    *l = nullptr;
  }
  if (desc_) cublasLtMatmulDescDestroy(desc_);
  desc_ = nullptr;
}

absl::StatusOr<int64_t> LtMatmul::Prepare(cublasLtHandle_t handle, const LtGemm& g, int64_t max_workspace,
                                          int candidate) {
  Release();
  g_ = g;
  GCOMP_CUBLAS(cublasLtMatmulDescCreate(&desc_, g.compute, g.scale_type));
  RETURN_IF_ERROR(SetDesc(desc_, CUBLASLT_MATMUL_DESC_TRANSA, g.transa, "TRANSA"));
  RETURN_IF_ERROR(SetDesc(desc_, CUBLASLT_MATMUL_DESC_TRANSB, g.transb, "TRANSB"));
  RETURN_IF_ERROR(SetDesc(desc_, CUBLASLT_MATMUL_DESC_EPILOGUE, g.epilogue, "EPILOGUE"));
  if (g.outer_vector_scales) {
    const cublasLtMatmulMatrixScale_t mode = CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F;
    RETURN_IF_ERROR(SetDesc(desc_, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, mode, "A_SCALE_MODE"));
    RETURN_IF_ERROR(SetDesc(desc_, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, mode, "B_SCALE_MODE"));
  }
  const bool bias = g.epilogue == CUBLASLT_EPILOGUE_BIAS || g.epilogue == CUBLASLT_EPILOGUE_RELU_BIAS ||
                    g.epilogue == CUBLASLT_EPILOGUE_GELU_BIAS;
  if (bias) {
    RETURN_IF_ERROR(SetDesc(desc_, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, g.bias_type, "BIAS_DATA_TYPE"));
    if (g.batch_count > 1) {
      RETURN_IF_ERROR(SetDesc(desc_, CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE, g.stride_bias, "BIAS_BATCH_STRIDE"));
    }
  }
  // op(A') is [m, k]: stored [m, k] (N) or [k, m] (T); op(B') is [k, n], stored [k, n] (N).
  const bool ta = g.transa == CUBLAS_OP_T;
  ASSIGN_OR_RETURN(a_, Layout(g.a_type, ta ? g.k : g.m, ta ? g.m : g.k, g.lda, g.batch_count, g.stride_a));
  ASSIGN_OR_RETURN(b_, Layout(g.b_type, g.k, g.n, g.ldb, g.batch_count, g.stride_b));
  ASSIGN_OR_RETURN(c_, Layout(g.c_type, g.m, g.n, g.ldc, g.batch_count, g.stride_d));
  ASSIGN_OR_RETURN(d_, Layout(g.d_type, g.m, g.n, g.ldd, g.batch_count, g.stride_d));
  cublasLtMatmulPreference_t pref = nullptr;
  GCOMP_CUBLAS(cublasLtMatmulPreferenceCreate(&pref));
  const uint64_t ws = static_cast<uint64_t>(max_workspace);
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws));
  cublasLtMatmulHeuristicResult_t results[8] = {};
  int found = 0;
  const cublasStatus_t s =
      cublasLtMatmulAlgoGetHeuristic(handle, desc_, a_, b_, c_, d_, pref, 8, results, &found);
  cublasLtMatmulPreferenceDestroy(pref);
  if (s != CUBLAS_STATUS_SUCCESS && g.outer_vector_scales) {
    // The outer-vector scale mode is refused outright by some cuBLASLt versions and devices
    // (CUBLAS_STATUS_INVALID_VALUE or NOT_SUPPORTED from the heuristic): no algorithm, which the fp8
    // GEMM answers with its fp32 form and the generated epilogue.
    return absl::UnimplementedError(absl::StrCat("cuBLASLt has no algorithm for ", g.Describe(),
                                                 ": its heuristic answered ", cublasLtGetStatusName(s)));
  }
  RETURN_IF_ERROR(CublasOk(s, "cublasLtMatmulAlgoGetHeuristic"));
  int usable[8], n = 0;
  for (int i = 0; i < found; ++i) {
    if (results[i].state == CUBLAS_STATUS_SUCCESS) usable[n++] = i;
  }
  candidates_ = n;
  if (n == 0) return absl::UnimplementedError(absl::StrCat("cuBLASLt has no algorithm for ", g.Describe()));
  if (candidate < 0 || candidate >= n) {
    return absl::InvalidArgumentError(absl::StrCat("cuBLASLt candidate ", candidate, " of ", n));
  }
  const int pick = usable[candidate];
  algo_ = results[pick].algo;
  workspace_ = static_cast<int64_t>(results[pick].workspaceSize);
  algorithm_ = absl::StrCat("cuBLASLt algo ", AlgoConfig(algo_, CUBLASLT_ALGO_CONFIG_ID), " tile ",
                            AlgoConfig(algo_, CUBLASLT_ALGO_CONFIG_TILE_ID), " stages ",
                            AlgoConfig(algo_, CUBLASLT_ALGO_CONFIG_STAGES_ID), " split-k ",
                            AlgoConfig(algo_, CUBLASLT_ALGO_CONFIG_SPLITK_NUM), ", workspace ", workspace_,
                            " bytes (heuristic ", pick + 1, " of ", found, ")");
  return workspace_;
}

absl::Status LtMatmul::Enqueue(cublasLtHandle_t handle, cudaStream_t stream, const void* w, const void* a,
                               const void* bias, const void* c, void* d, void* workspace,
                               int64_t workspace_bytes, const float* w_scale, const float* a_scale) const {
  if (!desc_) return absl::InternalError("cuBLASLt matmul enqueued before Prepare");
  if (g_.outer_vector_scales) {
    if (!w_scale || !a_scale) return absl::InternalError("an fp8 GEMM enqueued without its scale vectors");
    GCOMP_CUBLAS(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &w_scale, sizeof(w_scale)));
    GCOMP_CUBLAS(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &a_scale, sizeof(a_scale)));
  }
  if (bias) {
    GCOMP_CUBLAS(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)));
  }
  const float alpha = g_.alpha, beta = g_.beta;
  GCOMP_CUBLAS(cublasLtMatmul(handle, desc_, &alpha, w, a_, a, b_, &beta, c ? c : d, c_, d, d_, &algo_, workspace,
                              static_cast<size_t>(std::min(workspace_bytes, workspace_)), stream));
  return absl::OkStatus();
}

}  // namespace gcomp::cuda
