// The oneDNN and OpenBLAS entries of the cpu kernel table, in preference order: per op kind the
// faster backend first, the other kept as a later entry for what the first declines (e.g. a
// geometry oneDNN has no primitive for; the OpenBLAS conv itself declines NCHW).
//
// Order: oneDNN first for FusedConv, FusedGemm and MatMul. Measured with tools/bench/gemm_backends
// (Release, fp32, every distinct ResNet-50 / ViT-B/16 layer shape through pack + create + Run,
// medians, total = sum of median time x the layer's count in the model), 2026-11-29 on the
// 2-core AMD EPYC (avx512_core_bf16), oneDNN 2.6.3, OpenBLAS 0.3.21:
//
//   total ms, oneDNN / OpenBLAS     2 threads                    1 thread
//   resnet50 b1  conv                20.0 /   31.3  (1.57x)       40.6 /   55.5  (1.37x)
//   resnet50 b1  gemm                16.9 /   22.7  (1.34x)       33.7 /   42.6  (1.26x)
//   resnet50 b8  conv               159.7 /  223.3  (1.40x)      325.2 /  442.7  (1.36x)
//   resnet50 b8  gemm               167.6 /  193.0  (1.15x)      311.8 /  370.3  (1.19x)
//   vit_b_16 b1  conv                 1.1 /    2.2  (1.98x)        2.3 /    2.8  (1.23x)
//   vit_b_16 b1  gemm               156.4 /  216.7  (1.39x)      314.9 /  390.8  (1.24x)
//   vit_b_16 b8  conv                 9.2 /   11.3  (1.23x)       18.5 /   21.8  (1.18x)
//   vit_b_16 b8  gemm              1228.1 / 1488.4  (1.21x)     2603.1 / 3212.2  (1.23x)
//
// oneDNN (brgemm kernels on weights reordered to blocked layouts, post-ops fused) wins every model
// total, and per layer all but two shapes: the 1x1 stride-2 downsample 512>1024 (0.9x) and, at
// batch 8, the residual 1x1 64>256 (0.87x: oneDNN first copies Z into Y when Y does not overwrite
// Z in place; plans usually run it in place). It is 2-2.6x faster on the 7x7 stem and the FC.
// Runs taken while other jobs loaded the 2 cores gave noisier 2-thread figures but the same order.
#include "runtime/cpu/blas/entries.h"

#include "absl/strings/str_cat.h"
#include "oneapi/dnnl/dnnl.hpp"
#include "runtime/cpu/blas/backends.h"

extern "C" {
#include <cblas.h>
}

namespace gcomp::cpu {

std::vector<CpuEntry> BlasKernelEntries() {
  return {blas::OneDnnWinogradBf16Entry(),   blas::OneDnnWinogradEntry(), blas::OneDnnWinograd2x2Entry(),
          blas::OneDnnPatchEntry(),          blas::OneDnnConvEntry(),           blas::OpenBlasConvEntry(),   blas::OneDnnGemmEntry(),
          blas::OpenBlasGemmEntry(),         blas::OneDnnMatMulEntry(),   blas::OpenBlasMatMulEntry(),
          blas::OpenBlasBatchedMatMulEntry()};
}

std::string BlasLibraryVersions() {
  const dnnl_version_t* v = dnnl_version();
  std::string openblas = openblas_get_config();
  return absl::StrCat("oneDNN ", v->major, ".", v->minor, ".", v->patch, "; ", openblas);
}

}  // namespace gcomp::cpu
