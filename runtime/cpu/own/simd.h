// The vector instruction sets gcomp's own CPU kernels choose between at kernel creation. The
// library is compiled for x86-64-v3 (AVX2, FMA); the AVX-512 kernels live in files compiled with
// AVX-512 (`*_avx512.cc`) or AMX (`*_amx.cc`) enabled and run only where CpuSimdLevel() says the
// CPU (and the OS) has those instructions.
#pragma once

namespace gcomp::cpu::own {

enum class SimdLevel {
  kAvx2 = 0,        // AVX2 + FMA, 8 fp32 lanes
  kAvx512 = 1,      // AVX-512 F/BW/VL/DQ, 16 fp32 lanes
  kAvx512Bf16 = 2,  // and AVX512-BF16 dot products (vdpbf16ps) with fp32 accumulation
  kAmxBf16 = 3,     // and AMX tiles with bf16 products (tdpbf16ps), the OS permitting their state
};

// What this CPU has, at most the cap below.
SimdLevel CpuSimdLevel();
const char* SimdLevelName(SimdLevel level);

// Tests: kernels created after this call use at most `level` (kAmxBf16 removes the cap), so
// every form of a kernel is checked on one machine.
void CapSimdLevelForTesting(SimdLevel level);

}  // namespace gcomp::cpu::own
