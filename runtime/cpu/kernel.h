// The cpu backend's kernels: one table (runtime/cpu/kernel_table.cc) of entries, each saying which
// steps it runs and why, how it packs its weights at compile time, and how it makes a runnable
// instance for a session's concrete operand dims. The table is exposed to codegen and sessions as
// a runtime::KernelTable (runtime/kernel.h): its `create` makes a kernel whose Reshape builds (and
// keeps) one instance per batch size, oneDNN primitives included.
// Storage types: activations may be f32, f16 or bf16 (the plan's precision); kernels convert on
// load/store and compute in fp32 (accumulation always fp32).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/attribute.h"
#include "core/dtype.h"
#include "runtime/kernel.h"

namespace gcomp::cpu {

using runtime::InPlace;
using runtime::KernelSpec;
using runtime::NumElements;
using runtime::Operand;
using runtime::Packed;

// A cpu kernel for one set of operand dims.
class ShapedKernel {
 public:
  virtual ~ShapedKernel() = default;
  // One execution. inputs[i] / outputs[k] point at the step's buffers (nullptr for an omitted
  // optional input; constants point into the plan's weight section); their dims are those of the
  // spec the kernel was created with.
  virtual absl::Status Run(std::span<const void* const> inputs, std::span<void* const> outputs) = 0;
  // Scratch that Run needs only while it runs (transformed or reordered activations): the session
  // lends it from one workspace block that every step shares (64-byte aligned), so it is not held
  // once per step. 0: none.
  virtual int64_t WorkspaceBytes() const { return 0; }
  // Run with `workspace` (at least WorkspaceBytes() bytes, 64-byte aligned). A kernel that needs
  // none runs Run; one that does runs Run on a block of its own when called without one.
  virtual absl::Status RunWithWorkspace(std::span<const void* const> inputs, std::span<void* const> outputs,
                                        std::span<uint8_t> workspace) {
    (void)workspace;
    return Run(inputs, outputs);
  }
};

struct CpuEntry {
  std::string id;                // stable kernel id, e.g. "cpu.onednn.conv"
  std::vector<std::string> ops;  // the ops it runs
  std::string description;       // one line for `inspect PLAN`
  std::vector<AttrSpec> params;  // the parameters it reads (runtime::KernelEntry::params)
  uint32_t params_version = 1;
  std::vector<InPlace> in_place;  // outputs it may write over an input
  std::function<std::optional<std::string>(const KernelSpec&)> accepts;
  std::function<absl::StatusOr<Packed>(const KernelSpec&, size_t index)> pack;
  // An instance for the spec's concrete dims (validated by `accepts` first).
  std::function<absl::StatusOr<std::unique_ptr<ShapedKernel>>(const KernelSpec&)> create;
};

// n rounded up to a whole number of 64-byte lines.
inline size_t Align64(size_t n) { return (n + 63) / 64 * 64; }

// Kernel-owned memory of n zeroed T at a 64-byte boundary, for buffers that tile or vector loads
// read in whole cache lines (weights reordered at create, scratch): a large malloc block starts
// 16 bytes past one, and every 64-byte row loaded from it would span two lines.
template <typename T>
class AlignedArray {
 public:
  AlignedArray() = default;
  explicit AlignedArray(size_t n) : n_(n) {
    const size_t bytes = Align64(n * sizeof(T));
    p_.reset(static_cast<T*>(std::aligned_alloc(64, bytes > 0 ? bytes : 64)));
    if (p_) std::memset(static_cast<void*>(p_.get()), 0, bytes);
  }
  T* data() { return p_.get(); }
  const T* data() const { return p_.get(); }
  size_t size() const { return p_ ? n_ : 0; }
  explicit operator bool() const { return p_ != nullptr; }

 private:
  struct Free {
    void operator()(void* p) const { std::free(p); }
  };
  std::unique_ptr<T[], Free> p_;
  size_t n_ = 0;
};

// Converting loads and stores for the storage types (f32, f16, bf16): n elements.
void LoadF32(DType dtype, const void* src, float* dst, int64_t n);
void StoreF32(DType dtype, const float* src, void* dst, int64_t n);

}  // namespace gcomp::cpu
