// CUDA runtime, cuBLASLt and cuDNN results as absl::Status, naming the call that failed.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace gcomp::cuda {

inline absl::Status CudaOk(cudaError_t e, const char* call) {
  if (e == cudaSuccess) return absl::OkStatus();
  return absl::InternalError(absl::StrCat(call, ": ", cudaGetErrorName(e), " (", cudaGetErrorString(e), ")"));
}
inline absl::Status CublasOk(cublasStatus_t s, const char* call) {
  if (s == CUBLAS_STATUS_SUCCESS) return absl::OkStatus();
  return absl::InternalError(
      absl::StrCat(call, ": ", cublasLtGetStatusName(s), " (cuBLASLt status ", static_cast<int>(s), ")"));
}
inline absl::Status CudnnOk(cudnnStatus_t s, const char* call) {
  if (s == CUDNN_STATUS_SUCCESS) return absl::OkStatus();
  return absl::InternalError(absl::StrCat(call, ": ", cudnnGetErrorString(s)));
}

}  // namespace gcomp::cuda

#define GCOMP_CUDA(call) RETURN_IF_ERROR(::gcomp::cuda::CudaOk((call), #call))
#define GCOMP_CUBLAS(call) RETURN_IF_ERROR(::gcomp::cuda::CublasOk((call), #call))
#define GCOMP_CUDNN(call) RETURN_IF_ERROR(::gcomp::cuda::CudnnOk((call), #call))
