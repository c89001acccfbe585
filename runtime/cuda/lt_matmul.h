// One cuBLASLt matmul as gemm_desc.h maps it: descriptors and layouts built once per shape, the
// algorithm chosen by cuBLASLt's heuristics within a workspace limit, and an allocation-free
// enqueue. Used by the GEMM entries and by the convolution's im2col fallback.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <string>

#include "absl/status/statusor.h"
#include "runtime/cuda/gemm_desc.h"

namespace gcomp::cuda {

class LtMatmul {
 public:
  LtMatmul() = default;
  LtMatmul(const LtMatmul&) = delete;
  LtMatmul& operator=(const LtMatmul&) = delete;
  ~LtMatmul();

  // Descriptors for `g` and the heuristics' algorithm number `candidate` (0: the first) among those
  // that fit `max_workspace`; returns the workspace the algorithm needs.
  absl::StatusOr<int64_t> Prepare(cublasLtHandle_t handle, const LtGemm& g, int64_t max_workspace,
                                  int candidate = 0);
  // How many algorithms the heuristics returned at the last Prepare.
  int candidates() const { return candidates_; }
  // D = epilogue(alpha * W' A' + beta * C + bias): w = the plan's W, a = the plan's A, c = the
  // residual or nullptr, bias or nullptr, d = Y. With outer-vector scales (fp8): w_scale [N] and
  // a_scale [M] floats in device memory, D[i,j] = alpha·w_scale[i]·a_scale[j]·(W'A')[i,j] + ...
  absl::Status Enqueue(cublasLtHandle_t handle, cudaStream_t stream, const void* w, const void* a, const void* bias,
                       const void* c, void* d, void* workspace, int64_t workspace_bytes,
                       const float* w_scale = nullptr, const float* a_scale = nullptr) const;
  // "cuBLASLt algo 21 tile 13 stages 19 split-k 1, workspace 0 bytes".
  const std::string& algorithm() const { return algorithm_; }
  int64_t workspace() const { return workspace_; }

 private:
  void Release();
  LtGemm g_;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, c_ = nullptr, d_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
  int64_t workspace_ = 0;
  int candidates_ = 0;
  std::string algorithm_;
};

}  // namespace gcomp::cuda
