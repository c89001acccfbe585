#include "runtime/session.h"

#include <omp.h>

#include <cblas.h>

#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/op_def.h"
#include "graph/ops/op_helpers.h"
#include "core/status_macros.h"
#include "runtime/cpu/blas/entries.h"
#include "runtime/cpu/kernel_table.h"

namespace gcomp::runtime {
namespace {

using plan::Buffer;
using plan::BufferKind;

uint8_t* AlignedAlloc(int64_t bytes) {
  size_t n = static_cast<size_t>((std::max<int64_t>(bytes, 1) + 63) / 64 * 64);
  return static_cast<uint8_t*>(std::aligned_alloc(64, n));
}

std::string DimsString(const std::vector<int64_t>& d) { return absl::StrCat("[", absl::StrJoin(d, ","), "]"); }

// A plan comes from a file, which may have been crafted: before a step's kernel is created, the step
// is checked against its op's definition (arity, attribute types, the shape function's output types
// and dims at this batch) and against its kernel's own constraints (`accepts`), so that no kernel
// runs on operands its op or its entry does not allow.
absl::Status CheckStep(const plan::Plan& plan, const plan::Step& step, const cpu::KernelSpec& spec,
                       const cpu::KernelEntry& entry) {
  const OpDef* def = FindOp(step.op);
  if (!def) return absl::InvalidArgumentError(absl::StrCat("unknown op '", step.op, "'"));
  std::vector<std::unique_ptr<Value>> values;
  Node node;
  node.name = step.name;
  node.op = step.op;
  node.def = def;
  node.attrs = step.attrs;
  std::vector<ValueInfo> infos(spec.inputs.size());
  std::vector<const ValueInfo*> info_ptrs(spec.inputs.size(), nullptr);
  for (size_t i = 0; i < spec.inputs.size(); ++i) {
    const cpu::Operand& op = spec.inputs[i];
    if (!op.present) {
      node.inputs.push_back(nullptr);
      continue;
    }
    auto v = std::make_unique<Value>();
    v->name = plan.buffers[step.inputs[i]].name;
    v->dtype = op.dtype;
    v->shape = ShapeFromInts(op.dims);
    if (op.is_constant() && op.format.empty() &&
        op.constant_bytes != static_cast<size_t>(cpu::NumElements(op.dims)) * DTypeSize(op.dtype)) {
      return absl::InvalidArgumentError(absl::StrCat("constant '", v->name, "' has ", op.constant_bytes,
                                                     " bytes, its dims need ",
                                                     cpu::NumElements(op.dims) * DTypeSize(op.dtype)));
    }
    // Shape functions read the data of small integer constants (shapes, axes, pads, starts).
    if (op.is_constant() && op.format.empty() && (!IsFloat(op.dtype) || cpu::NumElements(op.dims) <= 4096)) {
      ASSIGN_OR_RETURN(Tensor t, Tensor::Zeros(op.dtype, op.dims));
      if (t.nbytes() != op.constant_bytes) {
        return absl::InvalidArgumentError(absl::StrCat("constant '", v->name, "' has ", op.constant_bytes,
                                                       " bytes, its dims need ", t.nbytes()));
      }
      std::memcpy(t.mutable_data(), op.constant, t.nbytes());
      v->constant = std::make_shared<const Tensor>(std::move(t));
    }
    infos[i] = ValueInfo{v->name, v->dtype, v->shape, v->constant.get(), nullptr};
    info_ptrs[i] = &infos[i];
    node.inputs.push_back(v.get());
    values.push_back(std::move(v));
  }
  for (size_t k = 0; k < spec.outputs.size(); ++k) {
    auto v = std::make_unique<Value>();
    v->name = plan.buffers[step.outputs[k]].name;
    node.outputs.push_back(v.get());
    values.push_back(std::move(v));
  }
  RETURN_IF_ERROR(CheckNodeAgainstDef(node, *def));
  InferContext ctx(node, info_ptrs);
  ASSIGN_OR_RETURN(std::vector<OutputInfo> outs, def->shape(ctx));
  if (outs.size() < spec.outputs.size()) {
    return absl::InvalidArgumentError(absl::StrCat("the op gives ", outs.size(), " outputs, the step has ",
                                                   spec.outputs.size()));
  }
  for (size_t k = 0; k < spec.outputs.size(); ++k) {
    // Dims that depend on data computed at run time (an Expand of a computed shape) are checked by
    // the kernel when it runs (the reference kernel re-infers them from the data).
    bool matches = outs[k].dtype == spec.outputs[k].dtype && outs[k].shape.size() == spec.outputs[k].dims.size();
    for (size_t d = 0; matches && d < outs[k].shape.size(); ++d) {
      const Dim& dim = outs[k].shape[d];
      if (auto c = dim.ConstValue()) {
        matches = *c == spec.outputs[k].dims[d];
      } else {
        const std::vector<std::string> symbols = dim.Symbols();
        matches = !symbols.empty() && ops::IsDataDependentSymbol(symbols[0]);
      }
    }
    if (!matches) {
      return absl::InvalidArgumentError(absl::StrCat(
          "output ", k, " is ", DTypeName(spec.outputs[k].dtype), DimsString(spec.outputs[k].dims), ", the op gives ",
          DTypeName(outs[k].dtype), ShapeToString(outs[k].shape)));
    }
  }
  for (size_t k = 0; k < step.in_place.size(); ++k) {
    const int32_t i = step.in_place[k];
    if (i < 0) continue;
    const cpu::Operand& in = spec.inputs[static_cast<size_t>(i)];
    if (!in.present || in.is_constant() || in.dims != spec.outputs[k].dims || in.dtype != spec.outputs[k].dtype) {
      return absl::InvalidArgumentError(absl::StrCat("output ", k, " overwrites input ", i,
                                                     ", which is not an activation of the same type and dims"));
    }
  }
  if (!entry.accepts(spec)) {
    return absl::InvalidArgumentError(absl::StrCat("kernel '", entry.id, "' does not run this step"));
  }
  return absl::OkStatus();
}

}  // namespace

Session::Session(std::shared_ptr<const plan::Plan> plan, const SessionOptions& options)
    : plan_(std::move(plan)), options_(options) {}

Session::~Session() {
  std::free(batch_arena_);
  std::free(fixed_arena_);
}

absl::StatusOr<std::unique_ptr<Session>> Session::Create(std::shared_ptr<const plan::Plan> plan,
                                                         const SessionOptions& options) {
  if (!plan) return absl::InvalidArgumentError("no plan");
  if (plan->target != "cpu") {
    return absl::InvalidArgumentError(
        absl::StrCat("the plan targets '", plan->target, "'; this runtime executes cpu plans"));
  }
  if (plan->isa != cpu::CpuIsa()) {
    return absl::InvalidArgumentError(absl::StrCat("the plan's weights were packed for ISA '", plan->isa,
                                                   "', this CPU runs '", cpu::CpuIsa(),
                                                   "': compile the model again on this machine"));
  }
  if (options.threads < 1 || options.threads > 1024) {
    return absl::InvalidArgumentError(absl::StrCat("threads ", options.threads, ", expected 1..1024"));
  }
  for (const plan::Step& s : plan->steps) {
    const cpu::KernelEntry* e = cpu::FindKernel(s.kernel);
    if (!e) {
      return absl::InvalidArgumentError(
          absl::StrCat("step '", s.name, "' uses kernel '", s.kernel, "', which this build does not have"));
    }
    if (!e->op.empty() && e->op != s.op) {
      return absl::InvalidArgumentError(absl::StrCat("invalid plan: step '", s.name, "' (", s.op, ") uses kernel '",
                                                     s.kernel, "', which runs ", e->op));
    }
  }
  for (int32_t id : plan->outputs) {
    if (plan->buffers[id].kind != BufferKind::kOutput) {
      return absl::InvalidArgumentError(absl::StrCat("invalid plan: graph output '", plan->buffers[id].name,
                                                     "' is not an output buffer written by a step"));
    }
  }
  std::unique_ptr<Session> session(new Session(std::move(plan), options));
  session->fixed_arena_ = AlignedAlloc(session->plan_->fixed_arena_bytes);
  if (!session->fixed_arena_) return absl::ResourceExhaustedError("cannot allocate the fixed arena");
  session->step_seconds_.assign(session->plan_->steps.size(), 0.0);
  return session;
}

std::vector<int64_t> Session::DimsAt(const Buffer& b, int64_t batch) const {
  std::vector<int64_t> dims;
  for (const plan::LinearDim& d : b.dims) dims.push_back(d.At(batch));
  return dims;
}

int Session::Root(int id) const {
  while (plan_->buffers[id].kind == BufferKind::kAlias) id = plan_->buffers[id].alias_of;
  return id;
}

absl::StatusOr<int64_t> Session::BatchOf(const std::map<std::string, Tensor>& inputs) const {
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
      return absl::InvalidArgumentError(absl::StrCat("input '", b.name, "' is ", DTypeName(t.dtype()), ", expected ",
                                                     DTypeName(b.dtype)));
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
absl::Status Session::CheckCapacities(int64_t batch) const {
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
      case BufferKind::kBatchArena: capacity = root.bytes * batch; break;
      case BufferKind::kFixedArena: capacity = root.bytes; break;
      case BufferKind::kConstant:
        capacity = root.bytes;
        if (root.format.empty() && root.bytes != bytes_of(root)) return invalid(root, "has bytes that do not match its dims");
        break;
      case BufferKind::kInput:
      case BufferKind::kOutput: capacity = bytes_of(root); break;
      case BufferKind::kAlias: break;
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

absl::Status Session::Reshape(int64_t batch) {
  const int64_t need = plan_->batch_arena_bytes * batch;
  if (need > batch_arena_capacity_) {
    uint8_t* grown = AlignedAlloc(need);
    if (!grown) return absl::ResourceExhaustedError(absl::StrCat("cannot allocate ", need, " arena bytes"));
    std::free(batch_arena_);
    batch_arena_ = grown;
    batch_arena_capacity_ = need;
  }
  batch_ = batch;
  if (prepared_.count(batch)) return absl::OkStatus();
  RETURN_IF_ERROR(CheckCapacities(batch));
  Prepared p;
  for (const plan::Step& s : plan_->steps) {
    cpu::KernelSpec spec;
    spec.name = s.name;
    spec.op = s.op;
    spec.attrs = &s.attrs;
    spec.threads = options_.threads;
    spec.in_place.assign(s.in_place.begin(), s.in_place.end());
    for (int32_t id : s.inputs) {
      cpu::Operand op;
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
      cpu::Operand op;
      op.dtype = plan_->buffers[id].dtype;
      op.dims = DimsAt(plan_->buffers[id], batch);
      spec.outputs.push_back(std::move(op));
    }
    const cpu::KernelEntry* e = cpu::FindKernel(s.kernel);
    if (absl::Status st = CheckStep(*plan_, s, spec, *e); !st.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("invalid plan: step '", s.name, "' (", s.op, ", kernel ", s.kernel, "): ", st.message()));
    }
    auto k = e->create(spec);
    if (!k.ok()) {
      return absl::Status(k.status().code(), absl::StrCat("step '", s.name, "' (", s.op, ", kernel ", s.kernel,
                                                          "): ", k.status().message()));
    }
    p.kernels.push_back(std::move(*k));
  }
  prepared_[batch] = std::move(p);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Tensor>> Session::Run(const std::map<std::string, Tensor>& inputs) {
  ASSIGN_OR_RETURN(int64_t batch, BatchOf(inputs));
  RETURN_IF_ERROR(Reshape(batch));
  omp_set_num_threads(options_.threads);
  openblas_set_num_threads(options_.threads);
  std::vector<Tensor> outputs;
  for (int32_t id : plan_->outputs) {
    ASSIGN_OR_RETURN(Tensor t, Tensor::Zeros(plan_->buffers[id].dtype, DimsAt(plan_->buffers[id], batch)));
    outputs.push_back(std::move(t));
  }
  // Buffer addresses for this run.
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
  Prepared& p = prepared_.at(batch);
  std::vector<const void*> ins;
  std::vector<void*> outs;
  for (size_t s = 0; s < plan_->steps.size(); ++s) {
    const plan::Step& step = plan_->steps[s];
    ins.clear();
    outs.clear();
    for (int32_t id : step.inputs) ins.push_back(id < 0 ? nullptr : addr[id]);
    for (int32_t id : step.outputs) outs.push_back(addr[id]);
    auto t0 = std::chrono::steady_clock::now();
    if (absl::Status st = p.kernels[s]->Run(ins, outs); !st.ok()) {
      return absl::Status(st.code(), absl::StrCat("step '", step.name, "' (", step.op, ", kernel ", step.kernel,
                                                  "): ", st.message()));
    }
    if (options_.profile) {
      step_seconds_[s] += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    ++launches_[step.kernel];
  }
  return outputs;
}

}  // namespace gcomp::runtime
