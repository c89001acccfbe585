// The CPU kernel interface: one table of kernels for the `cpu` backend (runtime/cpu/kernel_table.cc),
// each entry saying which steps it runs and why, how it packs its weights at compile time, and how
// it creates a runnable kernel for a session's concrete shapes.
//
// Life cycle (DESIGN.md "Kernel lifecycle"):
//   compile time: codegen asks each table entry in order `accepts(spec)`; the first that accepts
//                 is chosen and its reason recorded on the step; then `pack(spec, i)` packs each
//                 constant input i (weights) into the plan's weight section.
//   session:      for each batch size, `create(spec)` with concrete dims and the packed constants;
//                 `Run` executes one step on the session's buffers.
// Storage types: activations may be f32, f16 or bf16 (the plan's precision); kernels convert on
// load/store and compute in fp32 (accumulation always fp32).
#pragma once

#include <cstdint>
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

namespace gcomp::cpu {

// One input or output of a step.
struct Operand {
  bool present = true;  // false for an omitted optional input
  DType dtype = DType::kF32;
  std::vector<int64_t> dims;  // concrete (at compile time: the plan's maximum batch)
  // Constant inputs (weights): the bytes as `pack` wrote them (or the plain row-major tensor when
  // the entry has no pack function, format ""), and pack's format string.
  const uint8_t* constant = nullptr;
  size_t constant_bytes = 0;
  std::string format;
  bool is_constant() const { return constant != nullptr; }
};

struct KernelSpec {
  std::string name;  // the step's node name, for messages
  std::string op;    // FusedConv, FusedGemm, LayerNorm, Attention, Pool, Transpose, ...
  const Attributes* attrs = nullptr;
  std::vector<Operand> inputs;
  std::vector<Operand> outputs;
  int threads = 1;
  // in_place[k] = i when output k shares its memory with input i (the memory planner's in-place
  // reuse: e.g. a residual GEMM writes over its residual input), else -1. Empty = none.
  std::vector<int> in_place;
};

class Kernel {
 public:
  virtual ~Kernel() = default;
  // One execution. inputs[i] / outputs[k] point at the step's buffers (nullptr for an omitted
  // optional input; constants point into the plan's weight section); their dims are those of the
  // spec the kernel was created with.
  virtual absl::Status Run(std::span<const void* const> inputs, std::span<void* const> outputs) = 0;
};

// A constant input packed at compile time into the layout (and precision) the kernel wants.
struct Packed {
  std::vector<uint8_t> bytes;
  std::string format;  // read back by `create` (Operand::format); "" = plain row-major
};

struct KernelEntry {
  std::string id;           // stable kernel id, e.g. "cpu.onednn.conv"; bench --json counts by it
  std::string op;           // the op it runs
  std::string description;  // one line for `inspect PLAN`
  // Whether this entry runs `spec` (dims at the maximum batch; constants plain): the reason when it
  // does (recorded on the step), nullopt when it does not.
  std::function<std::optional<std::string>(const KernelSpec&)> accepts;
  // Packs constant input `index` (spec.inputs[index].constant holds the plain row-major data in the
  // operand's dtype). Absent: constants are stored plain.
  std::function<absl::StatusOr<Packed>(const KernelSpec&, size_t index)> pack;
  std::function<absl::StatusOr<std::unique_ptr<Kernel>>(const KernelSpec&)> create;
};

// Number of elements of `dims` (no overflow checks: dims come from a validated plan).
inline int64_t NumElements(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

// Converting loads and stores for the storage types (f32, f16, bf16): n elements.
void LoadF32(DType dtype, const void* src, float* dst, int64_t n);
void StoreF32(DType dtype, const float* src, void* dst, int64_t n);

}  // namespace gcomp::cpu
