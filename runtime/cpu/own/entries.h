// gcomp's own CPU kernel entries of the cpu table.
#pragma once

#include <vector>

#include "runtime/cpu/kernel.h"

namespace gcomp::cpu {

std::vector<CpuEntry> OwnKernelEntries();

}  // namespace gcomp::cpu
