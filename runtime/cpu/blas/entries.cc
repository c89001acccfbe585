// The oneDNN and OpenBLAS entries of the cpu kernel table, in preference order: per op kind the
// faster backend first, the other kept as a later entry for what the first declines (e.g. a
// geometry oneDNN has no primitive for; the OpenBLAS conv itself declines NCHW).
//
// Order: oneDNN first for FusedConv, FusedGemm and MatMul. Measured with tools/bench/gemm_backends
// (Release, fp32, every distinct ResNet-50 / ViT-B/16 layer shape, median time x layer count),
// 2026-11-29 on the 2-core AMD EPYC (avx512_core_bf16), oneDNN 2.6.3, OpenBLAS 0.3.21:
//
//   total ms (oneDNN / OpenBLAS)   1 thread                    2 threads (loaded machine)
//   resnet50 b1  conv               40.6 /  57.6  (1.42x)       80.5 /   99.1  (1.23x)
//   resnet50 b1  gemm               35.4 /  44.5  (1.26x)      155.8 /  167.9  (1.08x)
//   resnet50 b8  conv              345.5 / 479.7  (1.39x)      408.0 /  516.4  (1.27x)
//   resnet50 b8  gemm              307.8 / 360.3  (1.17x)      460.1 /  534.3  (1.16x)
//   vit_b_16 b1  conv                2.2 /   2.7  (1.22x)        8.2 /    7.9  (0.97x)
//   vit_b_16 b1  gemm              406.0 / 629.9  (1.55x)      607.8 /  722.1  (1.19x)
//   vit_b_16 b8  conv               18.2 /  21.3  (1.17x)       24.0 /   28.1  (1.17x)
//   vit_b_16 b8  gemm             2473.8 / 3980.2 (1.61x)     2683.6 / 4214.7  (1.57x)
//
// oneDNN (brgemm kernels, weights in blocked layouts, fused post-ops) wins on every model total
// but one noisy 2-thread entry (the single patch conv of ViT at batch 1, within noise); per layer
// it is 1.1-1.6x faster on 3x3 convs and GEMMs and 2-2.6x on the 7x7 stem and the GELU GEMMs. The
// 2-thread figures were taken while other jobs loaded the machine (small layers then wait on a
// descheduled thread), so the 1-thread totals are the cleaner comparison; both agree on the order.
#include "runtime/cpu/blas/entries.h"

#include "absl/strings/str_cat.h"
#include "oneapi/dnnl/dnnl.hpp"
#include "runtime/cpu/blas/backends.h"

extern "C" {
#include <cblas.h>
}

namespace gcomp::cpu {

std::vector<KernelEntry> BlasKernelEntries() {
  return {blas::OneDnnConvEntry(),   blas::OpenBlasConvEntry(), blas::OneDnnGemmEntry(),
          blas::OpenBlasGemmEntry(), blas::OneDnnMatMulEntry(), blas::OpenBlasMatMulEntry()};
}

std::string BlasLibraryVersions() {
  const dnnl_version_t* v = dnnl_version();
  std::string openblas = openblas_get_config();
  return absl::StrCat("oneDNN ", v->major, ".", v->minor, ".", v->patch, "; ", openblas);
}

}  // namespace gcomp::cpu
