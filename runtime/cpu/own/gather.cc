// cpu.gather, cpu.expand, cpu.shape and cpu.copy: the data movement of the class-token and
// shape-computation steps of ViT exports (Gather of one token, Expand of the class token to the
// batch, Shape of a dynamic-batch input) and the copy of a graph output that no step writes.
// Index and shape values that arrive at run time are checked when the kernel runs: an index out of
// range or a shape that contradicts the planned dims is an error, never an out-of-bounds access.
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "runtime/cpu/own/common.h"

namespace gcomp::cpu::own {
namespace {

std::string Dims(const std::vector<int64_t>& d) { return absl::StrCat("[", absl::StrJoin(d, ","), "]"); }

// The int64 values of an integer operand at run time (i64 or i32).
std::vector<int64_t> ReadInts(const Operand& op, const void* data) {
  const int64_t n = NumElements(op.dims);
  std::vector<int64_t> v(static_cast<size_t>(n));
  if (n == 0) return v;  // (an empty vector's data() may be null)
  if (op.dtype == DType::kI64) {
    std::memcpy(v.data(), data, static_cast<size_t>(n) * 8);
  } else {
    for (int64_t i = 0; i < n; ++i) {
      int32_t x;
      std::memcpy(&x, static_cast<const uint8_t*>(data) + i * 4, 4);
      v[i] = x;
    }
  }
  return v;
}

bool IsIndexType(DType t) { return t == DType::kI64 || t == DType::kI32; }

// ---- Gather -------------------------------------------------------------------------------

struct GatherPlan {
  int64_t outer = 1, axis_dim = 0, count = 0, inner_bytes = 0;
  Operand indices;
};

std::optional<GatherPlan> ResolveGather(const KernelSpec& spec) {
  if (!spec.params || spec.inputs.size() != 2 || spec.outputs.size() != 1 || !PresentAndNotInPlace(spec)) {
    return std::nullopt;
  }
  const Operand &x = spec.inputs[0], &idx = spec.inputs[1], &y = spec.outputs[0];
  if (!x.present || !idx.present || !IsIndexType(idx.dtype) || x.dtype != y.dtype || x.dims.empty()) {
    return std::nullopt;
  }
  const int64_t r = static_cast<int64_t>(x.dims.size());
  int64_t axis = spec.params->GetInt("axis", 0);
  if (axis < -r || axis >= r) return std::nullopt;
  if (axis < 0) axis += r;
  std::vector<int64_t> want(x.dims.begin(), x.dims.begin() + axis);
  want.insert(want.end(), idx.dims.begin(), idx.dims.end());
  want.insert(want.end(), x.dims.begin() + axis + 1, x.dims.end());
  if (want != y.dims) return std::nullopt;
  if (idx.is_constant() && idx.constant_bytes != static_cast<size_t>(NumElements(idx.dims)) * DTypeSize(idx.dtype)) {
    return std::nullopt;
  }
  GatherPlan p;
  p.outer = Product(x.dims, 0, static_cast<size_t>(axis));
  p.axis_dim = x.dims[axis];
  p.count = NumElements(idx.dims);
  p.inner_bytes =
      Product(x.dims, static_cast<size_t>(axis) + 1, x.dims.size()) * static_cast<int64_t>(DTypeSize(x.dtype));
  p.indices = idx;
  return p;
}

class GatherKernel : public ShapedKernel {
 public:
  explicit GatherKernel(GatherPlan p) : p_(std::move(p)) {}
  absl::Status Run(std::span<const void* const> inputs, std::span<void* const> outputs) override {
    std::vector<int64_t> idx = ReadInts(p_.indices, inputs[1]);
    for (int64_t& i : idx) {
      if (i < -p_.axis_dim || i >= p_.axis_dim) {
        return absl::InvalidArgumentError(absl::StrCat("index ", i, " is out of range for an axis of ", p_.axis_dim));
      }
      if (i < 0) i += p_.axis_dim;
    }
    const size_t block = static_cast<size_t>(p_.inner_bytes);
    if (block == 0 || p_.outer == 0 || p_.count == 0) return absl::OkStatus();  // an empty output: no memory
    const auto* src = static_cast<const uint8_t*>(inputs[0]);
    auto* dst = static_cast<uint8_t*>(outputs[0]);
    for (int64_t o = 0; o < p_.outer; ++o) {
      for (int64_t k = 0; k < p_.count; ++k) {
        std::memcpy(dst + (o * p_.count + k) * p_.inner_bytes, src + (o * p_.axis_dim + idx[k]) * p_.inner_bytes,
                    block);
      }
    }
    return absl::OkStatus();
  }

 private:
  GatherPlan p_;
};

// ---- Expand -------------------------------------------------------------------------------

// The broadcast of `x` against `shape` (ONNX Expand: numpy rules, right-aligned), or nullopt.
std::optional<std::vector<int64_t>> ExpandDims(const std::vector<int64_t>& x, const std::vector<int64_t>& shape) {
  const size_t r = std::max(x.size(), shape.size());
  std::vector<int64_t> out(r);
  for (size_t i = 0; i < r; ++i) {
    const int64_t a = i + x.size() >= r ? x[i + x.size() - r] : 1;
    const int64_t b = i + shape.size() >= r ? shape[i + shape.size() - r] : 1;
    if (a != b && a != 1 && b != 1) return std::nullopt;
    out[i] = a == 1 ? b : a;
  }
  return out;
}

struct ExpandPlan {
  std::vector<int64_t> out_dims;
  std::vector<int64_t> in_strides;  // per output dim, in elements (0 where broadcast)
  int64_t element = 0;
  Operand shape;
};

std::optional<ExpandPlan> ResolveExpand(const KernelSpec& spec) {
  if (spec.inputs.size() != 2 || spec.outputs.size() != 1 || !PresentAndNotInPlace(spec)) return std::nullopt;
  const Operand &x = spec.inputs[0], &shape = spec.inputs[1], &y = spec.outputs[0];
  if (!x.present || !shape.present || shape.dtype != DType::kI64 || shape.dims.size() != 1 || x.dtype != y.dtype ||
      y.dims.size() < x.dims.size() || shape.dims[0] > static_cast<int64_t>(y.dims.size())) {
    return std::nullopt;
  }
  // Every input dim broadcasts to the output's (right-aligned).
  const size_t lead = y.dims.size() - x.dims.size();
  for (size_t i = 0; i < x.dims.size(); ++i) {
    if (x.dims[i] != 1 && x.dims[i] != y.dims[lead + i]) return std::nullopt;
  }
  if (shape.is_constant()) {
    if (shape.constant_bytes != static_cast<size_t>(shape.dims[0]) * 8) return std::nullopt;
    std::optional<std::vector<int64_t>> d = ExpandDims(x.dims, ReadInts(shape, shape.constant));
    if (!d || *d != y.dims) return std::nullopt;
  }
  ExpandPlan p;
  p.out_dims = y.dims;
  p.in_strides.assign(y.dims.size(), 0);
  const std::vector<int64_t> xs = RowMajorStrides(x.dims);
  for (size_t i = 0; i < x.dims.size(); ++i) p.in_strides[lead + i] = x.dims[i] == 1 ? 0 : xs[i];
  p.element = static_cast<int64_t>(DTypeSize(x.dtype));
  p.shape = shape;
  return p;
}

class ExpandKernel : public ShapedKernel {
 public:
  ExpandKernel(ExpandPlan p, std::vector<int64_t> x_dims) : p_(std::move(p)), x_dims_(std::move(x_dims)) {}
  absl::Status Run(std::span<const void* const> inputs, std::span<void* const> outputs) override {
    if (!p_.shape.is_constant()) {
      std::optional<std::vector<int64_t>> d = ExpandDims(x_dims_, ReadInts(p_.shape, inputs[1]));
      if (!d || *d != p_.out_dims) {
        return absl::InvalidArgumentError(absl::StrCat("the shape computed at run time expands ", Dims(x_dims_), " to ",
                                                       d ? Dims(*d) : "nothing", ", the plan has ", Dims(p_.out_dims)));
      }
    }
    const auto* src = static_cast<const uint8_t*>(inputs[0]);
    auto* dst = static_cast<uint8_t*>(outputs[0]);
    const size_t r = p_.out_dims.size();
    if (r == 0) {
      std::memcpy(dst, src, static_cast<size_t>(p_.element));
      return absl::OkStatus();
    }
    // Rows of the last dim: one memcpy when it is not broadcast, else one element repeated.
    const int64_t last = p_.out_dims[r - 1];
    const int64_t rows = NumElements(p_.out_dims) / std::max<int64_t>(last, 1);
    std::vector<int64_t> idx(r, 0);
    for (int64_t row = 0; row < rows && last > 0; ++row) {
      int64_t off = 0;
      for (size_t d = 0; d + 1 < r; ++d) off += idx[d] * p_.in_strides[d];
      uint8_t* out = dst + row * last * p_.element;
      if (p_.in_strides[r - 1] != 0) {
        std::memcpy(out, src + off * p_.element, static_cast<size_t>(last * p_.element));
      } else {
        for (int64_t j = 0; j < last; ++j) std::memcpy(out + j * p_.element, src + off * p_.element, p_.element);
      }
      for (int64_t d = static_cast<int64_t>(r) - 2; d >= 0; --d) {
        if (++idx[d] < p_.out_dims[d]) break;
        idx[d] = 0;
      }
    }
    return absl::OkStatus();
  }

 private:
  ExpandPlan p_;
  std::vector<int64_t> x_dims_;
};

// ---- Shape --------------------------------------------------------------------------------

std::optional<std::vector<int64_t>> ResolveShape(const KernelSpec& spec) {
  if (!spec.params || spec.inputs.size() != 1 || spec.outputs.size() != 1 || !PresentAndNotInPlace(spec)) {
    return std::nullopt;
  }
  const Operand &x = spec.inputs[0], &y = spec.outputs[0];
  const int64_t r = static_cast<int64_t>(x.dims.size());
  auto clamp = [r](int64_t v) { return std::clamp(v < 0 ? v + r : v, int64_t{0}, r); };
  const int64_t start = clamp(spec.params->GetInt("start", 0)), end = clamp(spec.params->GetInt("end", r));
  std::vector<int64_t> values;
  for (int64_t i = start; i < end; ++i) values.push_back(x.dims[i]);
  if (!x.present || y.dtype != DType::kI64 || y.dims != std::vector<int64_t>{static_cast<int64_t>(values.size())}) {
    return std::nullopt;
  }
  return values;
}

class ShapeKernel : public ShapedKernel {
 public:
  explicit ShapeKernel(std::vector<int64_t> values) : values_(std::move(values)) {}
  absl::Status Run(std::span<const void* const>, std::span<void* const> outputs) override {
    if (!values_.empty()) std::memcpy(outputs[0], values_.data(), values_.size() * sizeof(int64_t));
    return absl::OkStatus();
  }

 private:
  std::vector<int64_t> values_;
};

// ---- Copy ---------------------------------------------------------------------------------

// Identity, and the view ops where codegen cannot alias (their output is a graph output): input 0
// copied as it is (Reshape's shape and Squeeze/Unsqueeze's axes inputs only name the new dims).
std::optional<int64_t> ResolveCopy(const KernelSpec& spec) {
  const size_t max_inputs = spec.op == "Identity" || spec.op == "Flatten" ? 1 : 2;
  if (spec.inputs.empty() || spec.inputs.size() > max_inputs || spec.outputs.size() != 1 || !spec.inputs[0].present ||
      !PresentAndNotInPlace(spec)) {
    return std::nullopt;
  }
  const Operand &x = spec.inputs[0], &y = spec.outputs[0];
  if (x.dtype != y.dtype || NumElements(x.dims) != NumElements(y.dims)) return std::nullopt;
  const int64_t bytes = NumElements(y.dims) * static_cast<int64_t>(DTypeSize(y.dtype));
  if (x.is_constant() && (!x.format.empty() || x.constant_bytes != static_cast<size_t>(bytes))) return std::nullopt;
  return bytes;
}

class CopyKernel : public ShapedKernel {
 public:
  explicit CopyKernel(int64_t bytes) : bytes_(bytes) {}
  absl::Status Run(std::span<const void* const> inputs, std::span<void* const> outputs) override {
    if (bytes_ > 0) std::memcpy(outputs[0], inputs[0], static_cast<size_t>(bytes_));
    return absl::OkStatus();
  }

 private:
  int64_t bytes_;
};

absl::Status Declined(const KernelSpec& spec, const char* id) {
  return absl::InvalidArgumentError(absl::StrCat("node '", spec.name, "': ", id, " does not run it"));
}

}  // namespace

CpuEntry GatherEntry() {
  CpuEntry e;
  e.id = "cpu.gather";
  e.ops = {"Gather"};
  e.params = {{"axis", AttrType::kInt}};
  e.description = "gather along one axis: one memcpy per outer index and index, indices checked at run time";
  e.accepts = [](const KernelSpec& spec) -> std::optional<std::string> {
    std::optional<GatherPlan> p = ResolveGather(spec);
    if (!p) return std::nullopt;
    return absl::StrCat("own gather: ", p->count, " of ", p->axis_dim, " blocks of ", p->inner_bytes, " bytes",
                        p->indices.is_constant() ? "" : " (indices computed at run time)");
  };
  e.create = [](const KernelSpec& spec) -> absl::StatusOr<std::unique_ptr<ShapedKernel>> {
    std::optional<GatherPlan> p = ResolveGather(spec);
    if (!p) return Declined(spec, "cpu.gather");
    return std::unique_ptr<ShapedKernel>(new GatherKernel(std::move(*p)));
  };
  return e;
}

CpuEntry ExpandEntry() {
  CpuEntry e;
  e.id = "cpu.expand";
  e.ops = {"Expand"};
  e.params = {};
  e.description = "expand (numpy broadcast): row copies, a shape computed at run time checked against the plan";
  e.accepts = [](const KernelSpec& spec) -> std::optional<std::string> {
    std::optional<ExpandPlan> p = ResolveExpand(spec);
    if (!p) return std::nullopt;
    return absl::StrCat("own expand to ", Dims(p->out_dims),
                        p->shape.is_constant() ? "" : " (shape computed at run time, checked when it runs)");
  };
  e.create = [](const KernelSpec& spec) -> absl::StatusOr<std::unique_ptr<ShapedKernel>> {
    std::optional<ExpandPlan> p = ResolveExpand(spec);
    if (!p) return Declined(spec, "cpu.expand");
    return std::unique_ptr<ShapedKernel>(new ExpandKernel(std::move(*p), spec.inputs[0].dims));
  };
  return e;
}

CpuEntry ShapeEntry() {
  CpuEntry e;
  e.id = "cpu.shape";
  e.ops = {"Shape"};
  e.params = {{"start", AttrType::kInt}, {"end", AttrType::kInt}};
  e.description = "shape: the operand's dims at the run's batch, written as int64";
  e.accepts = [](const KernelSpec& spec) -> std::optional<std::string> {
    std::optional<std::vector<int64_t>> v = ResolveShape(spec);
    if (!v) return std::nullopt;
    return absl::StrCat("own shape: ", v->size(), " dims of the operand");
  };
  e.create = [](const KernelSpec& spec) -> absl::StatusOr<std::unique_ptr<ShapedKernel>> {
    std::optional<std::vector<int64_t>> v = ResolveShape(spec);
    if (!v) return Declined(spec, "cpu.shape");
    return std::unique_ptr<ShapedKernel>(new ShapeKernel(std::move(*v)));
  };
  return e;
}

CpuEntry CopyEntry() {
  CpuEntry e;
  e.id = "cpu.copy";
  e.ops = {"Identity", "Reshape", "Flatten", "Squeeze", "Unsqueeze"};
  e.params = {{"allowzero", AttrType::kInt}, {"axis", AttrType::kInt}, {"axes", AttrType::kInts}};
  e.description = "copy of one buffer into another of the same type and size (Identity; a view that is a graph output)";
  e.accepts = [](const KernelSpec& spec) -> std::optional<std::string> {
    std::optional<int64_t> bytes = ResolveCopy(spec);
    if (!bytes) return std::nullopt;
    return absl::StrCat("own copy: ", *bytes, " bytes");
  };
  e.create = [](const KernelSpec& spec) -> absl::StatusOr<std::unique_ptr<ShapedKernel>> {
    std::optional<int64_t> bytes = ResolveCopy(spec);
    if (!bytes) return Declined(spec, "cpu.copy");
    return std::unique_ptr<ShapedKernel>(new CopyKernel(*bytes));
  };
  return e;
}

}  // namespace gcomp::cpu::own
