// What the plan-running fuzz targets (fuzz_compile, fuzz_plan) do with a plan that loaded: run it
// on generated inputs at batch 1 and at its maximum batch, as `gcomp run` would, when what the run
// would hold (arenas, workspace, inputs and outputs) fits the per-input memory budget. Refusals are
// statuses; a crash, an out-of-bounds access or an allocation beyond the budget is a finding.
#pragma once

#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "plan/plan.h"

namespace gcomp::fuzz {

// Bytes one run may hold; plans that need more are not run (libFuzzer's -malloc_limit_mb catches
// a run that allocates beyond what its plan declares).
inline constexpr int64_t kRunBudgetBytes = int64_t{256} << 20;

// The plan's memory at `batch` (arenas, workspace bound, inputs and outputs); -1 when it overflows.
int64_t PlanBytesAt(const plan::Plan& plan, int64_t batch);

// Runs `plan` on its backend with one thread; OK when the plan is over budget or has no backend
// in this build, else the run's status.
absl::Status RunOnGeneratedInputs(std::shared_ptr<const plan::Plan> plan);

// With GCOMP_FUZZ_TRACE set, prints how far an input got ("TARGET: STAGE: STATUS" on stderr).
void Trace(const char* target, const char* stage, const absl::Status& s);

}  // namespace gcomp::fuzz
