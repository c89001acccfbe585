#include "runtime/cpu/cpu_kernels.h"

#include "absl/strings/str_cat.h"
#include "runtime/cpu/blas/entries.h"
#include "runtime/cpu/kernel_table.h"

namespace gcomp::cpu {
namespace {

class CpuKernels : public runtime::BackendKernels {
 public:
  const std::string& name() const override { return name_; }
  const runtime::KernelTable& kernels() const override { return CpuKernelTable(); }
  runtime::Fingerprint fingerprint() const override { return {CpuIsa(), BlasLibraryVersions()}; }
  absl::Status CheckFingerprint(const runtime::Fingerprint& recorded) const override {
    // Packed weights depend on the ISA oneDNN chose; library versions are recorded for the reader.
    if (recorded.isa != CpuIsa()) {
      return absl::InvalidArgumentError(absl::StrCat("the plan's weights were packed for ISA '", recorded.isa,
                                                     "', this CPU runs '", CpuIsa(),
                                                     "': compile the model again on this machine"));
    }
    return absl::OkStatus();
  }
  std::vector<runtime::MemorySpace> memory_spaces() const override { return {{"host", 64}}; }

 private:
  std::string name_ = "cpu";
};

}  // namespace

const runtime::BackendKernels& CpuBackendKernels() {
  static const CpuKernels kCpu;
  return kCpu;
}

}  // namespace gcomp::cpu
