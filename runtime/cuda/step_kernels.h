// The cuda executor's kernels, one per table entry family (the selection side, cuda_kernels.h,
// declares the entries; these run them). Each is a runtime::Kernel: created once per session
// from the step at the maximum batch; Reshape(batch) chooses algorithms (cuBLASLt heuristics,
// cuDNN heuristics mode A then fallback) and returns its workspace; Run only enqueues work on the
// context's stream, with no allocation and no synchronization, so that a session can capture the
// whole plan into one CUDA graph per batch size.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "runtime/cuda/device_kernels.h"
#include "runtime/kernel.h"

namespace gcomp::cuda {

// What a session's kernels share: the device, its stream and library handles, and the plan's
// generated functions as loaded on this device.
struct CudaContext {
  int device = 0;
  int sm_count = 1;
  cudaStream_t stream = nullptr;
  cublasLtHandle_t lt = nullptr;
  cudnnHandle_t dnn = nullptr;
  // The loaded function of a generated kernel (a cudaKernel_t), by name.
  std::function<absl::StatusOr<const void*>(const std::string&)> function;
  // Tuning sessions: cuDNN builds every execution plan, not only the heuristics' first.
  bool all_candidates = false;
};

class CudaKernel : public runtime::Kernel {
 public:
  // The algorithm chosen at the last Reshape, for the session info and bench --json
  // ("cuBLASLt algo 23 tile 256x128 stages 4, workspace 4194304").
  virtual std::string Algorithm() const = 0;

  // Tuning. Reshape picks candidate 0 of the library's ranking, or the recorded choice for the
  // batch (SetTuned). Candidates() counts the ranked candidates at the current batch;
  // UseCandidate(i) switches to candidate i and returns its workspace bytes (an error when that
  // candidate cannot run this step).
  virtual int Candidates() const { return 0; }
  virtual absl::StatusOr<int64_t> UseCandidate(int index) {
    return absl::UnimplementedError("no candidates to choose from");
  }
  virtual int Candidate() const { return 0; }
  void SetTuned(std::map<int64_t, int> by_batch) { tuned_ = std::move(by_batch); }

 protected:
  int TunedFor(int64_t batch) const {
    auto it = tuned_.find(batch);
    return it == tuned_.end() ? 0 : it->second;
  }

 private:
  std::map<int64_t, int> tuned_;
};

absl::StatusOr<std::unique_ptr<CudaKernel>> CreateGemmKernel(const CudaContext& ctx, const runtime::KernelSpec& spec);
absl::StatusOr<std::unique_ptr<CudaKernel>> CreateConvKernel(const CudaContext& ctx, const runtime::KernelSpec& spec);
absl::StatusOr<std::unique_ptr<CudaKernel>> CreateSdpaKernel(const CudaContext& ctx, const runtime::KernelSpec& spec);
absl::StatusOr<std::unique_ptr<CudaKernel>> CreateGeneratedKernel(const CudaContext& ctx,
                                                                  const runtime::KernelSpec& spec);

// Launches generated kernel `k` (function `fn`) on the context's stream: `total` work items at
// batch size `batch`.
absl::Status LaunchGenerated(const CudaContext& ctx, const GeneratedKernel& k, const void* fn, int64_t batch,
                             int64_t total, std::span<const void* const> inputs, std::span<void* const> outputs);

}  // namespace gcomp::cuda
