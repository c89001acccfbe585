// The cuda backend's executor side (gcomp_cuda_backend): sessions that run cuda plans on a device.
#pragma once

#include "runtime/backend.h"

namespace gcomp::cuda {

const runtime::Backend& CudaSm90Backend();
const runtime::Backend& CudaSm80Backend();

// Whether this process sees a CUDA device (and why not).
absl::Status DevicePresent();

}  // namespace gcomp::cuda
