#include "tests/fuzz/plan_run.h"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "runtime/backend.h"

namespace gcomp::fuzz {
namespace {

// Bytes of a buffer at `batch`, or -1 on overflow.
int64_t BufferBytesAt(const plan::Buffer& b, int64_t batch) {
  int64_t n = static_cast<int64_t>(DTypeSize(b.dtype));
  for (const plan::LinearDim& d : b.dims) {
    int64_t dim = 0;
    if (__builtin_mul_overflow(d.per_batch, batch, &dim) || __builtin_add_overflow(dim, d.fixed, &dim) || dim < 0 ||
        __builtin_mul_overflow(n, dim, &n)) {
      return -1;
    }
  }
  return n;
}

// Inputs of the plan at `batch`: floats in [-1, 1), integers 0 and 1, booleans false.
std::map<std::string, Tensor> MakeInputs(const plan::Plan& plan, int64_t batch) {
  std::map<std::string, Tensor> feeds;
  for (int32_t index : plan.inputs) {
    const plan::Buffer& b = plan.buffers[index];
    std::vector<int64_t> dims;
    for (const plan::LinearDim& d : b.dims) dims.push_back(d.At(batch));
    absl::StatusOr<Tensor> t = Tensor::Zeros(b.dtype, dims);
    if (!t.ok()) continue;  // the run refuses the missing input
    for (int64_t i = 0; i < t->numel(); ++i) {
      if (IsFloat(b.dtype)) {
        t->SetF32(i, static_cast<float>((i * 37) % 64) / 32.0f - 1.0f);
      } else if (b.dtype != DType::kBool) {
        t->SetI64(i, i % 2);
      }
    }
    feeds[b.name] = std::move(*t);
  }
  return feeds;
}

}  // namespace

void Trace(const char* target, const char* stage, const absl::Status& s) {
  static const bool on = std::getenv("GCOMP_FUZZ_TRACE") != nullptr;
  if (on) std::fprintf(stderr, "%s: %s: %s\n", target, stage, s.ToString().c_str());
}

int64_t PlanBytesAt(const plan::Plan& plan, int64_t batch) {
  int64_t total = 0;
  int64_t arena = 0;
  if (__builtin_mul_overflow(plan.batch_arena_bytes, batch, &arena) || __builtin_add_overflow(total, arena, &total) ||
      __builtin_add_overflow(total, plan.fixed_arena_bytes, &total) ||
      __builtin_add_overflow(total, plan.workspace_bound, &total)) {
    return -1;
  }
  for (const plan::Buffer& b : plan.buffers) {
    if (b.kind != plan::BufferKind::kInput && b.kind != plan::BufferKind::kOutput) continue;
    const int64_t bytes = BufferBytesAt(b, batch);
    if (bytes < 0 || __builtin_add_overflow(total, bytes, &total)) return -1;
  }
  return total;
}

absl::Status RunOnGeneratedInputs(std::shared_ptr<const plan::Plan> plan) {
  const runtime::Backend* backend = runtime::FindBackend(plan->target);
  if (backend == nullptr) return absl::OkStatus();
  const int64_t smallest = PlanBytesAt(*plan, 1);
  if (smallest < 0 || smallest > kRunBudgetBytes) return absl::OkStatus();
  runtime::ExecutorOptions options;
  options.threads = 1;
  absl::StatusOr<std::unique_ptr<runtime::Executor>> executor = backend->CreateExecutor(plan, options);
  if (!executor.ok()) return executor.status();
  std::vector<int64_t> batches = {1};
  if (plan->max_batch > 1) batches.push_back(plan->max_batch);
  for (int64_t batch : batches) {
    const int64_t bytes = PlanBytesAt(*plan, batch);
    if (bytes < 0 || bytes > kRunBudgetBytes) break;
    absl::StatusOr<std::vector<Tensor>> out = (*executor)->Run(MakeInputs(*plan, batch));
    if (!out.ok()) return out.status();
  }
  return absl::OkStatus();
}

}  // namespace gcomp::fuzz
