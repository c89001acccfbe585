// The cpu backend's selection side: its kernel table, the ISA and library fingerprint, host memory.
#pragma once

#include "runtime/backend_kernels.h"

namespace gcomp::cpu {

const runtime::BackendKernels& CpuBackendKernels();

}  // namespace gcomp::cpu
