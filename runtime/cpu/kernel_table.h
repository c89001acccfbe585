// The cpu backend's kernel table: oneDNN/OpenBLAS GEMM and convolution entries, then gcomp's own
// kernels; the first entry that accepts a step runs it. Every op of the supported models has an
// entry; a step no entry accepts is a compile error (codegen lists every such step).
#pragma once

#include <string>
#include <vector>

#include "runtime/cpu/kernel.h"

namespace gcomp::cpu {

// The entries as the cpu backend declares them, in table order.
const std::vector<CpuEntry>& CpuEntries();
// The same entries as a runtime::KernelTable: `create` makes a kernel whose Reshape checks the
// entry's constraints (`accepts`) at the batch and builds one instance per batch size.
const runtime::KernelTable& CpuKernelTable();

}  // namespace gcomp::cpu
