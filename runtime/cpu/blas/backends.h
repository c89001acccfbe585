// The oneDNN and OpenBLAS kernel entries (onednn_kernels.cc, openblas_kernels.cc); entries.cc
// orders them.
#pragma once

#include "runtime/cpu/kernel.h"

namespace gcomp::cpu::blas {

CpuEntry OneDnnWinogradEntry();      // "cpu.onednn.winograd" (FusedConv, f32 3x3 stride 1)
CpuEntry OneDnnWinograd2x2Entry();   // "cpu.onednn.winograd_2x2" (FusedConv, f32 3x3 stride 1, F(2x2, 3x3), no AVX-512)
CpuEntry OneDnnWinogradBf16Entry();  // "cpu.onednn.winograd_bf16" (FusedConv, bf16 3x3 stride 1, F(2x2, 3x3))
CpuEntry OneDnnPatchEntry();         // "cpu.onednn.patch" (FusedConv, NHWC kernel == stride: a matmul)
CpuEntry OneDnnConvEntry();          // "cpu.onednn.conv"
CpuEntry OneDnnGemmEntry();          // "cpu.onednn.gemm" (FusedGemm)
CpuEntry OneDnnMatMulEntry();        // "cpu.onednn.matmul" (MatMul with a constant B)
CpuEntry OpenBlasConvEntry();        // "cpu.openblas.conv"
CpuEntry OpenBlasGemmEntry();        // "cpu.openblas.gemm" (FusedGemm)
CpuEntry OpenBlasMatMulEntry();      // "cpu.openblas.matmul" (MatMul with a constant B)
CpuEntry OpenBlasBatchedMatMulEntry();  // "cpu.openblas.batched_matmul" (MatMul of two run-time operands)

}  // namespace gcomp::cpu::blas
