// cpu.elementwise: Add, Sub, Mul, Div, Pow with numpy broadcasting and the unary Relu, Sigmoid,
// Tanh, Exp, Neg, Sqrt, Erf, Reciprocal on f32/f16/bf16 storage (fp32 math);
// cpu.clip: Clip to constant bounds; cpu.isnan and cpu.where (masked attention of SDPA exports:
// IsNaN guards, Where masks); cpu.cast: Cast between f32, f16 and bf16.
//
// Binary ops collapse the output into [rows, run]: adjacent axes merge while both inputs stay
// contiguous (or both broadcast) across them, so each input is either a contiguous run or one
// repeated value along the innermost axis. Rows and chunks of long runs spread over threads;
// reduced-precision operands go through fp32 chunks.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "runtime/cpu/own/common.h"

namespace gcomp::cpu::own {
namespace {

constexpr int64_t kChunk = 2048;

enum class Op { kAdd, kSub, kMul, kDiv, kPow, kRelu, kSigmoid, kTanh, kExp, kNeg, kSqrt, kErf, kReciprocal };

std::optional<Op> OpOf(const std::string& name) {
  static const std::pair<const char*, Op> kOps[] = {
      {"Add", Op::kAdd},   {"Sub", Op::kSub},         {"Mul", Op::kMul},   {"Div", Op::kDiv}, {"Pow", Op::kPow},
      {"Relu", Op::kRelu}, {"Sigmoid", Op::kSigmoid}, {"Tanh", Op::kTanh}, {"Exp", Op::kExp}, {"Neg", Op::kNeg},
      {"Sqrt", Op::kSqrt}, {"Erf", Op::kErf},         {"Reciprocal", Op::kReciprocal}};
  for (const auto& [n, op] : kOps) {
    if (name == n) return op;
  }
  return std::nullopt;
}

bool IsUnary(Op op) { return op >= Op::kRelu; }

// Element strides of an input with `dims`, read at each index of `out` under NumPy broadcasting
// (right-aligned; 0 along a broadcast axis); false when `dims` does not broadcast to `out`.
bool BroadcastStrides(const std::vector<int64_t>& dims, const std::vector<int64_t>& out, std::vector<int64_t>* s) {
  const size_t r = out.size();
  if (dims.size() > r) return false;
  s->assign(r, 0);
  const size_t off = r - dims.size();
  int64_t stride = 1;
  for (size_t i = r; i-- > off;) {
    const int64_t d = dims[i - off];
    if (d != out[i] && d != 1) return false;
    (*s)[i] = d == 1 ? 0 : stride;
    stride *= d;
  }
  return true;
}

struct ElementwisePlan {
  Op op = Op::kAdd;
  DType a_type = DType::kF32, b_type = DType::kF32, y_type = DType::kF32;
  std::vector<int64_t> dims;    // collapsed output dims
  std::vector<int64_t> sa, sb;  // element strides of a and b per collapsed axis (0: broadcast)
  int64_t total = 0;
};

std::optional<ElementwisePlan> ResolveElementwise(const KernelSpec& spec) {
  if (!spec.params) return std::nullopt;
  std::optional<Op> op = OpOf(spec.op);
  if (!op) return std::nullopt;
  const size_t n_in = IsUnary(*op) ? 1 : 2;
  if (spec.inputs.size() != n_in || spec.outputs.size() != 1 || !spec.outputs[0].present) return std::nullopt;
  const Operand& y = spec.outputs[0];
  ElementwisePlan p;
  p.op = *op;
  p.y_type = y.dtype;
  p.a_type = spec.inputs[0].dtype;
  p.b_type = n_in == 2 ? spec.inputs[1].dtype : p.a_type;
  for (const Operand& in : spec.inputs) {
    if (!in.present || !IsStorageFloat(in.dtype) || in.dtype != y.dtype || in.dims.size() > y.dims.size()) {
      return std::nullopt;
    }
  }
  // In place is only safe when the aliased input is read at the output's own positions.
  for (size_t k = 0; k < spec.in_place.size(); ++k) {
    const int i = spec.in_place[k];
    if (i >= 0 && (static_cast<size_t>(i) >= spec.inputs.size() || spec.inputs[i].dims != y.dims)) return std::nullopt;
  }
  const size_t r = y.dims.size();
  std::vector<int64_t> sa, sb;
  if (!BroadcastStrides(spec.inputs[0].dims, y.dims, &sa)) return std::nullopt;
  if (n_in == 2 && !BroadcastStrides(spec.inputs[1].dims, y.dims, &sb)) return std::nullopt;
  if (n_in == 1) sb = sa;
  p.total = NumElements(y.dims);
  // Collapse from the innermost axis, skipping unit axes.
  for (size_t i = r; i-- > 0;) {
    if (y.dims[i] == 1) continue;
    if (!p.dims.empty()) {
      const size_t j = p.dims.size() - 1;  // the axis just inside this one
      // Stride 0 on both (broadcast) or contiguous across the two axes, for each input.
      const bool a_ok = sa[i] == p.sa[j] * p.dims[j];
      const bool b_ok = sb[i] == p.sb[j] * p.dims[j];
      if (a_ok && b_ok) {
        p.dims[j] *= y.dims[i];
        continue;
      }
    }
    p.dims.push_back(y.dims[i]);
    p.sa.push_back(sa[i]);
    p.sb.push_back(sb[i]);
  }
  if (p.dims.empty()) {
    p.dims = {1};
    p.sa = {0};
    p.sb = {0};
  }
  std::reverse(p.dims.begin(), p.dims.end());
  std::reverse(p.sa.begin(), p.sa.end());
  std::reverse(p.sb.begin(), p.sb.end());
  return p;
}

template <Op kOp>
void Apply(const float* a, int64_t sa, const float* b, int64_t sb, float* y, int64_t n) {
  auto f = [](float x, float z) {
    if constexpr (kOp == Op::kAdd) return x + z;
    if constexpr (kOp == Op::kSub) return x - z;
    if constexpr (kOp == Op::kMul) return x * z;
    if constexpr (kOp == Op::kDiv) return x / z;
    if constexpr (kOp == Op::kPow) return std::pow(x, z);
    if constexpr (kOp == Op::kSigmoid) return 1.0f / (1.0f + std::exp(-x));
    if constexpr (kOp == Op::kTanh) return std::tanh(x);
    if constexpr (kOp == Op::kExp) return std::exp(x);
    if constexpr (kOp == Op::kNeg) return -x;
    if constexpr (kOp == Op::kSqrt) return std::sqrt(x);
    if constexpr (kOp == Op::kErf) return std::erf(x);
    if constexpr (kOp == Op::kReciprocal) return 1.0f / x;
    (void)z;
    return x > 0.0f ? x : (x < 0.0f ? 0.0f : x);  // Relu (NaN stays NaN)
  };
  if (sa == 1 && sb == 1) {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) y[i] = f(a[i], b[i]);
  } else if (sa == 1) {
    const float bv = b[0];
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) y[i] = f(a[i], bv);
  } else if (sb == 1) {
    const float av = a[0];
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) y[i] = f(av, b[i]);
  } else {
    const float v = f(a[0], b[0]);
    for (int64_t i = 0; i < n; ++i) y[i] = v;
  }
}

using ApplyFn = void (*)(const float*, int64_t, const float*, int64_t, float*, int64_t);

ApplyFn FnOf(Op op) {
  switch (op) {
    case Op::kAdd:
      return Apply<Op::kAdd>;
    case Op::kSub:
      return Apply<Op::kSub>;
    case Op::kMul:
      return Apply<Op::kMul>;
    case Op::kDiv:
      return Apply<Op::kDiv>;
    case Op::kPow:
      return Apply<Op::kPow>;
    case Op::kSigmoid:
      return Apply<Op::kSigmoid>;
    case Op::kTanh:
      return Apply<Op::kTanh>;
    case Op::kExp:
      return Apply<Op::kExp>;
    case Op::kNeg:
      return Apply<Op::kNeg>;
    case Op::kSqrt:
      return Apply<Op::kSqrt>;
    case Op::kErf:
      return Apply<Op::kErf>;
    case Op::kReciprocal:
      return Apply<Op::kReciprocal>;
    case Op::kRelu:
      break;
  }
  return Apply<Op::kRelu>;
}

class ElementwiseKernel : public ShapedKernel {
 public:
  ElementwiseKernel(ElementwisePlan p, int threads) : p_(std::move(p)), threads_(std::max(1, threads)) {
    bufs_.assign(threads_, std::vector<float>(3 * kChunk));
  }

  absl::Status Run(std::span<const void* const> inputs, std::span<void* const> outputs) override {
    if (p_.total == 0) return absl::OkStatus();
    const auto* a = static_cast<const uint8_t*>(inputs[0]);
    const auto* b = static_cast<const uint8_t*>(inputs.size() > 1 ? inputs[1] : inputs[0]);
    auto* y = static_cast<uint8_t*>(outputs[0]);
    const ApplyFn fn = FnOf(p_.op);
    const int64_t r = static_cast<int64_t>(p_.dims.size());
    const int64_t run = p_.dims.back(), rows = p_.total / run;
    const int64_t sa = p_.sa.back(), sb = p_.sb.back();
    const int64_t chunks = (run + kChunk - 1) / kChunk, tasks = rows * chunks;
    const size_t es = DTypeSize(p_.y_type);
    const bool f32 = p_.y_type == DType::kF32;
#pragma omp parallel for num_threads(threads_) schedule(static) if (threads_ > 1 && tasks > 1)
    for (int64_t t = 0; t < tasks; ++t) {
      const int64_t row = t / chunks, j0 = (t % chunks) * kChunk, len = std::min(kChunk, run - j0);
      int64_t o = row, oa = 0, ob = 0;
      for (int64_t k = r - 2; k >= 0; --k) {
        const int64_t idx = o % p_.dims[k];
        o /= p_.dims[k];
        oa += idx * p_.sa[k];
        ob += idx * p_.sb[k];
      }
      oa += j0 * sa;
      ob += j0 * sb;
      const int64_t out = row * run + j0;
      if (f32) {
        fn(reinterpret_cast<const float*>(a) + oa, sa, reinterpret_cast<const float*>(b) + ob, sb,
           reinterpret_cast<float*>(y) + out, len);
        continue;
      }
      float* buf = bufs_[omp_get_thread_num()].data();
      float *fa = buf, *fb = buf + kChunk, *fy = buf + 2 * kChunk;
      ToF32(p_.a_type, a + oa * es, fa, sa ? len : 1);
      ToF32(p_.b_type, b + ob * es, fb, sb ? len : 1);
      fn(fa, sa, fb, sb, fy, len);
      FromF32(p_.y_type, fy, y + out * es, len);
    }
    return absl::OkStatus();
  }

 private:
  ElementwisePlan p_;
  int threads_;
  std::vector<std::vector<float>> bufs_;
};

// ---- Clip ---------------------------------------------------------------------------------

struct ClipPlan {
  DType type = DType::kF32;
  int64_t n = 0;
  float lo = -INFINITY, hi = INFINITY;
};

// A constant float scalar operand (Clip's min and max), or nullopt.
std::optional<float> ConstantScalar(const Operand& o) {
  if (!o.is_constant() || NumElements(o.dims) != 1 || !IsStorageFloat(o.dtype) ||
      o.constant_bytes != DTypeSize(o.dtype)) {
    return std::nullopt;
  }
  float v = 0.0f;
  ToF32(o.dtype, o.constant, &v, 1);
  return v;
}

std::optional<ClipPlan> ResolveClip(const KernelSpec& spec) {
  if (spec.inputs.empty() || spec.inputs.size() > 3 || spec.outputs.size() != 1 || !spec.inputs[0].present ||
      !spec.outputs[0].present) {
    return std::nullopt;
  }
  const Operand &x = spec.inputs[0], &y = spec.outputs[0];
  if (!IsStorageFloat(x.dtype) || y.dtype != x.dtype || y.dims != x.dims) return std::nullopt;
  for (int i : spec.in_place) {
    if (i > 0) return std::nullopt;  // only over X
  }
  ClipPlan p;
  p.type = x.dtype;
  p.n = NumElements(x.dims);
  for (size_t i = 1; i < spec.inputs.size(); ++i) {
    if (!spec.inputs[i].present) continue;
    std::optional<float> v = ConstantScalar(spec.inputs[i]);  // bounds known only at run time: declined
    if (!v) return std::nullopt;
    (i == 1 ? p.lo : p.hi) = *v;
  }
  return p;
}

class ClipKernel : public ShapedKernel {
 public:
  ClipKernel(ClipPlan p, int threads) : p_(p), threads_(std::max(1, threads)) {
    bufs_.assign(threads_, std::vector<float>(kChunk));
  }

  absl::Status Run(std::span<const void* const> inputs, std::span<void* const> outputs) override {
    const auto* x = static_cast<const uint8_t*>(inputs[0]);
    auto* y = static_cast<uint8_t*>(outputs[0]);
    const size_t es = DTypeSize(p_.type);
    const int64_t chunks = (p_.n + kChunk - 1) / kChunk;
    const float lo = p_.lo, hi = p_.hi;
#pragma omp parallel for num_threads(threads_) schedule(static) if (threads_ > 1 && chunks > 1)
    for (int64_t c = 0; c < chunks; ++c) {
      const int64_t i0 = c * kChunk, len = std::min(kChunk, p_.n - i0);
      float* buf = bufs_[omp_get_thread_num()].data();
      ToF32(p_.type, x + i0 * es, buf, len);
      for (int64_t i = 0; i < len; ++i) buf[i] = std::isnan(buf[i]) ? buf[i] : std::min(std::max(buf[i], lo), hi);
      FromF32(p_.type, buf, y + i0 * es, len);
    }
    return absl::OkStatus();
  }

 private:
  ClipPlan p_;
  int threads_;
  std::vector<std::vector<float>> bufs_;
};

// ---- IsNaN, Where --------------------------------------------------------------------------

std::optional<int64_t> ResolveIsNaN(const KernelSpec& spec) {
  if (spec.inputs.size() != 1 || spec.outputs.size() != 1 || !spec.inputs[0].present || !PresentAndNotInPlace(spec)) {
    return std::nullopt;
  }
  const Operand &x = spec.inputs[0], &y = spec.outputs[0];
  if (!IsStorageFloat(x.dtype) || y.dtype != DType::kBool || y.dims != x.dims) return std::nullopt;
  return NumElements(x.dims);
}

class IsNaNKernel : public ShapedKernel {
 public:
  IsNaNKernel(DType type, int64_t n) : type_(type), n_(n) {}
  absl::Status Run(std::span<const void* const> inputs, std::span<void* const> outputs) override {
    const auto* x = static_cast<const uint8_t*>(inputs[0]);
    auto* y = static_cast<uint8_t*>(outputs[0]);
    const size_t es = DTypeSize(type_);
    float buf[kChunk];
    for (int64_t i0 = 0; i0 < n_; i0 += kChunk) {
      const int64_t len = std::min(kChunk, n_ - i0);
      ToF32(type_, x + i0 * es, buf, len);
      for (int64_t i = 0; i < len; ++i) y[i0 + i] = std::isnan(buf[i]) ? 1 : 0;
    }
    return absl::OkStatus();
  }

 private:
  DType type_;
  int64_t n_;
};

// Where(cond, x, y) with NumPy broadcasting of all three; any element type (moved as bytes).
struct WherePlan {
  size_t es = 4;
  std::vector<int64_t> dims;             // output
  std::vector<int64_t> sc, sx, sy;       // element strides per output axis (0: broadcast)
};

std::optional<WherePlan> ResolveWhere(const KernelSpec& spec) {
  if (spec.inputs.size() != 3 || spec.outputs.size() != 1 || !PresentAndNotInPlace(spec)) return std::nullopt;
  const Operand &c = spec.inputs[0], &x = spec.inputs[1], &v = spec.inputs[2], &y = spec.outputs[0];
  if (!c.present || !x.present || !v.present || c.dtype != DType::kBool || x.dtype != y.dtype || v.dtype != y.dtype) {
    return std::nullopt;
  }
  WherePlan p;
  p.es = DTypeSize(y.dtype);
  p.dims = y.dims;
  if (!BroadcastStrides(c.dims, y.dims, &p.sc) || !BroadcastStrides(x.dims, y.dims, &p.sx) ||
      !BroadcastStrides(v.dims, y.dims, &p.sy)) {
    return std::nullopt;
  }
  return p;
}

class WhereKernel : public ShapedKernel {
 public:
  explicit WhereKernel(WherePlan p) : p_(std::move(p)) {}
  absl::Status Run(std::span<const void* const> inputs, std::span<void* const> outputs) override {
    const auto* c = static_cast<const uint8_t*>(inputs[0]);
    const auto* x = static_cast<const uint8_t*>(inputs[1]);
    const auto* v = static_cast<const uint8_t*>(inputs[2]);
    auto* y = static_cast<uint8_t*>(outputs[0]);
    const size_t r = p_.dims.size(), es = p_.es;
    const int64_t total = NumElements(p_.dims);
    std::vector<int64_t> idx(r, 0);
    int64_t oc = 0, ox = 0, ov = 0;
    for (int64_t i = 0; i < total; ++i) {
      std::memcpy(y + i * es, c[oc] ? x + ox * es : v + ov * es, es);
      for (size_t k = r; k-- > 0;) {  // next output index; offsets follow
        oc += p_.sc[k];
        ox += p_.sx[k];
        ov += p_.sy[k];
        if (++idx[k] < p_.dims[k]) break;
        oc -= p_.sc[k] * p_.dims[k];
        ox -= p_.sx[k] * p_.dims[k];
        ov -= p_.sy[k] * p_.dims[k];
        idx[k] = 0;
      }
    }
    return absl::OkStatus();
  }

 private:
  WherePlan p_;
};

// ---- Cast ---------------------------------------------------------------------------------

class CastKernel : public ShapedKernel {
 public:
  CastKernel(DType from, DType to, int64_t n, int threads)
      : from_(from), to_(to), n_(n), threads_(std::max(1, threads)) {
    bufs_.assign(threads_, std::vector<float>(kChunk));
  }

  absl::Status Run(std::span<const void* const> inputs, std::span<void* const> outputs) override {
    const auto* x = static_cast<const uint8_t*>(inputs[0]);
    auto* y = static_cast<uint8_t*>(outputs[0]);
    const size_t xs = DTypeSize(from_), ys = DTypeSize(to_);
    const int64_t chunks = (n_ + kChunk - 1) / kChunk;
#pragma omp parallel for num_threads(threads_) schedule(static) if (threads_ > 1 && chunks > 1)
    for (int64_t c = 0; c < chunks; ++c) {
      const int64_t i0 = c * kChunk, len = std::min(kChunk, n_ - i0);
      if (from_ == to_) {
        std::memcpy(y + i0 * ys, x + i0 * xs, static_cast<size_t>(len) * xs);
      } else if (from_ == DType::kF32) {
        FromF32(to_, reinterpret_cast<const float*>(x) + i0, y + i0 * ys, len);
      } else if (to_ == DType::kF32) {
        ToF32(from_, x + i0 * xs, reinterpret_cast<float*>(y) + i0, len);
      } else {
        float* buf = bufs_[omp_get_thread_num()].data();
        ToF32(from_, x + i0 * xs, buf, len);
        FromF32(to_, buf, y + i0 * ys, len);
      }
    }
    return absl::OkStatus();
  }

 private:
  DType from_, to_;
  int64_t n_;
  int threads_;
  std::vector<std::vector<float>> bufs_;
};

bool AcceptsCast(const KernelSpec& spec) {
  if (!spec.params) return false;
  if (spec.inputs.size() != 1 || spec.outputs.size() != 1 || !PresentAndNotInPlace(spec)) return false;
  const Operand &x = spec.inputs[0], &y = spec.outputs[0];
  return x.present && IsStorageFloat(x.dtype) && IsStorageFloat(y.dtype) && x.dims == y.dims &&
         DTypeFromName(spec.params->GetString("to", "")) == y.dtype;
}

}  // namespace

CpuEntry ElementwiseEntry() {
  CpuEntry e;
  e.id = "cpu.elementwise";
  e.ops = {"Add", "Sub", "Mul", "Div", "Pow", "Relu", "Sigmoid", "Tanh", "Exp", "Neg", "Sqrt", "Erf", "Reciprocal"};
  e.params = {};
  e.in_place = {{0, 0}, {0, 1}};
  e.description = "Add/Sub/Mul/Div/Pow with broadcasting and unary Relu/Sigmoid/Tanh/Exp/Neg/Sqrt/Erf/Reciprocal on "
                  "float storage, vectorized runs";
  e.accepts = [](const KernelSpec& spec) -> std::optional<std::string> {
    std::optional<ElementwisePlan> p = ResolveElementwise(spec);
    if (!p) return std::nullopt;
    return absl::StrCat("own elementwise ", spec.op, ": runs of ", p->dims.back(),
                        p->sa.back() == 1 && p->sb.back() == 1 ? "" : " (broadcast)");
  };
  e.create = [](const KernelSpec& spec) -> absl::StatusOr<std::unique_ptr<ShapedKernel>> {
    std::optional<ElementwisePlan> p = ResolveElementwise(spec);
    if (!p) return absl::InvalidArgumentError(absl::StrCat("node '", spec.name, "': cpu.elementwise does not run it"));
    return std::unique_ptr<ShapedKernel>(new ElementwiseKernel(std::move(*p), spec.threads));
  };
  return e;
}

CpuEntry ClipEntry() {
  CpuEntry e;
  e.id = "cpu.clip";
  e.ops = {"Clip"};
  e.params = {};
  e.in_place = {{0, 0}};
  e.description = "Clip of float storage to constant bounds (NaN kept)";
  e.accepts = [](const KernelSpec& spec) -> std::optional<std::string> {
    std::optional<ClipPlan> p = ResolveClip(spec);
    if (!p) return std::nullopt;
    return absl::StrCat("own clip to [", p->lo, ", ", p->hi, "]");
  };
  e.create = [](const KernelSpec& spec) -> absl::StatusOr<std::unique_ptr<ShapedKernel>> {
    std::optional<ClipPlan> p = ResolveClip(spec);
    if (!p) return absl::InvalidArgumentError(absl::StrCat("node '", spec.name, "': cpu.clip does not run it"));
    return std::unique_ptr<ShapedKernel>(new ClipKernel(*p, spec.threads));
  };
  return e;
}

CpuEntry IsNaNEntry() {
  CpuEntry e;
  e.id = "cpu.isnan";
  e.ops = {"IsNaN"};
  e.params = {};
  e.description = "IsNaN of float storage into bool bytes";
  e.accepts = [](const KernelSpec& spec) -> std::optional<std::string> {
    std::optional<int64_t> n = ResolveIsNaN(spec);
    if (!n) return std::nullopt;
    return absl::StrCat("own isnan: ", *n, " elements");
  };
  e.create = [](const KernelSpec& spec) -> absl::StatusOr<std::unique_ptr<ShapedKernel>> {
    std::optional<int64_t> n = ResolveIsNaN(spec);
    if (!n) return absl::InvalidArgumentError(absl::StrCat("node '", spec.name, "': cpu.isnan does not run it"));
    return std::unique_ptr<ShapedKernel>(new IsNaNKernel(spec.inputs[0].dtype, *n));
  };
  return e;
}

CpuEntry WhereEntry() {
  CpuEntry e;
  e.id = "cpu.where";
  e.ops = {"Where"};
  e.params = {};
  e.description = "Where with NumPy broadcasting of condition and both operands, any element type";
  e.accepts = [](const KernelSpec& spec) -> std::optional<std::string> {
    std::optional<WherePlan> p = ResolveWhere(spec);
    if (!p) return std::nullopt;
    return absl::StrCat("own where: ", NumElements(p->dims), " elements of ", p->es, " bytes");
  };
  e.create = [](const KernelSpec& spec) -> absl::StatusOr<std::unique_ptr<ShapedKernel>> {
    std::optional<WherePlan> p = ResolveWhere(spec);
    if (!p) return absl::InvalidArgumentError(absl::StrCat("node '", spec.name, "': cpu.where does not run it"));
    return std::unique_ptr<ShapedKernel>(new WhereKernel(std::move(*p)));
  };
  return e;
}

CpuEntry CastEntry() {
  CpuEntry e;
  e.id = "cpu.cast";
  e.ops = {"Cast"};
  e.params = {{"to", AttrType::kString, true}};
  e.description = "Cast between f32, f16 and bf16";
  e.accepts = [](const KernelSpec& spec) -> std::optional<std::string> {
    if (!AcceptsCast(spec)) return std::nullopt;
    return absl::StrCat("own cast ", DTypeName(spec.inputs[0].dtype), " -> ", DTypeName(spec.outputs[0].dtype));
  };
  e.create = [](const KernelSpec& spec) -> absl::StatusOr<std::unique_ptr<ShapedKernel>> {
    if (!AcceptsCast(spec)) {
      return absl::InvalidArgumentError(absl::StrCat("node '", spec.name, "': cpu.cast does not run it"));
    }
    return std::unique_ptr<ShapedKernel>(
        new CastKernel(spec.inputs[0].dtype, spec.outputs[0].dtype, NumElements(spec.inputs[0].dims), spec.threads));
  };
  return e;
}

}  // namespace gcomp::cpu::own
