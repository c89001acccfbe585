// The cpu backend: its selection side (cpu_kernels.h) and the executor that runs cpu plans
// (cpu_executor.cc).
#pragma once

#include "runtime/backend.h"

namespace gcomp::cpu {

const runtime::Backend& CpuBackend();

// The cpu executor (cpu_executor.cc): arenas in host memory, kernels created once per session and
// reshaped per batch size, launches counted as they run.
absl::StatusOr<std::unique_ptr<runtime::Executor>> CreateCpuExecutor(std::shared_ptr<const plan::Plan> plan,
                                                                     const runtime::ExecutorOptions& options);

}  // namespace gcomp::cpu
