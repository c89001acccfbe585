#include "runtime/cpu/cpu_backend.h"

#include "runtime/cpu/cpu_kernels.h"

namespace gcomp::cpu {
namespace {

class Cpu : public runtime::Backend {
 public:
  const runtime::BackendKernels& kernels_side() const override { return CpuBackendKernels(); }
  absl::StatusOr<std::unique_ptr<runtime::Executor>> CreateExecutor(
      std::shared_ptr<const plan::Plan> plan, const runtime::ExecutorOptions& options) const override {
    return CreateCpuExecutor(std::move(plan), options);
  }
};

}  // namespace

const runtime::Backend& CpuBackend() {
  static const Cpu kCpu;
  return kCpu;
}

}  // namespace gcomp::cpu
