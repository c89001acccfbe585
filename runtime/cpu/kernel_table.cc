#include "runtime/cpu/kernel_table.h"

#include "absl/strings/str_cat.h"
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

const KernelEntry* FindKernel(const std::string& id) {
  for (const KernelEntry& e : CpuKernelTable()) {
    if (e.id == id) return &e;
  }
  return nullptr;
}

}  // namespace gcomp::cpu
