// The registry of backends with their executors: every backend of this build, in one list (the
// same targets as the selection registry of backend_kernels.cc).
#include "runtime/backend.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "runtime/cpu/cpu_backend.h"
#ifdef GCOMP_HAVE_CUDA_EXECUTOR
#include "runtime/cuda/cuda_backend.h"
#endif

namespace gcomp::runtime {
namespace {

const std::vector<const Backend*>& Registry() {
  static const std::vector<const Backend*> kBackends = {
      &cpu::CpuBackend(),
#ifdef GCOMP_HAVE_CUDA_EXECUTOR
      &cuda::CudaSm90Backend(),
      &cuda::CudaSm80Backend(),
#endif
  };
  return kBackends;
}

}  // namespace

const Backend* FindBackend(std::string_view target) {
  for (const Backend* b : Registry()) {
    if (b->name() == target) return b;
  }
  return nullptr;
}

absl::StatusOr<const Backend*> BackendFor(std::string_view target) {
  if (const Backend* b = FindBackend(target)) return b;
  return absl::UnimplementedError(
      absl::StrCat("target '", std::string(target),
                   "' has no backend in this build (backends: ", absl::StrJoin(BackendNames(), ", "), ")"));
}

}  // namespace gcomp::runtime
