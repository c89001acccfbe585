// The cpu executor: runs a cpu plan. One plan is shared read-only by any number of executors; an
// executor is used by one thread at a time.
//
// A plan comes from a file, which may have been crafted. Before any kernel runs: the plan is
// checked against the backend (target, ISA, kernel ids, each kernel's op); each step's parameter
// blob against its entry's declaration (version, names, types) and its in-place pairs against
// those the entry allows; at every new batch size, every buffer's bytes against the memory it
// resolves to and each kernel's own constraints against the operand dims (Reshape).
#include <cblas.h>
#include <omp.h>

#include <chrono>
#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/status_macros.h"
#include "runtime/cpu/cpu_backend.h"

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

std::string DimsString(const std::vector<int64_t>& d) { return absl::StrCat("[", absl::StrJoin(d, ","), "]"); }

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
  const std::map<std::string, int64_t>& launches() const override { return launches_; }
  const std::vector<double>& step_seconds() const override { return step_seconds_; }

 private:
  absl::Status Reshape(int64_t batch);
  absl::Status CheckCapacities(int64_t batch) const;
  absl::StatusOr<int64_t> BatchOf(const std::map<std::string, Tensor>& inputs) const;
  std::vector<int64_t> DimsAt(const Buffer& b, int64_t batch) const;
  runtime::KernelSpec SpecAt(const plan::Step& s, int64_t batch) const;
  int Root(int id) const;
  absl::Status StepError(const plan::Step& s, const absl::Status& st) const {
    return absl::Status(st.code(),
                        absl::StrCat("step '", s.name, "' (", s.op, ", kernel ", s.kernel, "): ", st.message()));
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
};

std::vector<int64_t> CpuExecutor::DimsAt(const Buffer& b, int64_t batch) const {
  std::vector<int64_t> dims;
  for (const plan::LinearDim& d : b.dims) dims.push_back(d.At(batch));
  return dims;
}

int CpuExecutor::Root(int id) const {
  while (plan_->buffers[id].kind == BufferKind::kAlias) id = plan_->buffers[id].alias_of;
  return id;
}

runtime::KernelSpec CpuExecutor::SpecAt(const plan::Step& s, int64_t batch) const {
  runtime::KernelSpec spec;
  spec.name = s.name;
  spec.op = s.op;
  spec.params = &s.params;
  spec.threads = options_.threads;
  spec.in_place.assign(s.in_place.begin(), s.in_place.end());
  for (int32_t id : s.inputs) {
    runtime::Operand op;
    if (id < 0) {
      op.present = false;
    } else {
      const Buffer& b = plan_->buffers[id];
      op.dtype = b.dtype;
      op.dims = DimsAt(b, batch);
      if (b.kind == BufferKind::kConstant) {
        op.constant = plan_->weights + b.offset;
        op.constant_bytes = static_cast<size_t>(b.bytes);
        op.format = b.format;
      }
    }
    spec.inputs.push_back(std::move(op));
  }
  for (int32_t id : s.outputs) {
    runtime::Operand op;
    op.dtype = plan_->buffers[id].dtype;
    op.dims = DimsAt(plan_->buffers[id], batch);
    spec.outputs.push_back(std::move(op));
  }
  return spec;
}

absl::Status CpuExecutor::Init() {
  const runtime::BackendKernels& backend = CpuBackend().kernels_side();
  if (options_.threads < 1 || options_.threads > 1024) {
    return absl::InvalidArgumentError(absl::StrCat("threads ", options_.threads, ", expected 1..1024"));
  }
  RETURN_IF_ERROR(runtime::CheckPlanForBackend(*plan_, backend));
  for (int32_t id : plan_->outputs) {
    if (plan_->buffers[id].kind != BufferKind::kOutput) {
      return absl::InvalidArgumentError(absl::StrCat("invalid plan: graph output '", plan_->buffers[id].name,
                                                     "' is not an output buffer written by a step"));
    }
  }
  for (const plan::Step& s : plan_->steps) {
    const KernelEntry* e = runtime::FindKernel(backend.kernels(), s.kernel);
    if (absl::Status st = runtime::CheckParams(*e, s.params, s.params_version); !st.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("invalid plan: step '", s.name, "' (", s.op, "): ", st.message()));
    }
    for (size_t k = 0; k < s.in_place.size(); ++k) {
      if (s.in_place[k] < 0) continue;
      bool allowed = false;
      for (const runtime::InPlace& p : e->in_place) {
        allowed |= p.output == static_cast<int>(k) && p.input == s.in_place[k];
      }
      if (!allowed) {
        return absl::InvalidArgumentError(absl::StrCat("invalid plan: step '", s.name, "' (", s.op, ") writes output ",
                                                       k, " over input ", s.in_place[k], ", which kernel '", s.kernel,
                                                       "' does not allow"));
      }
    }
    entries_.push_back(e);
  }
  for (size_t i = 0; i < plan_->steps.size(); ++i) {
    const plan::Step& s = plan_->steps[i];
    auto k = entries_[i]->create(SpecAt(s, plan_->max_batch));
    if (!k.ok()) return StepError(s, k.status());
    kernels_.push_back(std::move(*k));
  }
  fixed_arena_ = AlignedAlloc(plan_->fixed_arena_bytes);
  if (!fixed_arena_) return absl::ResourceExhaustedError("cannot allocate the fixed arena");
  step_seconds_.assign(options_.profile ? plan_->steps.size() : 0, 0.0);
  return absl::OkStatus();
}

absl::StatusOr<int64_t> CpuExecutor::BatchOf(const std::map<std::string, Tensor>& inputs) const {
  for (const auto& [name, t] : inputs) {
    bool known = false;
    for (int32_t id : plan_->inputs) known |= plan_->buffers[id].name == name;
    if (!known) return absl::InvalidArgumentError(absl::StrCat("the plan has no input '", name, "'"));
  }
  int64_t batch = -1;
  for (int32_t id : plan_->inputs) {
    const Buffer& b = plan_->buffers[id];
    auto it = inputs.find(b.name);
    if (it == inputs.end()) return absl::InvalidArgumentError(absl::StrCat("missing input '", b.name, "'"));
    const Tensor& t = it->second;
    if (t.dtype() != b.dtype) {
      return absl::InvalidArgumentError(
          absl::StrCat("input '", b.name, "' is ", DTypeName(t.dtype()), ", expected ", DTypeName(b.dtype)));
    }
    auto mismatch = [&]() {
      std::vector<std::string> want;
      for (const plan::LinearDim& d : b.dims) {
        want.push_back(d.per_batch == 0 ? absl::StrCat(d.fixed)
                                        : absl::StrCat(d.per_batch == 1 ? "" : absl::StrCat(d.per_batch, "*"), "batch",
                                                       d.fixed ? absl::StrCat("+", d.fixed) : ""));
      }
      return absl::InvalidArgumentError(absl::StrCat("input '", b.name, "' has dims ", DimsString(t.dims()),
                                                     ", expected [", absl::StrJoin(want, ","), "] with batch 1..",
                                                     plan_->max_batch));
    };
    if (t.dims().size() != b.dims.size()) return mismatch();
    for (size_t k = 0; k < b.dims.size(); ++k) {
      const plan::LinearDim& d = b.dims[k];
      const int64_t got = t.dims()[k];
      if (d.per_batch == 0) {
        if (got != d.fixed) return mismatch();
        continue;
      }
      if (got < d.fixed || (got - d.fixed) % d.per_batch != 0) return mismatch();
      int64_t bk = (got - d.fixed) / d.per_batch;
      if (batch >= 0 && bk != batch) return mismatch();
      batch = bk;
    }
  }
  if (batch < 0) batch = 1;  // static plan
  if (batch < 1 || batch > plan_->max_batch) {
    return absl::InvalidArgumentError(
        absl::StrCat("batch ", batch, " is outside the plan's 1..", plan_->max_batch, " (compile --batch N)"));
  }
  return batch;
}

// Every buffer's bytes at `batch` must fit the memory it resolves to (a crafted plan could give a
// buffer fewer bytes than its dims need), and steps may only write to arena or output memory.
absl::Status CpuExecutor::CheckCapacities(int64_t batch) const {
  auto bytes_of = [&](const Buffer& b) -> int64_t {
    int64_t n = static_cast<int64_t>(DTypeSize(b.dtype));
    for (const plan::LinearDim& d : b.dims) n *= d.At(batch);
    return n;
  };
  auto invalid = [](const Buffer& b, const std::string& what) {
    return absl::InvalidArgumentError(absl::StrCat("invalid plan: buffer '", b.name, "' ", what));
  };
  for (const Buffer& b : plan_->buffers) {
    const Buffer& root = plan_->buffers[Root(static_cast<int>(&b - plan_->buffers.data()))];
    int64_t capacity = 0;
    switch (root.kind) {
      case BufferKind::kBatchArena:
        capacity = root.bytes * batch;
        break;
      case BufferKind::kFixedArena:
        capacity = root.bytes;
        break;
      case BufferKind::kConstant:
        capacity = root.bytes;
        if (root.format.empty() && root.bytes != bytes_of(root))
          return invalid(root, "has bytes that do not match its dims");
        break;
      case BufferKind::kInput:
      case BufferKind::kOutput:
        capacity = bytes_of(root);
        break;
      case BufferKind::kAlias:
        break;
    }
    if (root.format.empty() && bytes_of(b) > capacity) {
      return invalid(b, absl::StrCat("needs ", bytes_of(b), " bytes at batch ", batch, ", its memory has ", capacity));
    }
  }
  for (const plan::Step& s : plan_->steps) {
    for (int32_t id : s.outputs) {
      const BufferKind k = plan_->buffers[Root(id)].kind;
      if (k == BufferKind::kConstant || k == BufferKind::kInput) {
        return invalid(plan_->buffers[id], absl::StrCat("is written by step '", s.name, "' but is a ",
                                                        k == BufferKind::kConstant ? "weight" : "caller input"));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status CpuExecutor::Reshape(int64_t batch) {
  if (batch == batch_) return absl::OkStatus();
  RETURN_IF_ERROR(Grow(batch_arena_, batch_arena_capacity_, plan_->batch_arena_bytes * batch, "arena"));
  if (!workspace_at_.count(batch)) RETURN_IF_ERROR(CheckCapacities(batch));
  int64_t workspace = 0;
  for (size_t i = 0; i < plan_->steps.size(); ++i) {
    const plan::Step& s = plan_->steps[i];
    absl::StatusOr<int64_t> ws = kernels_[i]->Reshape(SpecAt(s, batch));
    if (!ws.ok()) {
      return absl::Status(ws.status().code(), absl::StrCat("invalid plan: step '", s.name, "' (", s.op, ", kernel ",
                                                           s.kernel, "): ", ws.status().message()));
    }
    workspace = std::max(workspace, *ws);
  }
  RETURN_IF_ERROR(Grow(workspace_, workspace_capacity_, workspace, "workspace"));
  workspace_at_[batch] = workspace;
  batch_ = batch;
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Tensor>> CpuExecutor::Run(const std::map<std::string, Tensor>& inputs) {
  ASSIGN_OR_RETURN(int64_t batch, BatchOf(inputs));
  RETURN_IF_ERROR(Reshape(batch));
  // OpenMP's thread count is per calling thread; OpenBLAS's is process-wide.
  omp_set_num_threads(options_.threads);
  openblas_set_num_threads(options_.threads);
  std::vector<Tensor> outputs;
  for (int32_t id : plan_->outputs) {
    ASSIGN_OR_RETURN(Tensor t, Tensor::Zeros(plan_->buffers[id].dtype, DimsAt(plan_->buffers[id], batch)));
    outputs.push_back(std::move(t));
  }
  std::vector<uint8_t*> addr(plan_->buffers.size(), nullptr);
  for (size_t id = 0; id < plan_->buffers.size(); ++id) {
    const Buffer& b = plan_->buffers[id];
    switch (b.kind) {
      case BufferKind::kBatchArena:
        addr[id] = batch_arena_ + b.offset * batch;
        break;
      case BufferKind::kFixedArena:
        addr[id] = fixed_arena_ + b.offset;
        break;
      case BufferKind::kConstant:
        addr[id] = const_cast<uint8_t*>(plan_->weights + b.offset);
        break;
      case BufferKind::kInput:
        addr[id] = const_cast<uint8_t*>(inputs.at(b.name).data());
        break;
      case BufferKind::kOutput:
        addr[id] = outputs[b.io_index].mutable_data();
        break;
      case BufferKind::kAlias:
        break;
    }
  }
  for (size_t id = 0; id < plan_->buffers.size(); ++id) {
    if (plan_->buffers[id].kind == BufferKind::kAlias) addr[id] = addr[Root(static_cast<int>(id))];
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
    if (absl::Status st = kernels_[s]->Run(ctx, ins, outs, workspace); !st.ok()) return StepError(step, st);
    if (options_.profile) {
      step_seconds_[s] += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    ++launches_[step.kernel];
  }
  return outputs;
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
