// gcomp's own CPU kernel entries of the cpu table.
#pragma once

#include <vector>

#include "runtime/cpu/kernel.h"

namespace gcomp::cpu {

std::vector<CpuEntry> OwnKernelEntries();

// The own GEMM entries (gemm.cc: AMX-BF16 FusedGemm and MatMul); the table tries them before
// oneDNN's.
namespace own {
std::vector<CpuEntry> GemmEntries();
// The own fp32 GEMM entries on AVX2 + FMA (gemm_avx2.cc), chosen where the CPU has no AVX-512.
std::vector<CpuEntry> Avx2GemmEntries();
// The own fp32 implicit-GEMM convolution on AVX2 + FMA (conv_avx2.cc), chosen where the CPU has no
// AVX-512; the table tries it after the Winograd entries and before oneDNN's convolution.
CpuEntry Avx2ConvEntry();
// The own Winograd F(4x4, 3x3) and F(2x2, 3x3) on AVX2 + FMA (winograd_avx2.cc), in that order;
// the table tries them before every other convolution entry.
std::vector<CpuEntry> Avx2WinogradEntries();
// cpu.avx512.winograd4 (f32 F(4x4)), cpu.avx512.winograd (f32 F(2x2), outputs under 16 F(4x4) tiles)
// and cpu.avx512.winograd_bf16 (bf16 F(2x2) on AVX512-BF16), in that order, in winograd_avx2.cc;
// the table tries them before oneDNN's Winograd entries.
std::vector<CpuEntry> Avx512WinogradEntries();
}  // namespace own

}  // namespace gcomp::cpu
