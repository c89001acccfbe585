// Checks of a plan against a backend, shared by the backends' executors.
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "runtime/backend_kernels.h"

namespace gcomp::runtime {

absl::Status CheckPlanForBackend(const plan::Plan& plan, const BackendKernels& backend) {
  if (plan.target != backend.name()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the plan targets '", plan.target, "', the backend is '", backend.name(), "'"));
  }
  if (absl::Status s = backend.CheckFingerprint(Fingerprint{plan.isa, plan.library_versions}); !s.ok()) return s;
  for (const plan::Step& s : plan.steps) {
    const KernelEntry* e = FindKernel(backend.kernels(), s.kernel);
    if (!e) {
      return absl::InvalidArgumentError(
          absl::StrCat("step '", s.name, "' uses kernel '", s.kernel, "', which this build does not have"));
    }
    if (!RunsOp(*e, s.op)) {
      return absl::InvalidArgumentError(absl::StrCat("invalid plan: step '", s.name, "' (", s.op, "): kernel '",
                                                     s.kernel, "' does not run ", s.op, " (it runs ",
                                                     absl::StrJoin(e->ops, ", "), ")"));
    }
  }
  return absl::OkStatus();
}

}  // namespace gcomp::runtime
