#include "runtime/cuda/device_kernels.h"

#include <algorithm>
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
// the same function bodies as host C++ (one thread walking every item, a "warp" of one lane, the
// same index arithmetic) and compare them with the cpu backend's kernels.
constexpr char kPreamble[] = R"(#ifndef GCOMP_PREAMBLE
#define GCOMP_PREAMBLE
struct GcompArgs {
  const void* in[4];
  void* out[2];
  long long batch;
  long long total;
};
#ifndef GCOMP_HOST_EMULATION
__device__ __forceinline__ float gc_h2f(unsigned short h) { float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h)); return f; }
__device__ __forceinline__ unsigned short gc_f2h(float f) { unsigned short h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h; }
__device__ __forceinline__ float gc_b2f(unsigned short b) { return __uint_as_float(((unsigned int)b) << 16); }
__device__ __forceinline__ unsigned short gc_f2b(float f) { unsigned short b; asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(b) : "f"(f)); return b; }
__device__ __forceinline__ long long gc_first() { return (long long)blockIdx.x * blockDim.x + threadIdx.x; }
__device__ __forceinline__ long long gc_stride() { return (long long)gridDim.x * blockDim.x; }
#define GC_WARP 32
__device__ __forceinline__ int gc_lane() { return threadIdx.x & 31; }
__device__ __forceinline__ long long gc_warp_first() { return gc_first() >> 5; }
__device__ __forceinline__ long long gc_warp_stride() { return gc_stride() >> 5; }
__device__ __forceinline__ float gc_shfl_xor(float v, int o) { return __shfl_xor_sync(0xffffffffu, v, o); }
__device__ __forceinline__ float gc_warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += gc_shfl_xor(v, o);
  return v;
}
__device__ __forceinline__ unsigned int gc_ld2(const unsigned short* p) { return *(const unsigned int*)p; }
__device__ __forceinline__ void gc_st2(unsigned short* p, unsigned int v) { *(unsigned int*)p = v; }
// D += A*B on Tensor Cores, m16n8k16, A row-major and B column-major fragments, fp32 accumulators.
__device__ __forceinline__ void gc_mma_f16(float* d, const unsigned int* a, unsigned int b0, unsigned int b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
__device__ __forceinline__ void gc_mma_bf16(float* d, const unsigned int* a, unsigned int b0, unsigned int b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
#endif
// fp8 e4m3fn (bias 7, no infinities, 0x7f NaN, largest finite 448) by bit arithmetic, the same on
// every architecture and in the host build: round to nearest even, saturating at +-448.
__device__ __forceinline__ unsigned char gc_f2e4m3(float f) {
  const unsigned int u = __float_as_uint(f), sign = (u >> 24) & 0x80u, a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return 0x7f;                 // NaN
  if (a >= 0x43e80000u) return (unsigned char)(sign | 0x7eu);  // |f| >= 464 (the midpoint above 448)
  if (a < 0x3c800000u) {                           // |f| < 2^-6: subnormal steps of 2^-9
    return (unsigned char)(sign | (unsigned int)rintf(__uint_as_float(a) * 512.0f));
  }
  const unsigned int r = a + 0x7ffffu + ((a >> 20) & 1u);  // round the 23-bit mantissa to 3 bits
  return (unsigned char)(sign | ((((r >> 23) - 120u) << 3) | ((r >> 20) & 7u)));
}
__device__ __forceinline__ float gc_e4m32f(unsigned char v) {
  const unsigned int s = (v & 0x80u) << 24, e = (v >> 3) & 15u, m = v & 7u;
  if (e == 15u && m == 7u) return __uint_as_float(0x7fc00000u);
  const float r = e == 0u ? (float)m * 0.001953125f : __uint_as_float(((e + 120u) << 23) | (m << 20));
  return __uint_as_float(__float_as_uint(r) | s);
}
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
  if (t == DType::kF8E4M3) return absl::StrCat("gc_f2e4m3(", v, ")");
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

// The function around a body: `name` gets the body's hash appended. `min_blocks` > 0 asks ptxas
// for that many resident blocks per SM instead of its default register target (which, for
// blocks of 256, is 32 registers and spills a kernel with more live state).
GeneratedKernel Finish(const std::string& stem, const std::string& body, int64_t vector, std::string description,
                       int block = 256, int min_blocks = 0) {
  GeneratedKernel k;
  const std::string name = absl::StrCat("gcomp_", stem, "_", Hash8(body));
  k.code.name = name;
  const std::string bounds = min_blocks > 0 ? absl::StrCat(block, ", ", min_blocks) : absl::StrCat(block);
  k.code.source = absl::StrCat(kPreamble, "extern \"C\" __global__ void __launch_bounds__(", bounds, ") ", name,
                               "(GcompArgs a) {\n", body, "}\n");
  k.vector = vector;
  k.block = block;
  k.description = std::move(description);
  return k;
}

// A dim or stride as the plan's dims are: per_batch * batch + fixed.
struct Lin {
  int64_t pb = 0, f = 0;
  bool fixed() const { return pb == 0; }
  bool operator==(const Lin&) const = default;
  // Generated code: a literal, or the expression of `a.batch`.
  std::string Code() const {
    if (pb == 0) return absl::StrCat(f, "LL");
    return absl::StrCat("(", pb, "LL * a.batch + ", f, "LL)");
  }
  bool DivisibleBy(int64_t v) const { return pb % v == 0 && f % v == 0; }
};

// Lin * Lin where at most one factor depends on the batch; nullopt otherwise.
std::optional<Lin> Mul(const Lin& a, const Lin& b) {
  if (!a.fixed() && !b.fixed()) return std::nullopt;
  if (a.fixed()) return Lin{a.f * b.pb, a.f * b.f};
  return Lin{a.pb * b.f, a.f * b.f};
}
Lin Add(const Lin& a, const Lin& b) { return Lin{a.pb + b.pb, a.f + b.f}; }

// An operand's dims as Lin at the spec's batch.
std::vector<Lin> LinDims(const Operand& o, int64_t batch) {
  std::vector<Lin> d;
  for (size_t k = 0; k < o.dims.size(); ++k) {
    const int64_t pb = k < o.per_batch.size() ? o.per_batch[k] : 0;
    d.push_back({pb, o.dims[k] - pb * batch});
  }
  return d;
}

// Contiguous strides of `dims` (nullopt when a stride would be quadratic in the batch).
std::optional<std::vector<Lin>> Strides(const std::vector<Lin>& dims) {
  std::vector<Lin> s(dims.size(), Lin{0, 1});
  for (int64_t i = static_cast<int64_t>(dims.size()) - 2; i >= 0; --i) {
    std::optional<Lin> m = Mul(s[i + 1], dims[i + 1]);
    if (!m) return std::nullopt;
    s[i] = *m;
  }
  return s;
}

// A strided view: output dims and, per output axis, each input's stride (0: broadcast) plus a base
// offset, all in elements and linear in the batch.
struct View {
  std::vector<Lin> dims;
  std::vector<std::vector<Lin>> strides;  // per input
  std::vector<Lin> base;                  // per input
};

// Drops unit axes and merges adjacent batch-independent axes that every input walks contiguously.
View Simplify(const View& v) {
  View out;
  out.base = v.base;
  out.strides.resize(v.strides.size());
  for (size_t k = 0; k < v.dims.size(); ++k) {
    if (v.dims[k] == Lin{0, 1}) continue;
    bool merge = !out.dims.empty() && out.dims.back().fixed() && v.dims[k].fixed();
    for (size_t i = 0; merge && i < v.strides.size(); ++i) {
      const Lin& outer = out.strides[i].back();
      const Lin& inner = v.strides[i][k];
      merge = outer.fixed() && inner.fixed() && outer.f == inner.f * v.dims[k].f;
    }
    if (merge) {
      out.dims.back().f *= v.dims[k].f;
      for (size_t i = 0; i < v.strides.size(); ++i) out.strides[i].back() = v.strides[i][k];
    } else {
      out.dims.push_back(v.dims[k]);
      for (size_t i = 0; i < v.strides.size(); ++i) out.strides[i].push_back(v.strides[i][k]);
    }
  }
  if (out.dims.empty()) {
    out.dims.push_back({0, 1});
    for (auto& s : out.strides) s.push_back({0, 0});
  }
  return out;
}

// Code computing `off0`, `off1`, ... for item `i` of a view.
std::string OffsetCode(const View& v) {
  std::string code = "    long long r = i;\n";
  for (size_t in = 0; in < v.strides.size(); ++in) {
    absl::StrAppend(&code, "    long long off", in, " = ", v.base[in].Code(), ";\n");
  }
  for (size_t k = v.dims.size(); k-- > 1;) {
    absl::StrAppend(&code, "    { const long long c = r % ", v.dims[k].Code(), "; r /= ", v.dims[k].Code(), ";");
    for (size_t in = 0; in < v.strides.size(); ++in) {
      if (!(v.strides[in][k] == Lin{0, 0})) absl::StrAppend(&code, " off", in, " += c * ", v.strides[in][k].Code(), ";");
    }
    absl::StrAppend(&code, " }\n");
  }
  for (size_t in = 0; in < v.strides.size(); ++in) {
    if (!(v.strides[in][0] == Lin{0, 0})) absl::StrAppend(&code, "    off", in, " += r * ", v.strides[in][0].Code(), ";\n");
  }
  return code;
}

std::string DimsText(const View& v) {
  std::vector<std::string> d;
  for (const Lin& l : v.dims) d.push_back(l.fixed() ? absl::StrCat(l.f) : l.f ? absl::StrCat(l.pb, "b+", l.f) : absl::StrCat(l.pb, "b"));
  return absl::StrCat("[", absl::StrJoin(d, ","), "]");
}

bool AnyScales(const Operand& o, size_t from, size_t to) {
  for (size_t k = from; k < to && k < o.per_batch.size(); ++k) {
    if (o.per_batch[k] != 0) return true;
  }
  return false;
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

// Generated code for the element offset of (b, head, position, 0) in an attention operand laid out
// as `rows` (runtime::AttentionShape::Offset): [B, H, S, D], or rows of `rows.width` from column
// `rows.offset`, batch first or (seq_first) sequence first, where `batches` is the code of the
// batch count (it may depend on the run's batch size).
std::string AttentionOffset(const runtime::AttentionShape& a, const runtime::AttentionShape::Rows& rows,
                            const std::string& batches, const char* b, const char* h, const char* pos, int64_t heads,
                            int64_t seq, int64_t width) {
  if (!a.packed) {
    return absl::StrCat("((", b, " * ", heads, "LL + ", h, ") * ", seq, "LL + ", pos, ") * ", width, "LL");
  }
  const std::string row = a.seq_first ? absl::StrCat(pos, " * ", batches, " + ", b)
                                      : absl::StrCat(b, " * ", seq, "LL + ", pos);
  return absl::StrCat("((", row, ") * ", rows.width, "LL + ", rows.offset, "LL + ", h, " * ", width, "LL)");
}

// Attention's dims other than the batch axis are compiled in; the code of the batch count.
std::optional<std::string> AttentionBatches(const KernelSpec& spec, const runtime::AttentionShape& a,
                                            std::string* why_not) {
  const size_t batch_axis = a.seq_first ? 1 : 0;
  for (const Operand* o : {&spec.inputs[0], &spec.inputs[1], &spec.inputs[2], &spec.outputs[0]}) {
    for (size_t k = 0; k < o->dims.size(); ++k) {
      if (k != batch_axis && AnyScales(*o, k, k + 1)) {
        *why_not = "a sequence or head dim depends on the batch";
        return std::nullopt;
      }
    }
  }
  return LinDims(spec.inputs[0], spec.batch)[batch_axis].Code();
}

// An attention step resolved for code generation: its shape and the code of its batch count.
struct AttentionCode {
  runtime::AttentionShape shape;
  std::string batches;
  std::string At(const runtime::AttentionShape::Rows& rows, const char* b, const char* h, const char* pos,
                 int64_t heads, int64_t seq, int64_t width) const {
    return AttentionOffset(shape, rows, batches, b, h, pos, heads, seq, width);
  }
};

std::optional<AttentionCode> ResolveAttentionCode(const KernelSpec& spec, std::string* why_not) {
  std::optional<runtime::AttentionShape> a = runtime::ResolveAttention(spec, why_not);
  if (!a) return std::nullopt;
  std::optional<std::string> batches = AttentionBatches(spec, *a, why_not);
  if (!batches) return std::nullopt;
  return AttentionCode{*std::move(a), *std::move(batches)};
}

}  // namespace

std::optional<GeneratedKernel> MapKernel(const KernelSpec& spec, std::string* why_not) {
  if (spec.inputs.empty() || spec.outputs.size() != 1 || !spec.inputs[0].present || !spec.outputs[0].present) {
    *why_not = "not one input and one output";
    return std::nullopt;
  }
  const Operand &x = spec.inputs[0], &y = spec.outputs[0];
  const std::vector<Lin> xd = LinDims(x, spec.batch), yd = LinDims(y, spec.batch);
  std::optional<std::vector<Lin>> xs = Strides(xd);
  if (!xs) {
    *why_not = "the input has two batch-dependent dims";
    return std::nullopt;
  }
  View v;
  v.dims = yd;
  v.strides.assign(1, std::vector<Lin>(yd.size(), Lin{}));
  v.base.assign(1, Lin{});
  Epilogue act;
  std::string what = spec.op;
  if (spec.op == "Transpose") {
    std::optional<std::vector<int64_t>> perm = runtime::ResolvePerm(spec);
    if (!perm) {
      *why_not = "invalid permutation";
      return std::nullopt;
    }
    for (size_t k = 0; k < perm->size(); ++k) v.strides[0][k] = (*xs)[(*perm)[k]];
    what = absl::StrCat("transpose [", absl::StrJoin(*perm, ","), "]");
  } else if (spec.op == "Slice") {
    std::optional<std::vector<runtime::SliceAxisPlan>> axes = runtime::ResolveSliceAxes(spec);
    if (!axes) {
      *why_not = "slice parameters are not constant or do not match the dims";
      return std::nullopt;
    }
    for (size_t k = 0; k < axes->size(); ++k) {
      const runtime::SliceAxisPlan& a = (*axes)[k];
      if (!xd[k].fixed() && !(a.start == 0 && a.step == 1 && a.count == a.dim)) {
        *why_not = "a slice of a batch-dependent axis";
        return std::nullopt;
      }
      std::optional<Lin> st = Mul((*xs)[k], Lin{0, a.step}), off = Mul((*xs)[k], Lin{0, a.start});
      v.strides[0][k] = *st;
      v.base[0] = Add(v.base[0], *off);
    }
    what = "strided slice";
  } else if (spec.op == "Expand") {
    if (yd.size() < xd.size()) {
      *why_not = "expand to a lower rank";
      return std::nullopt;
    }
    const size_t lead = yd.size() - xd.size();
    for (size_t k = 0; k < xd.size(); ++k) {
      if (!(xd[k] == yd[lead + k]) && !(xd[k] == Lin{0, 1})) {
        *why_not = "dims do not broadcast";
        return std::nullopt;
      }
      v.strides[0][lead + k] = xd[k] == Lin{0, 1} ? Lin{} : (*xs)[k];
    }
    what = "expand";
  } else if (spec.op == "Cast" || spec.op == "Identity" || spec.op == "Reshape" || spec.op == "Flatten" ||
             spec.op == "Squeeze" || spec.op == "Unsqueeze" || UnaryActivation(spec)) {
    if (runtime::NumElements(x.dims) != runtime::NumElements(y.dims)) {
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
    // Same memory order: a flat walk over the elements.
    std::optional<std::vector<Lin>> ys = Strides(yd);
    if (!ys) {
      *why_not = "the output has two batch-dependent dims";
      return std::nullopt;
    }
    v.strides[0] = *ys;
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
  if (!Strides(yd)) {
    *why_not = "the output has two batch-dependent dims";
    return std::nullopt;
  }
  const View s = Simplify(v);
  const bool copy = x.dtype == y.dtype && act.act == Activation::kNone;
  const size_t es = DTypeSize(y.dtype);
  // 16-byte vectors: a pure copy whose innermost axis is contiguous and whose every offset and
  // extent is a multiple of the vector (the pointers' alignment is checked at run time).
  const int64_t vec = copy && es <= 16 ? static_cast<int64_t>(16 / es) : 1;
  bool vectorize = vec > 1 && s.strides[0].back() == Lin{0, 1} && s.dims.back().fixed() &&
                   s.dims.back().f % vec == 0 && s.base[0].DivisibleBy(vec);
  for (size_t k = 0; vectorize && k + 1 < s.dims.size(); ++k) vectorize = s.strides[0][k].DivisibleBy(vec);
  std::string body;
  const std::string xt = StorageType(x.dtype), yt = StorageType(y.dtype);
  if (vectorize) {
    View sv = s;
    sv.dims.back().f /= vec;
    for (Lin& st : sv.strides[0]) {
      if (!(st == Lin{0, 1})) st = Lin{st.pb / vec, st.f / vec};
    }
    sv.base[0] = Lin{sv.base[0].pb / vec, sv.base[0].f / vec};
    absl::StrAppend(&body, "  if (((unsigned long long)a.in[0] | (unsigned long long)a.out[0]) % 16 == 0) {\n",
                    "    const uint4* x = (const uint4*)a.in[0];\n    uint4* y = (uint4*)a.out[0];\n",
                    "    for (long long i = gc_first(); i < a.total; i += gc_stride()) {\n", OffsetCode(sv),
                    "    y[i] = x[off0];\n    }\n    return;\n  }\n",
                    "  const long long total = a.total * ", vec, "LL;  // unaligned pointers: one element per item\n");
  } else {
    absl::StrAppend(&body, "  const long long total = a.total;\n");
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
  GeneratedKernel k = Finish(stem, body, vectorize ? vec : 1,
                             absl::StrCat(what, ", ", DTypeName(y.dtype), vectorize ? ", 16-byte vectors" : "",
                                          ", dims ", DimsText(s)));
  k.inputs_read = 1;  // the data; Slice's, Reshape's and Expand's parameter inputs are compiled in
  return k;
}

// QuantizeFp8 (float -> e4m3 bytes of x * scale) and the per-tensor FakeQuantFp8 (float -> f16
// of RoundToStorage(x * scale, e4m3) / scale): one element per item, the same dims in and out.
std::optional<GeneratedKernel> Fp8Kernel(const KernelSpec& spec, std::string* why_not) {
  const bool quantize = spec.op == "QuantizeFp8";
  if ((!quantize && spec.op != "FakeQuantFp8") || spec.inputs.empty() || spec.outputs.size() != 1 || !spec.params) {
    *why_not = "not an fp8 quantization";
    return std::nullopt;
  }
  if (spec.inputs.size() > 1 && spec.inputs[1].present) {
    *why_not = "per-channel scales (constant weights fold at compile time)";
    return std::nullopt;
  }
  const Operand &x = spec.inputs[0], &y = spec.outputs[0];
  const float scale = spec.params->GetFloat("scale", 0.0f);
  if (!runtime::IsStorageFloat(x.dtype) || y.dtype != (quantize ? DType::kF8E4M3 : DType::kF16) || !(scale > 0) ||
      !std::isfinite(scale) || runtime::NumElements(x.dims) != runtime::NumElements(y.dims)) {
    *why_not = "not a float input with a positive scale";
    return std::nullopt;
  }
  const std::string xt = StorageType(x.dtype), yt = StorageType(y.dtype), s = FloatLiteral(scale);
  std::string body = absl::StrCat("  const ", xt, "* x = (const ", xt, "*)a.in[0];\n  ", yt, "* y = (", yt,
                                  "*)a.out[0];\n  for (long long i = gc_first(); i < a.total; i += gc_stride()) {\n",
                                  "    const unsigned char q = gc_f2e4m3(", Load(x.dtype, "x[i]"), " * ", s, ");\n");
  absl::StrAppend(&body, quantize ? "    y[i] = q;\n" : absl::StrCat("    y[i] = gc_f2h(gc_e4m32f(q) / ", s, ");\n"),
                  "  }\n");
  return Finish(absl::StrCat(quantize ? "quantize_e4m3_" : "fakequant_e4m3_", DTypeName(x.dtype)), body, 1,
                absl::StrFormat("%s, scale %.6g, %s -> %s", quantize ? "fp8 e4m3 quantization" : "fp8 e4m3 round trip",
                                scale, DTypeName(x.dtype), DTypeName(y.dtype)));
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
  if (!a.present || !b.present || !runtime::IsStorageFloat(a.dtype) || !runtime::IsStorageFloat(b.dtype) ||
      !runtime::IsStorageFloat(y.dtype)) {
    *why_not = "operands other than f32, f16 or bf16";
    return std::nullopt;
  }
  View v;
  v.dims = LinDims(y, spec.batch);
  v.base = {Lin{}, Lin{}};
  if (!Strides(v.dims)) {
    *why_not = "the output has two batch-dependent dims";
    return std::nullopt;
  }
  for (const Operand* o : {&a, &b}) {
    const std::vector<Lin> od = LinDims(*o, spec.batch);
    std::optional<std::vector<Lin>> os = Strides(od);
    if (od.size() > v.dims.size() || !os) {
      *why_not = "an input of higher rank than the output, or with two batch-dependent dims";
      return std::nullopt;
    }
    const size_t lead = v.dims.size() - od.size();
    std::vector<Lin> st(v.dims.size(), Lin{});
    for (size_t k = 0; k < od.size(); ++k) {
      if (!(od[k] == v.dims[lead + k]) && !(od[k] == Lin{0, 1})) {
        *why_not = "dims do not broadcast";
        return std::nullopt;
      }
      st[lead + k] = od[k] == Lin{0, 1} ? Lin{} : (*os)[k];
    }
    v.strides.push_back(st);
  }
  const View s = Simplify(v);
  const std::string at = StorageType(a.dtype), bt = StorageType(b.dtype), yt = StorageType(y.dtype);
  std::string body = absl::StrCat("  const ", at, "* x0 = (const ", at, "*)a.in[0];\n  const ", bt, "* x1 = (const ", bt,
                                  "*)a.in[1];\n  ", yt, "* y = (", yt, "*)a.out[0];\n",
                                  "  for (long long i = gc_first(); i < a.total; i += gc_stride()) {\n", OffsetCode(s),
                                  "    const float v = ", Load(a.dtype, "x0[off0]"), " ", sym, " ",
                                  Load(b.dtype, "x1[off1]"), ";\n    y[i] = ", Store(y.dtype, "v"), ";\n  }\n");
  std::string lower = spec.op;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return Finish(absl::StrCat(lower, "_", DTypeName(y.dtype)), body, 1,
                absl::StrCat(spec.op, ", ", DTypeName(y.dtype), ", dims ", DimsText(s)));
}

std::optional<GeneratedKernel> PoolKernel(const KernelSpec& spec, std::string* why_not) {
  std::optional<runtime::PoolGeometry> p = runtime::ResolvePool(spec);
  if (!p) {
    *why_not = "pooling parameters outside max/average 2-D pooling";
    return std::nullopt;
  }
  // N is the loop's quotient, never compiled in: only it may depend on the batch.
  if (AnyScales(spec.inputs[0], 1, 4) || AnyScales(spec.outputs[0], 1, 4)) {
    *why_not = "a batch-dependent dim other than N";
    return std::nullopt;
  }
  const std::string xt = StorageType(p->x_type), yt = StorageType(p->y_type);
  std::string body = absl::StrCat("  const ", xt, "* x = (const ", xt, "*)a.in[0];\n  ", yt, "* y = (", yt,
                                  "*)a.out[0];\n",
                                  "  for (long long i = gc_first(); i < a.total; i += gc_stride()) {\n");
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
                body, 1,
                absl::StrCat(p->max ? "max" : "average", " pool ", p->kh, "x", p->kw, " stride ", p->sh, "x", p->sw,
                             p->nhwc ? " NHWC " : " NCHW ", DTypeName(p->y_type)));
}

std::optional<GeneratedKernel> ReduceMeanKernel(const KernelSpec& spec, std::string* why_not) {
  std::optional<runtime::ReduceGeometry> p = runtime::ResolveReduce(spec);
  if (!p) {
    *why_not = "reduced axes are not one contiguous block";
    return std::nullopt;
  }
  if (!p->mean) {
    *why_not = "a sum (this kernel divides by the reduced count)";
    return std::nullopt;
  }
  // The reduced and inner extents are compiled in: they must not depend on the batch. (The kept
  // outer axes, where the batch is, are the loop's quotient.)
  const Operand& x = spec.inputs[0];
  int64_t inner_and_reduced = 1;
  size_t first_fixed = x.dims.size();
  while (first_fixed > 0 && inner_and_reduced < p->reduced * p->inner) inner_and_reduced *= x.dims[--first_fixed];
  if (inner_and_reduced != p->reduced * p->inner || AnyScales(x, first_fixed, x.dims.size())) {
    *why_not = "a reduced or inner axis depends on the batch";
    return std::nullopt;
  }
  const std::string xt = StorageType(p->x_type), yt = StorageType(p->y_type);
  // Mean as sum * (1/n): the reference divides; the difference is within one rounding.
  std::string body = absl::StrCat(
      "  const ", xt, "* x = (const ", xt, "*)a.in[0];\n  ", yt, "* y = (", yt, "*)a.out[0];\n",
      "  for (long long i = gc_first(); i < a.total; i += gc_stride()) {\n", "    const long long o = i / ", p->inner,
      "LL, j = i % ", p->inner, "LL;\n", "    const ", xt, "* row = x + o * ", p->reduced * p->inner,
      "LL + j;\n    float acc = 0.0f;\n    for (long long r = 0; r < ", p->reduced, "LL; ++r) acc += ",
      Load(p->x_type, absl::StrCat("row[r * ", p->inner, "LL]")), ";\n    y[i] = ",
      Store(p->y_type, absl::StrCat("acc * ", FloatLiteral(1.0f / static_cast<float>(p->reduced)))), ";\n  }\n");
  return Finish(absl::StrCat("reduce_mean_", DTypeName(p->y_type)), body, 1,
                absl::StrCat("mean over ", p->reduced, " of [outer, ", p->reduced, ", ", p->inner, "], ",
                             DTypeName(p->y_type)));
}

namespace {

// values[k] for `index` in 0..n-1 as a chain of selects (a local array indexed at run time would
// live in local memory).
std::string SelectChain(const std::string& index, const std::vector<std::string>& values) {
  if (values.empty()) return "0LL";
  std::string code = values.back();
  for (size_t k = values.size() - 1; k-- > 0;) code = absl::StrCat("(", index, " == ", k, " ? ", values[k], " : ", code, ")");
  return code;
}

}  // namespace

std::optional<GeneratedKernel> ShapeKernel(const KernelSpec& spec, std::string* why_not) {
  if (spec.inputs.size() != 1 || spec.outputs.size() != 1 || spec.outputs[0].dtype != DType::kI64) {
    *why_not = "not a Shape with an i64 output";
    return std::nullopt;
  }
  const std::vector<Lin> xd = LinDims(spec.inputs[0], spec.batch);
  const int64_t r = static_cast<int64_t>(xd.size());
  int64_t start = spec.params ? spec.params->GetInt("start", 0) : 0;
  int64_t end = spec.params ? spec.params->GetInt("end", r) : r;
  start = std::clamp<int64_t>(start < 0 ? start + r : start, 0, r);
  end = std::clamp<int64_t>(end < 0 ? end + r : end, 0, r);
  const int64_t n = std::max<int64_t>(end - start, 0);
  if (spec.outputs[0].dims != std::vector<int64_t>{n}) {
    *why_not = "output dims do not match the shape's length";
    return std::nullopt;
  }
  std::vector<std::string> dims;
  for (int64_t k = start; k < end; ++k) dims.push_back(xd[k].Code());
  const std::string body = absl::StrCat("  long long* y = (long long*)a.out[0];\n",
                                        "  for (long long i = gc_first(); i < a.total; i += gc_stride()) y[i] = ",
                                        SelectChain("i", dims), ";\n");
  return Finish("shape", body, 1, absl::StrCat("shape of a rank-", r, " tensor, dims ", start, "..", end));
}

std::optional<GeneratedKernel> GatherKernel(const KernelSpec& spec, std::string* why_not) {
  if (spec.inputs.size() != 2 || spec.outputs.size() != 1 || !spec.params) {
    *why_not = "not a Gather";
    return std::nullopt;
  }
  const Operand &x = spec.inputs[0], &idx = spec.inputs[1], &y = spec.outputs[0];
  std::optional<std::vector<int64_t>> indices = runtime::ConstantInts(idx);
  if (!indices || indices->empty() || indices->size() > 64 || x.dtype != y.dtype || x.dims.empty()) {
    *why_not = "indices not a constant list of 1..64 values";
    return std::nullopt;
  }
  const int64_t r = static_cast<int64_t>(x.dims.size());
  int64_t axis = spec.params->GetInt("axis", 0);
  if (axis < -r || axis >= r) {
    *why_not = "axis out of range";
    return std::nullopt;
  }
  if (axis < 0) axis += r;
  std::vector<int64_t> want(x.dims.begin(), x.dims.begin() + axis);
  want.insert(want.end(), idx.dims.begin(), idx.dims.end());
  want.insert(want.end(), x.dims.begin() + axis + 1, x.dims.end());
  // The gathered axis and everything after it are compiled in; only the outer axes may scale.
  if (want != y.dims || AnyScales(x, static_cast<size_t>(axis), x.dims.size())) {
    *why_not = "dims do not match, or the gathered or an inner axis depends on the batch";
    return std::nullopt;
  }
  const int64_t dim = x.dims[axis];
  int64_t inner = 1;
  for (int64_t k = axis + 1; k < r; ++k) inner *= x.dims[k];
  std::vector<std::string> values;
  for (int64_t v : *indices) {
    const int64_t n = v < 0 ? v + dim : v;
    if (n < 0 || n >= dim) {
      *why_not = absl::StrCat("index ", v, " is outside the axis of ", dim);
      return std::nullopt;
    }
    values.push_back(absl::StrCat(n, "LL"));
  }
  const int64_t count = static_cast<int64_t>(values.size());
  const std::string t = StorageType(x.dtype);
  const std::string body = absl::StrCat(
      "  const ", t, "* x = (const ", t, "*)a.in[0];\n  ", t, "* y = (", t, "*)a.out[0];\n",
      "  for (long long i = gc_first(); i < a.total; i += gc_stride()) {\n", "    const long long j = i % ", inner,
      "LL, q = (i / ", inner, "LL) % ", count, "LL, o = i / ", inner * count, "LL;\n", "    y[i] = x[(o * ", dim,
      "LL + ", SelectChain("q", values), ") * ", inner, "LL + j];\n  }\n");
  return Finish(absl::StrCat("gather_", DTypeName(x.dtype)), body, 1,
                absl::StrCat("gather ", count, " of ", dim, " rows of ", inner, " ", DTypeName(x.dtype)));
}

std::optional<GeneratedKernel> ConcatKernel(const KernelSpec& spec, std::string* why_not) {
  if (spec.inputs.empty() || spec.inputs.size() > kMaxGeneratedInputs || spec.outputs.size() != 1 || !spec.params) {
    *why_not = "not a Concat of 1..4 inputs";
    return std::nullopt;
  }
  const Operand& y = spec.outputs[0];
  const int64_t r = static_cast<int64_t>(y.dims.size());
  int64_t axis = spec.params->GetInt("axis", 0);
  if (r == 0 || axis < -r || axis >= r) {
    *why_not = "axis out of range";
    return std::nullopt;
  }
  if (axis < 0) axis += r;
  // The concatenated axis and the inner ones are compiled in; outer axes may scale.
  if (AnyScales(y, static_cast<size_t>(axis), y.dims.size())) {
    *why_not = "the concatenated or an inner axis depends on the batch";
    return std::nullopt;
  }
  int64_t inner = 1;
  for (int64_t k = axis + 1; k < r; ++k) inner *= y.dims[k];
  std::vector<int64_t> sizes;
  for (const Operand& x : spec.inputs) {
    if (!x.present || x.dtype != y.dtype || x.dims.size() != y.dims.size() ||
        AnyScales(x, static_cast<size_t>(axis), x.dims.size())) {
      *why_not = "inputs of another dtype or rank, or batch-dependent along the axis";
      return std::nullopt;
    }
    for (int64_t k = 0; k < r; ++k) {
      if (k != axis && x.dims[k] != y.dims[k]) {
        *why_not = "inputs differ outside the axis";
        return std::nullopt;
      }
    }
    sizes.push_back(x.dims[axis]);
  }
  int64_t total_axis = 0;
  for (int64_t a : sizes) total_axis += a;
  if (total_axis != y.dims[axis]) {
    *why_not = "the inputs' axis sizes do not add up";
    return std::nullopt;
  }
  const std::string t = StorageType(y.dtype);
  std::string body = absl::StrCat("  ", t, "* y = (", t, "*)a.out[0];\n",
                                  "  for (long long i = gc_first(); i < a.total; i += gc_stride()) {\n",
                                  "    const long long j = i % ", inner, "LL, c = (i / ", inner, "LL) % ", total_axis,
                                  "LL, o = i / ", inner * total_axis, "LL;\n");
  int64_t begin = 0;
  for (size_t k = 0; k < sizes.size(); ++k) {
    absl::StrAppend(&body, k == 0 ? "    if" : "    else if", " (c < ", begin + sizes[k], "LL) y[i] = ((const ", t,
                    "*)a.in[", k, "])[(o * ", sizes[k], "LL + (c - ", begin, "LL)) * ", inner, "LL + j];\n");
    begin += sizes[k];
  }
  absl::StrAppend(&body, "  }\n");
  return Finish(absl::StrCat("concat", sizes.size(), "_", DTypeName(y.dtype)), body, 1,
                absl::StrCat("concat of ", sizes.size(), " along an axis of ", total_axis, ", rows of ", inner, " ",
                             DTypeName(y.dtype)));
}

std::optional<GeneratedKernel> LayerNormKernel(const KernelSpec& spec, std::string* why_not) {
  std::optional<runtime::LayerNormShape> p = runtime::ResolveLayerNorm(spec, /*fp8=*/true);
  if (!p) {
    *why_not = "not a row-wise layer normalization with per-row Scale/B";
    return std::nullopt;
  }
  const Operand& x = spec.inputs[0];
  std::optional<int64_t> axis = runtime::NormalizedAxis(spec.params->GetInt("axis", -1), x.dims.size());
  if (!axis || AnyScales(x, static_cast<size_t>(*axis), x.dims.size())) {
    *why_not = "the normalized dims depend on the batch";
    return std::nullopt;
  }
  const std::string xt = StorageType(p->x_type), st = StorageType(p->s_type), bt = StorageType(p->b_type),
                    yt = StorageType(p->y_type);
  const int64_t len = p->len;
  const bool fp8 = p->y_type == DType::kF8E4M3;  // y leaves as the e4m3 bytes of y * fp8_scale
  const std::string to_fp8 = fp8 ? absl::StrCat(" * ", FloatLiteral(p->fp8_scale)) : "";
  // Rows that split into 16-byte chunks, up to 8 per lane: the row is read once with vector loads
  // into registers, the mean and the variance (two passes, as the reference) come from there, and
  // the output leaves in vector stores.
  const int64_t per_chunk = 16 / static_cast<int64_t>(DTypeSize(p->x_type));
  if ((DTypeSize(p->x_type) == DTypeSize(p->y_type) || fp8) &&
      (p->x_type == DType::kF32 || p->x_type == DType::kF16 || p->x_type == DType::kBF16) &&
      len % (32 * per_chunk) == 0 && len / (32 * per_chunk) <= 8) {
    const int64_t chunks = len / (32 * per_chunk), words = per_chunk * static_cast<int64_t>(DTypeSize(p->x_type)) / 4;
    const bool half = DTypeSize(p->x_type) == 2;
    auto unpack = [&](const char* u, const char* dst) {
      std::string code;
      const char* parts[4] = {"x", "y", "z", "w"};
      for (int64_t w = 0; w < words; ++w) {
        if (half) {
          absl::StrAppend(&code, "        ", dst, "[", 2 * w, "] = ", Load(p->x_type, absl::StrCat("(unsigned short)(", u, ".", parts[w], " & 0xffffu)")), ";\n",
                          "        ", dst, "[", 2 * w + 1, "] = ", Load(p->x_type, absl::StrCat("(unsigned short)(", u, ".", parts[w], " >> 16)")), ";\n");
        } else {
          absl::StrAppend(&code, "        ", dst, "[", w, "] = __uint_as_float(", u, ".", parts[w], ");\n");
        }
      }
      return code;
    };
    auto pack = [&](const char* src, const char* u) {
      std::string code;
      const char* parts[4] = {"x", "y", "z", "w"};
      if (fp8) {  // per_chunk e4m3 bytes: 4 per 32-bit word
        for (int64_t w = 0; w < per_chunk / 4; ++w) {
          absl::StrAppend(&code, "        ", u, ".", parts[w], " = ");
          for (int64_t b = 0; b < 4; ++b) {
            absl::StrAppend(&code, b ? " | " : "", "((unsigned int)gc_f2e4m3(", src, "[", 4 * w + b, "]", to_fp8,
                            ") << ", 8 * b, ")");
          }
          absl::StrAppend(&code, ";\n");
        }
        return code;
      }
      for (int64_t w = 0; w < words; ++w) {
        if (half) {
          absl::StrAppend(&code, "        ", u, ".", parts[w], " = (unsigned int)", Store(p->y_type, absl::StrCat(src, "[", 2 * w, "]")),
                          " | ((unsigned int)", Store(p->y_type, absl::StrCat(src, "[", 2 * w + 1, "]")), " << 16);\n");
        } else {
          absl::StrAppend(&code, "        ", u, ".", parts[w], " = __float_as_uint(", src, "[", w, "]);\n");
        }
      }
      return code;
    };
    std::string body = absl::StrCat(
        "  const uint4* x = (const uint4*)a.in[0];\n  const ", st, "* g = (const ", st, "*)a.in[1];\n");
    if (p->has_bias) absl::StrAppend(&body, "  const ", bt, "* b = (const ", bt, "*)a.in[2];\n");
    // The output chunk: 16 bytes, or per_chunk e4m3 bytes (8: uint2, 4: one word).
    const std::string yv = !fp8 ? "uint4" : per_chunk == 8 ? "uint2" : "uint1";
    absl::StrAppend(
        &body, "  ", yv, "* y = (", yv, "*)a.out[0];\n",
        "  for (long long row = gc_warp_first(); row < a.total; row += gc_warp_stride()) {\n",
        "    const uint4* xr = x + row * ", len / per_chunk, "LL;\n    ", yv, "* yr = y + row * ", len / per_chunk, "LL;\n",
        "    float v[", chunks, "][", per_chunk, "];\n", "    float s = 0.0f;\n",
        "    for (int c = 0; c < ", chunks, "; ++c) {\n", "      const uint4 u = xr[c * GC_WARP + gc_lane()];\n",
        "      {\n        float* e = v[c];\n", unpack("u", "e"), "      }\n",
        "      for (int k = 0; k < ", per_chunk, "; ++k) s += v[c][k];\n    }\n",
        "    const float mean = gc_warp_sum(s) / ", FloatLiteral(static_cast<float>(len)), ";\n",
        "    float q = 0.0f;\n", "    for (int c = 0; c < ", chunks, "; ++c)\n",
        "      for (int k = 0; k < ", per_chunk, "; ++k) { const float d = v[c][k] - mean; q += d * d; }\n",
        "    const float inv = (float)(1.0 / sqrt((double)gc_warp_sum(q) / ", len, ".0 + (double)",
        FloatLiteral(p->epsilon), "));\n", "    for (int c = 0; c < ", chunks, "; ++c) {\n",
        "      const long long j0 = (long long)(c * GC_WARP + gc_lane()) * ", per_chunk, "LL;\n",
        "      float o[", per_chunk, "];\n", "      for (int k = 0; k < ", per_chunk, "; ++k) o[k] = (v[c][k] - mean) * inv * ",
        Load(p->s_type, "g[j0 + k]"), p->has_bias ? absl::StrCat(" + ", Load(p->b_type, "b[j0 + k]")) : "", ";\n",
        "      ", yv, " u;\n      {\n", pack("o", "u"), "      }\n", "      yr[c * GC_WARP + gc_lane()] = u;\n    }\n  }\n");
    GeneratedKernel k = Finish(absl::StrCat("layernorm_v", per_chunk, "_", len, "_", DTypeName(p->y_type)), body, len,
                               absl::StrCat("layer norm, one warp per row of ", len, " held in registers, 16-byte loads",
                                            fp8 ? "" : " and stores", ", fp32 statistics, ", DTypeName(p->y_type),
                                            fp8 ? absl::StrFormat(" (e4m3 bytes of y x %.6g, %d-byte stores)",
                                                                  p->fp8_scale, per_chunk)
                                                : ""),
                               256, 4);
    k.threads_per_item = 32;
    k.alignment = 16;
    return k;
  }
  // Otherwise one warp per row: lanes stride the row, fp32 sums reduced by shuffles, the variance
  // from a second pass over the row (as the reference), 1/sqrt in double as the cpu kernel does.
  std::string body = absl::StrCat(
      "  const ", xt, "* x = (const ", xt, "*)a.in[0];\n  const ", st, "* g = (const ", st, "*)a.in[1];\n");
  if (p->has_bias) absl::StrAppend(&body, "  const ", bt, "* b = (const ", bt, "*)a.in[2];\n");
  absl::StrAppend(
      &body, "  ", yt, "* y = (", yt, "*)a.out[0];\n",
      "  for (long long row = gc_warp_first(); row < a.total; row += gc_warp_stride()) {\n", "    const ", xt,
      "* xr = x + row * ", len, "LL;\n    ", yt, "* yr = y + row * ", len, "LL;\n",
      "    float s = 0.0f;\n    for (long long j = gc_lane(); j < ", len, "LL; j += GC_WARP) s += ",
      Load(p->x_type, "xr[j]"), ";\n", "    const float mean = gc_warp_sum(s) / ", FloatLiteral(static_cast<float>(len)),
      ";\n", "    float q = 0.0f;\n    for (long long j = gc_lane(); j < ", len,
      "LL; j += GC_WARP) { const float d = ", Load(p->x_type, "xr[j]"), " - mean; q += d * d; }\n",
      "    const float inv = (float)(1.0 / sqrt((double)gc_warp_sum(q) / ", len, ".0 + (double)",
      FloatLiteral(p->epsilon), "));\n", "    for (long long j = gc_lane(); j < ", len, "LL; j += GC_WARP) yr[j] = ",
      Store(p->y_type, absl::StrCat("(", "(", Load(p->x_type, "xr[j]"), " - mean) * inv * ", Load(p->s_type, "g[j]"),
                                    p->has_bias ? absl::StrCat(" + ", Load(p->b_type, "b[j]")) : "", ")", to_fp8)),
      ";\n  }\n");
  GeneratedKernel k = Finish(absl::StrCat("layernorm_", len, "_", DTypeName(p->y_type)), body, len,
                             absl::StrCat("layer norm, one warp per row of ", len, ", fp32 statistics, ",
                                          DTypeName(p->y_type),
                                          fp8 ? absl::StrFormat(" (e4m3 bytes of y x %.6g)", p->fp8_scale) : ""));
  k.threads_per_item = 32;
  return k;
}

std::optional<GeneratedKernel> ExactAttentionKernel(const KernelSpec& spec, std::string* why_not) {
  std::optional<AttentionCode> code = ResolveAttentionCode(spec, why_not);
  if (!code) return std::nullopt;
  const runtime::AttentionShape* a = &code->shape;
  const int64_t hq = a->q_heads, hk = a->kv_heads, sq = a->q_seq, sk = a->kv_seq, d = a->head, dv = a->v_head;
  const int64_t group = hq / hk;
  auto at = [&](const runtime::AttentionShape::Rows& rows, const char* b, const char* h, const char* pos,
                int64_t heads, int64_t seq, int64_t width) { return code->At(rows, b, h, pos, heads, seq, width); };
  const std::string qt = StorageType(a->q_type), kt = StorageType(a->k_type), vt = StorageType(a->v_type),
                    yt = StorageType(a->y_type);
  // One warp per query row: the lanes split the head dims of each dot product (reduced by
  // shuffles) and the value dims of the output; online softmax in fp32 with expf, no score matrix.
  std::string body = absl::StrCat(
      "  const ", qt, "* q = (const ", qt, "*)a.in[0];\n  const ", kt, "* k = (const ", kt, "*)a.in[1];\n  const ", vt,
      "* v = (const ", vt, "*)a.in[2];\n  ", yt, "* y = (", yt, "*)a.out[0];\n",
      "  const int NV = (", dv, " + GC_WARP - 1) / GC_WARP;\n",
      "  for (long long row = gc_warp_first(); row < a.total; row += gc_warp_stride()) {\n");
  if (a->packed) {
    absl::StrAppend(&body, "    const long long h = row % ", hq, "LL, s = (row / ", hq, "LL) % ", sq, "LL, b = row / ",
                    hq * sq, "LL;\n");
  } else {
    absl::StrAppend(&body, "    const long long s = row % ", sq, "LL, h = (row / ", sq, "LL) % ", hq, "LL, b = row / ",
                    hq * sq, "LL;\n");
  }
  absl::StrAppend(
      &body, "    const long long hk = h / ", group, "LL;\n", "    const ", qt, "* qr = q + ", at(a->q, "b", "h", "s", hq, sq, d),
      ";\n", "    float m = -__int_as_float(0x7f800000), l = 0.0f;\n", "    float acc[(", dv, " + GC_WARP - 1) / GC_WARP];\n",
      "    for (int t = 0; t < NV; ++t) acc[t] = 0.0f;\n", "    for (long long j = 0; j < ", sk, "LL; ++j) {\n",
      "      const ", kt, "* kr = k + ", at(a->k, "b", "hk", "j", hk, sk, d), ";\n", "      float dot = 0.0f;\n",
      "      for (long long e = gc_lane(); e < ", d, "LL; e += GC_WARP) dot += ", Load(a->q_type, "qr[e]"), " * ",
      Load(a->k_type, "kr[e]"), ";\n", "      const float score = gc_warp_sum(dot) * ", FloatLiteral(a->scale), ";\n",
      "      const float mn = score > m ? score : m;\n", "      const float corr = expf(m - mn), p = expf(score - mn);\n",
      "      l = l * corr + p;\n", "      const ", vt, "* vr = v + ", at(a->v, "b", "hk", "j", hk, sk, dv), ";\n",
      "      for (int t = 0; t < NV; ++t) {\n", "        const long long e = gc_lane() + t * GC_WARP;\n",
      "        acc[t] = acc[t] * corr + (e < ", dv, "LL ? p * ", Load(a->v_type, "vr[e]"), " : 0.0f);\n      }\n",
      "      m = mn;\n    }\n", "    ", yt, "* yr = y + ", at(a->y, "b", "h", "s", hq, sq, dv), ";\n", "    for (int t = 0; t < NV; ++t) {\n",
      "      const long long e = gc_lane() + t * GC_WARP;\n", "      if (e < ", dv, "LL) yr[e] = ",
      Store(a->y_type, "acc[t] / l"), ";\n    }\n  }\n");
  GeneratedKernel k = Finish(absl::StrCat("attention_exact_", DTypeName(a->y_type)), body, dv,
                             absl::StrCat("exact attention (no Tensor Cores): one warp per query, ", hq, " heads (",
                                          hk, " K/V heads), ", sq, "x", sk, " positions, head ", d, "/", dv,
                                          ", online softmax in fp32, ", DTypeName(a->y_type)),
                             256, 4);
  k.threads_per_item = 32;
  return k;
}

std::optional<GeneratedKernel> FlashAttentionKernel(const KernelSpec& spec, std::string* why_not) {
  std::optional<AttentionCode> code = ResolveAttentionCode(spec, why_not);
  if (!code) return std::nullopt;
  const runtime::AttentionShape* a = &code->shape;
  const DType dt = a->y_type;
  if ((dt != DType::kF16 && dt != DType::kBF16) || a->q_type != dt || a->k_type != dt || a->v_type != dt) {
    *why_not = "Q, K, V and Y are not all fp16 or all bf16";
    return std::nullopt;
  }
  const int64_t hq = a->q_heads, hk = a->kv_heads, sq = a->q_seq, sk = a->kv_seq, d = a->head, dv = a->v_head;
  if (d % 16 != 0 || dv % 16 != 0 || d > 128 || dv > 128) {
    *why_not = absl::StrCat("head sizes ", d, "/", dv, " are not multiples of 16 up to 128");
    return std::nullopt;
  }
  // Pairs of halves are read and written as 32-bit words: rows and head columns must be even.
  for (const runtime::AttentionShape::Rows* r : {&a->q, &a->k, &a->v, &a->y}) {
    if (a->packed && (r->width % 2 != 0 || r->offset % 2 != 0)) {
      *why_not = "a row width or head column offset is odd (32-bit pair loads)";
      return std::nullopt;
    }
  }
  // The loops over register arrays (fragments, accumulators) carry `#pragma unroll`: rolled, the
  // arrays would live in local memory.
  // A block of 4 warps takes 64 queries of one (batch, head); each warp owns 16 query rows as
  // m16n8k16 A fragments for the whole pass. K/V tiles of `kt` keys go through shared memory (V
  // transposed, so that both B operands are read as 32-bit pairs; rows padded by 8 elements so
  // the fragment reads hit 32 distinct banks). Scores stay in registers: S = Q*K^T on Tensor
  // Cores, an fp32 online softmax in the log2 domain (row max and sum across each lane quad),
  // P rounded to the storage type as the A fragments of O += P*V (the m16n8 accumulator layout
  // of two adjacent key tiles is the m16n8k16 A layout), O and the row sums in fp32.
  constexpr int64_t kRows = 64, kThreads = 128;
  const int64_t kt = d <= 64 && dv <= 64 ? 64 : 32;
  const int64_t ks_stride = d + 8, vs_stride = kt + 8, q_tiles = (sq + kRows - 1) / kRows;
  const std::string ty = dt == DType::kF16 ? "f16" : "bf16";
  const std::string to_half = dt == DType::kF16 ? "gc_f2h" : "gc_f2b";
  auto at = [&](const runtime::AttentionShape::Rows& rows, const char* b, const char* h, const char* pos,
                int64_t heads, int64_t seq, int64_t width) { return code->At(rows, b, h, pos, heads, seq, width); };
  std::string body = absl::StrCat(
      "  const unsigned short* q = (const unsigned short*)a.in[0];\n",
      "  const unsigned short* k = (const unsigned short*)a.in[1];\n",
      "  const unsigned short* v = (const unsigned short*)a.in[2];\n", "  unsigned short* y = (unsigned short*)a.out[0];\n",
      "  __shared__ __align__(16) unsigned short ks[", kt * ks_stride, "];\n",
      "  __shared__ __align__(16) unsigned short vs[", dv * vs_stride, "];\n",
      "  const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;\n", "  const float ninf = -__int_as_float(0x7f800000);\n",
      "  for (long long item = blockIdx.x; item < a.total; item += gridDim.x) {\n", "    const long long qt = item % ",
      q_tiles, "LL, h = (item / ", q_tiles, "LL) % ", hq, "LL, b = item / ", q_tiles * hq, "LL, hk = h / ", hq / hk,
      "LL;\n", "    const long long r0 = qt * ", kRows, "LL + (threadIdx.x >> 5) * 16 + g, r1 = r0 + 8;\n",
      "    unsigned int qa[", d / 16, "][4];\n", "    {\n", "      const unsigned short* q0 = q + ", at(a->q, "b", "h", "r0", hq, sq, d),
      ";\n", "      const unsigned short* q1 = q + ", at(a->q, "b", "h", "r1", hq, sq, d), ";\n",
      "#pragma unroll\n", "      for (int kk = 0; kk < ", d / 16, "; ++kk) {\n", "        const int c = kk * 16 + 2 * t;\n",
      "        qa[kk][0] = r0 < ", sq, "LL ? gc_ld2(q0 + c) : 0u;\n", "        qa[kk][1] = r1 < ", sq,
      "LL ? gc_ld2(q1 + c) : 0u;\n", "        qa[kk][2] = r0 < ", sq, "LL ? gc_ld2(q0 + c + 8) : 0u;\n",
      "        qa[kk][3] = r1 < ", sq, "LL ? gc_ld2(q1 + c + 8) : 0u;\n", "      }\n    }\n",
      "    float o[", dv / 8, "][4];\n", "#pragma unroll\n", "    for (int n = 0; n < ", dv / 8, "; ++n) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.0f;\n",
      "    float m0 = ninf, m1 = ninf, l0 = 0.0f, l1 = 0.0f;\n", "    for (long long k0 = 0; k0 < ", sk, "LL; k0 += ", kt,
      "LL) {\n", "      __syncthreads();\n", "      for (int i = threadIdx.x; i < ", kt * d / 2, "; i += ", kThreads, ") {\n",
      "        const int j = i / ", d / 2, ", e = (i % ", d / 2, ") * 2;\n", "        const long long key = k0 + j;\n",
      "        gc_st2(ks + j * ", ks_stride, " + e, key < ", sk, "LL ? gc_ld2(k + ", at(a->k, "b", "hk", "key", hk, sk, d),
      " + e) : 0u);\n", "      }\n", "      for (int i = threadIdx.x; i < ", kt * dv, "; i += ", kThreads, ") {\n",
      "        const int j = i / ", dv, ", e = i % ", dv, ";\n", "        const long long key = k0 + j;\n",
      "        vs[e * ", vs_stride, " + j] = key < ", sk, "LL ? v[", at(a->v, "b", "hk", "key", hk, sk, dv),
      " + e] : (unsigned short)0;\n", "      }\n", "      __syncthreads();\n", "      float s[", kt / 8, "][4];\n",
      "#pragma unroll\n", "      for (int n = 0; n < ", kt / 8, "; ++n) {\n", "        s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.0f;\n",
      "#pragma unroll\n", "        for (int kk = 0; kk < ", d / 16, "; ++kk) {\n", "          const unsigned short* kr = ks + (n * 8 + g) * ",
      ks_stride, " + kk * 16 + 2 * t;\n", "          gc_mma_", ty, "(s[n], qa[kk], gc_ld2(kr), gc_ld2(kr + 8));\n",
      "        }\n      }\n", "      float x0 = m0, x1 = m1;\n", "#pragma unroll\n", "      for (int n = 0; n < ", kt / 8, "; ++n) {\n",
      "#pragma unroll\n", "        for (int c = 0; c < 2; ++c) {\n", "          const bool in = k0 + n * 8 + 2 * t + c < ", sk, "LL;\n",
      "          s[n][c] = in ? s[n][c] * ", FloatLiteral(static_cast<float>(a->scale * 1.4426950408889634)),
      " : ninf;\n", "          s[n][2 + c] = in ? s[n][2 + c] * ",
      FloatLiteral(static_cast<float>(a->scale * 1.4426950408889634)), " : ninf;\n",
      "          x0 = fmaxf(x0, s[n][c]);\n          x1 = fmaxf(x1, s[n][2 + c]);\n", "        }\n      }\n",
      "      x0 = fmaxf(x0, gc_shfl_xor(x0, 1));\n      x0 = fmaxf(x0, gc_shfl_xor(x0, 2));\n",
      "      x1 = fmaxf(x1, gc_shfl_xor(x1, 1));\n      x1 = fmaxf(x1, gc_shfl_xor(x1, 2));\n",
      "      const float c0 = exp2f(m0 - x0), c1 = exp2f(m1 - x1);\n", "      m0 = x0;\n      m1 = x1;\n",
      "      l0 *= c0;\n      l1 *= c1;\n", "#pragma unroll\n", "      for (int n = 0; n < ", dv / 8, "; ++n) {\n",
      "        o[n][0] *= c0;\n        o[n][1] *= c0;\n        o[n][2] *= c1;\n        o[n][3] *= c1;\n      }\n",
      "#pragma unroll\n", "      for (int n = 0; n < ", kt / 8, "; ++n) {\n", "        s[n][0] = exp2f(s[n][0] - m0);\n",
      "        s[n][1] = exp2f(s[n][1] - m0);\n", "        s[n][2] = exp2f(s[n][2] - m1);\n",
      "        s[n][3] = exp2f(s[n][3] - m1);\n", "        l0 += s[n][0] + s[n][1];\n        l1 += s[n][2] + s[n][3];\n",
      "      }\n", "#pragma unroll\n", "      for (int kk = 0; kk < ", kt / 16, "; ++kk) {\n", "        unsigned int pa[4];\n");
  for (int r = 0; r < 4; ++r) {
    // pa[0]: row g, keys 2t..2t+1 of tile 2kk; pa[1]: row g+8; pa[2], pa[3]: the same of tile 2kk+1.
    const std::string tile = r < 2 ? "2 * kk" : "2 * kk + 1";
    const int c = (r % 2) * 2;
    absl::StrAppend(&body, "        pa[", r, "] = (unsigned int)", to_half, "(s[", tile, "][", c, "]) | ((unsigned int)",
                    to_half, "(s[", tile, "][", c + 1, "]) << 16);\n");
  }
  absl::StrAppend(
      &body, "#pragma unroll\n", "        for (int n = 0; n < ", dv / 8, "; ++n) {\n", "          const unsigned short* vr = vs + (n * 8 + g) * ",
      vs_stride, " + kk * 16 + 2 * t;\n", "          gc_mma_", ty, "(o[n], pa, gc_ld2(vr), gc_ld2(vr + 8));\n",
      "        }\n      }\n    }\n", "    l0 += gc_shfl_xor(l0, 1);\n    l0 += gc_shfl_xor(l0, 2);\n",
      "    l1 += gc_shfl_xor(l1, 1);\n    l1 += gc_shfl_xor(l1, 2);\n", "    if (r0 < ", sq, "LL) {\n",
      "      unsigned short* yr = y + ", at(a->y, "b", "h", "r0", hq, sq, dv), ";\n", "#pragma unroll\n", "      for (int n = 0; n < ", dv / 8,
      "; ++n) gc_st2(yr + n * 8 + 2 * t, (unsigned int)", to_half, "(o[n][0] / l0) | ((unsigned int)", to_half,
      "(o[n][1] / l0) << 16));\n", "    }\n", "    if (r1 < ", sq, "LL) {\n", "      unsigned short* yr = y + ",
      at(a->y, "b", "h", "r1", hq, sq, dv), ";\n", "#pragma unroll\n", "      for (int n = 0; n < ", dv / 8, "; ++n) gc_st2(yr + n * 8 + 2 * t, (unsigned int)",
      to_half, "(o[n][2] / l1) | ((unsigned int)", to_half, "(o[n][3] / l1) << 16));\n", "    }\n  }\n");
  GeneratedKernel kernel =
      Finish(absl::StrCat("flash_attention_", DTypeName(dt)), body, dv,
             absl::StrCat("flash attention on Tensor Cores (mma.sync m16n8k16 ", ty, ", fp32 accumulation): ", hq,
                          " heads (", hk, " K/V heads), ", sq, "x", sk, " positions, head ", d, "/", dv, ", blocks of ",
                          kRows, " queries, tiles of ", kt, " keys in shared memory, online softmax in fp32"),
             static_cast<int>(kThreads));
  kernel.threads_per_item = static_cast<int>(kThreads);
  kernel.items = a->batch * hq * q_tiles;
  kernel.alignment = 4;
  return kernel;
}

GeneratedKernel ActivationKernel(DType dtype, const Epilogue& epi) {
  const std::string t = StorageType(dtype);
  const std::string body = absl::StrCat(
      "  ", t, "* y = (", t, "*)a.out[0];\n", "  for (long long i = gc_first(); i < a.total; i += gc_stride()) {\n",
      "    const float v = ", Load(dtype, "y[i]"), ";\n    y[i] = ", Store(dtype, ActivationExpr(epi, "v")),
      ";\n  }\n");
  return Finish(absl::StrCat("act", ActTag(epi), "_", DTypeName(dtype)), body, 1,
                absl::StrCat(ActivationName(epi.act), " in place, ", DTypeName(dtype)));
}

GeneratedKernel Im2ColKernel(const Im2ColGeometry& g) {
  const int64_t cg = g.c / g.group;
  const int64_t kk = g.kh * g.kw * cg;
  const std::string t = StorageType(g.dtype);
  const std::string body = absl::StrCat(
      "  const ", t, "* x = (const ", t, "*)a.in[0];\n  ", t, "* y = (", t, "*)a.out[0];\n",
      "  for (long long i = gc_first(); i < a.total; i += gc_stride()) {\n", "    const long long k = i % ", kk,
      "LL; long long r = i / ", kk, "LL;\n", "    const long long g = r % ", g.group, "LL; r /= ", g.group, "LL;\n",
      "    const long long ow = r % ", g.wo, "LL; r /= ", g.wo, "LL;\n", "    const long long oh = r % ", g.ho,
      "LL; const long long n = r / ", g.ho, "LL;\n", "    const long long c = k % ", cg, "LL, t = k / ", cg, "LL;\n",
      "    const long long h = oh * ", g.sh, "LL - ", g.pt, "LL + (t / ", g.kw, "LL) * ", g.dh, "LL;\n",
      "    const long long w = ow * ", g.sw, "LL - ", g.pl, "LL + (t % ", g.kw, "LL) * ", g.dw, "LL;\n",
      "    y[i] = (h >= 0 && h < ", g.h, "LL && w >= 0 && w < ", g.w, "LL) ? x[((n * ", g.h, "LL + h) * ", g.w,
      "LL + w) * ", g.c, "LL + g * ", cg, "LL + c] : (", t, ")0;\n  }\n");
  return Finish(absl::StrCat("im2col_", g.kh, "x", g.kw, "s", g.sh, "_", DTypeName(g.dtype)), body, 1,
                absl::StrCat("im2col ", g.kh, "x", g.kw, " stride ", g.sh, "x", g.sw, " NHWC ", DTypeName(g.dtype)));
}

GeneratedKernel Fp8EpilogueKernel(int64_t n, bool bias, bool residual, const Epilogue& epi) {
  std::string body = absl::StrCat(
      "  const float* d = (const float*)a.in[0];\n  const float* s = (const float*)a.in[1];\n",
      "  const unsigned short* b = (const unsigned short*)a.in[2];\n",
      "  const unsigned short* z = (const unsigned short*)a.in[3];\n  unsigned short* y = (unsigned short*)a.out[0];\n",
      "  for (long long i = gc_first(); i < a.total; i += gc_stride()) {\n    const long long j = i % ", n, "LL;\n",
      "    float v = d[i] * s[j];\n");
  if (bias) absl::StrAppend(&body, "    v += gc_h2f(b[j]);\n");
  if (residual) absl::StrAppend(&body, "    v += gc_h2f(z[i]);\n");
  absl::StrAppend(&body, "    y[i] = gc_f2h(", ActivationExpr(epi, "v"), ");\n  }\n");
  return Finish(absl::StrCat("fp8_epilogue", ActTag(epi), "_", n), body, 1,
                absl::StrCat("fp8 GEMM epilogue: fp32 D x per-column scale", bias ? " + bias" : "",
                             residual ? " + residual" : "", epi.act != Activation::kNone ? " + " : "",
                             epi.act != Activation::kNone ? ActivationName(epi.act) : "", " -> f16"));
}

absl::StatusOr<GeneratedArgs> PackGeneratedArgs(const GeneratedKernel& k, int64_t batch, int64_t total,
                                                std::span<const void* const> inputs,
                                                std::span<void* const> outputs) {
  GeneratedArgs args{};
  const size_t read = std::min(inputs.size(), static_cast<size_t>(k.inputs_read));
  if (read > kMaxGeneratedInputs || outputs.size() > kMaxGeneratedOutputs) {
    return absl::InternalError(absl::StrCat("generated kernel '", k.code.name, "' is given ", inputs.size(),
                                            " inputs and ", outputs.size(), " outputs; its arguments hold ",
                                            kMaxGeneratedInputs, " and ", kMaxGeneratedOutputs));
  }
  for (size_t i = 0; i < read; ++i) args.in[i] = inputs[i];
  for (size_t i = 0; i < outputs.size(); ++i) args.out[i] = outputs[i];
  args.batch = batch;
  args.total = total;
  return args;
}

}  // namespace gcomp::cuda
