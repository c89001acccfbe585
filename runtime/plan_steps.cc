#include "runtime/plan_steps.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace gcomp::runtime {
namespace {

using plan::Buffer;
using plan::BufferKind;

std::string DimsString(const std::vector<int64_t>& d) { return absl::StrCat("[", absl::StrJoin(d, ","), "]"); }

}  // namespace

std::vector<int64_t> DimsAt(const Buffer& b, int64_t batch) {
  std::vector<int64_t> dims;
  for (const plan::LinearDim& d : b.dims) dims.push_back(d.At(batch));
  return dims;
}

int RootBuffer(const plan::Plan& plan, int id) {
  while (plan.buffers[id].kind == BufferKind::kAlias) id = plan.buffers[id].alias_of;
  return id;
}

BufferPlace PlaceAt(const plan::Plan& plan, int id, int64_t batch) {
  const Buffer& root = plan.buffers[RootBuffer(plan, id)];
  BufferPlace p;
  p.kind = root.kind;
  switch (root.kind) {
    case BufferKind::kBatchArena:
      p.offset = root.offset * batch;
      break;
    case BufferKind::kFixedArena:
    case BufferKind::kConstant:
      p.offset = root.offset;
      break;
    case BufferKind::kInput:
    case BufferKind::kOutput:
      p.io_index = root.io_index;
      break;
    case BufferKind::kAlias:
      break;  // RootBuffer never returns one
  }
  return p;
}

std::vector<uint8_t*> BufferAddresses(const plan::Plan& plan, int64_t batch, uint8_t* batch_arena, uint8_t* fixed_arena,
                                      const uint8_t* weights, const std::vector<uint8_t*>& inputs,
                                      const std::vector<uint8_t*>& outputs) {
  std::vector<uint8_t*> addr(plan.buffers.size(), nullptr);
  for (size_t id = 0; id < plan.buffers.size(); ++id) {
    const BufferPlace p = PlaceAt(plan, static_cast<int>(id), batch);
    switch (p.kind) {
      case BufferKind::kBatchArena:
        addr[id] = batch_arena + p.offset;
        break;
      case BufferKind::kFixedArena:
        addr[id] = fixed_arena + p.offset;
        break;
      case BufferKind::kConstant:
        addr[id] = const_cast<uint8_t*>(weights + p.offset);
        break;
      case BufferKind::kInput:
        addr[id] = inputs[p.io_index];
        break;
      case BufferKind::kOutput:
        addr[id] = outputs[p.io_index];
        break;
      case BufferKind::kAlias:
        break;
    }
  }
  return addr;
}

absl::Status StepError(const plan::Step& s, const absl::Status& st) {
  return absl::Status(st.code(),
                      absl::StrCat("step '", s.name, "' (", s.op, ", kernel ", s.kernel, "): ", st.message()));
}

absl::StatusOr<std::vector<const KernelEntry*>> CheckedEntries(const plan::Plan& plan, const BackendKernels& backend) {
  if (absl::Status s = CheckPlanForBackend(plan, backend); !s.ok()) return s;
  for (int32_t id : plan.outputs) {
    if (plan.buffers[id].kind != BufferKind::kOutput) {
      return absl::InvalidArgumentError(absl::StrCat("invalid plan: graph output '", plan.buffers[id].name,
                                                     "' is not an output buffer written by a step"));
    }
  }
  std::vector<const KernelEntry*> entries;
  for (const plan::Step& s : plan.steps) {
    const KernelEntry* e = FindKernel(backend.kernels(), s.kernel);
    if (absl::Status st = CheckParams(*e, s.params, s.params_version); !st.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("invalid plan: step '", s.name, "' (", s.op, "): ", st.message()));
    }
    for (size_t k = 0; k < s.in_place.size(); ++k) {
      if (s.in_place[k] < 0) continue;
      bool allowed = false;
      for (const InPlace& p : e->in_place) {
        allowed |= p.output == static_cast<int>(k) && p.input == s.in_place[k];
      }
      if (!allowed) {
        return absl::InvalidArgumentError(absl::StrCat("invalid plan: step '", s.name, "' (", s.op, ") writes output ",
                                                       k, " over input ", s.in_place[k], ", which kernel '", s.kernel,
                                                       "' does not allow"));
      }
    }
    entries.push_back(e);
  }
  return entries;
}

absl::StatusOr<int64_t> BatchOf(const plan::Plan& plan, const std::map<std::string, InputDecl>& inputs) {
  for (const auto& [name, t] : inputs) {
    bool known = false;
    for (int32_t id : plan.inputs) known |= plan.buffers[id].name == name;
    if (!known) return absl::InvalidArgumentError(absl::StrCat("the plan has no input '", name, "'"));
  }
  int64_t batch = -1;
  for (int32_t id : plan.inputs) {
    const Buffer& b = plan.buffers[id];
    auto it = inputs.find(b.name);
    if (it == inputs.end()) return absl::InvalidArgumentError(absl::StrCat("missing input '", b.name, "'"));
    const InputDecl& t = it->second;
    if (t.dtype != b.dtype) {
      return absl::InvalidArgumentError(
          absl::StrCat("input '", b.name, "' is ", DTypeName(t.dtype), ", expected ", DTypeName(b.dtype)));
    }
    auto mismatch = [&]() {
      std::vector<std::string> want;
      for (const plan::LinearDim& d : b.dims) {
        want.push_back(d.per_batch == 0 ? absl::StrCat(d.fixed)
                                        : absl::StrCat(d.per_batch == 1 ? "" : absl::StrCat(d.per_batch, "*"), "batch",
                                                       d.fixed ? absl::StrCat("+", d.fixed) : ""));
      }
      return absl::InvalidArgumentError(absl::StrCat("input '", b.name, "' has dims ", DimsString(t.dims),
                                                     ", expected [", absl::StrJoin(want, ","), "] with batch 1..",
                                                     plan.max_batch));
    };
    if (t.dims.size() != b.dims.size()) return mismatch();
    for (size_t k = 0; k < b.dims.size(); ++k) {
      const plan::LinearDim& d = b.dims[k];
      const int64_t got = t.dims[k];
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
  if (batch < 1 || batch > plan.max_batch) {
    return absl::InvalidArgumentError(
        absl::StrCat("batch ", batch, " is outside the plan's 1..", plan.max_batch, " (compile --batch N)"));
  }
  return batch;
}

// Every buffer's bytes at `batch` must fit the memory it resolves to (a crafted plan could give a
// buffer fewer bytes than its dims need), and steps may only write to arena or output memory.
absl::Status CheckCapacities(const plan::Plan& plan, int64_t batch) {
  auto bytes_of = [&](const Buffer& b) -> int64_t {
    int64_t n = static_cast<int64_t>(DTypeSize(b.dtype));
    for (const plan::LinearDim& d : b.dims) n *= d.At(batch);
    return n;
  };
  auto invalid = [](const Buffer& b, const std::string& what) {
    return absl::InvalidArgumentError(absl::StrCat("invalid plan: buffer '", b.name, "' ", what));
  };
  for (const Buffer& b : plan.buffers) {
    const Buffer& root = plan.buffers[RootBuffer(plan, static_cast<int>(&b - plan.buffers.data()))];
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
  for (const plan::Step& s : plan.steps) {
    for (int32_t id : s.outputs) {
      const BufferKind k = plan.buffers[RootBuffer(plan, id)].kind;
      if (k == BufferKind::kConstant || k == BufferKind::kInput) {
        return invalid(plan.buffers[id], absl::StrCat("is written by step '", s.name, "' but is a ",
                                                      k == BufferKind::kConstant ? "weight" : "caller input"));
      }
    }
  }
  // A step's outputs may not share bytes with each other, nor with its inputs except an input its
  // kernel allows it to write over, which must start where the output does: kernels copy with
  // memcpy and write outputs while they read inputs.
  struct Range {
    int64_t region = -1;  // 0: the batch arena, 1: the fixed arena, 2 + i: the run's output i
    int64_t begin = 0, end = 0;
  };
  auto range_of = [&](int32_t id) {
    const BufferPlace p = PlaceAt(plan, id, batch);
    Range r;
    r.region = p.kind == BufferKind::kBatchArena   ? 0
               : p.kind == BufferKind::kFixedArena ? 1
               : p.kind == BufferKind::kOutput     ? 2 + p.io_index
                                                   : -1;  // never written: weights and caller inputs
    r.begin = p.offset;
    r.end = r.begin + bytes_of(plan.buffers[id]);
    return r;
  };
  auto overlap = [](const Range& a, const Range& b) {
    return a.region >= 0 && a.region == b.region && a.begin < b.end && b.begin < a.end;
  };
  for (const plan::Step& s : plan.steps) {
    for (size_t k = 0; k < s.outputs.size(); ++k) {
      const Range out = range_of(s.outputs[k]);
      for (size_t j = 0; j < k; ++j) {
        if (overlap(out, range_of(s.outputs[j]))) {
          return invalid(plan.buffers[s.outputs[k]],
                         absl::StrCat("shares memory with '", plan.buffers[s.outputs[j]].name,
                                      "', another output of step '", s.name, "'"));
        }
      }
      for (size_t j = 0; j < s.inputs.size(); ++j) {
        if (s.inputs[j] < 0) continue;
        const Range in = range_of(s.inputs[j]);
        if (!overlap(out, in)) continue;
        const bool in_place = k < s.in_place.size() && s.in_place[k] == static_cast<int32_t>(j);
        if (!in_place || in.begin != out.begin) {
          return invalid(plan.buffers[s.outputs[k]],
                         absl::StrCat("is written by step '", s.name, "' over part of its input ", j, " '",
                                      plan.buffers[s.inputs[j]].name, "'",
                                      in_place ? " (in place, but not at the same address)" : ""));
        }
      }
    }
  }
  return absl::OkStatus();
}

KernelSpec SpecAt(const plan::Plan& plan, const plan::Step& s, int64_t batch, int threads) {
  KernelSpec spec;
  spec.name = s.name;
  spec.op = s.op;
  spec.params = &s.params;
  spec.threads = threads;
  spec.precision = plan.precision;
  spec.batch = batch;
  spec.in_place.assign(s.in_place.begin(), s.in_place.end());
  for (int32_t id : s.inputs) {
    Operand op;
    if (id < 0) {
      op.present = false;
    } else {
      const Buffer& b = plan.buffers[id];
      op.dtype = b.dtype;
      op.dims = DimsAt(b, batch);
      for (const plan::LinearDim& d : b.dims) op.per_batch.push_back(d.per_batch);
      if (b.kind == BufferKind::kConstant) {
        op.constant = plan.weights + b.offset;
        op.constant_bytes = static_cast<size_t>(b.bytes);
        op.format = b.format;
      }
    }
    spec.inputs.push_back(std::move(op));
  }
  for (int32_t id : s.outputs) {
    Operand op;
    op.dtype = plan.buffers[id].dtype;
    op.dims = DimsAt(plan.buffers[id], batch);
    for (const plan::LinearDim& d : plan.buffers[id].dims) op.per_batch.push_back(d.per_batch);
    spec.outputs.push_back(std::move(op));
  }
  return spec;
}

}  // namespace gcomp::runtime
