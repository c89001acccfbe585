// ONNX opset-23 Attention: Y = softmax(softcap(scale * Q K^T + bias)) V with 3-D ([B, S, H*D]) or
// 4-D ([B, H, S, D]) inputs, grouped-query heads, bool/float masks, is_causal, and a past K/V
// cache (present outputs are the concatenations). The optional qk_matmul_output follows
// qk_matmul_output_mode: 0 raw scaled QK, 1 after the bias, 2 after softcap, 3 after softmax.
// gcomp extends it with a strided 3-D form (attribute qkv_layout, below) that reads the heads of
// Q, K and V in place from wider rows, batch-first or sequence-first.
#include <algorithm>
#include <cmath>
#include <limits>

#include "graph/ops/op_helpers.h"
#include "core/status_macros.h"

namespace gcomp {
namespace {

using ops::ReadF32;
using ops::WriteF32;

enum Input { kQ = 0, kK, kV, kMask, kPastKey, kPastValue };
enum Output { kY = 0, kPresentKey, kPresentValue, kQkOutput };

// Where element (b, h, s, d) of a Q/K/V-like tensor lives: 3-D rows of `width` elements whose
// heads start at column `offset` ([B, S, W], or [S, B, W] when seq_first), or 4-D [B, H, S, D].
// ONNX's 3-D form is width H*D, offset 0, batch first.
struct HeadLayout {
  bool packed;
  int64_t heads, seq, head_size;
  int64_t width = 0, offset = 0, batch = 0;
  bool seq_first = false;
  int64_t Index(int64_t b, int64_t h, int64_t s, int64_t d) const {
    if (!packed) return ((b * heads + h) * seq + s) * head_size + d;
    const int64_t row = seq_first ? s * batch + b : b * seq + s;
    return row * width + offset + h * head_size + d;
  }
};

// gcomp's strided form of Attention (attribute qkv_layout, set by fold-attention-layout): Q, K and
// V are 3-D row-major [B, S, W] ("BSW") or [S, B, W] ("SBW") tensors whose heads sit side by side
// from column q_offset / k_offset / v_offset, head_size / v_head_size wide (one packed QKV
// projection output can be all three); Y is [B, S, Hq*Dv] or [S, B, Hq*Dv].
constexpr const char* kLayoutAttr = "qkv_layout";

// Symbolic dims of the op, resolved from either input form.
struct AttentionDims {
  Dim batch, q_heads, kv_heads, q_seq, kv_seq, head_size, v_head_size, past_seq, total_seq;
};

// `hidden` / `heads` for 3-D inputs; error when it does not divide.
absl::StatusOr<Dim> HeadSize(const InferContext& ctx, size_t i, int64_t heads, const char* attr) {
  const Dim& hidden = ctx.in(i).shape[2];
  std::optional<Dim> d = Dim::DivExact(hidden, Dim(heads));
  if (!d) {
    return ctx.Error(ctx.InputName(i), " has hidden size ", hidden.ToString(), ", expected a multiple of ", attr, " ",
                     heads);
  }
  return *d;
}

// Error when dim `axis` of input i is known to differ from `expected`.
absl::Status ExpectDim(const InferContext& ctx, size_t i, size_t axis, const Dim& expected, const char* what) {
  const Dim& actual = ctx.in(i).shape[axis];
  if (actual != expected && actual.IsConst() && expected.IsConst()) {
    return ctx.Error(ctx.InputName(i), " has ", what, " ", actual.ToString(), " (dim ", axis, "), expected ",
                     expected.ToString());
  }
  return absl::OkStatus();
}

absl::StatusOr<AttentionDims> ResolveStridedDims(const InferContext& ctx) {
  const Attributes& a = ctx.attrs();
  const std::string layout = a.GetString(kLayoutAttr, "");
  if (layout != "BSW" && layout != "SBW") {
    return ctx.Error("attribute '", kLayoutAttr, "' is '", layout, "', expected BSW or SBW");
  }
  const bool seq_first = layout == "SBW";
  for (size_t i : {kMask, kPastKey, kPastValue}) {
    if (ctx.has(i)) return ctx.Error("the ", layout, " form takes no mask or past key/value (", ctx.InputName(i), ")");
  }
  for (const char* name : {"q_num_heads", "kv_num_heads", "head_size", "v_head_size"}) {
    if (!a.Has(name) || a.GetInt(name, 0) < 1) {
      return ctx.Error("the ", layout, " form needs attribute '", name, "' >= 1");
    }
  }
  AttentionDims d;
  const int64_t qh = a.GetInt("q_num_heads", 0), kvh = a.GetInt("kv_num_heads", 0);
  const int64_t hs = a.GetInt("head_size", 0), vhs = a.GetInt("v_head_size", 0);
  if (qh % kvh != 0) return ctx.Error("q_num_heads ", qh, " is not a multiple of kv_num_heads ", kvh);
  d.q_heads = qh;
  d.kv_heads = kvh;
  d.head_size = hs;
  d.v_head_size = vhs;
  const size_t b_axis = seq_first ? 1 : 0, s_axis = seq_first ? 0 : 1;
  struct Operand {
    size_t input;
    const char* offset;
    int64_t heads, size;
  };
  for (const Operand& o : {Operand{kQ, "q_offset", qh, hs}, Operand{kK, "k_offset", kvh, hs},
                           Operand{kV, "v_offset", kvh, vhs}}) {
    RETURN_IF_ERROR(ops::ExpectRank(ctx, o.input, 3));
    const int64_t offset = a.GetInt(o.offset, 0);
    const Dim& width = ctx.in(o.input).shape[2];
    if (offset < 0 || (width.IsConst() && offset + o.heads * o.size > *width.ConstValue())) {
      return ctx.Error(ctx.InputName(o.input), " has rows of ", width.ToString(), ", expected ", o.offset, " ", offset,
                       " + ", o.heads, " heads of ", o.size, " to fit");
    }
    if (!width.IsConst()) return ctx.Error(ctx.InputName(o.input), " has rows of unknown width");
  }
  d.batch = ctx.in(kQ).shape[b_axis];
  d.q_seq = ctx.in(kQ).shape[s_axis];
  d.kv_seq = ctx.in(kK).shape[s_axis];
  for (size_t i : {kK, kV}) RETURN_IF_ERROR(ExpectDim(ctx, i, b_axis, d.batch, "batch size"));
  RETURN_IF_ERROR(ExpectDim(ctx, kV, s_axis, d.kv_seq, "sequence length"));
  d.past_seq = 0;
  d.total_seq = d.kv_seq;
  return d;
}

absl::StatusOr<AttentionDims> ResolveDims(const InferContext& ctx) {
  const Attributes& a = ctx.attrs();
  for (const char* name : {"q_num_heads", "kv_num_heads"}) {
    if (a.Has(name) && a.GetInt(name, 0) < 1) {
      return ctx.Error("attribute '", name, "' is ", a.GetInt(name, 0), ", expected >= 1");
    }
  }
  if (a.Has(kLayoutAttr)) return ResolveStridedDims(ctx);
  const int64_t rank = ctx.rank(kQ);
  if (rank != 3 && rank != 4) return ctx.Error(ctx.InputName(kQ), " has rank ", rank, ", expected 3 or 4");
  RETURN_IF_ERROR(ops::ExpectRank(ctx, kK, rank));
  RETURN_IF_ERROR(ops::ExpectRank(ctx, kV, rank));
  const Shape& q = ctx.in(kQ).shape;
  const Shape& k = ctx.in(kK).shape;
  const Shape& v = ctx.in(kV).shape;
  AttentionDims d;
  d.batch = q[0];
  Dim k_head_size;
  if (rank == 3) {
    if (!a.Has("q_num_heads") || !a.Has("kv_num_heads")) {
      return ctx.Error("3-D inputs need attributes 'q_num_heads' and 'kv_num_heads'");
    }
    const int64_t qh = a.GetInt("q_num_heads", 0), kvh = a.GetInt("kv_num_heads", 0);
    d.q_heads = qh;
    d.kv_heads = kvh;
    d.q_seq = q[1];
    d.kv_seq = k[1];
    ASSIGN_OR_RETURN(d.head_size, HeadSize(ctx, kQ, qh, "q_num_heads"));
    ASSIGN_OR_RETURN(k_head_size, HeadSize(ctx, kK, kvh, "kv_num_heads"));
    ASSIGN_OR_RETURN(d.v_head_size, HeadSize(ctx, kV, kvh, "kv_num_heads"));
    RETURN_IF_ERROR(ExpectDim(ctx, kV, 1, d.kv_seq, "sequence length"));
  } else {
    d.q_heads = q[1];
    d.q_seq = q[2];
    d.head_size = q[3];
    d.kv_heads = k[1];
    d.kv_seq = k[2];
    k_head_size = k[3];
    d.v_head_size = v[3];
    RETURN_IF_ERROR(ExpectDim(ctx, kV, 1, d.kv_heads, "head count"));
    RETURN_IF_ERROR(ExpectDim(ctx, kV, 2, d.kv_seq, "sequence length"));
    if (a.Has("q_num_heads")) RETURN_IF_ERROR(ExpectDim(ctx, kQ, 1, a.GetInt("q_num_heads", 0), "head count"));
    if (a.Has("kv_num_heads")) RETURN_IF_ERROR(ExpectDim(ctx, kK, 1, a.GetInt("kv_num_heads", 0), "head count"));
  }
  RETURN_IF_ERROR(ExpectDim(ctx, kK, 0, d.batch, "batch size"));
  RETURN_IF_ERROR(ExpectDim(ctx, kV, 0, d.batch, "batch size"));
  if (k_head_size != d.head_size && k_head_size.IsConst() && d.head_size.IsConst()) {
    return ctx.Error(ctx.InputName(kK), " has head size ", k_head_size.ToString(), ", expected ",
                     d.head_size.ToString(), " like ", ctx.InputName(kQ));
  }
  if (auto qh = d.q_heads.ConstValue(), kvh = d.kv_heads.ConstValue(); qh && kvh) {
    if (*kvh < 1 || *qh % *kvh != 0) {
      return ctx.Error("q_num_heads ", *qh, " is not a multiple of kv_num_heads ", *kvh);
    }
  } else {
    return ctx.Error("the head counts of ", ctx.InputName(kQ), " and ", ctx.InputName(kK), " must be constants, got ",
                     d.q_heads.ToString(), " and ", d.kv_heads.ToString());
  }
  d.past_seq = 0;
  if (ctx.has(kPastKey) != ctx.has(kPastValue)) {
    return ctx.Error("past_key (input 4) and past_value (input 5) must be given together");
  }
  if (ctx.has(kPastKey)) {
    RETURN_IF_ERROR(ops::ExpectRank(ctx, kPastKey, 4));
    RETURN_IF_ERROR(ops::ExpectRank(ctx, kPastValue, 4));
    RETURN_IF_ERROR(ops::ExpectSameDType(ctx, kK, kPastKey));
    RETURN_IF_ERROR(ops::ExpectSameDType(ctx, kV, kPastValue));
    d.past_seq = ctx.in(kPastKey).shape[2];
    for (size_t i : {kPastKey, kPastValue}) {
      RETURN_IF_ERROR(ExpectDim(ctx, i, 0, d.batch, "batch size"));
      RETURN_IF_ERROR(ExpectDim(ctx, i, 1, d.kv_heads, "head count"));
      RETURN_IF_ERROR(ExpectDim(ctx, i, 2, d.past_seq, "past sequence length"));
    }
    RETURN_IF_ERROR(ExpectDim(ctx, kPastKey, 3, d.head_size, "head size"));
    RETURN_IF_ERROR(ExpectDim(ctx, kPastValue, 3, d.v_head_size, "head size"));
  }
  ASSIGN_OR_RETURN(d.total_seq, Dim::Add(d.past_seq, d.kv_seq));
  return d;
}

absl::Status CheckAttrs(const InferContext& ctx) {
  const Attributes& a = ctx.attrs();
  if (int64_t c = a.GetInt("is_causal", 0); c != 0 && c != 1) {
    return ctx.Error("attribute 'is_causal' is ", c, ", expected 0 or 1");
  }
  if (int64_t m = a.GetInt("qk_matmul_output_mode", 0); m < 0 || m > 3) {
    return ctx.Error("attribute 'qk_matmul_output_mode' is ", m, ", expected 0, 1, 2 or 3");
  }
  if (float s = a.GetFloat("softcap", 0.0f); !(s >= 0.0f) || std::isinf(s)) {
    return ctx.Error("attribute 'softcap' is ", s, ", expected a finite value >= 0");
  }
  if (a.Has("scale") && !std::isfinite(a.GetFloat("scale", 1.0f))) {
    return ctx.Error("attribute 'scale' is ", a.GetFloat("scale", 1.0f), ", expected a finite value");
  }
  if (a.Has("softmax_precision")) {
    // Computing in fp32 is at least as precise as any of these; the kernel always does.
    int64_t p = a.GetInt("softmax_precision", 1);
    if (p != 1 && p != 10 && p != 11 && p != 16) {
      return ctx.Error("attribute 'softmax_precision' is ", p,
                       ", expected an ONNX float type (1 float, 10 float16, 11 double, 16 bfloat16)");
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<OutputInfo>> AttentionShape(const InferContext& ctx) {
  for (size_t i : {kQ, kK, kV}) RETURN_IF_ERROR(ops::ExpectFloat(ctx, i));
  RETURN_IF_ERROR(CheckAttrs(ctx));
  ASSIGN_OR_RETURN(AttentionDims d, ResolveDims(ctx));
  const Shape scores = {d.batch, d.q_heads, d.q_seq, d.total_seq};
  if (ctx.has(kMask)) {
    const ValueInfo& m = ctx.in(kMask);
    if (m.dtype != DType::kBool && m.dtype != ctx.in(kQ).dtype) {
      return ctx.Error(ctx.InputName(kMask), " has dtype ", DTypeName(m.dtype), ", expected bool or ",
                       DTypeName(ctx.in(kQ).dtype));
    }
    bool ok = m.shape.size() <= scores.size();
    for (size_t i = 0; ok && i < m.shape.size(); ++i) {
      const Dim& md = m.shape[m.shape.size() - 1 - i];
      const Dim& sd = scores[scores.size() - 1 - i];
      ok = md == sd || md == Dim(1) || !md.IsConst() || !sd.IsConst();
    }
    if (!ok) {
      return ctx.Error(ctx.InputName(kMask), " has shape ", ShapeToString(m.shape),
                       ", expected a shape that broadcasts to ", ShapeToString(scores),
                       " (batch, q_num_heads, q_sequence_length, total_sequence_length)");
    }
  }
  Shape y;
  if (ctx.attrs().GetString(kLayoutAttr, "") == "SBW") {
    ASSIGN_OR_RETURN(Dim hidden, Dim::Mul(d.q_heads, d.v_head_size));
    y = {d.q_seq, d.batch, hidden};
  } else if (ctx.rank(kQ) == 3) {
    ASSIGN_OR_RETURN(Dim hidden, Dim::Mul(d.q_heads, d.v_head_size));
    y = {d.batch, d.q_seq, hidden};
  } else {
    y = {d.batch, d.q_heads, d.q_seq, d.v_head_size};
  }
  return std::vector<OutputInfo>{
      ops::Out(ctx.in(kQ).dtype, y),
      ops::Out(ctx.in(kK).dtype, {d.batch, d.kv_heads, d.total_seq, d.head_size}),
      ops::Out(ctx.in(kV).dtype, {d.batch, d.kv_heads, d.total_seq, d.v_head_size}),
      ops::Out(ctx.in(kQ).dtype, scores),
  };
}

bool Wanted(const KernelContext& k, size_t out) {
  return out < k.outputs.size() && out < k.node.outputs.size() && k.node.outputs[out] != nullptr;
}

absl::Status AttentionKernel(KernelContext& k) {
  const Attributes& a = k.attrs();
  const Tensor& qt = *k.in(kQ);
  const Tensor& kt = *k.in(kK);
  const Tensor& vt = *k.in(kV);
  const bool packed = qt.rank() == 3;
  const bool strided = a.Has(kLayoutAttr), seq_first = a.GetString(kLayoutAttr, "") == "SBW";
  const int64_t batch = qt.dims()[seq_first ? 1 : 0];
  const int64_t q_heads = packed ? a.GetInt("q_num_heads", 1) : qt.dims()[1];
  const int64_t kv_heads = packed ? a.GetInt("kv_num_heads", 1) : kt.dims()[1];
  const int64_t q_seq = qt.dims()[packed && !seq_first ? 1 : seq_first ? 0 : 2];
  const int64_t kv_seq = kt.dims()[packed && !seq_first ? 1 : seq_first ? 0 : 2];
  const int64_t head_size = strided ? a.GetInt("head_size", 1) : packed ? qt.dims()[2] / q_heads : qt.dims()[3];
  const int64_t v_head_size = strided ? a.GetInt("v_head_size", 1) : packed ? vt.dims()[2] / kv_heads : vt.dims()[3];
  const Tensor* past_key = k.in(kPastKey);
  const Tensor* past_value = k.in(kPastValue);
  const int64_t past_seq = past_key ? past_key->dims()[2] : 0;
  const int64_t total = past_seq + kv_seq;
  const int64_t group = q_heads / kv_heads;
  auto layout = [&](const Tensor* t, int64_t heads, int64_t seq, int64_t size, const char* offset) {
    HeadLayout l{packed, heads, seq, size};
    l.width = t ? t->dims()[2] : heads * size;
    l.offset = a.GetInt(offset, 0);
    l.batch = batch;
    l.seq_first = seq_first;
    return l;
  };
  const HeadLayout lq = layout(&qt, q_heads, q_seq, head_size, "q_offset");
  const HeadLayout lk = layout(&kt, kv_heads, kv_seq, head_size, "k_offset");
  const HeadLayout lv = layout(&vt, kv_heads, kv_seq, v_head_size, "v_offset");
  const HeadLayout ly = layout(nullptr, q_heads, q_seq, v_head_size, "");

  // present_key / present_value: [B, Hkv, total, D], past first.
  std::vector<float> q = ReadF32(qt), kin = ReadF32(kt), vin = ReadF32(vt);
  std::vector<float> pk = past_key ? ReadF32(*past_key) : std::vector<float>();
  std::vector<float> pv = past_value ? ReadF32(*past_value) : std::vector<float>();
  auto concat = [&](const std::vector<float>& past, const std::vector<float>& cur, const HeadLayout& l) {
    std::vector<float> out(static_cast<size_t>(batch * kv_heads * total * l.head_size));
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t h = 0; h < kv_heads; ++h) {
        for (int64_t t = 0; t < total; ++t) {
          float* dst = out.data() + ((b * kv_heads + h) * total + t) * l.head_size;
          for (int64_t e = 0; e < l.head_size; ++e) {
            dst[e] = t < past_seq ? past[((b * kv_heads + h) * past_seq + t) * l.head_size + e]
                                  : cur[l.Index(b, h, t - past_seq, e)];
          }
        }
      }
    }
    return out;
  };
  const std::vector<float> keys = concat(pk, kin, lk), values = concat(pv, vin, lv);

  const Tensor* mask_t = k.in(kMask);
  std::vector<float> mask;
  std::vector<int64_t> mask_map;
  const bool bool_mask = mask_t && mask_t->dtype() == DType::kBool;
  if (mask_t) {
    mask = ReadF32(*mask_t);
    mask_map = ops::BroadcastIndexMap(mask_t->dims(), {batch, q_heads, q_seq, total});
  }
  const bool causal = a.GetInt("is_causal", 0) == 1;
  const float scale =
      a.Has("scale") ? a.GetFloat("scale", 1.0f) : static_cast<float>(1.0 / std::sqrt(static_cast<double>(head_size)));
  const float softcap = a.GetFloat("softcap", 0.0f);
  const int64_t mode = a.GetInt("qk_matmul_output_mode", 0);
  const bool want_qk = Wanted(k, kQkOutput);

  std::vector<float> y(static_cast<size_t>(batch * q_heads * q_seq * v_head_size));
  std::vector<float> qk_out(want_qk ? static_cast<size_t>(batch * q_heads * q_seq * total) : 0);
  std::vector<float> s(static_cast<size_t>(total));
  std::vector<float> acc(static_cast<size_t>(v_head_size));
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t h = 0; h < q_heads; ++h) {
      const int64_t hk = h / group;  // grouped-query: consecutive q heads share a kv head
      const float* kbase = keys.data() + (b * kv_heads + hk) * total * head_size;
      const float* vbase = values.data() + (b * kv_heads + hk) * total * v_head_size;
      for (int64_t i = 0; i < q_seq; ++i) {
        const int64_t row = ((b * q_heads + h) * q_seq + i) * total;
        float* qk_row = want_qk ? qk_out.data() + row : nullptr;
        const float* qrow = q.data() + lq.Index(b, h, i, 0);  // head elements are contiguous
        for (int64_t j = 0; j < total; ++j) {
          float dot = 0.0f;
          for (int64_t e = 0; e < head_size; ++e) dot += qrow[e] * kbase[j * head_size + e];
          float v = dot * scale;
          if (qk_row && mode == 0) qk_row[j] = v;
          if (mask_t) {
            const float m = mask[mask_map[row + j]];
            v += bool_mask ? (m != 0.0f ? 0.0f : -INFINITY) : m;
          }
          if (causal && j > i + past_seq) v -= std::numeric_limits<float>::infinity();
          if (qk_row && mode == 1) qk_row[j] = v;
          if (softcap > 0.0f) v = softcap * std::tanh(v / softcap);
          if (qk_row && mode == 2) qk_row[j] = v;
          s[j] = v;
        }
        float mx = -INFINITY;
        for (int64_t j = 0; j < total; ++j) mx = std::max(mx, s[j]);
        double sum = 0.0;
        for (int64_t j = 0; j < total; ++j) sum += std::exp(static_cast<double>(s[j]) - mx);
        std::fill(acc.begin(), acc.end(), 0.0f);
        for (int64_t j = 0; j < total; ++j) {
          const float p = static_cast<float>(std::exp(static_cast<double>(s[j]) - mx) / sum);
          if (qk_row && mode == 3) qk_row[j] = p;
          const float* vrow = vbase + j * v_head_size;
          for (int64_t e = 0; e < v_head_size; ++e) acc[e] += p * vrow[e];
        }
        std::copy(acc.begin(), acc.end(), y.begin() + ly.Index(b, h, i, 0));
      }
    }
  }
  WriteF32(k.outputs[kY], y);
  if (Wanted(k, kPresentKey)) WriteF32(k.outputs[kPresentKey], keys);
  if (Wanted(k, kPresentValue)) WriteF32(k.outputs[kPresentValue], values);
  if (want_qk) WriteF32(k.outputs[kQkOutput], qk_out);
  return absl::OkStatus();
}

}  // namespace

void RegisterAttentionOp(OpTableBuilder& t) {
  OpDef d;
  d.name = "Attention";
  d.min_inputs = 3;
  d.max_inputs = 6;
  d.max_outputs = 4;
  d.attrs = {{"is_causal", AttrType::kInt},        {"kv_num_heads", AttrType::kInt},
             {"q_num_heads", AttrType::kInt},      {"qk_matmul_output_mode", AttrType::kInt},
             {"scale", AttrType::kFloat},          {"softcap", AttrType::kFloat},
             {"softmax_precision", AttrType::kInt}, {kLayoutAttr, AttrType::kString},
             {"head_size", AttrType::kInt},        {"v_head_size", AttrType::kInt},
             {"q_offset", AttrType::kInt},         {"k_offset", AttrType::kInt},
             {"v_offset", AttrType::kInt}};
  d.shape = AttentionShape;
  d.kernel = AttentionKernel;
  t.Add(std::move(d));
}

}  // namespace gcomp
