// The compiled plan in memory (DESIGN.md "Codegen and the plan"): what `gcomp compile` writes and
// the runtime executes. codegen/codegen.cc builds it from an optimized graph; plan/plan_file.cc
// serializes it (versioned protobuf header, 64-byte aligned hashed sections, mmap on load).
//
// Shapes depend on the batch size only, linearly: every dim is per_batch * batch + fixed. A plan
// runs any batch in [1, max_batch].
// Memory: every non-constant value lives in one of two activation arenas, or aliases another
// value's memory (views such as Reshape, and in-place outputs):
//   - the batch arena holds values whose size is per_batch * batch bytes; offsets are planned at
//     batch 1 and scale with the batch (offset * batch), so one plan serves every batch size;
//   - the fixed arena holds values whose size does not depend on the batch (shape tensors, ...),
//     and values with a mixed size at their max_batch size.
// Graph inputs are read from the caller's tensors and graph outputs written into the caller's by
// the steps that produce them (later steps may read them there); an output no step produces (a
// graph input, a constant or a view) gets a copy step, so every plan output is a kOutput buffer.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/attribute.h"
#include "core/dtype.h"

namespace gcomp::plan {

// 2: header hash, kernel parameter blobs, the kernels section, memory space and alignment.
inline constexpr uint32_t kPlanFormatVersion = 2;
inline constexpr int64_t kPlanAlignment = 64;

struct LinearDim {
  int64_t per_batch = 0;
  int64_t fixed = 0;
  int64_t At(int64_t batch) const { return per_batch * batch + fixed; }
  bool operator==(const LinearDim&) const = default;
};

enum class BufferKind : uint8_t {
  kBatchArena = 0,  // offset/bytes per batch unit in the batch arena
  kFixedArena = 1,  // offset/bytes in the fixed arena
  kConstant = 2,    // a weight: bytes in the weight section
  kInput = 3,       // graph input: the caller's tensor
  kOutput = 4,      // graph output: the caller's tensor
  kAlias = 5,       // same memory as buffer `alias_of` (a view or an in-place output)
};

struct Buffer {
  std::string name;  // the graph value's name
  DType dtype = DType::kF32;
  std::vector<LinearDim> dims;
  BufferKind kind = BufferKind::kBatchArena;
  // kBatchArena: byte offset per batch unit and bytes per batch unit (both multiples of 64).
  // kFixedArena: byte offset and bytes. kConstant: offset and bytes in the weight section.
  int64_t offset = 0;
  int64_t bytes = 0;
  int32_t alias_of = -1;  // kAlias
  int32_t io_index = -1;  // kInput / kOutput: position among the plan's inputs / outputs
  std::string format;     // kConstant: the kernel's packed format ("" = plain row-major)
};

// One generated function of a module, with what ptxas reported for it on the module's `arch`.
struct DeviceFunction {
  std::string name;
  int32_t registers = 0;
  int32_t spill_store_bytes = 0;
  int32_t spill_load_bytes = 0;
  int32_t stack_bytes = 0;
};

// One module of generated kernels for one architecture: cubin for exactly `arch`, PTX for newer
// ones, and the functions it defines.
struct DeviceCode {
  std::string name;
  std::string arch;
  std::string cubin;
  std::string ptx;
  std::vector<DeviceFunction> functions;
};

struct Step {
  std::string name;    // node name
  std::string op;
  std::string kernel;  // kernel id from the backend's table
  std::string reason;  // why this kernel (recorded at compile time)
  // The kernel's parameter blob (chosen by its entry's select at compile time) and its version.
  Attributes params;
  uint32_t params_version = 0;
  std::vector<int32_t> inputs;   // buffer indices; -1 = omitted optional input
  std::vector<int32_t> outputs;  // buffer indices
  std::vector<int32_t> in_place;  // per output: input index it overwrites, or -1 (may be empty)
  std::vector<std::string> origin;    // ONNX nodes it came from
  std::vector<std::string> decisions;  // "kind = value: reason" lines of the optimized node
  // Generated device functions the kernel launches (names in the kernels section's modules).
  std::vector<std::string> device_functions;
};

// Kernel choices measured on one device (`gcomp compile --tune`): per step and batch size, the
// candidate (an index into the library's ranked candidates: cuBLASLt's heuristic results, cuDNN's
// execution plans) that ran fastest. Valid only for the device and library versions of `key`.
struct TuningChoice {
  int32_t step = 0;
  int64_t batch = 1;
  int32_t candidate = 0;
  std::string algorithm;  // what the candidate was, for inspect
  double ms = 0;          // its measured time
};
struct Tuning {
  // "NVIDIA H200 | 132 SMs | driver 13000 | CUDA 13000 | cuBLASLt 130100 | cuDNN 91900".
  std::string key;
  std::vector<TuningChoice> choices;
  bool empty() const { return choices.empty(); }
};

struct Plan {
  // Header fields.
  uint32_t format_version = kPlanFormatVersion;
  std::string target;         // "cpu", "cuda:sm_90", "cuda:sm_80"
  std::string isa;            // cpu: the ISA weights were packed for (e.g. "avx512_core_bf16")
  std::string gcomp_version;
  std::string library_versions;  // e.g. "oneDNN 2.6.3; OpenBLAS 0.3.21"
  std::string model;          // source model file name (no directories)
  std::string precision;      // fp32, fp16, bf16, ...
  std::string level;          // O0..O3
  int64_t max_batch = 1;

  std::vector<Buffer> buffers;
  std::vector<int32_t> inputs;   // buffer indices of the graph inputs, in order
  std::vector<int32_t> outputs;  // buffer indices of the graph outputs, in order
  std::vector<Step> steps;

  // Generated device code (the kernels section); empty for cpu plans.
  std::vector<DeviceCode> device_code;
  // The tuning section (absent from the file when empty).
  Tuning tuning;

  // Where the arenas live and the alignment of every arena offset (the backend's memory space).
  std::string memory_space = "host";
  int64_t arena_alignment = kPlanAlignment;

  // Memory plan figures (bytes; batch arena per batch unit).
  int64_t batch_arena_bytes = 0;
  int64_t fixed_arena_bytes = 0;
  int64_t batch_peak_live_bytes = 0;  // lower bound: the largest sum of simultaneously live values
  int64_t fixed_peak_live_bytes = 0;
  // The most workspace memory one step's kernel may ask for at max_batch (0: none; the executor
  // holds one workspace of the largest size that Reshape asks for, at most this).
  int64_t workspace_bound = 0;

  // The weight section (64-byte aligned offsets). After loading from a file it points into the
  // mapped file; when built by codegen it points into `owned_weights`.
  const uint8_t* weights = nullptr;
  int64_t weights_bytes = 0;
  std::vector<uint8_t> owned_weights;
  std::shared_ptr<const void> mapping;  // keeps a loaded file's mapping alive
};

}  // namespace gcomp::plan
