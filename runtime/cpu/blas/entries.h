// GEMM and convolution kernel entries of the cpu table (oneDNN / OpenBLAS).
#pragma once

#include <string>
#include <vector>

#include "runtime/cpu/kernel.h"

namespace gcomp::cpu {

// The entries in preference order (entries.cc says why that order).
std::vector<CpuEntry> BlasKernelEntries();

// oneDNN's effective ISA on this machine ("avx512_core_bf16", ...), for the plan header.
std::string CpuIsa();
// "oneDNN 2.6.3; OpenBLAS 0.3.21 ..." from the libraries themselves.
std::string BlasLibraryVersions();

}  // namespace gcomp::cpu
