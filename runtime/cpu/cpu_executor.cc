// The cpu executor: runs a cpu plan. One plan is shared read-only by any number of executors; an
// executor is used by one thread at a time.
//
// A plan comes from a file, which may have been crafted. Before any kernel runs: the plan is
// checked against the backend (target, ISA, kernel ids, each kernel's op); each step's parameter
// blob against its entry's declaration (version, names, types) and its in-place pairs against
// those the entry allows; at every new batch size, every buffer's bytes against the memory it
// resolves to and each kernel's own constraints against the operand dims (Reshape).
//
// A batch whose arena would not fit in half the last-level cache runs in parts, one run per part on
// slices of the inputs and outputs, when every step keeps images apart (runtime/cpu/batch_parts.h).
#include <cblas.h>
#include <omp.h>

#include <chrono>
#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/status_macros.h"
#include "runtime/cpu/batch_parts.h"
#include "runtime/cpu/cpu_backend.h"
#include "runtime/plan_steps.h"

namespace gcomp::cpu {
namespace {

using plan::Buffer;
using plan::BufferKind;
using runtime::KernelEntry;

uint8_t* AlignedAlloc(int64_t bytes) {
  size_t n = static_cast<size_t>((std::max<int64_t>(bytes, 1) + 63) / 64 * 64);
  return static_cast<uint8_t*>(std::aligned_alloc(64, n));
}

// Grows `block` to at least `need` bytes; the old block stays when the allocation fails.
absl::Status Grow(uint8_t*& block, int64_t& capacity, int64_t need, const char* what) {
  if (need <= capacity) return absl::OkStatus();
  uint8_t* grown = AlignedAlloc(need);
  if (!grown) return absl::ResourceExhaustedError(absl::StrCat("cannot allocate ", need, " ", what, " bytes"));
  std::free(block);
  block = grown;
  capacity = need;
  return absl::OkStatus();
}

class CpuExecutor : public runtime::Executor {
 public:
  CpuExecutor(std::shared_ptr<const plan::Plan> plan, const runtime::ExecutorOptions& options)
      : plan_(std::move(plan)), options_(options) {}
  ~CpuExecutor() override {
    std::free(batch_arena_);
    std::free(fixed_arena_);
    std::free(workspace_);
  }

  absl::Status Init();
  absl::StatusOr<std::vector<Tensor>> Run(const std::map<std::string, Tensor>& inputs) override;
  absl::Status RunDevice(const std::map<std::string, runtime::DeviceBuffer>& inputs,
                         const std::map<std::string, runtime::DeviceBuffer>& outputs) override;
  const std::map<std::string, int64_t>& launches() const override { return launches_; }
  const std::vector<double>& step_seconds() const override { return step_seconds_; }
  std::string memory_info() const override;

 private:
  absl::Status Reshape(int64_t batch);
  // A run at `batch` over the plan inputs' and outputs' addresses, in the plan's order: in parts
  // (RunPart on slices of them) when the plan allows it and the batch's arena would not fit in half the
  // last-level cache.
  absl::Status RunAt(int64_t batch, const std::vector<uint8_t*>& in_ptrs, const std::vector<uint8_t*>& out_ptrs);
  absl::Status RunPart(int64_t batch, const std::vector<uint8_t*>& in_ptrs, const std::vector<uint8_t*>& out_ptrs);
  // Images per run for a batch of `batch`.
  int64_t PartFor(int64_t batch) const;
  runtime::KernelSpec SpecAt(const plan::Step& s, int64_t batch) const {
    return runtime::SpecAt(*plan_, s, batch, options_.threads);
  }

  std::shared_ptr<const plan::Plan> plan_;
  runtime::ExecutorOptions options_;
  std::vector<const KernelEntry*> entries_;
  std::vector<std::unique_ptr<runtime::Kernel>> kernels_;
  std::map<int64_t, int64_t> workspace_at_;  // batch -> workspace bytes (batches already checked)
  int64_t batch_ = 0;
  uint8_t* batch_arena_ = nullptr;
  int64_t batch_arena_capacity_ = 0;
  uint8_t* fixed_arena_ = nullptr;
  uint8_t* workspace_ = nullptr;
  int64_t workspace_capacity_ = 0;
  std::map<std::string, int64_t> launches_;
  std::vector<double> step_seconds_;
  std::string parts_blocker_;  // why the plan's batches cannot run in parts ("" = they can)
  int64_t cache_bytes_ = 0;    // the last-level cache (0: unknown)
  int64_t last_batch_ = 0, last_part_ = 0;  // the last run's batch and images per part
};

absl::Status CpuExecutor::Init() {
  const runtime::BackendKernels& backend = CpuBackend().kernels_side();
  if (options_.threads < 1 || options_.threads > 1024) {
    return absl::InvalidArgumentError(absl::StrCat("threads ", options_.threads, ", expected 1..1024"));
  }
  ASSIGN_OR_RETURN(entries_, runtime::CheckedEntries(*plan_, backend));
  for (size_t i = 0; i < plan_->steps.size(); ++i) {
    const plan::Step& s = plan_->steps[i];
    auto k = entries_[i]->create(SpecAt(s, plan_->max_batch));
    if (!k.ok()) return runtime::StepError(s, k.status());
    kernels_.push_back(std::move(*k));
  }
  fixed_arena_ = AlignedAlloc(plan_->fixed_arena_bytes);
  if (!fixed_arena_) return absl::ResourceExhaustedError("cannot allocate the fixed arena");
  step_seconds_.assign(options_.profile ? plan_->steps.size() : 0, 0.0);
  parts_blocker_ = BatchPartsBlocker(*plan_);
  cache_bytes_ = LastLevelCacheBytes();
  return absl::OkStatus();
}

absl::Status CpuExecutor::Reshape(int64_t batch) {
  if (batch == batch_) return absl::OkStatus();
  RETURN_IF_ERROR(Grow(batch_arena_, batch_arena_capacity_, plan_->batch_arena_bytes * batch, "arena"));
  if (!workspace_at_.count(batch)) RETURN_IF_ERROR(runtime::CheckCapacities(*plan_, batch));
  int64_t workspace = 0;
  for (size_t i = 0; i < plan_->steps.size(); ++i) {
    const plan::Step& s = plan_->steps[i];
    absl::StatusOr<int64_t> ws = kernels_[i]->Reshape(SpecAt(s, batch));
    if (!ws.ok()) {
      // A kernel that cannot set itself up for a step its entry accepted at compile time is a
      // damaged plan (a refusal), unless memory ran out.
      const absl::StatusCode code = ws.status().code() == absl::StatusCode::kInternal
                                        ? absl::StatusCode::kInvalidArgument
                                        : ws.status().code();
      return absl::Status(code, absl::StrCat("invalid plan: step '", s.name, "' (", s.op, ", kernel ", s.kernel,
                                             "): ", ws.status().message()));
    }
    workspace = std::max(workspace, *ws);
  }
  RETURN_IF_ERROR(Grow(workspace_, workspace_capacity_, workspace, "workspace"));
  workspace_at_[batch] = workspace;
  batch_ = batch;
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Tensor>> CpuExecutor::Run(const std::map<std::string, Tensor>& inputs) {
  std::map<std::string, runtime::InputDecl> decl;
  for (const auto& [name, t] : inputs) decl[name] = {t.dtype(), t.dims()};
  ASSIGN_OR_RETURN(int64_t batch, runtime::BatchOf(*plan_, decl));
  std::vector<Tensor> outputs;
  for (int32_t id : plan_->outputs) {
    ASSIGN_OR_RETURN(Tensor t, Tensor::Zeros(plan_->buffers[id].dtype, runtime::DimsAt(plan_->buffers[id], batch)));
    outputs.push_back(std::move(t));
  }
  std::vector<uint8_t*> in_ptrs, out_ptrs;
  for (int32_t id : plan_->inputs) in_ptrs.push_back(const_cast<uint8_t*>(inputs.at(plan_->buffers[id].name).data()));
  for (Tensor& t : outputs) out_ptrs.push_back(t.mutable_data());
  RETURN_IF_ERROR(RunAt(batch, in_ptrs, out_ptrs));
  return outputs;
}

// Host memory is the cpu backend's device: the caller's buffers are read and written in place.
absl::Status CpuExecutor::RunDevice(const std::map<std::string, runtime::DeviceBuffer>& inputs,
                                    const std::map<std::string, runtime::DeviceBuffer>& outputs) {
  std::map<std::string, runtime::InputDecl> decl;
  for (const auto& [name, b] : inputs) decl[name] = {b.dtype, b.dims};
  ASSIGN_OR_RETURN(int64_t batch, runtime::BatchOf(*plan_, decl));
  std::vector<uint8_t*> in_ptrs, out_ptrs;
  for (int32_t id : plan_->inputs) {
    const runtime::DeviceBuffer& b = inputs.at(plan_->buffers[id].name);
    if (!b.data) return absl::InvalidArgumentError(absl::StrCat("input '", plan_->buffers[id].name, "' has no data"));
    in_ptrs.push_back(static_cast<uint8_t*>(b.data));
  }
  if (outputs.size() != plan_->outputs.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the plan has ", plan_->outputs.size(), " outputs, ", outputs.size(), " given"));
  }
  for (int32_t id : plan_->outputs) {
    const plan::Buffer& buf = plan_->buffers[id];
    auto it = outputs.find(buf.name);
    if (it == outputs.end()) return absl::InvalidArgumentError(absl::StrCat("output '", buf.name, "' is not given"));
    const std::vector<int64_t> want = runtime::DimsAt(buf, batch);
    if (it->second.dtype != buf.dtype || it->second.dims != want || !it->second.data) {
      return absl::InvalidArgumentError(absl::StrCat("output '", buf.name, "' must be ", DTypeName(buf.dtype), " [",
                                                     absl::StrJoin(want, ","), "] at batch ", batch));
    }
    out_ptrs.push_back(static_cast<uint8_t*>(it->second.data));
  }
  return RunAt(batch, in_ptrs, out_ptrs);
}

int64_t CpuExecutor::PartFor(int64_t batch) const {
  if (!parts_blocker_.empty()) return batch;
  if (options_.batch_part > 0) return std::min(batch, options_.batch_part);
  return BatchPart(batch, plan_->batch_arena_bytes, cache_bytes_, 0);
}

std::string CpuExecutor::memory_info() const {
  if (last_batch_ == 0) return "";
  const double mb = 1.0 / (1 << 20);
  const double whole = static_cast<double>(plan_->batch_arena_bytes * last_batch_) * mb;
  if (last_part_ >= last_batch_) {
    return absl::StrFormat("arena %.1f MB at batch %d, one run (%s)", whole, last_batch_,
                           !parts_blocker_.empty()   ? absl::StrCat("not in parts: ", parts_blocker_)
                           : options_.batch_part > 0 ? "parts as the session asks"
                           : cache_bytes_ > 0        ? absl::StrFormat("fits half the %.0f MB last-level cache",
                                                                       static_cast<double>(cache_bytes_) * mb)
                                                     : "the last-level cache size is unknown");
  }
  return absl::StrFormat(
      "batch %d runs in parts of %d (arena %.1f MB each): at %d the arena, %.1f MB, %s", last_batch_, last_part_,
      static_cast<double>(plan_->batch_arena_bytes * last_part_) * mb, last_batch_, whole,
      options_.batch_part > 0
          ? "is split as the session asks"
          : absl::StrFormat("is over half the %.0f MB last-level cache", static_cast<double>(cache_bytes_) * mb));
}

absl::Status CpuExecutor::RunAt(int64_t batch, const std::vector<uint8_t*>& in_ptrs,
                                const std::vector<uint8_t*>& out_ptrs) {
  const int64_t part = PartFor(batch);
  last_batch_ = batch;
  last_part_ = part;
  if (part >= batch) return RunPart(batch, in_ptrs, out_ptrs);
  // Every plan input and output holds its images one after another (BatchPartsBlocker).
  auto item_bytes = [&](int32_t id) {
    const plan::Buffer& b = plan_->buffers[id];
    return runtime::NumElements(runtime::DimsAt(b, 1)) * static_cast<int64_t>(DTypeSize(b.dtype));
  };
  std::vector<uint8_t*> ins(in_ptrs.size()), outs(out_ptrs.size());
  for (int64_t first = 0; first < batch; first += part) {
    for (size_t k = 0; k < ins.size(); ++k) ins[k] = in_ptrs[k] + first * item_bytes(plan_->inputs[k]);
    for (size_t k = 0; k < outs.size(); ++k) outs[k] = out_ptrs[k] + first * item_bytes(plan_->outputs[k]);
    RETURN_IF_ERROR(RunPart(std::min(part, batch - first), ins, outs));
  }
  return absl::OkStatus();
}

absl::Status CpuExecutor::RunPart(int64_t batch, const std::vector<uint8_t*>& in_ptrs,
                                  const std::vector<uint8_t*>& out_ptrs) {
  RETURN_IF_ERROR(Reshape(batch));
  // OpenMP's thread count is per calling thread; OpenBLAS's is process-wide.
  omp_set_num_threads(options_.threads);
  openblas_set_num_threads(options_.threads);
  std::vector<uint8_t*> addr =
      runtime::BufferAddresses(*plan_, batch, batch_arena_, fixed_arena_, plan_->weights, in_ptrs, out_ptrs);
  // Empty tensors may have no memory at all (a caller's empty tensor, an empty arena or weight
  // section); kernels get a valid address for them, which they read and write zero bytes of.
  alignas(64) static uint8_t empty[64];
  for (uint8_t*& a : addr) {
    if (a == nullptr) a = empty;
  }
  const runtime::RunContext ctx{options_.threads, nullptr};
  const std::span<uint8_t> workspace(workspace_, static_cast<size_t>(workspace_at_.at(batch)));
  std::vector<const void*> ins;
  std::vector<void*> outs;
  for (size_t s = 0; s < plan_->steps.size(); ++s) {
    const plan::Step& step = plan_->steps[s];
    ins.clear();
    outs.clear();
    for (int32_t id : step.inputs) ins.push_back(id < 0 ? nullptr : addr[id]);
    for (int32_t id : step.outputs) outs.push_back(addr[id]);
    auto t0 = std::chrono::steady_clock::now();
    if (absl::Status st = kernels_[s]->Run(ctx, ins, outs, workspace); !st.ok()) return runtime::StepError(step, st);
    if (options_.profile) {
      step_seconds_[s] += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    ++launches_[step.kernel];
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<runtime::Executor>> CreateCpuExecutor(std::shared_ptr<const plan::Plan> plan,
                                                                     const runtime::ExecutorOptions& options) {
  if (!plan) return absl::InvalidArgumentError("no plan");
  auto e = std::make_unique<CpuExecutor>(std::move(plan), options);
  RETURN_IF_ERROR(e->Init());
  return std::unique_ptr<runtime::Executor>(std::move(e));
}

}  // namespace gcomp::cpu
