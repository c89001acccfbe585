#include "runtime/cpu/kernel_table.h"

#include <cblas.h>

#include "absl/strings/str_cat.h"
#include "oneapi/dnnl/dnnl.h"
#include "oneapi/dnnl/dnnl_debug.h"
#include "runtime/cpu/blas/entries.h"
#include "runtime/cpu/own/entries.h"

namespace gcomp::cpu {

const std::vector<KernelEntry>& CpuKernelTable() {
  static const std::vector<KernelEntry> kTable = [] {
    std::vector<KernelEntry> t = BlasKernelEntries();
    for (KernelEntry& e : OwnKernelEntries()) t.push_back(std::move(e));
    t.push_back(ReferenceKernelEntry());
    return t;
  }();
  return kTable;
}

absl::StatusOr<Selection> SelectKernel(const KernelSpec& spec) {
  for (const KernelEntry& e : CpuKernelTable()) {
    if (!e.op.empty() && e.op != spec.op) continue;
    if (std::optional<std::string> why = e.accepts(spec)) return Selection{&e, *why};
  }
  return absl::InvalidArgumentError(
      absl::StrCat("node '", spec.name, "' (", spec.op, "): no cpu kernel runs this op"));
}

std::string CpuIsaName() { return dnnl_cpu_isa2str(dnnl_get_effective_cpu_isa()); }

std::string CpuLibraryVersions() {
  const dnnl_version_t* v = dnnl_version();
  return absl::StrCat("oneDNN ", v->major, ".", v->minor, ".", v->patch, " (", v->hash, "); OpenBLAS ",
                      std::string(openblas_get_config()));
}

const KernelEntry* FindKernel(const std::string& id) {
  for (const KernelEntry& e : CpuKernelTable()) {
    if (e.id == id) return &e;
  }
  return nullptr;
}

}  // namespace gcomp::cpu
