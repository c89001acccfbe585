// The registry of the backends' selection sides: every backend of this build, in one list.
#include "runtime/backend_kernels.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "runtime/cpu/cpu_kernels.h"
#ifdef GCOMP_HAVE_CUDA
#include "runtime/cuda/cuda_kernels.h"
#endif

namespace gcomp::runtime {
namespace {

const std::vector<const BackendKernels*>& Registry() {
  static const std::vector<const BackendKernels*> kBackends = {
      &cpu::CpuBackendKernels(),
#ifdef GCOMP_HAVE_CUDA
      &cuda::CudaSm90Kernels(),
      &cuda::CudaSm80Kernels(),
#endif
  };
  return kBackends;
}

}  // namespace

const BackendKernels* FindBackendKernels(std::string_view target) {
  for (const BackendKernels* b : Registry()) {
    if (b->name() == target) return b;
  }
  return nullptr;
}

std::vector<std::string> BackendNames() {
  std::vector<std::string> names;
  for (const BackendKernels* b : Registry()) names.push_back(b->name());
  return names;
}

absl::StatusOr<const BackendKernels*> BackendKernelsFor(std::string_view target) {
  if (const BackendKernels* b = FindBackendKernels(target)) return b;
  return absl::UnimplementedError(
      absl::StrCat("target '", std::string(target),
                   "' has no backend in this build (backends: ", absl::StrJoin(BackendNames(), ", "), ")"));
}

}  // namespace gcomp::runtime
