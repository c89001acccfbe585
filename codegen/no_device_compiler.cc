// Builds without the CUDA toolkit: no backend generates device code, so a request is a defect of
// the caller (or a hand-made target), refused with what is missing.
#include "codegen/device_compiler.h"

namespace gcomp::codegen {

absl::StatusOr<std::vector<plan::DeviceCode>> CompileDeviceCode(const std::vector<runtime::DeviceSource>&,
                                                                const std::vector<std::string>&) {
  return absl::UnimplementedError("generated device code needs NVRTC, and this build has no CUDA toolkit");
}

}  // namespace gcomp::codegen
