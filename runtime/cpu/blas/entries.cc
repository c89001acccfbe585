// Order of the oneDNN / OpenBLAS entries: ORDER-PLACEHOLDER
#include "runtime/cpu/blas/entries.h"

#include "absl/strings/str_cat.h"
#include "oneapi/dnnl/dnnl.hpp"
#include "runtime/cpu/blas/backends.h"

extern "C" {
#include <cblas.h>
}

namespace gcomp::cpu {

std::vector<KernelEntry> BlasKernelEntries() {
  return {blas::OneDnnConvEntry(),    blas::OpenBlasConvEntry(),  blas::OneDnnGemmEntry(),
          blas::OpenBlasGemmEntry(),  blas::OneDnnMatMulEntry(), blas::OpenBlasMatMulEntry()};
}

std::string BlasLibraryVersions() {
  const dnnl_version_t* v = dnnl_version();
  std::string openblas = openblas_get_config();
  return absl::StrCat("oneDNN ", v->major, ".", v->minor, ".", v->patch, "; ", openblas);
}

}  // namespace gcomp::cpu
