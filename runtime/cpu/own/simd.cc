#include "runtime/cpu/own/simd.h"

#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>

namespace gcomp::cpu::own {
namespace {

std::atomic<int> g_cap{static_cast<int>(SimdLevel::kAmxBf16)};

// Linux keeps AMX's tile data out of a thread's state until the process asks for it
// (arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA)); granted once, it holds for every thread.
bool RequestAmxState() {
  constexpr int kArchReqXcompPerm = 0x1023;
  constexpr int kXfeatureXtiledata = 18;
  return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
}

SimdLevel Detect() {
  __builtin_cpu_init();  // in case this runs before the compiler's own initializer
  // __builtin_cpu_supports also checks that the OS saves the AVX-512 state (XCR0).
  const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
  if (!avx512) return SimdLevel::kAvx2;
  if (!__builtin_cpu_supports("avx512bf16")) return SimdLevel::kAvx512;
  // AMX-TILE and AMX-BF16: CPUID leaf 7, EDX bits 24 and 22 (clang 14's __builtin_cpu_supports
  // does not know them).
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  const bool amx = __get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) && (edx >> 24 & 1) && (edx >> 22 & 1);
  if (amx && RequestAmxState()) {
    return SimdLevel::kAmxBf16;
  }
  return SimdLevel::kAvx512Bf16;
}

}  // namespace

SimdLevel CpuSimdLevel() {
  static const SimdLevel detected = Detect();
  return static_cast<SimdLevel>(std::min(static_cast<int>(detected), g_cap.load()));
}

const char* SimdLevelName(SimdLevel level) {
  switch (level) {
    case SimdLevel::kAvx2:
      return "AVX2";
    case SimdLevel::kAvx512:
      return "AVX-512";
    case SimdLevel::kAvx512Bf16:
      return "AVX512-BF16";
    case SimdLevel::kAmxBf16:
      return "AMX-BF16";
  }
  return "?";
}

void CapSimdLevelForTesting(SimdLevel level) { g_cap.store(static_cast<int>(level)); }

}  // namespace gcomp::cpu::own
