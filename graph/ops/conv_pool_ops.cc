// Sliding-window ops over 1 to 3 spatial dims (NC + spatial layout): Conv, MaxPool, AveragePool,
// and GlobalAveragePool. Output sizes follow ONNX exactly, including auto_pad and ceil_mode (the
// last window must start inside the input or the left padding).
#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_join.h"
#include "graph/ops/op_helpers.h"
#include "core/status_macros.h"

namespace gcomp {
namespace {

using ops::One;
using ops::ReadF32;
using ops::WriteF32;

constexpr int64_t kMaxSpatialDims = 3;

enum class AutoPad { kNotSet, kSameUpper, kSameLower, kValid };

// Validated window attributes of a conv or pooling node, one entry per spatial axis.
struct Window {
  std::vector<int64_t> kernel, strides, dilations, pads_begin, pads_end;
  AutoPad auto_pad = AutoPad::kNotSet;
  bool ceil_mode = false;
};

absl::Status Invalid(const std::string& message) { return absl::InvalidArgumentError(message); }

// An int attribute that must be 0 or 1.
absl::StatusOr<bool> FlagAttr(const Attributes& a, const std::string& name) {
  int64_t v = a.GetInt(name, 0);
  if (v != 0 && v != 1) return Invalid(absl::StrCat("attribute '", name, "' is ", v, ", expected 0 or 1"));
  return v == 1;
}

// A per-axis ints attribute; absent or empty means `def` on every axis.
absl::StatusOr<std::vector<int64_t>> AxisInts(const Attributes& a, const std::string& name, size_t n, int64_t def,
                                              int64_t min_value, const char* per_axis) {
  std::vector<int64_t> v = a.GetInts(name);
  if (v.empty()) return std::vector<int64_t>(n, def);
  if (v.size() != n) {
    return Invalid(absl::StrCat("attribute '", name, "' has ", v.size(), " values, expected ", n, " (", per_axis, ")"));
  }
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] < min_value) {
      return Invalid(absl::StrCat("attribute '", name, "' has ", v[i], " at index ", i, ", expected >= ", min_value));
    }
  }
  return v;
}

// Reads auto_pad, strides, dilations, pads (and ceil_mode for pooling) for a window `kernel`.
absl::StatusOr<Window> ReadWindow(const Attributes& a, std::vector<int64_t> kernel, bool pooling) {
  Window w;
  size_t n = kernel.size();
  for (size_t i = 0; i < n; ++i) {
    if (kernel[i] < 1) {
      return Invalid(absl::StrCat("kernel size is ", kernel[i], " along spatial axis ", i, ", expected >= 1"));
    }
  }
  w.kernel = std::move(kernel);
  std::string auto_pad = a.GetString("auto_pad", "NOTSET");
  if (auto_pad == "NOTSET" || auto_pad.empty()) {
    w.auto_pad = AutoPad::kNotSet;
  } else if (auto_pad == "SAME_UPPER") {
    w.auto_pad = AutoPad::kSameUpper;
  } else if (auto_pad == "SAME_LOWER") {
    w.auto_pad = AutoPad::kSameLower;
  } else if (auto_pad == "VALID") {
    w.auto_pad = AutoPad::kValid;
  } else {
    return Invalid(
        absl::StrCat("attribute 'auto_pad' is '", auto_pad, "', expected NOTSET, SAME_UPPER, SAME_LOWER or VALID"));
  }
  ASSIGN_OR_RETURN(w.strides, AxisInts(a, "strides", n, 1, 1, "one per spatial axis"));
  ASSIGN_OR_RETURN(w.dilations, AxisInts(a, "dilations", n, 1, 1, "one per spatial axis"));
  ASSIGN_OR_RETURN(std::vector<int64_t> pads, AxisInts(a, "pads", 2 * n, 0, 0, "begin and end for each spatial axis"));
  if (w.auto_pad != AutoPad::kNotSet && std::any_of(pads.begin(), pads.end(), [](int64_t p) { return p != 0; })) {
    return Invalid(absl::StrCat("attribute 'pads' cannot be combined with auto_pad ", auto_pad));
  }
  const auto middle = pads.begin() + static_cast<std::ptrdiff_t>(n);
  w.pads_begin.assign(pads.begin(), middle);
  w.pads_end.assign(middle, pads.end());
  if (pooling) {
    ASSIGN_OR_RETURN(w.ceil_mode, FlagAttr(a, "ceil_mode"));
  }
  return w;
}

// Output size and resolved pads of one spatial axis. Pads are known when the input size is.
struct AxisGeometry {
  Dim out;
  int64_t pad_begin = 0;
  int64_t pad_end = 0;
};

absl::StatusOr<AxisGeometry> AxisOutput(const Window& w, size_t axis, const Dim& in, const std::string& input) {
  const int64_t k = w.kernel[axis], s = w.strides[axis], d = w.dilations[axis];
  int64_t extent;  // (k - 1) * d + 1
  if (__builtin_mul_overflow(k - 1, d, &extent) || __builtin_add_overflow(extent, 1, &extent)) {
    return Invalid(
        absl::StrCat("kernel extent along spatial axis ", axis, " (kernel ", k, ", dilation ", d, ") overflows int64"));
  }
  AxisGeometry g;
  if (w.auto_pad == AutoPad::kSameUpper || w.auto_pad == AutoPad::kSameLower) {
    ASSIGN_OR_RETURN(Dim num, Dim::Add(in, s - 1));
    std::optional<Dim> out = Dim::FloorDiv(num, s);
    if (!out) {
      return Invalid(absl::StrCat(input, " has symbolic size ", in.ToString(), " along spatial axis ", axis,
                                  ", which stride ", s, " does not divide"));
    }
    g.out = *out;
    if (auto n = in.ConstValue(); n && g.out.IsConst()) {
      int64_t needed;  // (out - 1) * s + extent
      if (__builtin_mul_overflow(g.out.value() - 1, s, &needed) || __builtin_add_overflow(needed, extent, &needed)) {
        return Invalid(absl::StrCat("padding of spatial axis ", axis, " overflows int64"));
      }
      int64_t total = std::max<int64_t>(0, needed - *n);
      g.pad_begin = w.auto_pad == AutoPad::kSameUpper ? total / 2 : total - total / 2;
      g.pad_end = total - g.pad_begin;
    }
    return g;
  }
  if (w.auto_pad == AutoPad::kNotSet) {
    g.pad_begin = w.pads_begin[axis];
    g.pad_end = w.pads_end[axis];
  }
  int64_t pads;
  if (__builtin_add_overflow(g.pad_begin, g.pad_end, &pads)) {
    return Invalid(absl::StrCat("pads of spatial axis ", axis, " overflow int64"));
  }
  ASSIGN_OR_RETURN(Dim padded, Dim::Add(in, pads));
  if (auto p = padded.ConstValue(); p && *p < extent) {
    return Invalid(absl::StrCat(input, " has size ", in.ToString(), " along spatial axis ", axis, " (", *p,
                                " with pads), smaller than the kernel extent ", extent, " (kernel ", k, ", dilation ",
                                d, ")"));
  }
  ASSIGN_OR_RETURN(Dim num, Dim::Sub(padded, extent));
  const bool ceil = w.ceil_mode && w.auto_pad == AutoPad::kNotSet;
  if (ceil) {
    ASSIGN_OR_RETURN(num, Dim::Add(num, s - 1));
  }
  std::optional<Dim> q = Dim::FloorDiv(num, s);
  if (!q) {
    return Invalid(absl::StrCat(input, " has symbolic size ", in.ToString(), " along spatial axis ", axis,
                                ", for which the output size with stride ", s, " is not a whole expression"));
  }
  ASSIGN_OR_RETURN(g.out, Dim::Add(*q, 1));
  if (ceil) {
    // Drop a last window that would start in the right padding: (out - 1) * s >= in + pad_begin.
    ASSIGN_OR_RETURN(Dim last_start, Dim::Mul(*q, s));
    ASSIGN_OR_RETURN(Dim limit, Dim::Add(in, g.pad_begin));
    ASSIGN_OR_RETURN(Dim diff, Dim::Sub(last_start, limit));
    if (!diff.IsConst()) {
      return Invalid(absl::StrCat(input, " has symbolic size ", in.ToString(), " along spatial axis ", axis,
                                  ", for which ceil_mode cannot decide the output size"));
    }
    if (diff.value() >= 0) {
      ASSIGN_OR_RETURN(g.out, Dim::Sub(g.out, 1));
    }
  }
  return g;
}

// Spatial geometry of a concrete sliding-window op, padded to 3 axes (leading axes of size 1).
struct Geometry3 {
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, k[3] = {1, 1, 1}, s[3] = {1, 1, 1}, d[3] = {1, 1, 1};
  int64_t pb[3] = {0, 0, 0}, pe[3] = {0, 0, 0};
  int64_t in_size() const { return in[0] * in[1] * in[2]; }
  int64_t out_size() const { return out[0] * out[1] * out[2]; }
  int64_t k_size() const { return k[0] * k[1] * k[2]; }
};

absl::StatusOr<Geometry3> ConcreteGeometry(const Window& w, const std::vector<int64_t>& x_dims,
                                           const std::vector<int64_t>& y_dims) {
  Geometry3 g;
  size_t n = w.kernel.size();
  size_t off = 3 - n;
  for (size_t i = 0; i < n; ++i) {
    ASSIGN_OR_RETURN(AxisGeometry a, AxisOutput(w, i, Dim(x_dims[2 + i]), "input"));
    g.in[off + i] = x_dims[2 + i];
    g.out[off + i] = y_dims[2 + i];
    g.k[off + i] = w.kernel[i];
    g.s[off + i] = w.strides[i];
    g.d[off + i] = w.dilations[i];
    g.pb[off + i] = a.pad_begin;
    g.pe[off + i] = a.pad_end;
  }
  return g;
}

// Outputs o in [lo, hi) whose input position o * s + offset lies in [0, in).
struct Range {
  int64_t lo, hi;
};
Range ValidOutputs(int64_t offset, int64_t s, int64_t in, int64_t out) {
  int64_t lo = offset >= 0 ? 0 : -offset / s + (-offset % s != 0 ? 1 : 0);
  int64_t hi = in - 1 - offset < 0 ? 0 : (in - 1 - offset) / s + 1;
  hi = std::min(hi, out);
  return {std::min(lo, hi), hi};
}

absl::Status ExpectSpatialRank(const InferContext& ctx, size_t i) {
  int64_t r = ctx.rank(i);
  if (r < 3 || r > 2 + kMaxSpatialDims) {
    return ctx.Error(ctx.InputName(i), " has rank ", r, ", expected 3, 4 or 5 (N, C and 1 to 3 spatial dims)");
  }
  return absl::OkStatus();
}

// ---- Conv ---------------------------------------------------------------------------------

// Conv's window: kernel from W's spatial dims (kernel_shape, when given, must agree).
absl::StatusOr<Window> ConvWindow(const Attributes& attrs, const Shape& w, const std::string& wname) {
  size_t n = w.size() - 2;
  std::vector<int64_t> kernel(n);
  for (size_t i = 0; i < n; ++i) {
    std::optional<int64_t> c = w[2 + i].ConstValue();
    if (!c) {
      return Invalid(absl::StrCat(wname, " has symbolic size ", w[2 + i].ToString(), " along spatial axis ", i,
                                  ", expected a constant"));
    }
    if (*c < 1) return Invalid(absl::StrCat(wname, " has size ", *c, " along spatial axis ", i, ", expected >= 1"));
    kernel[i] = *c;
  }
  std::vector<int64_t> ks = attrs.GetInts("kernel_shape");
  if (!ks.empty() && ks != kernel) {
    return Invalid(absl::StrCat("attribute 'kernel_shape' is [", absl::StrJoin(ks, ","), "], expected [",
                                absl::StrJoin(kernel, ","), "] (the spatial dims of ", wname, ")"));
  }
  return ReadWindow(attrs, kernel, /*pooling=*/false);
}

absl::StatusOr<std::vector<OutputInfo>> ConvShape(const InferContext& ctx) {
  RETURN_IF_ERROR(ops::ExpectFloat(ctx, 0));
  RETURN_IF_ERROR(ops::ExpectSameDType(ctx, 0, 1));
  RETURN_IF_ERROR(ExpectSpatialRank(ctx, 0));
  RETURN_IF_ERROR(ops::ExpectRank(ctx, 1, ctx.rank(0)));
  const Shape& x = ctx.in(0).shape;
  const Shape& w = ctx.in(1).shape;
  const std::string wname = absl::StrCat("weight '", ctx.in(1).name, "'");
  int64_t group = ctx.attrs().GetInt("group", 1);
  if (group < 1) return ctx.Error("attribute 'group' is ", group, ", expected >= 1");
  ASSIGN_OR_RETURN(Window win, ConvWindow(ctx.attrs(), w, wname));

  if (auto m = w[0].ConstValue(); m && *m % group != 0) {
    return ctx.Error(wname, " has ", *m, " output channels, expected a multiple of group ", group);
  }
  auto cw = w[1].ConstValue();
  auto cx = x[1].ConstValue();
  if (cw && cx) {
    int64_t expected;
    if (__builtin_mul_overflow(*cw, group, &expected)) {
      return ctx.Error(wname, " channels ", *cw, " x group ", group, " overflows int64");
    }
    if (*cx != expected) {
      return ctx.Error(ctx.InputName(0), " has ", *cx, " channels, expected ", expected, " (", wname, " channels ", *cw,
                       " x group ", group, ")");
    }
  }
  if (ctx.has(2)) {
    RETURN_IF_ERROR(ops::ExpectSameDType(ctx, 0, 2));
    RETURN_IF_ERROR(ops::ExpectRank(ctx, 2, 1));
    const Dim& nb = ctx.in(2).shape[0];
    if (nb != w[0] && nb.IsConst() && w[0].IsConst()) {
      return ctx.Error(ctx.InputName(2), " has ", nb.ToString(), " elements, expected ", w[0].ToString(),
                       " (the output channels of ", wname, ")");
    }
  }
  Shape out = {x[0], w[0]};
  for (size_t i = 0; i + 2 < x.size(); ++i) {
    ASSIGN_OR_RETURN(AxisGeometry g, AxisOutput(win, i, x[2 + i], ctx.InputName(0)));
    out.push_back(g.out);
  }
  return One(ctx.in(0).dtype, out);
}

// Direct convolution. Loop order n, oc, ic, kd, kh, kw, od, oh, ow with the valid output range of
// each tap precomputed, so the innermost loop is a plain multiply-add over an output row.
absl::Status ConvKernel(KernelContext& k) {
  const Tensor& xt = *k.in(0);
  const Tensor& wt = *k.in(1);
  Tensor& yt = k.outputs[0];
  Shape wshape = ShapeFromInts(wt.dims());
  ASSIGN_OR_RETURN(Window win, ConvWindow(k.attrs(), wshape, "weight"));
  ASSIGN_OR_RETURN(Geometry3 g, ConcreteGeometry(win, xt.dims(), yt.dims()));
  const int64_t batch = xt.dims()[0], channels = xt.dims()[1];
  const int64_t out_channels = wt.dims()[0], group_channels = wt.dims()[1];
  const int64_t group = k.attrs().GetInt("group", 1);
  const int64_t out_per_group = out_channels / group;
  const int64_t in_plane = g.in_size(), out_plane = g.out_size(), taps = g.k_size();

  std::vector<float> x = ReadF32(xt), w = ReadF32(wt);
  std::vector<float> bias = k.in(2) ? ReadF32(*k.in(2)) : std::vector<float>(out_channels, 0.0f);
  // Accumulated in double: the oracle's own rounding must stay far below backend tolerances.
  std::vector<double> y(static_cast<size_t>(yt.numel()));
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t m = 0; m < out_channels; ++m) {
      double* yp = y.data() + (n * out_channels + m) * out_plane;
      std::fill(yp, yp + out_plane, bias[m]);
      const int64_t first_channel = (m / out_per_group) * group_channels;
      for (int64_t cg = 0; cg < group_channels; ++cg) {
        const float* xp = x.data() + (n * channels + first_channel + cg) * in_plane;
        const float* wp = w.data() + (m * group_channels + cg) * taps;
        for (int64_t kd = 0; kd < g.k[0]; ++kd) {
          const int64_t off_d = kd * g.d[0] - g.pb[0];
          const Range rd = ValidOutputs(off_d, g.s[0], g.in[0], g.out[0]);
          for (int64_t kh = 0; kh < g.k[1]; ++kh) {
            const int64_t off_h = kh * g.d[1] - g.pb[1];
            const Range rh = ValidOutputs(off_h, g.s[1], g.in[1], g.out[1]);
            for (int64_t kw = 0; kw < g.k[2]; ++kw) {
              const int64_t off_w = kw * g.d[2] - g.pb[2];
              const Range rw = ValidOutputs(off_w, g.s[2], g.in[2], g.out[2]);
              const double wv = wp[(kd * g.k[1] + kh) * g.k[2] + kw];
              const int64_t sw = g.s[2];
              if (sw == 1 && g.s[1] == 1 && off_w == 0 && g.in[2] == g.out[2] && rw.lo == 0 && rw.hi == g.out[2]) {
                // Whole rows in both planes (1x1 and kx1 taps at stride 1): one contiguous run per od.
                for (int64_t od = rd.lo; od < rd.hi; ++od) {
                  const int64_t id = od * g.s[0] + off_d;
                  double* __restrict yrun = yp + (od * g.out[1] + rh.lo) * g.out[2];
                  const float* __restrict xrun = xp + (id * g.in[1] + rh.lo + off_h) * g.in[2];
                  const int64_t len = (rh.hi - rh.lo) * g.out[2];
                  for (int64_t i = 0; i < len; ++i) yrun[i] += wv * xrun[i];
                }
                continue;
              }
              for (int64_t od = rd.lo; od < rd.hi; ++od) {
                const int64_t id = od * g.s[0] + off_d;
                for (int64_t oh = rh.lo; oh < rh.hi; ++oh) {
                  const int64_t ih = oh * g.s[1] + off_h;
                  double* __restrict yrow = yp + (od * g.out[1] + oh) * g.out[2];
                  const float* __restrict xrow = xp + (id * g.in[1] + ih) * g.in[2];
                  if (sw == 1) {
                    for (int64_t ow = rw.lo; ow < rw.hi; ++ow) yrow[ow] += wv * xrow[ow + off_w];
                  } else {
                    for (int64_t ow = rw.lo; ow < rw.hi; ++ow) yrow[ow] += wv * xrow[ow * sw + off_w];
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  WriteF32(yt, std::vector<float>(y.begin(), y.end()));
  return absl::OkStatus();
}

OpDef Conv() {
  OpDef d;
  d.name = "Conv";
  d.min_inputs = 2;
  d.max_inputs = 3;
  d.attrs = {{"auto_pad", AttrType::kString},   {"dilations", AttrType::kInts}, {"group", AttrType::kInt},
             {"kernel_shape", AttrType::kInts}, {"pads", AttrType::kInts},      {"strides", AttrType::kInts}};
  d.shape = ConvShape;
  d.kernel = ConvKernel;
  return d;
}

// ---- MaxPool / AveragePool ----------------------------------------------------------------

enum class PoolKind { kMax, kAverage };

absl::StatusOr<Window> PoolWindow(const Attributes& attrs, size_t spatial) {
  std::vector<int64_t> kernel = attrs.GetInts("kernel_shape");
  if (kernel.size() != spatial) {
    return Invalid(absl::StrCat("attribute 'kernel_shape' has ", kernel.size(), " values, expected ", spatial,
                                " (one per spatial axis)"));
  }
  return ReadWindow(attrs, kernel, /*pooling=*/true);
}

absl::StatusOr<std::vector<OutputInfo>> PoolShape(const InferContext& ctx, PoolKind kind) {
  DType t = ctx.in(0).dtype;
  if (!IsFloat(t) && !(kind == PoolKind::kMax && (t == DType::kI8 || t == DType::kU8))) {
    return ctx.Error(ctx.InputName(0), " has dtype ", DTypeName(t), ", expected a float type");
  }
  RETURN_IF_ERROR(ExpectSpatialRank(ctx, 0));
  const Shape& x = ctx.in(0).shape;
  ASSIGN_OR_RETURN(Window win, PoolWindow(ctx.attrs(), x.size() - 2));
  if (kind == PoolKind::kMax) {
    RETURN_IF_ERROR(FlagAttr(ctx.attrs(), "storage_order").status());
  } else {
    RETURN_IF_ERROR(FlagAttr(ctx.attrs(), "count_include_pad").status());
  }
  Shape out = {x[0], x[1]};
  for (size_t i = 0; i + 2 < x.size(); ++i) {
    ASSIGN_OR_RETURN(AxisGeometry g, AxisOutput(win, i, x[2 + i], ctx.InputName(0)));
    out.push_back(g.out);
  }
  std::vector<OutputInfo> outs = One(t, out);
  if (kind == PoolKind::kMax) outs.push_back(ops::Out(DType::kI64, out));  // Indices
  return outs;
}

// Pooling over each window's taps. MaxPool ignores padding (an all-padding window gives the
// lowest float, as ONNX Runtime does). AveragePool divides by the taps inside the input, or with
// count_include_pad by the taps inside the padded input [-pad_begin, in + pad_end). MaxPool's
// optional Indices output holds the flat index of each maximum in the whole input (N, C and the
// spatial axes), with the spatial axes row-major (storage_order 0) or column-major (1); the first
// maximum in window order wins.
absl::Status PoolKernel(KernelContext& k, PoolKind kind) {
  const Tensor& xt = *k.in(0);
  Tensor& yt = k.outputs[0];
  ASSIGN_OR_RETURN(Window win, PoolWindow(k.attrs(), xt.dims().size() - 2));
  ASSIGN_OR_RETURN(Geometry3 g, ConcreteGeometry(win, xt.dims(), yt.dims()));
  const bool include_pad = k.attrs().GetInt("count_include_pad", 0) == 1;
  const bool column_major = k.attrs().GetInt("storage_order", 0) == 1;
  Tensor* indices = kind == PoolKind::kMax && k.outputs.size() > 1 ? &k.outputs[1] : nullptr;
  const int64_t planes = xt.dims()[0] * xt.dims()[1];
  const int64_t in_plane = g.in_size(), out_plane = g.out_size();
  std::vector<float> x = ReadF32(xt);
  std::vector<float> y(static_cast<size_t>(yt.numel()));
  auto inside = [](int64_t pos, int64_t lo, int64_t hi) { return pos >= lo && pos < hi; };
  for (int64_t p = 0; p < planes; ++p) {
    const float* xp = x.data() + p * in_plane;
    float* yp = y.data() + p * out_plane;
    for (int64_t od = 0; od < g.out[0]; ++od) {
      for (int64_t oh = 0; oh < g.out[1]; ++oh) {
        for (int64_t ow = 0; ow < g.out[2]; ++ow) {
          const int64_t start[3] = {od * g.s[0] - g.pb[0], oh * g.s[1] - g.pb[1], ow * g.s[2] - g.pb[2]};
          float max_v = std::numeric_limits<float>::lowest();
          int64_t max_at = -1;  // spatial offset of the maximum
          double sum = 0.0;
          int64_t count = 0;
          for (int64_t kd = 0; kd < g.k[0]; ++kd) {
            const int64_t id = start[0] + kd * g.d[0];
            for (int64_t kh = 0; kh < g.k[1]; ++kh) {
              const int64_t ih = start[1] + kh * g.d[1];
              for (int64_t kw = 0; kw < g.k[2]; ++kw) {
                const int64_t iw = start[2] + kw * g.d[2];
                if (inside(id, 0, g.in[0]) && inside(ih, 0, g.in[1]) && inside(iw, 0, g.in[2])) {
                  const float v = xp[(id * g.in[1] + ih) * g.in[2] + iw];
                  if (max_at < 0 || (!std::isnan(max_v) && (std::isnan(v) || v > max_v))) {
                    max_at = column_major ? id + g.in[0] * (ih + g.in[1] * iw) : (id * g.in[1] + ih) * g.in[2] + iw;
                  }
                  max_v = std::isnan(v) ? v : (std::isnan(max_v) ? max_v : std::max(max_v, v));
                  sum += v;
                  ++count;
                } else if (include_pad && inside(id, -g.pb[0], g.in[0] + g.pe[0]) &&
                           inside(ih, -g.pb[1], g.in[1] + g.pe[1]) && inside(iw, -g.pb[2], g.in[2] + g.pe[2])) {
                  ++count;  // a padding tap counts as a zero
                }
              }
            }
          }
          const int64_t o = (od * g.out[1] + oh) * g.out[2] + ow;
          yp[o] = kind == PoolKind::kMax ? max_v : static_cast<float>(sum / static_cast<double>(count));
          if (indices) indices->SetI64(p * out_plane + o, max_at < 0 ? -1 : p * in_plane + max_at);
        }
      }
    }
  }
  WriteF32(yt, y);
  return absl::OkStatus();
}

OpDef Pool(const std::string& name, PoolKind kind) {
  OpDef d;
  d.name = name;
  d.attrs = {{"auto_pad", AttrType::kString},         {"ceil_mode", AttrType::kInt}, {"dilations", AttrType::kInts},
             {"kernel_shape", AttrType::kInts, true}, {"pads", AttrType::kInts},     {"strides", AttrType::kInts}};
  d.attrs.push_back(kind == PoolKind::kMax ? AttrSpec{"storage_order", AttrType::kInt}
                                           : AttrSpec{"count_include_pad", AttrType::kInt});
  if (kind == PoolKind::kMax) d.max_outputs = 2;
  d.shape = [kind](const InferContext& ctx) { return PoolShape(ctx, kind); };
  d.kernel = [kind](KernelContext& k) { return PoolKernel(k, kind); };
  return d;
}

// ---- GlobalAveragePool --------------------------------------------------------------------

OpDef GlobalAveragePool() {
  OpDef d;
  d.name = "GlobalAveragePool";
  d.shape = [](const InferContext& ctx) -> absl::StatusOr<std::vector<OutputInfo>> {
    RETURN_IF_ERROR(ops::ExpectFloat(ctx, 0));
    RETURN_IF_ERROR(ExpectSpatialRank(ctx, 0));
    Shape out = ctx.in(0).shape;
    std::fill(out.begin() + 2, out.end(), Dim(1));
    return One(ctx.in(0).dtype, out);
  };
  d.kernel = [](KernelContext& k) -> absl::Status {
    const Tensor& xt = *k.in(0);
    const int64_t planes = xt.dims()[0] * xt.dims()[1];
    const int64_t plane = Product(xt.dims(), 2, xt.dims().size());
    std::vector<float> x = ReadF32(xt);
    std::vector<float> y(static_cast<size_t>(planes));
    for (int64_t p = 0; p < planes; ++p) {
      double sum = 0.0;
      for (int64_t i = 0; i < plane; ++i) sum += x[p * plane + i];
      y[p] = static_cast<float>(sum / static_cast<double>(plane));
    }
    WriteF32(k.outputs[0], y);
    return absl::OkStatus();
  };
  return d;
}

}  // namespace

void RegisterConvPoolOps(OpTableBuilder& t) {
  t.Add(Conv());
  t.Add(Pool("MaxPool", PoolKind::kMax));
  t.Add(Pool("AveragePool", PoolKind::kAverage));
  t.Add(GlobalAveragePool());
}

}  // namespace gcomp
