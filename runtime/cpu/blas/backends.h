// The oneDNN and OpenBLAS kernel entries (onednn_kernels.cc, openblas_kernels.cc); entries.cc
// orders them.
#pragma once

#include "runtime/cpu/kernel.h"

namespace gcomp::cpu::blas {

KernelEntry OneDnnConvEntry();      // "cpu.onednn.conv"
KernelEntry OneDnnGemmEntry();      // "cpu.onednn.gemm" (FusedGemm)
KernelEntry OneDnnMatMulEntry();    // "cpu.onednn.matmul" (MatMul with a constant B)
KernelEntry OpenBlasConvEntry();    // "cpu.openblas.conv"
KernelEntry OpenBlasGemmEntry();    // "cpu.openblas.gemm" (FusedGemm)
KernelEntry OpenBlasMatMulEntry();  // "cpu.openblas.matmul" (MatMul with a constant B)

}  // namespace gcomp::cpu::blas
