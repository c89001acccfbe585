#include "runtime/cuda/conv_desc.h"

#include <cstring>

#include "absl/strings/str_cat.h"

namespace gcomp::cuda {

absl::StatusOr<ConvGraphDesc> MapConvGraph(const runtime::ConvParams& p, int64_t batch, bool tf32) {
  if (!p.nhwc) return absl::InvalidArgumentError("the cuDNN convolution runs NHWC convolutions");
  if (p.dtype != p.wdtype) {
    return absl::InvalidArgumentError(
        absl::StrCat("convolution operands of two types (", DTypeName(p.dtype), " and ", DTypeName(p.wdtype), ")"));
  }
  if (p.dtype != DType::kF32 && p.dtype != DType::kF16 && p.dtype != DType::kBF16) {
    return absl::InvalidArgumentError(absl::StrCat("cuDNN convolutions take f32, f16 or bf16, not ", DTypeName(p.dtype)));
  }
  if (tf32 && p.dtype != DType::kF32) return absl::InvalidArgumentError("TF32 math needs fp32 storage");
  if (batch < 1) return absl::InvalidArgumentError(absl::StrCat("batch ", batch));
  ConvGraphDesc d;
  const int64_t cg = p.c / p.group;
  d.x_dims = {batch, p.c, p.h, p.w};
  d.x_strides = {p.h * p.w * p.c, 1, p.w * p.c, p.c};
  d.w_dims = {p.cout, cg, p.kh, p.kw};
  d.w_strides = {p.kh * p.kw * cg, 1, p.kw * cg, cg};
  d.y_dims = {batch, p.cout, p.ho, p.wo};
  d.y_strides = {p.ho * p.wo * p.cout, 1, p.wo * p.cout, p.cout};
  d.bias_dims = {1, p.cout, 1, 1};
  d.bias_strides = {p.cout, 1, p.cout, p.cout};
  d.pre_pad = {p.pt, p.pl};
  d.post_pad = {p.pb, p.pr};
  d.stride = {p.sh, p.sw};
  d.dilation = {p.dh, p.dw};
  d.io_type = p.dtype;
  d.tf32 = tf32;
  d.bias = p.epi.has_bias;
  d.residual = p.epi.has_residual;
  d.group = p.group;
  if (p.epi.act == Activation::kNone || p.epi.act == Activation::kRelu) {
    d.graph_act = p.epi.act;
  } else {
    d.after_act = p.epi.act;
  }
  return d;
}

std::string ConvGraphDesc::Describe() const {
  const char* type = io_type == DType::kF16 ? "fp16" : io_type == DType::kBF16 ? "bf16" : tf32 ? "tf32" : "fp32";
  return absl::StrCat("conv_fprop ", w_dims[2], "x", w_dims[3], "/", stride[0], " ", x_dims[1], "->", y_dims[1],
                      group > 1 ? absl::StrCat(" g", group) : "", " NHWC ", type, ", fp32 compute",
                      bias ? " + bias" : "", residual ? " + residual" : "",
                      graph_act == Activation::kRelu ? " + relu" : "",
                      after_act != Activation::kNone ? absl::StrCat(", then ", ActivationName(after_act), " kernel") : "");
}

absl::StatusOr<RowMajorGemm> ConvAsGemm(const runtime::ConvParams& p, int64_t batch, bool tf32) {
  if (!p.nhwc) return absl::InvalidArgumentError("im2col runs NHWC convolutions");
  RowMajorGemm g;
  g.groups = p.group;
  g.m = batch * p.ho * p.wo;
  g.k = p.kh * p.kw * (p.c / p.group);
  g.n = p.cout / p.group;
  g.trans_b = true;  // KRSC weights: [Cout, kh*kw*C/g] row-major
  g.a_type = p.dtype;
  g.w_type = p.wdtype;
  g.tf32 = tf32;
  g.bias = p.epi.has_bias;
  g.residual = p.epi.has_residual;
  g.act = p.epi.act;
  g.a_ld = g.k * p.group;
  g.y_ld = p.cout;
  return g;
}

int64_t Im2ColBytes(const runtime::ConvParams& p, int64_t batch) {
  return batch * p.ho * p.wo * p.kh * p.kw * p.c * static_cast<int64_t>(DTypeSize(p.dtype));
}

std::vector<uint8_t> PackKrsc(const uint8_t* oihw, int64_t o, int64_t i, int64_t kh, int64_t kw, size_t es) {
  std::vector<uint8_t> out(static_cast<size_t>(o * i * kh * kw) * es);
  for (int64_t a = 0; a < o; ++a)
    for (int64_t b = 0; b < i; ++b)
      for (int64_t r = 0; r < kh; ++r)
        for (int64_t s = 0; s < kw; ++s) {
          const int64_t src = ((a * i + b) * kh + r) * kw + s;
          const int64_t dst = ((a * kh + r) * kw + s) * i + b;
          std::memcpy(out.data() + dst * es, oihw + src * es, es);
        }
  return out;
}

}  // namespace gcomp::cuda
