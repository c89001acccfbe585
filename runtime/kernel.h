// The kernel interface every backend's table implements (IR-free: codegen fills it from graph
// nodes, sessions from plan steps). The lifecycle, as cuBLASLt, cuDNN and NVRTC need it:
//
//   compile time  select(spec)        the first entry of the backend's table whose `accepts` takes
//                                     the step: its reason, and the step's parameter blob (the
//                                     entry's declared parameters, `params`, at `params_version`)
//                 pack(spec, i)       constant input i (weights) into the kernel's layout/precision
//                 device_sources      generated kernels (CUDA C++), compiled by codegen into the plan
//   session       create(spec)        once: the blob and the packed constants (descriptors,
//                                     device weights); the blob is checked against the entry's
//                                     declaration before, so a kernel never reads a parameter of
//                                     another type than it declared
//                 Reshape(spec)       per batch size: the operand dims at that batch; checks them
//                                     (the kernel's own constraints) and returns the workspace
//                                     bytes (algorithm choice and graph capture go here on a GPU)
//                 Run(ctx, ...)       one execution: no allocation; ctx carries threads or a stream
//
// Entries declare which input an output may overwrite (`in_place`); the memory planner reuses
// memory only where the chosen entry allows it.
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

namespace gcomp::runtime {

// One input or output of a step.
struct Operand {
  bool present = true;  // false for an omitted optional input
  DType dtype = DType::kF32;
  std::vector<int64_t> dims;  // concrete: the plan's maximum batch at compile time, the run's batch at Reshape
  // Per dim, how much it grows per batch item (0: the same at every batch). Empty where unknown.
  std::vector<int64_t> per_batch;
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
  // The parameter blob: at select time the node's attributes, afterwards the step's parameters
  // (only those the entry declares, type-checked).
  const Attributes* params = nullptr;
  std::vector<Operand> inputs;
  std::vector<Operand> outputs;
  int threads = 1;
  std::string precision = "fp32";  // the plan's --precision (tf32 plans keep fp32 storage)
  int64_t batch = 1;               // the batch size the operand dims are at
  // in_place[k] = i when output k shares its memory with input i, else -1. Empty = none.
  std::vector<int> in_place;
};

// What a run passes to every kernel.
struct RunContext {
  int threads = 1;
  void* stream = nullptr;  // a device stream for device backends
};

class Kernel {
 public:
  virtual ~Kernel() = default;
  // The operand dims for a batch size; returns the workspace bytes Run needs at that batch.
  virtual absl::StatusOr<int64_t> Reshape(const KernelSpec& spec) = 0;
  // One execution at the last Reshape's dims. inputs[i] / outputs[k] point at the step's buffers
  // (nullptr for an omitted optional input; constants point into the plan's weights).
  virtual absl::Status Run(const RunContext& ctx, std::span<const void* const> inputs, std::span<void* const> outputs,
                           std::span<uint8_t> workspace) = 0;
};

// A constant input packed at compile time into the layout (and precision) the kernel wants.
struct Packed {
  std::vector<uint8_t> bytes;
  std::string format;  // read back at create (Operand::format); "" = plain row-major
};

// Device code a step needs, as CUDA C++ source: codegen compiles every distinct function of a plan
// once, for the backend's architectures, into the plan's kernels section. `name` is the extern "C"
// function's name and identifies its source (the same name is the same code).
struct DeviceSource {
  std::string name;
  std::string source;
};

// Output `output` may be written over input `input` (same dims and dtype).
struct InPlace {
  int output = 0;
  int input = 0;
};

struct KernelEntry {
  std::string id;                // stable kernel id, e.g. "cpu.onednn.conv"; bench --json counts by it
  std::vector<std::string> ops;  // the ops it runs (`accepts` may still decline a step of one)
  std::string description;       // one line for `inspect PLAN`
  // The parameters this entry reads from the blob, and the blob's version: a step whose blob has
  // another version, an undeclared parameter or one of another type is refused before create.
  std::vector<AttrSpec> params;
  uint32_t params_version = 1;
  std::vector<InPlace> in_place;
  // Whether this entry runs `spec` (at compile time: dims at the maximum batch, constants plain;
  // again at every Reshape): the reason when it does, nullopt when it does not.
  std::function<std::optional<std::string>(const KernelSpec&)> accepts;
  // Packs constant input `index`. Absent: constants are stored plain.
  std::function<absl::StatusOr<Packed>(const KernelSpec&, size_t index)> pack;
  // Makes the session's kernel. Empty where the executor side supplies it (the cuda backend: its
  // selection side links no CUDA runtime library).
  std::function<absl::StatusOr<std::unique_ptr<Kernel>>(const KernelSpec&)> create;
  // Generated device code the step launches (absent: none), and the largest workspace Reshape may
  // ask for at the spec's (maximum) batch (absent: none).
  std::function<absl::StatusOr<std::vector<DeviceSource>>(const KernelSpec&)> device_sources;
  std::function<int64_t(const KernelSpec&)> workspace_bound;
};

using KernelTable = std::vector<KernelEntry>;

// The result of select: which entry, why, and the step's parameter blob.
struct Selection {
  const KernelEntry* entry = nullptr;
  std::string reason;
  Attributes params;
  uint32_t params_version = 0;
};

// Compile time: the first entry of `table` that runs `spec` (spec.params = the node's attributes).
// NotFound when no entry does (the message lists what each candidate entry said).
// `exclude`: entry ids not to consider (compile --exclude-kernels: to run or time another entry).
absl::StatusOr<Selection> SelectKernel(const KernelTable& table, const KernelSpec& spec,
                                       const std::vector<std::string>& exclude = {});
// The entry with this id, or nullptr.
const KernelEntry* FindKernel(const KernelTable& table, const std::string& id);
// Session: a step's blob against its entry's declaration (version, names, types).
absl::Status CheckParams(const KernelEntry& entry, const Attributes& params, uint32_t version);

// Whether `entry` runs steps of `op`.
bool RunsOp(const KernelEntry& entry, const std::string& op);

// Number of elements of `dims` (dims come from a validated plan).
inline int64_t NumElements(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

}  // namespace gcomp::runtime
