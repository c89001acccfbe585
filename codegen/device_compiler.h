// Compiling a plan's generated device code (runtime::DeviceSource, CUDA C++) at plan-compile time,
// on the CPU: one module per architecture holding every distinct function of the plan, as a cubin
// for that architecture plus PTX, with what ptxas reported per function (registers, spills,
// stack). Builds with the CUDA toolkit use NVRTC (codegen/cuda/nvrtc_compiler.cc); others refuse.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "plan/plan.h"
#include "runtime/kernel.h"

namespace gcomp::codegen {

// `sources` in a deterministic order (the module is byte-identical for the same sources); `archs`
// like "sm_90". A compile error names the function whose source failed and quotes the log.
absl::StatusOr<std::vector<plan::DeviceCode>> CompileDeviceCode(const std::vector<runtime::DeviceSource>& sources,
                                                                const std::vector<std::string>& archs);

// The one translation unit compiled for `sources` (for tests and `gcomp inspect --device-source`).
std::string DeviceTranslationUnit(const std::vector<runtime::DeviceSource>& sources);

}  // namespace gcomp::codegen
