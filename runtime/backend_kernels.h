// The selection side of a backend: what codegen needs to compile a plan for a target, and nothing
// that runs one. A backend serves one target (by the canonical name of its target description:
// "cpu", "cuda:sm_90", ...) and provides here:
//   - its kernel table (runtime/kernel.h): select and pack at compile time;
//   - the fingerprint a plan records and an executor checks (ISA or GPU architecture, library
//     versions);
//   - its memory spaces, with their alignment (64 B host, 256 B device).
// runtime/backend.h adds the executor side (CreateExecutor). Aliases ("cuda") are resolved by the
// target descriptions before anything asks a registry.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
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

class BackendKernels {
 public:
  virtual ~BackendKernels() = default;
  virtual const std::string& name() const = 0;
  virtual const KernelTable& kernels() const = 0;
  virtual Fingerprint fingerprint() const = 0;
  // Whether this machine can run a plan with `recorded` (the plan header's fields); the message
  // says what differs.
  virtual absl::Status CheckFingerprint(const Fingerprint& recorded) const = 0;
  // [0] holds the activations.
  virtual std::vector<MemorySpace> memory_spaces() const = 0;
  // The architectures generated device code is compiled for, the plan target's first ("sm_90");
  // empty for backends without generated device code.
  virtual std::vector<std::string> device_archs() const { return {}; }
};

// The selection side of the backend serving `target` (a canonical target name), or nullptr.
const BackendKernels* FindBackendKernels(std::string_view target);
// The same, or an error naming the targets this build has backends for.
absl::StatusOr<const BackendKernels*> BackendKernelsFor(std::string_view target);
// The targets this build compiles and runs plans for, in registry order.
std::vector<std::string> BackendNames();

// A plan this machine can run on `backend`: the plan's target is the backend's, its fingerprint
// matches, every step names a kernel of the table that runs the step's op. Executors call it first.
absl::Status CheckPlanForBackend(const plan::Plan& plan, const BackendKernels& backend);

}  // namespace gcomp::runtime
