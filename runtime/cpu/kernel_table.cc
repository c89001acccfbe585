#include "runtime/cpu/kernel_table.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "runtime/cpu/blas/entries.h"
#include "runtime/cpu/own/entries.h"

namespace gcomp::cpu {
namespace {

// One step's kernel for a session: an instance of the entry per batch size, made at Reshape after
// the entry's constraints accept the operands at that batch.
class PerBatchKernel : public runtime::Kernel {
 public:
  explicit PerBatchKernel(const CpuEntry& entry) : entry_(entry) {}

  absl::StatusOr<int64_t> Reshape(const KernelSpec& spec) override {
    std::vector<std::vector<int64_t>> key;
    for (const Operand& o : spec.inputs) key.push_back(o.dims);
    for (const Operand& o : spec.outputs) key.push_back(o.dims);
    auto it = instances_.find(key);
    if (it == instances_.end()) {
      if (!entry_.accepts(spec)) {
        return absl::InvalidArgumentError(
            absl::StrCat("kernel '", entry_.id, "' does not run this step at these operand dims"));
      }
      absl::StatusOr<std::unique_ptr<ShapedKernel>> k = entry_.create(spec);
      if (!k.ok()) return k.status();
      it = instances_.emplace(std::move(key), std::move(*k)).first;
    }
    current_ = it->second.get();
    return current_->WorkspaceBytes();
  }

  absl::Status Run(const runtime::RunContext&, std::span<const void* const> inputs, std::span<void* const> outputs,
                   std::span<uint8_t> workspace) override {
    if (!current_) return absl::InternalError("kernel run before Reshape");
    if (workspace.size() < static_cast<size_t>(current_->WorkspaceBytes())) {
      return absl::InternalError(absl::StrCat("kernel '", entry_.id, "' needs ", current_->WorkspaceBytes(),
                                              " workspace bytes, given ", workspace.size()));
    }
    return current_->RunWithWorkspace(inputs, outputs, workspace);
  }

 private:
  const CpuEntry& entry_;
  std::map<std::vector<std::vector<int64_t>>, std::unique_ptr<ShapedKernel>> instances_;
  ShapedKernel* current_ = nullptr;
};

}  // namespace

const std::vector<CpuEntry>& CpuEntries() {
  static const std::vector<CpuEntry> kEntries = [] {
    std::vector<CpuEntry> t = own::GemmEntries();
    for (CpuEntry& e : own::Avx2GemmEntries()) t.push_back(std::move(e));
    for (CpuEntry& e : own::Avx2WinogradEntries()) t.push_back(std::move(e));
    for (CpuEntry& e : own::Avx512WinogradEntries()) t.push_back(std::move(e));  // before oneDNN's Winograd
    for (CpuEntry& e : BlasKernelEntries()) {
      if (e.id == "cpu.onednn.conv") t.push_back(own::Avx2ConvEntry());  // after the Winograd entries
      t.push_back(std::move(e));
    }
    for (CpuEntry& e : OwnKernelEntries()) t.push_back(std::move(e));
    return t;
  }();
  return kEntries;
}

const runtime::KernelTable& CpuKernelTable() {
  static const runtime::KernelTable kTable = [] {
    runtime::KernelTable t;
    for (const CpuEntry& c : CpuEntries()) {
      runtime::KernelEntry e;
      e.id = c.id;
      e.ops = c.ops;
      e.description = c.description;
      e.params = c.params;
      e.params_version = c.params_version;
      e.in_place = c.in_place;
      e.accepts = c.accepts;
      e.pack = c.pack;
      const CpuEntry* entry = &c;
      e.create = [entry](const KernelSpec&) -> absl::StatusOr<std::unique_ptr<runtime::Kernel>> {
        return std::unique_ptr<runtime::Kernel>(new PerBatchKernel(*entry));
      };
      t.push_back(std::move(e));
    }
    return t;
  }();
  return kTable;
}

}  // namespace gcomp::cpu
