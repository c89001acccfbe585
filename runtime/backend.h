// Backends and their registry. A backend serves one target (by the canonical name of its target
// description: "cpu", "cuda:sm_90", ...) and provides everything target-specific that codegen and
// sessions need, so that neither compares target names:
//   - its kernel table (runtime/kernel.h): select and pack at compile time, create/reshape/run in
//     sessions;
//   - the fingerprint a plan records and a session checks (ISA or GPU architecture, library versions);
//   - its memory spaces, with their alignment (64 B host, 256 B device);
//   - CreateExecutor(plan, options): what runs the plan.
// Aliases ("cuda") are resolved by the target descriptions before anything asks the registry.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "core/tensor.h"
#include "plan/plan.h"
#include "runtime/kernel.h"

namespace gcomp::runtime {

struct MemorySpace {
  std::string name;        // "host", "device"
  int64_t alignment = 64;  // bytes
};

struct Fingerprint {
  std::string isa;               // cpu: the ISA weights are packed for; cuda: the architecture
  std::string library_versions;  // "oneDNN 2.6.3; OpenBLAS 0.3.21 ..."
};

struct ExecutorOptions {
  int threads = 1;
  bool profile = false;  // time every step (step_seconds())
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
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual const std::string& name() const = 0;
  virtual const KernelTable& kernels() const = 0;
  virtual Fingerprint fingerprint() const = 0;
  // Whether this machine can run a plan with `recorded` (the plan header's fields); the message
  // says what differs.
  virtual absl::Status CheckFingerprint(const Fingerprint& recorded) const = 0;
  // [0] holds the activations.
  virtual std::vector<MemorySpace> memory_spaces() const = 0;
  virtual absl::StatusOr<std::unique_ptr<Executor>> CreateExecutor(std::shared_ptr<const plan::Plan> plan,
                                                                   const ExecutorOptions& options) const = 0;
};

// The backend serving `target` (a canonical target name), or nullptr.
const Backend* FindBackend(std::string_view target);
// The same, or an error naming the targets this build has backends for.
absl::StatusOr<const Backend*> BackendFor(std::string_view target);
// The targets this build compiles and runs plans for, in registry order.
std::vector<std::string> BackendNames();

// A plan for `backend` this machine can run: the plan's target is the backend's, its fingerprint
// matches, every step names a kernel of the table. Sessions call it before creating an executor.
absl::Status CheckPlanForBackend(const plan::Plan& plan, const Backend& backend);

}  // namespace gcomp::runtime
