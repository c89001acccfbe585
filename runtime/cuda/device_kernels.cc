#include "runtime/cuda/device_kernels.h"

#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "runtime/op_geometry.h"

namespace gcomp::cuda {
namespace {

using runtime::KernelSpec;
using runtime::Operand;

// Helpers every generated function shares; guarded, so that the plan's one translation unit
// defines them once. Conversions by PTX cvt (round to nearest even), no CUDA headers needed.
// With GCOMP_HOST_EMULATION the helpers come from the includer instead: the CPU tests compile
// the same function bodies as host C++ (one thread walking every item, the same index arithmetic)
// and compare them with the cpu backend's kernels.
constexpr char kPreamble[] = R"(#ifndef GCOMP_PREAMBLE
#define GCOMP_PREAMBLE
struct GcompArgs {
  const void* in[4];
  void* out[2];
  long long outer;
};
#ifndef GCOMP_HOST_EMULATION
__device__ __forceinline__ float gc_h2f(unsigned short h) { float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h)); return f; }
__device__ __forceinline__ unsigned short gc_f2h(float f) { unsigned short h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h; }
__device__ __forceinline__ float gc_b2f(unsigned short b) { return __uint_as_float(((unsigned int)b) << 16); }
__device__ __forceinline__ unsigned short gc_f2b(float f) { unsigned short b; asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(b) : "f"(f)); return b; }
__device__ __forceinline__ long long gc_first() { return (long long)blockIdx.x * blockDim.x + threadIdx.x; }
__device__ __forceinline__ long long gc_stride() { return (long long)gridDim.x * blockDim.x; }
#endif
#endif
)";

// FNV-1a: a stable short hash of a function's body for its name (same name, same code).
std::string Hash8(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return absl::StrFormat("%08x", static_cast<uint32_t>(h ^ (h >> 32)));
}



// The storage type of a dtype in generated code, and its float load/store expressions.
std::string StorageType(DType t) {
  switch (DTypeSize(t)) {
    case 1:
      return "unsigned char";
    case 2:
      return t == DType::kF16 || t == DType::kBF16 ? "unsigned short" : "short";
    case 8:
      return "unsigned long long";
    default:
      return t == DType::kF32 ? "float" : "unsigned int";
  }
}
std::string Load(DType t, const std::string& e) {
  if (t == DType::kF16) return absl::StrCat("gc_h2f(", e, ")");
  if (t == DType::kBF16) return absl::StrCat("gc_b2f(", e, ")");
  return e;
}
std::string Store(DType t, const std::string& v) {
  if (t == DType::kF16) return absl::StrCat("gc_f2h(", v, ")");
  if (t == DType::kBF16) return absl::StrCat("gc_f2b(", v, ")");
  return v;
}

std::string FloatLiteral(float f) {
  if (std::isinf(f)) return f > 0 ? "__int_as_float(0x7f800000)" : "__int_as_float(0xff800000)";
  return absl::StrFormat("%af", static_cast<double>(f));
}

// The activation applied to float `v`, as generated code.
std::string ActivationExpr(const Epilogue& e, const std::string& v) {
  switch (e.act) {
    case Activation::kNone:
      return v;
    case Activation::kRelu:  // NaN stays NaN, as in the reference
      return absl::StrCat("(", v, " > 0.0f ? ", v, " : (", v, " < 0.0f ? 0.0f : ", v, "))");
    case Activation::kClip:
      return absl::StrCat("fminf(fmaxf(", v, ", ", FloatLiteral(e.clip_min), "), ", FloatLiteral(e.clip_max), ")");
    case Activation::kGelu:
      return absl::StrCat("(0.5f * ", v, " * (1.0f + erff(", v, " * 0.70710678118654752f)))");
    case Activation::kGeluTanh:
      return absl::StrCat("(0.5f * ", v, " * (1.0f + tanhf(0.79788456080286536f * (", v, " + 0.044715f * ", v, " * ",
                          v, " * ", v, "))))");
  }
  return v;
}

std::string ActTag(const Epilogue& e) { return e.act == Activation::kNone ? "" : absl::StrCat("_", ActivationName(e.act)); }

// The function around a body: `name` gets the body's hash appended.
GeneratedKernel Finish(const std::string& stem, const std::string& body, int64_t items_per_outer, bool outer_is_batch,
                       int64_t fixed_outer, std::string description) {
  GeneratedKernel k;
  const std::string name = absl::StrCat("gcomp_", stem, "_", Hash8(body));
  k.code.name = name;
  k.code.source = absl::StrCat(kPreamble, "extern \"C\" __global__ void __launch_bounds__(256) ", name,
                               "(GcompArgs a) {\n", body, "}\n");
  k.items_per_outer = items_per_outer;
  k.outer_is_batch = outer_is_batch;
  k.fixed_outer = fixed_outer;
  k.description = std::move(description);
  return k;
}

std::vector<int64_t> ContiguousStrides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (int64_t i = static_cast<int64_t>(dims.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * dims[i + 1];
  return s;
}

bool Scales(const Operand& o, size_t axis) { return axis < o.per_batch.size() && o.per_batch[axis] != 0; }

// Only the leading axis of any operand may depend on the batch.
bool OnlyLeadingScales(const Operand& o) {
  for (size_t k = 1; k < o.per_batch.size(); ++k) {
    if (o.per_batch[k] != 0) return false;
  }
  return true;
}

// A strided view: output dims and, per output axis, each input's stride (0: broadcast) plus a base
// offset, all in elements. Axis 0 is the leading (possibly batch) axis and is never merged.
struct View {
  std::vector<int64_t> dims;
  std::vector<std::vector<int64_t>> strides;  // per input
  std::vector<int64_t> base;                  // per input
};

// Drops unit axes after the first and merges adjacent axes that every input walks contiguously.
View Simplify(const View& v) {
  View out;
  out.base = v.base;
  out.strides.resize(v.strides.size());
  for (size_t k = 0; k < v.dims.size(); ++k) {
    if (k > 0 && v.dims[k] == 1) continue;
    bool merge = k > 0 && out.dims.size() > 1;
    for (size_t i = 0; merge && i < v.strides.size(); ++i) merge = out.strides[i].back() == v.strides[i][k] * v.dims[k];
    if (merge) {
      out.dims.back() *= v.dims[k];
      for (size_t i = 0; i < v.strides.size(); ++i) out.strides[i].back() = v.strides[i][k];
    } else {
      out.dims.push_back(v.dims[k]);
      for (size_t i = 0; i < v.strides.size(); ++i) out.strides[i].push_back(v.strides[i][k]);
    }
  }
  if (out.dims.empty()) {
    out.dims.push_back(1);
    for (auto& s : out.strides) s.push_back(0);
  }
  return out;
}

// Code computing `off0`, `off1`, ... for item `i` of a view (axis 0 from the quotient).
std::string OffsetCode(const View& v) {
  std::string code = "    long long r = i;\n";
  for (size_t in = 0; in < v.strides.size(); ++in) absl::StrAppend(&code, "    long long off", in, " = ", v.base[in], "LL;\n");
  for (size_t k = v.dims.size(); k-- > 1;) {
    absl::StrAppend(&code, "    { const long long c = r % ", v.dims[k], "LL; r /= ", v.dims[k], "LL;");
    for (size_t in = 0; in < v.strides.size(); ++in) {
      if (v.strides[in][k] != 0) absl::StrAppend(&code, " off", in, " += c * ", v.strides[in][k], "LL;");
    }
    absl::StrAppend(&code, " }\n");
  }
  for (size_t in = 0; in < v.strides.size(); ++in) {
    if (v.strides[in][0] != 0) absl::StrAppend(&code, "    off", in, " += r * ", v.strides[in][0], "LL;\n");
  }
  return code;
}

int64_t Inner(const View& v) {
  int64_t n = 1;
  for (size_t k = 1; k < v.dims.size(); ++k) n *= v.dims[k];
  return n;
}

// The batch rule for a view kernel: the output's leading axis may scale, no other; an input's
// leading axis may scale only where it maps onto the output's leading axis one to one.
bool BatchRule(const KernelSpec& spec, bool input_leading_maps, bool* outer_is_batch, std::string* why_not) {
  const Operand& y = spec.outputs[0];
  for (const Operand& o : spec.inputs) {
    if (o.present && !OnlyLeadingScales(o)) {
      *why_not = "an input's non-leading axis depends on the batch";
      return false;
    }
  }
  if (!OnlyLeadingScales(y)) {
    *why_not = "the output's non-leading axis depends on the batch";
    return false;
  }
  *outer_is_batch = Scales(y, 0);
  for (const Operand& o : spec.inputs) {
    if (o.present && Scales(o, 0) && (!*outer_is_batch || !input_leading_maps)) {
      *why_not = "the batch axis of an input does not map onto the output's leading axis";
      return false;
    }
  }
  return true;
}

std::optional<Epilogue> UnaryActivation(const KernelSpec& spec) {
  Epilogue e;
  if (spec.op == "Relu") {
    e.act = Activation::kRelu;
  } else if (spec.op == "Clip") {
    if (spec.inputs.size() > 1) return std::nullopt;  // bounds as inputs: not generated
    e.act = Activation::kClip;
    e.clip_min = spec.params ? spec.params->GetFloat("min", e.clip_min) : e.clip_min;
    e.clip_max = spec.params ? spec.params->GetFloat("max", e.clip_max) : e.clip_max;
  } else if (spec.op == "Gelu") {
    const std::string approx = spec.params ? spec.params->GetString("approximate", "none") : "none";
    if (approx != "none" && approx != "tanh") return std::nullopt;
    e.act = approx == "tanh" ? Activation::kGeluTanh : Activation::kGelu;
  } else {
    return std::nullopt;
  }
  return e;
}

}  // namespace

std::optional<GeneratedKernel> MapKernel(const KernelSpec& spec, std::string* why_not) {
  if (spec.inputs.empty() || spec.outputs.size() != 1 || !spec.inputs[0].present || !spec.outputs[0].present) {
    *why_not = "not one input and one output";
    return std::nullopt;
  }
  const Operand &x = spec.inputs[0], &y = spec.outputs[0];
  const std::vector<int64_t> xs = ContiguousStrides(x.dims);
  const int64_t total = runtime::NumElements(y.dims);
  View v;
  v.dims = y.dims;
  v.strides.assign(1, std::vector<int64_t>(y.dims.size(), 0));
  v.base.assign(1, 0);
  bool leading_maps = true;
  Epilogue act;
  std::string what = spec.op;
  if (spec.op == "Transpose") {
    std::optional<std::vector<int64_t>> perm = runtime::ResolvePerm(spec);
    if (!perm) {
      *why_not = "invalid permutation";
      return std::nullopt;
    }
    for (size_t k = 0; k < perm->size(); ++k) v.strides[0][k] = xs[(*perm)[k]];
    leading_maps = !perm->empty() && (*perm)[0] == 0;
    what = absl::StrCat("transpose [", absl::StrJoin(*perm, ","), "]");
  } else if (spec.op == "Slice") {
    std::optional<std::vector<runtime::SliceAxisPlan>> axes = runtime::ResolveSliceAxes(spec);
    if (!axes) {
      *why_not = "slice parameters are not constant or do not match the dims";
      return std::nullopt;
    }
    for (size_t k = 0; k < axes->size(); ++k) {
      v.strides[0][k] = xs[k] * (*axes)[k].step;
      v.base[0] += xs[k] * (*axes)[k].start;
    }
    leading_maps = !axes->empty() && (*axes)[0].start == 0 && (*axes)[0].step == 1 && (*axes)[0].count == x.dims[0];
    what = "strided slice";
  } else if (spec.op == "Expand") {
    if (y.dims.size() < x.dims.size()) {
      *why_not = "expand to a lower rank";
      return std::nullopt;
    }
    const size_t lead = y.dims.size() - x.dims.size();
    for (size_t k = 0; k < x.dims.size(); ++k) {
      if (x.dims[k] != y.dims[lead + k] && x.dims[k] != 1) {
        *why_not = "dims do not broadcast";
        return std::nullopt;
      }
      v.strides[0][lead + k] = x.dims[k] == 1 ? 0 : xs[k];
    }
    leading_maps = lead == 0 && x.dims.size() > 0 && x.dims[0] == y.dims[0];
    what = "expand";
  } else if (spec.op == "Cast" || spec.op == "Identity" || spec.op == "Reshape" || spec.op == "Flatten" ||
             spec.op == "Squeeze" || spec.op == "Unsqueeze" || UnaryActivation(spec)) {
    if (runtime::NumElements(x.dims) != total) {
      *why_not = "element counts differ";
      return std::nullopt;
    }
    if (std::optional<Epilogue> e = UnaryActivation(spec)) {
      act = *e;
      if (!runtime::IsStorageFloat(x.dtype) || !runtime::IsStorageFloat(y.dtype)) {
        *why_not = "activation of a non-float type";
        return std::nullopt;
      }
    }
    v.strides[0] = ContiguousStrides(y.dims);
    // Same memory order: the leading axes agree when both hold the same number of elements.
    leading_maps = !x.dims.empty() && !y.dims.empty() && x.dims[0] == y.dims[0];
    what = spec.op == "Cast" ? absl::StrCat("cast ", DTypeName(x.dtype), "->", DTypeName(y.dtype)) : "copy";
    if (act.act != Activation::kNone) what = ActivationName(act.act);
  } else {
    *why_not = "not a data-movement op";
    return std::nullopt;
  }
  if (x.dtype != y.dtype && (!runtime::IsStorageFloat(x.dtype) || !runtime::IsStorageFloat(y.dtype))) {
    *why_not = "a cast other than between f32, f16 and bf16";
    return std::nullopt;
  }
  bool outer_is_batch = false;
  if (!BatchRule(spec, leading_maps, &outer_is_batch, why_not)) return std::nullopt;
  if (y.dims.empty()) {
    v.dims = {1};
    v.strides[0] = {0};
  }
  const View s = Simplify(v);
  const int64_t inner = Inner(s);
  const bool copy = x.dtype == y.dtype && act.act == Activation::kNone;
  const size_t es = DTypeSize(y.dtype);
  // 16-byte vectors: a pure copy whose innermost axis is contiguous and whose every offset and
  // extent is a multiple of the vector (the pointers' alignment is checked at run time).
  const int64_t vec = copy && es <= 16 ? static_cast<int64_t>(16 / es) : 1;
  bool vectorize = vec > 1 && s.dims.size() > 1 && s.strides[0].back() == 1 && s.dims.back() % vec == 0 &&
                   s.base[0] % vec == 0;
  for (size_t k = 0; vectorize && k + 1 < s.dims.size(); ++k) vectorize = s.strides[0][k] % vec == 0;
  std::string body;
  const std::string xt = StorageType(x.dtype), yt = StorageType(y.dtype);
  if (vectorize) {
    View sv = s;
    sv.dims.back() /= vec;
    for (int64_t& st : sv.strides[0]) st = st == 1 ? 1 : st / vec;
    sv.base[0] /= vec;
    absl::StrAppend(&body, "  const long long total = a.outer * ", inner, "LL;\n",
                    "  if (((unsigned long long)a.in[0] | (unsigned long long)a.out[0]) % 16 == 0) {\n",
                    "    const uint4* x = (const uint4*)a.in[0];\n    uint4* y = (uint4*)a.out[0];\n",
                    "    for (long long i = gc_first(); i < total / ", vec, "LL; i += gc_stride()) {\n",
                    OffsetCode(sv), "    y[i] = x[off0];\n    }\n    return;\n  }\n");
  } else {
    absl::StrAppend(&body, "  const long long total = a.outer * ", inner, "LL;\n");
  }
  absl::StrAppend(&body, "  const ", xt, "* x = (const ", xt, "*)a.in[0];\n  ", yt, "* y = (", yt, "*)a.out[0];\n",
                  "  for (long long i = gc_first(); i < total; i += gc_stride()) {\n", OffsetCode(s));
  if (copy) {
    absl::StrAppend(&body, "    y[i] = x[off0];\n  }\n");
  } else {
    absl::StrAppend(&body, "    const float v = ", Load(x.dtype, "x[off0]"), ";\n    y[i] = ",
                    Store(y.dtype, ActivationExpr(act, "v")), ";\n  }\n");
  }
  const std::string stem = absl::StrCat(spec.op == "Transpose" ? "transpose" : spec.op == "Slice" ? "slice"
                                        : spec.op == "Cast"    ? "cast"
                                        : act.act != Activation::kNone ? "act"
                                                                       : "copy",
                                        ActTag(act), "_", DTypeName(y.dtype));
  return Finish(stem, body, inner, outer_is_batch, s.dims[0],
                absl::StrCat(what, ", ", DTypeName(y.dtype), vectorize ? ", 16-byte vectors" : "", ", dims [",
                             absl::StrJoin(s.dims, ","), "]"));
}

std::optional<GeneratedKernel> BinaryKernel(const KernelSpec& spec, std::string* why_not) {
  static const std::vector<std::pair<std::string, std::string>> kOps = {
      {"Add", "+"}, {"Sub", "-"}, {"Mul", "*"}, {"Div", "/"}};
  std::string sym;
  for (const auto& [op, s] : kOps) {
    if (spec.op == op) sym = s;
  }
  if (sym.empty() || spec.inputs.size() != 2 || spec.outputs.size() != 1) {
    *why_not = "not a binary arithmetic op";
    return std::nullopt;
  }
  const Operand &a = spec.inputs[0], &b = spec.inputs[1], &y = spec.outputs[0];
  if (!a.present || !b.present || !runtime::IsStorageFloat(a.dtype) || !runtime::IsStorageFloat(b.dtype) || !runtime::IsStorageFloat(y.dtype)) {
    *why_not = "operands other than f32, f16 or bf16";
    return std::nullopt;
  }
  View v;
  v.dims = y.dims;
  v.base = {0, 0};
  bool leading_maps = true;
  for (const Operand* o : {&a, &b}) {
    if (o->dims.size() > y.dims.size()) {
      *why_not = "an input of higher rank than the output";
      return std::nullopt;
    }
    const std::vector<int64_t> os = ContiguousStrides(o->dims);
    const size_t lead = y.dims.size() - o->dims.size();
    std::vector<int64_t> st(y.dims.size(), 0);
    for (size_t k = 0; k < o->dims.size(); ++k) {
      if (o->dims[k] != y.dims[lead + k] && o->dims[k] != 1) {
        *why_not = "dims do not broadcast";
        return std::nullopt;
      }
      st[lead + k] = o->dims[k] == 1 ? 0 : os[k];
    }
    if (Scales(*o, 0)) leading_maps &= lead == 0;
    v.strides.push_back(st);
  }
  bool outer_is_batch = false;
  if (!BatchRule(spec, leading_maps, &outer_is_batch, why_not)) return std::nullopt;
  if (y.dims.empty()) {
    v.dims = {1};
    v.strides = {{0}, {0}};
  }
  const View s = Simplify(v);
  const int64_t inner = Inner(s);
  const std::string at = StorageType(a.dtype), bt = StorageType(b.dtype), yt = StorageType(y.dtype);
  std::string body = absl::StrCat("  const long long total = a.outer * ", inner, "LL;\n  const ", at, "* x0 = (const ",
                                  at, "*)a.in[0];\n  const ", bt, "* x1 = (const ", bt, "*)a.in[1];\n  ", yt, "* y = (",
                                  yt, "*)a.out[0];\n",
                                  "  for (long long i = gc_first(); i < total; i += gc_stride()) {\n", OffsetCode(s),
                                  "    const float v = ", Load(a.dtype, "x0[off0]"), " ", sym, " ",
                                  Load(b.dtype, "x1[off1]"), ";\n    y[i] = ", Store(y.dtype, "v"), ";\n  }\n");
  std::string lower = spec.op;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return Finish(absl::StrCat(lower, "_", DTypeName(y.dtype)), body, inner, outer_is_batch, s.dims[0],
                absl::StrCat(spec.op, ", ", DTypeName(y.dtype), ", dims [", absl::StrJoin(s.dims, ","), "]"));
}

std::optional<GeneratedKernel> PoolKernel(const KernelSpec& spec, std::string* why_not) {
  std::optional<runtime::PoolGeometry> p = runtime::ResolvePool(spec);
  if (!p) {
    *why_not = "pooling parameters outside max/average 2-D pooling";
    return std::nullopt;
  }
  bool outer_is_batch = false;
  if (!BatchRule(spec, true, &outer_is_batch, why_not)) return std::nullopt;
  const std::string xt = StorageType(p->x_type), yt = StorageType(p->y_type);
  const int64_t items = p->c * p->oh * p->ow;
  std::string body = absl::StrCat("  const long long total = a.outer * ", items, "LL;\n  const ", xt, "* x = (const ",
                                  xt, "*)a.in[0];\n  ", yt, "* y = (", yt, "*)a.out[0];\n",
                                  "  for (long long i = gc_first(); i < total; i += gc_stride()) {\n");
  if (p->nhwc) {
    absl::StrAppend(&body, "    const long long c = i % ", p->c, "LL; long long r = i / ", p->c, "LL;\n",
                    "    const long long ow = r % ", p->ow, "LL; r /= ", p->ow, "LL;\n", "    const long long oh = r % ",
                    p->oh, "LL; const long long n = r / ", p->oh, "LL;\n");
  } else {
    absl::StrAppend(&body, "    const long long ow = i % ", p->ow, "LL; long long r = i / ", p->ow, "LL;\n",
                    "    const long long oh = r % ", p->oh, "LL; r /= ", p->oh, "LL;\n", "    const long long c = r % ",
                    p->c, "LL; const long long n = r / ", p->c, "LL;\n");
  }
  const std::string index = p->nhwc ? absl::StrCat("((n * ", p->h, "LL + h) * ", p->w, "LL + w) * ", p->c, "LL + c")
                                    : absl::StrCat("((n * ", p->c, "LL + c) * ", p->h, "LL + h) * ", p->w, "LL + w");
  absl::StrAppend(&body, "    const long long hs = oh * ", p->sh, "LL - ", p->pt, "LL, ws = ow * ", p->sw, "LL - ",
                  p->pl, "LL;\n", "    const long long h0 = hs > 0 ? hs : 0, w0 = ws > 0 ? ws : 0;\n",
                  "    const long long h1 = hs + ", p->kh, "LL < ", p->h, "LL ? hs + ", p->kh, "LL : ", p->h, "LL;\n",
                  "    const long long w1 = ws + ", p->kw, "LL < ", p->w, "LL ? ws + ", p->kw, "LL : ", p->w, "LL;\n");
  if (p->max) {
    absl::StrAppend(&body, "    float acc = -__int_as_float(0x7f800000);\n",
                    "    for (long long h = h0; h < h1; ++h)\n      for (long long w = w0; w < w1; ++w) {\n",
                    "        const float v = ", Load(p->x_type, absl::StrCat("x[", index, "]")), ";\n",
                    "        acc = (v > acc || v != v) ? v : acc;\n      }\n");
  } else {
    absl::StrAppend(&body, "    float acc = 0.0f;\n",
                    "    for (long long h = h0; h < h1; ++h)\n      for (long long w = w0; w < w1; ++w) acc += ",
                    Load(p->x_type, absl::StrCat("x[", index, "]")), ";\n");
    if (p->include_pad) {
      absl::StrAppend(&body, "    const long long ph0 = hs > -", p->pt, "LL ? hs : -", p->pt, "LL, pw0 = ws > -", p->pl,
                      "LL ? ws : -", p->pl, "LL;\n", "    const long long ph1 = hs + ", p->kh, "LL < ", p->h + p->pb,
                      "LL ? hs + ", p->kh, "LL : ", p->h + p->pb, "LL;\n", "    const long long pw1 = ws + ", p->kw,
                      "LL < ", p->w + p->pr, "LL ? ws + ", p->kw, "LL : ", p->w + p->pr, "LL;\n",
                      "    acc /= (float)((ph1 - ph0) * (pw1 - pw0));\n");
    } else {
      absl::StrAppend(&body, "    acc /= (float)((h1 - h0) * (w1 - w0));\n");
    }
  }
  absl::StrAppend(&body, "    y[i] = ", Store(p->y_type, "acc"), ";\n  }\n");
  const std::string shape = absl::StrCat(p->kh, "x", p->kw, "s", p->sh);
  return Finish(absl::StrCat("pool_", p->max ? "max_" : "avg_", shape, p->nhwc ? "_nhwc_" : "_nchw_",
                             DTypeName(p->y_type)),
                body, items, outer_is_batch, p->n,
                absl::StrCat(p->max ? "max" : "average", " pool ", p->kh, "x", p->kw, " stride ", p->sh, "x", p->sw,
                             p->nhwc ? " NHWC " : " NCHW ", DTypeName(p->y_type)));
}

std::optional<GeneratedKernel> ReduceMeanKernel(const KernelSpec& spec, std::string* why_not) {
  std::optional<runtime::ReduceGeometry> p = runtime::ResolveReduce(spec);
  if (!p) {
    *why_not = "reduced axes are not one contiguous block";
    return std::nullopt;
  }
  bool outer_is_batch = false;
  const Operand& x = spec.inputs[0];
  const Operand& y = spec.outputs[0];
  // The batch axis must be among the outer (kept) axes: its size divides `outer`.
  const bool leading_kept = !x.dims.empty() && !y.dims.empty() && x.dims[0] == y.dims[0] && p->outer % x.dims[0] == 0;
  if (!BatchRule(spec, leading_kept, &outer_is_batch, why_not)) return std::nullopt;
  const int64_t lead = y.dims.empty() ? 1 : y.dims[0];
  const int64_t items = p->outer / (outer_is_batch ? lead : p->outer) * p->inner;
  const std::string xt = StorageType(p->x_type), yt = StorageType(p->y_type);
  std::string body = absl::StrCat(
      "  const long long total = a.outer * ", items, "LL;\n  const ", xt, "* x = (const ", xt, "*)a.in[0];\n  ", yt,
      "* y = (", yt, "*)a.out[0];\n", "  for (long long i = gc_first(); i < total; i += gc_stride()) {\n",
      "    const long long o = i / ", p->inner, "LL, j = i % ", p->inner, "LL;\n", "    const ", xt, "* row = x + o * ",
      p->reduced * p->inner, "LL + j;\n    float acc = 0.0f;\n    for (long long r = 0; r < ", p->reduced,
      "LL; ++r) acc += ", Load(p->x_type, absl::StrCat("row[r * ", p->inner, "LL]")), ";\n    y[i] = ",
      Store(p->y_type, absl::StrCat("acc * ", FloatLiteral(1.0f / static_cast<float>(p->reduced)))), ";\n  }\n");
  // Mean as sum * (1/n): the reference divides; the difference is within one rounding.
  return Finish(absl::StrCat("reduce_mean_", DTypeName(p->y_type)), body, items, outer_is_batch,
                outer_is_batch ? lead : 1,
                absl::StrCat("mean over ", p->reduced, " of [", p->outer, ", ", p->reduced, ", ", p->inner, "], ",
                             DTypeName(p->y_type)));
}

GeneratedKernel ActivationKernel(DType dtype, int64_t n_per_outer, bool outer_is_batch, int64_t fixed_outer,
                                 const Epilogue& epi) {
  const std::string t = StorageType(dtype);
  const std::string body = absl::StrCat(
      "  const long long total = a.outer * ", n_per_outer, "LL;\n  ", t, "* y = (", t, "*)a.out[0];\n",
      "  for (long long i = gc_first(); i < total; i += gc_stride()) {\n    const float v = ", Load(dtype, "y[i]"),
      ";\n    y[i] = ", Store(dtype, ActivationExpr(epi, "v")), ";\n  }\n");
  return Finish(absl::StrCat("act", ActTag(epi), "_", DTypeName(dtype)), body, n_per_outer, outer_is_batch,
                fixed_outer, absl::StrCat(ActivationName(epi.act), " in place, ", DTypeName(dtype)));
}

GeneratedKernel Im2ColKernel(const Im2ColGeometry& g) {
  const int64_t cg = g.c / g.group;
  const int64_t kk = g.kh * g.kw * cg;
  const int64_t items = g.ho * g.wo * g.group * kk;
  const std::string t = StorageType(g.dtype);
  const std::string body = absl::StrCat(
      "  const long long total = a.outer * ", items, "LL;\n  const ", t, "* x = (const ", t, "*)a.in[0];\n  ", t,
      "* y = (", t, "*)a.out[0];\n", "  for (long long i = gc_first(); i < total; i += gc_stride()) {\n",
      "    const long long k = i % ", kk, "LL; long long r = i / ", kk, "LL;\n", "    const long long g = r % ",
      g.group, "LL; r /= ", g.group, "LL;\n", "    const long long ow = r % ", g.wo, "LL; r /= ", g.wo, "LL;\n",
      "    const long long oh = r % ", g.ho, "LL; const long long n = r / ", g.ho, "LL;\n",
      "    const long long c = k % ", cg, "LL, t = k / ", cg, "LL;\n", "    const long long h = oh * ", g.sh, "LL - ",
      g.pt, "LL + (t / ", g.kw, "LL) * ", g.dh, "LL;\n", "    const long long w = ow * ", g.sw, "LL - ", g.pl,
      "LL + (t % ", g.kw, "LL) * ", g.dw, "LL;\n", "    y[i] = (h >= 0 && h < ", g.h, "LL && w >= 0 && w < ", g.w,
      "LL) ? x[((n * ", g.h, "LL + h) * ", g.w, "LL + w) * ", g.c, "LL + g * ", cg, "LL + c] : (", t, ")0;\n  }\n");
  return Finish(absl::StrCat("im2col_", g.kh, "x", g.kw, "s", g.sh, "_", DTypeName(g.dtype)), body, items, true, 1,
                absl::StrCat("im2col ", g.kh, "x", g.kw, " stride ", g.sh, "x", g.sw, " NHWC ", DTypeName(g.dtype)));
}

}  // namespace gcomp::cuda
