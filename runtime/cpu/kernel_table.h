// The cpu backend's kernel table: oneDNN/OpenBLAS GEMM and convolution entries, gcomp's own
// kernels, then the reference-kernel fallback, in that order; the first entry that accepts a step
// runs it.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/cpu/kernel.h"

namespace gcomp::cpu {

const std::vector<KernelEntry>& CpuKernelTable();

struct Selection {
  const KernelEntry* entry = nullptr;
  std::string reason;
};
// The first entry accepting `spec` (the fallback accepts every op of the op table).
absl::StatusOr<Selection> SelectKernel(const KernelSpec& spec);
// The entry with this id, or nullptr.
const KernelEntry* FindKernel(const std::string& id);

// The reference-kernel fallback (ref_kernel.cc): runs the op table's plain-loop kernel on copies
// of the step's buffers. Id "cpu.reference".
KernelEntry ReferenceKernelEntry();

}  // namespace gcomp::cpu
