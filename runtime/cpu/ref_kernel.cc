// The reference-kernel fallback: the op table's plain-loop kernel on copies of the step's buffers.
// It runs what no other entry accepts (shape computations, Gather, Expand, ...) and says so.
#include <cstring>

#include "absl/strings/str_cat.h"
#include "graph/op_def.h"
#include "core/status_macros.h"
#include "runtime/cpu/kernel_table.h"

namespace gcomp::cpu {
namespace {

class ReferenceKernel : public Kernel {
 public:
  explicit ReferenceKernel(const KernelSpec& spec) : spec_(spec), attrs_(*spec.attrs) {
    node_.name = spec.name;
    node_.op = spec.op;
    node_.def = FindOp(spec.op);
    node_.attrs = attrs_;
    // Placeholder values so that the op's shape function and kernel see the step's arity.
    for (const Operand& in : spec.inputs) {
      values_.push_back(std::make_unique<Value>());
      node_.inputs.push_back(in.present ? values_.back().get() : nullptr);
    }
    for (size_t k = 0; k < spec.outputs.size(); ++k) {
      values_.push_back(std::make_unique<Value>());
      node_.outputs.push_back(values_.back().get());
    }
  }

  absl::Status Init() {
    if (!node_.def) return absl::InvalidArgumentError(absl::StrCat("unknown op '", spec_.op, "'"));
    for (const Operand& in : spec_.inputs) {
      if (!in.present) {
        inputs_.emplace_back();
        continue;
      }
      ASSIGN_OR_RETURN(Tensor t, Tensor::Zeros(in.dtype, in.dims));
      if (in.is_constant()) {
        if (in.constant_bytes != t.nbytes()) {
          return absl::InvalidArgumentError(absl::StrCat("node '", spec_.name, "': constant has ", in.constant_bytes,
                                                         " bytes, expected ", t.nbytes()));
        }
        std::memcpy(t.mutable_data(), in.constant, t.nbytes());
      }
      inputs_.push_back(std::move(t));
    }
    for (const Operand& out : spec_.outputs) {
      ASSIGN_OR_RETURN(Tensor t, Tensor::Zeros(out.dtype, out.dims));
      outputs_.push_back(std::move(t));
    }
    return absl::OkStatus();
  }

  absl::Status Run(std::span<const void* const> inputs, std::span<void* const> outputs) override {
    std::vector<const Tensor*> ins(inputs_.size(), nullptr);
    for (size_t i = 0; i < inputs_.size(); ++i) {
      if (!spec_.inputs[i].present || !inputs[i]) continue;
      if (!spec_.inputs[i].is_constant()) std::memcpy(inputs_[i].mutable_data(), inputs[i], inputs_[i].nbytes());
      ins[i] = &inputs_[i];
    }
    // The output dims the op gives for this data must be the step's: a plan's dims were inferred at
    // compile time, and values computed at run time (shapes) must agree with them.
    std::vector<ValueInfo> infos(ins.size());
    std::vector<const ValueInfo*> info_ptrs(ins.size(), nullptr);
    for (size_t i = 0; i < ins.size(); ++i) {
      if (!ins[i]) continue;
      infos[i] = ValueInfo{"", ins[i]->dtype(), ShapeFromInts(ins[i]->dims()), ins[i], nullptr};
      info_ptrs[i] = &infos[i];
    }
    InferContext ctx(node_, info_ptrs);
    auto shapes = node_.def->shape(ctx);
    if (!shapes.ok()) {
      return absl::Status(shapes.status().code(),
                          absl::StrCat("node '", spec_.name, "' (", spec_.op, "): ", shapes.status().message()));
    }
    for (size_t k = 0; k < outputs_.size(); ++k) {
      auto dims = k < shapes->size() ? ConcreteDims((*shapes)[k].shape) : std::nullopt;
      if (!dims || *dims != outputs_[k].dims()) {
        return absl::InvalidArgumentError(absl::StrCat("node '", spec_.name, "' (", spec_.op, "): output ", k,
                                                       " would be ", k < shapes->size() ? ShapeToString((*shapes)[k].shape) : "missing",
                                                       " for this data, the plan has ", ShapeToString(ShapeFromInts(outputs_[k].dims()))));
      }
    }
    for (Tensor& t : outputs_) std::memset(t.mutable_data(), 0, t.nbytes());
    KernelContext kc{node_, ins, outputs_};
    if (absl::Status s = node_.def->kernel(kc); !s.ok()) {
      return absl::Status(s.code(), absl::StrCat("node '", spec_.name, "' (", spec_.op, "): ", s.message()));
    }
    for (size_t k = 0; k < outputs_.size(); ++k) {
      if (outputs[k]) std::memcpy(outputs[k], outputs_[k].data(), outputs_[k].nbytes());
    }
    return absl::OkStatus();
  }

 private:
  KernelSpec spec_;
  Attributes attrs_;
  std::vector<std::unique_ptr<Value>> values_;
  Node node_;
  std::vector<Tensor> inputs_;
  std::vector<Tensor> outputs_;
};

}  // namespace

KernelEntry ReferenceKernelEntry() {
  KernelEntry e;
  e.id = "cpu.reference";
  e.op = "";  // any op
  e.description = "the op table's reference kernel (plain loops, fp32 math) on copies of the buffers";
  e.accepts = [](const KernelSpec& spec) -> std::optional<std::string> {
    if (!FindOp(spec.op)) return std::nullopt;
    return absl::StrCat("no optimized cpu kernel accepts this ", spec.op, ": reference kernel (plain loops)");
  };
  e.create = [](const KernelSpec& spec) -> absl::StatusOr<std::unique_ptr<Kernel>> {
    auto k = std::make_unique<ReferenceKernel>(spec);
    RETURN_IF_ERROR(k->Init());
    return std::unique_ptr<Kernel>(std::move(k));
  };
  return e;
}

}  // namespace gcomp::cpu
