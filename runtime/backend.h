// Backends and their registry: a backend is its selection side (runtime/backend_kernels.h: kernel
// table, fingerprint, memory spaces) and CreateExecutor(plan, options), what runs its plans.
// Sessions and the CLI ask this registry; codegen asks only the selection side's, so that it never
// links an executor.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "core/tensor.h"
#include "plan/plan.h"
#include "runtime/backend_kernels.h"

namespace gcomp::runtime {

struct ExecutorOptions {
  int threads = 1;
  bool profile = false;  // time every step (step_seconds())
  // Device backends: the device, a stream the caller owns (nullptr: the executor creates one), and
  // whether runs replay one CUDA graph per batch size (false: every run launches step by step).
  int device = 0;
  void* stream = nullptr;
  bool device_graphs = true;
  // Device backends: keep every candidate algorithm available for Tune (cuDNN builds all its
  // execution plans instead of the heuristics' first).
  bool tuning = false;
  // cpu: the images per run when a batch runs in parts (runtime/cpu/batch_parts.h): 0 = parts
  // whose arena fits in the last-level cache; N > 0 = parts of N (N >= the batch: one run).
  int64_t batch_part = 0;
};

// A tensor in device memory (device backends' zero-copy path).
struct DeviceBuffer {
  DType dtype = DType::kF32;
  std::vector<int64_t> dims;
  void* data = nullptr;
};

// Runs one plan (or, for `ref`, one graph); used by one thread at a time.
class Executor {
 public:
  virtual ~Executor() = default;
  // Runs on named inputs (every plan input, dtype and dims matching the plan for some batch in
  // [1, max_batch]); returns the outputs in plan order.
  virtual absl::StatusOr<std::vector<Tensor>> Run(const std::map<std::string, Tensor>& inputs) = 0;
  // Kernel launches by kernel id, counted as they ran.
  virtual const std::map<std::string, int64_t>& launches() const = 0;
  // With options.profile: accumulated seconds per step index (empty otherwise).
  virtual const std::vector<double>& step_seconds() const = 0;
  // Device backends: runs on device memory, inputs and preallocated outputs by name, enqueued on the
  // executor's stream (no copy, no synchronization; the caller synchronizes its stream).
  virtual absl::Status RunDevice(const std::map<std::string, DeviceBuffer>& inputs,
                                 const std::map<std::string, DeviceBuffer>& outputs) {
    return absl::UnimplementedError("this backend runs on host tensors only");
  }
  // Per step, the algorithm its kernel chose at the last run's batch size (empty where the
  // backend has no choice to report).
  virtual std::vector<std::string> step_algorithms() const { return {}; }
  // The executor's memory, one line ("host" backends: empty).
  virtual std::string memory_info() const { return ""; }
  // Things the caller should tell the user (a plan's tuning ignored on another device, ...).
  virtual std::vector<std::string> notices() const { return {}; }
  // Device backends: times each step's candidate algorithms at each batch size and returns the
  // fastest, keyed by this device and its libraries (`gcomp compile --tune`).
  virtual absl::StatusOr<plan::Tuning> Tune(const std::vector<int64_t>& batches) {
    return absl::UnimplementedError("this backend has no algorithms to tune");
  }
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual const BackendKernels& kernels_side() const = 0;
  const std::string& name() const { return kernels_side().name(); }
  virtual absl::StatusOr<std::unique_ptr<Executor>> CreateExecutor(std::shared_ptr<const plan::Plan> plan,
                                                                   const ExecutorOptions& options) const = 0;
};

// The backend serving `target` (a canonical target name), or nullptr.
const Backend* FindBackend(std::string_view target);
// The same, or an error naming the targets this build has backends for.
absl::StatusOr<const Backend*> BackendFor(std::string_view target);

}  // namespace gcomp::runtime
