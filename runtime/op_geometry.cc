#include "runtime/op_geometry.h"

#include <tuple>

#include <cmath>
#include <cstring>
#include <numeric>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/slice.h"

namespace gcomp::runtime {
namespace {

// Whether `p` (a Scale or B operand) broadcasts to x's dims as one value per position of the
// normalized row (dims [axis, rank) of x) and is the same for every row.
bool PerRow(const Operand& p, const std::vector<int64_t>& x, int64_t axis, int64_t len) {
  if (p.dims.size() > x.size() || NumElements(p.dims) != len) return false;
  const size_t off = x.size() - p.dims.size();
  for (size_t i = 0; i < p.dims.size(); ++i) {
    const int64_t xa = static_cast<int64_t>(off + i);
    if (xa < axis ? p.dims[i] != 1 : p.dims[i] != x[xa]) return false;
  }
  return true;
}

}  // namespace

bool PresentAndNotInPlace(const KernelSpec& spec) {
  for (const Operand& o : spec.outputs) {
    if (!o.present) return false;
  }
  for (int i : spec.in_place) {
    if (i >= 0) return false;
  }
  return true;
}

std::optional<std::vector<int64_t>> ConstantInts(const Operand& op) {
  if (!op.present || !op.is_constant()) return std::nullopt;
  const int64_t n = NumElements(op.dims);
  std::vector<int64_t> v(static_cast<size_t>(n));
  if (op.dtype == DType::kI64 && op.constant_bytes == static_cast<size_t>(n) * 8) {
    std::memcpy(v.data(), op.constant, static_cast<size_t>(n) * 8);
    return v;
  }
  if (op.dtype == DType::kI32 && op.constant_bytes == static_cast<size_t>(n) * 4) {
    for (int64_t i = 0; i < n; ++i) {
      int32_t x;
      std::memcpy(&x, op.constant + i * 4, 4);
      v[i] = x;
    }
    return v;
  }
  return std::nullopt;
}


std::optional<Attributes> WidenWindowAttrsTo2d(const Attributes& attrs, int64_t kernel) {
  Attributes a = attrs;
  auto widen = [&](const char* name, std::vector<int64_t> fallback, int64_t unit, bool pads) {
    std::vector<int64_t> v = a.GetInts(name, fallback);
    if (v.size() != (pads ? 2u : 1u)) return false;
    a.Set(name, pads ? std::vector<int64_t>{unit, v[0], unit, v[1]} : std::vector<int64_t>{unit, v[0]});
    return true;
  };
  std::vector<int64_t> no_kernel;
  if (kernel >= 0) no_kernel = {kernel};
  if (!widen("kernel_shape", no_kernel, 1, false) || !widen("strides", {1}, 1, false) ||
      !widen("dilations", {1}, 1, false) || !widen("pads", {0, 0}, 0, true)) {
    return std::nullopt;
  }
  return a;
}

void InsertUnitHeight(KernelSpec* spec) {
  for (std::vector<Operand>* ops : {&spec->inputs, &spec->outputs}) {
    for (Operand& o : *ops) {
      if (o.present && o.dims.size() == 3) o.dims.insert(o.dims.begin() + 2, 1);
    }
  }
}

std::optional<PoolGeometry> ResolvePool(const KernelSpec& spec) {
  if (!spec.params) return std::nullopt;
  if (spec.inputs.size() != 1 || spec.outputs.empty() || !spec.outputs[0].present) return std::nullopt;
  for (size_t i = 1; i < spec.outputs.size(); ++i) {
    if (spec.outputs[i].present) return std::nullopt;  // MaxPool Indices
  }
  for (int i : spec.in_place) {
    if (i >= 0) return std::nullopt;
  }
  const Operand &x = spec.inputs[0], &y = spec.outputs[0];
  // 1-D pools ([N, C, W]) are 2-D pools over [N, C, 1, W]: the same memory.
  const bool one_d = (spec.op == "MaxPool" || spec.op == "AveragePool") && x.dims.size() == 3 && y.dims.size() == 3;
  if (!x.present || !IsStorageFloat(x.dtype) || !IsStorageFloat(y.dtype) ||
      (!one_d && (x.dims.size() != 4 || y.dims.size() != 4))) {
    return std::nullopt;
  }
  if (one_d) {
    std::optional<Attributes> a2 = WidenWindowAttrsTo2d(*spec.params, -1);
    if (!a2) return std::nullopt;
    KernelSpec as_2d = spec;
    as_2d.params = &*a2;
    InsertUnitHeight(&as_2d);
    return ResolvePool(as_2d);
  }
  const Attributes& a = *spec.params;
  PoolGeometry p;
  p.x_type = x.dtype;
  p.y_type = y.dtype;
  if (spec.op == "GlobalAveragePool") {
    p.max = false;
    p.n = x.dims[0];
    p.c = x.dims[1];
    p.h = p.kh = x.dims[2];
    p.w = p.kw = x.dims[3];
    p.oh = p.ow = 1;
    if (y.dims != std::vector<int64_t>{p.n, p.c, 1, 1}) return std::nullopt;
    return p;
  }
  if (spec.op == "Pool") {
    const std::string kind = a.GetString("kind", "max"), layout = a.GetString("layout", "NCHW");
    if ((kind != "max" && kind != "average") || (layout != "NCHW" && layout != "NHWC")) return std::nullopt;
    p.max = kind == "max";
    p.nhwc = layout == "NHWC";
  } else if (spec.op == "MaxPool" || spec.op == "AveragePool") {
    p.max = spec.op == "MaxPool";
  } else {
    return std::nullopt;
  }
  const std::string auto_pad = a.GetString("auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && !auto_pad.empty()) return std::nullopt;
  const std::vector<int64_t> k = a.GetInts("kernel_shape");
  const std::vector<int64_t> s = a.GetInts("strides", {1, 1});
  const std::vector<int64_t> d = a.GetInts("dilations", {1, 1});
  const std::vector<int64_t> pads = a.GetInts("pads", {0, 0, 0, 0});
  if (k.size() != 2 || s.size() != 2 || pads.size() != 4 || d != std::vector<int64_t>{1, 1}) return std::nullopt;
  if (k[0] < 1 || k[1] < 1 || s[0] < 1 || s[1] < 1) return std::nullopt;
  for (int64_t v : pads) {
    if (v < 0) return std::nullopt;
  }
  p.include_pad = !p.max && a.GetInt("count_include_pad", 0) == 1;
  p.n = x.dims[0];
  p.c = p.nhwc ? x.dims[3] : x.dims[1];
  p.h = p.nhwc ? x.dims[1] : x.dims[2];
  p.w = p.nhwc ? x.dims[2] : x.dims[3];
  p.oh = p.nhwc ? y.dims[1] : y.dims[2];
  p.ow = p.nhwc ? y.dims[2] : y.dims[3];
  const int64_t yc = p.nhwc ? y.dims[3] : y.dims[1];
  if (y.dims[0] != p.n || yc != p.c) return std::nullopt;
  p.kh = k[0];
  p.kw = k[1];
  p.sh = s[0];
  p.sw = s[1];
  p.pt = pads[0];
  p.pl = pads[1];
  p.pb = pads[2];
  p.pr = pads[3];
  return p;
}


std::optional<ReduceGeometry> ResolveReduce(const KernelSpec& spec) {
  if (!spec.params) return std::nullopt;
  if (spec.inputs.empty() || spec.inputs.size() > 2 || spec.outputs.size() != 1 || !PresentAndNotInPlace(spec)) {
    return std::nullopt;
  }
  const Operand &x = spec.inputs[0], &y = spec.outputs[0];
  if (!x.present || !IsStorageFloat(x.dtype) || !IsStorageFloat(y.dtype)) return std::nullopt;
  const int64_t r = static_cast<int64_t>(x.dims.size());
  std::vector<int64_t> axes = spec.params->GetInts("axes");
  if (spec.inputs.size() == 2 && spec.inputs[1].present) {
    std::optional<std::vector<int64_t>> a = ConstantInts(spec.inputs[1]);
    if (!a) return std::nullopt;
    axes = *a;
  }
  if (axes.empty()) {
    if (spec.params->GetInt("noop_with_empty_axes", 0) == 1) return std::nullopt;
    for (int64_t i = 0; i < r; ++i) axes.push_back(i);
  }
  std::vector<bool> reduced(r, false);
  for (int64_t a : axes) {
    if (a < -r || a >= r) return std::nullopt;
    const int64_t n = a < 0 ? a + r : a;
    if (reduced[n]) return std::nullopt;
    reduced[n] = true;
  }
  // The reduced axes, ignoring unit dims, must form one contiguous block.
  int64_t first = -1, last = -1;
  for (int64_t i = 0; i < r; ++i) {
    if (reduced[i] && x.dims[i] != 1) {
      if (first < 0) first = i;
      last = i;
    }
  }
  ReduceGeometry p;
  p.mean = spec.op != "ReduceSum";
  p.x_type = x.dtype;
  p.y_type = y.dtype;
  for (int64_t i = 0; i < r; ++i) {
    if (first >= 0 && i >= first && i <= last) {
      if (!reduced[i] && x.dims[i] != 1) return std::nullopt;
      p.reduced *= x.dims[i];
    } else if (first >= 0 && i > last) {
      p.inner *= x.dims[i];
    } else {
      p.outer *= x.dims[i];
    }
  }
  const bool keep = spec.params->GetInt("keepdims", 1) == 1;
  std::vector<int64_t> out;
  for (int64_t i = 0; i < r; ++i) {
    if (!reduced[i]) {
      out.push_back(x.dims[i]);
    } else if (keep) {
      out.push_back(1);
    }
  }
  if (out != y.dims || p.reduced == 0) return std::nullopt;
  return p;
}

std::optional<std::vector<SliceAxisPlan>> ResolveSliceAxes(const KernelSpec& spec) {
  if (!spec.params) return std::nullopt;
  if (spec.inputs.size() < 3 || spec.outputs.size() != 1 || !PresentAndNotInPlace(spec)) return std::nullopt;
  const Operand &x = spec.inputs[0], &y = spec.outputs[0];
  if (!x.present || x.dtype != y.dtype) return std::nullopt;
  std::optional<std::vector<int64_t>> starts = ConstantInts(spec.inputs[1]), ends = ConstantInts(spec.inputs[2]);
  if (!starts || !ends || starts->size() != ends->size()) return std::nullopt;
  const size_t n = starts->size();
  const int64_t r = static_cast<int64_t>(x.dims.size());
  std::vector<int64_t> axes(n), steps(n, 1);
  std::iota(axes.begin(), axes.end(), 0);
  if (spec.inputs.size() > 3 && spec.inputs[3].present) {
    std::optional<std::vector<int64_t>> a = ConstantInts(spec.inputs[3]);
    if (!a) return std::nullopt;
    axes = *a;
  }
  if (spec.inputs.size() > 4 && spec.inputs[4].present) {
    std::optional<std::vector<int64_t>> s = ConstantInts(spec.inputs[4]);
    if (!s) return std::nullopt;
    steps = *s;
  }
  if (axes.size() != n || steps.size() != n || spec.inputs.size() > 5) return std::nullopt;
  std::vector<SliceAxisPlan> plan(r);
  for (int64_t i = 0; i < r; ++i) plan[i] = {x.dims[i], 0, 1, x.dims[i]};
  std::vector<bool> sliced(r, false);
  for (size_t i = 0; i < n; ++i) {
    int64_t a = axes[i] < 0 ? axes[i] + r : axes[i];
    if (a < 0 || a >= r || sliced[a] || steps[i] == 0) return std::nullopt;
    sliced[a] = true;
    const SliceAxis c = gcomp::ResolveSlice((*starts)[i], (*ends)[i], steps[i], x.dims[a]);
    plan[a] = {x.dims[a], c.start, c.step, c.count};
  }
  std::vector<int64_t> out;
  for (const SliceAxisPlan& p : plan) out.push_back(p.count);
  if (out != y.dims) return std::nullopt;
  return plan;
}

std::optional<std::vector<int64_t>> ResolvePerm(const KernelSpec& spec) {
  if (!spec.params || spec.inputs.size() != 1 || spec.outputs.size() != 1) return std::nullopt;
  const Operand &x = spec.inputs[0], &y = spec.outputs[0];
  if (!x.present || x.dtype != y.dtype) return std::nullopt;
  const int64_t r = static_cast<int64_t>(x.dims.size());
  std::vector<int64_t> perm(r);
  for (int64_t i = 0; i < r; ++i) perm[i] = r - 1 - i;
  perm = spec.params->GetInts("perm", perm);
  if (static_cast<int64_t>(perm.size()) != r) return std::nullopt;
  std::vector<bool> seen(r, false);
  std::vector<int64_t> out;
  for (int64_t a : perm) {
    if (a < 0 || a >= r || seen[a]) return std::nullopt;
    seen[a] = true;
    out.push_back(x.dims[a]);
  }
  if (out != y.dims) return std::nullopt;
  return perm;
}

// Normalized axis or nullopt.
std::optional<int64_t> NormalizedAxis(int64_t axis, size_t rank) {
  const int64_t r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= r) return std::nullopt;
  return axis < 0 ? axis + r : axis;
}



std::optional<LayerNormShape> ResolveLayerNorm(const KernelSpec& spec, bool fp8) {
  if (!spec.params) return std::nullopt;
  if (spec.op != "LayerNorm" && spec.op != "LayerNormalization") return std::nullopt;
  if (spec.inputs.size() < 2 || spec.outputs.empty() || !spec.outputs[0].present) return std::nullopt;
  for (size_t i = 1; i < spec.outputs.size(); ++i) {
    if (spec.outputs[i].present) return std::nullopt;  // mean / inv_std outputs
  }
  const Operand& x = spec.inputs[0];
  std::optional<int64_t> axis = NormalizedAxis(spec.params->GetInt("axis", -1), x.dims.size());
  if (!axis || x.dims.empty()) return std::nullopt;
  LayerNormShape s;
  s.len = 1;
  for (size_t i = *axis; i < x.dims.size(); ++i) s.len *= x.dims[i];
  s.rows = s.len ? NumElements(x.dims) / s.len : 0;
  s.epsilon = spec.params->GetFloat("epsilon", 1e-5f);
  s.has_bias = spec.inputs.size() > 2 && spec.inputs[2].present;
  const Operand& scale = spec.inputs[1];
  if (!scale.present || !PerRow(scale, x.dims, *axis, s.len)) return std::nullopt;
  if (s.has_bias && !PerRow(spec.inputs[2], x.dims, *axis, s.len)) return std::nullopt;
  const bool fp8_out = spec.outputs[0].dtype == DType::kF8E4M3;
  s.fp8_scale = spec.params->GetFloat("fp8_scale", 0.0f);
  if (fp8_out != (s.fp8_scale > 0) || (fp8_out && (!fp8 || !std::isfinite(s.fp8_scale)))) return std::nullopt;
  if (!IsStorageFloat(x.dtype) || !IsStorageFloat(scale.dtype) ||
      (!fp8_out && !IsStorageFloat(spec.outputs[0].dtype))) {
    return std::nullopt;
  }
  if (s.has_bias && !IsStorageFloat(spec.inputs[2].dtype)) return std::nullopt;
  if (spec.outputs[0].dims != x.dims || s.len < 1) return std::nullopt;
  s.x_type = x.dtype;
  s.s_type = scale.dtype;
  s.b_type = s.has_bias ? spec.inputs[2].dtype : DType::kF32;
  s.y_type = spec.outputs[0].dtype;
  return s;
}

std::string DescribeStridedAttention(const AttentionShape& a) {
  if (!a.packed) return "";
  const char* rows = a.seq_first ? "[S,B," : "[B,S,";
  const bool one = a.q.width == a.k.width && a.k.width == a.v.width;
  return absl::StrCat(", Q/K/V read in place from ", rows,
                      one ? absl::StrCat(a.q.width) : absl::StrCat(a.q.width, "/", a.k.width, "/", a.v.width),
                      "] rows at columns ", a.q.offset, "/", a.k.offset, "/", a.v.offset, ", Y as ", rows, a.y.width,
                      "]");
}

std::vector<AttrSpec> AttentionParamSpecs() {
  return {{"is_causal", AttrType::kInt},    {"kv_num_heads", AttrType::kInt}, {"q_num_heads", AttrType::kInt},
          {"qk_matmul_output_mode", AttrType::kInt}, {"scale", AttrType::kFloat}, {"softcap", AttrType::kFloat},
          {"softmax_precision", AttrType::kInt}, {"qkv_layout", AttrType::kString}, {"head_size", AttrType::kInt},
          {"v_head_size", AttrType::kInt}, {"q_offset", AttrType::kInt}, {"k_offset", AttrType::kInt},
          {"v_offset", AttrType::kInt}};
}

std::optional<AttentionShape> ResolveAttention(const KernelSpec& spec, std::string* why_not) {
  if (!spec.params) {
    *why_not = "no attributes";
    return std::nullopt;
  }
  const Attributes& a = *spec.params;
  auto fail = [&](const char* why) -> std::optional<AttentionShape> {
    *why_not = why;
    return std::nullopt;
  };
  if (spec.inputs.size() < 3 || spec.outputs.empty() || !spec.outputs[0].present) return fail("no Y");
  for (size_t i = 3; i < spec.inputs.size(); ++i) {
    if (spec.inputs[i].present) return fail("mask or past K/V");
  }
  for (size_t i = 1; i < spec.outputs.size(); ++i) {
    if (spec.outputs[i].present) return fail("present K/V or qk outputs");
  }
  for (int i : spec.in_place) {
    if (i >= 0) return fail("in place");
  }
  if (a.GetInt("is_causal", 0) != 0) return fail("causal");
  if (a.GetFloat("softcap", 0.0f) != 0.0f) return fail("softcap");
  const Operand &q = spec.inputs[0], &k = spec.inputs[1], &v = spec.inputs[2], &y = spec.outputs[0];
  for (const Operand* o : {&q, &k, &v, &y}) {
    if (!o->present || !IsStorageFloat(o->dtype) || o->dims.size() != q.dims.size()) return fail("dtype or rank");
  }
  AttentionShape s;
  s.q_type = q.dtype;
  s.k_type = k.dtype;
  s.v_type = v.dtype;
  s.y_type = y.dtype;
  if (a.Has("qkv_layout")) {
    // The strided form: every operand [B, S, W] or [S, B, W], the heads from a column offset.
    const std::string layout = a.GetString("qkv_layout", "");
    if ((layout != "BSW" && layout != "SBW") || q.dims.size() != 3) return fail("qkv_layout");
    s.packed = true;
    s.seq_first = layout == "SBW";
    const size_t b_axis = s.seq_first ? 1 : 0, s_axis = s.seq_first ? 0 : 1;
    s.q_heads = a.GetInt("q_num_heads", 0);
    s.kv_heads = a.GetInt("kv_num_heads", 0);
    s.head = a.GetInt("head_size", 0);
    s.v_head = a.GetInt("v_head_size", 0);
    if (s.q_heads < 1 || s.kv_heads < 1 || s.head < 1 || s.v_head < 1) return fail("heads");
    s.batch = q.dims[b_axis];
    s.q_seq = q.dims[s_axis];
    s.kv_seq = k.dims[s_axis];
    s.q = {q.dims[2], a.GetInt("q_offset", 0)};
    s.k = {k.dims[2], a.GetInt("k_offset", 0)};
    s.v = {v.dims[2], a.GetInt("v_offset", 0)};
    int64_t y_width = 0;
    if (__builtin_mul_overflow(s.q_heads, s.v_head, &y_width)) return fail("heads");
    s.y = {y_width, 0};
    for (const auto& [rows, heads, size] : {std::tuple{s.q, s.q_heads, s.head}, std::tuple{s.k, s.kv_heads, s.head},
                                            std::tuple{s.v, s.kv_heads, s.v_head}}) {
      int64_t span = 0, end = 0;  // plan attributes are untrusted: no overflow on the way
      if (rows.offset < 0 || __builtin_mul_overflow(heads, size, &span) ||
          __builtin_add_overflow(rows.offset, span, &end) || end > rows.width) {
        return fail("heads outside the rows");
      }
    }
    if (k.dims[b_axis] != s.batch || v.dims[b_axis] != s.batch || v.dims[s_axis] != s.kv_seq) return fail("shapes");
    const std::vector<int64_t> want_y = s.seq_first ? std::vector<int64_t>{s.q_seq, s.batch, s.y.width}
                                                    : std::vector<int64_t>{s.batch, s.q_seq, s.y.width};
    if (y.dims != want_y) return fail("shapes");
  } else if (q.dims.size() == 3) {
    s.packed = true;
    s.q_heads = a.GetInt("q_num_heads", 0);
    s.kv_heads = a.GetInt("kv_num_heads", 0);
    if (s.q_heads < 1 || s.kv_heads < 1) return fail("heads");
    s.batch = q.dims[0];
    s.q_seq = q.dims[1];
    s.kv_seq = k.dims[1];
    if (q.dims[2] % s.q_heads || k.dims[2] % s.kv_heads || v.dims[2] % s.kv_heads) return fail("hidden size");
    s.head = q.dims[2] / s.q_heads;
    if (k.dims[2] / s.kv_heads != s.head) return fail("head size");
    s.v_head = v.dims[2] / s.kv_heads;
    if (v.dims[1] != s.kv_seq || y.dims != std::vector<int64_t>{s.batch, s.q_seq, s.q_heads * s.v_head}) {
      return fail("shapes");
    }
    s.q = {q.dims[2], 0};
    s.k = {k.dims[2], 0};
    s.v = {v.dims[2], 0};
    s.y = {y.dims[2], 0};
  } else if (q.dims.size() == 4) {
    s.batch = q.dims[0];
    s.q_heads = q.dims[1];
    s.q_seq = q.dims[2];
    s.head = q.dims[3];
    s.kv_heads = k.dims[1];
    s.kv_seq = k.dims[2];
    s.v_head = v.dims[3];
    if (k.dims[3] != s.head || v.dims[1] != s.kv_heads || v.dims[2] != s.kv_seq ||
        y.dims != std::vector<int64_t>{s.batch, s.q_heads, s.q_seq, s.v_head}) {
      return fail("shapes");
    }
  } else {
    return fail("rank");
  }
  if (!s.seq_first && (k.dims[0] != s.batch || v.dims[0] != s.batch)) return fail("batch");
  if (s.kv_heads < 1 || s.q_heads % s.kv_heads != 0) return fail("heads");
  if (s.head < 1 || s.v_head < 1 || s.kv_seq < 1 || s.q_seq < 1) return fail("empty");
  s.scale =
      a.Has("scale") ? a.GetFloat("scale", 1.0f) : static_cast<float>(1.0 / std::sqrt(static_cast<double>(s.head)));
  return s;
}

}  // namespace gcomp::runtime
