#include "runtime/fused_op.h"

#include "absl/strings/str_cat.h"
#include "runtime/op_geometry.h"

namespace gcomp::runtime {
namespace {


bool StorageType(DType t) { return t == DType::kF32 || t == DType::kF16 || t == DType::kBF16; }

bool Present(const KernelSpec& spec, size_t i) { return i < spec.inputs.size() && spec.inputs[i].present; }

std::optional<Epilogue> ParseEpilogue(const KernelSpec& spec, std::string* why_not) {
  absl::StatusOr<Epilogue> parsed = EpilogueFromAttributes(*spec.params);
  if (!parsed.ok()) {
    *why_not = std::string(parsed.status().message());
    return std::nullopt;
  }
  Epilogue e = *parsed;
  e.has_bias = Present(spec, kBiasInput);
  e.has_residual = Present(spec, kResidualInput);
  if (e.has_bias && !spec.inputs[kBiasInput].is_constant()) {
    *why_not = "bias is not a constant";
    return std::nullopt;
  }
  if (e.has_residual) {
    const Operand& z = spec.inputs[kResidualInput];
    if (z.dims != spec.outputs[0].dims || z.dtype != spec.outputs[0].dtype) {
      *why_not = "residual is broadcast or of another dtype than the output";
      return std::nullopt;
    }
  }
  return e;
}

}  // namespace

std::vector<AttrSpec> ConvParamSpecs() {
  return {{"auto_pad", AttrType::kString}, {"dilations", AttrType::kInts}, {"group", AttrType::kInt},
          {"kernel_shape", AttrType::kInts}, {"pads", AttrType::kInts},   {"strides", AttrType::kInts},
          {"layout", AttrType::kString},     {kActivationAttr, AttrType::kString},
          {kClipMinAttr, AttrType::kFloat},  {kClipMaxAttr, AttrType::kFloat}};
}

std::vector<AttrSpec> GemmParamSpecs() {
  return {{"transB", AttrType::kInt},
          {"alpha", AttrType::kFloat},
          {kActivationAttr, AttrType::kString},
          {kClipMinAttr, AttrType::kFloat},
          {kClipMaxAttr, AttrType::kFloat}};
}

std::optional<ConvParams> ParseConv(const KernelSpec& spec, std::string* why_not) {
  if (spec.op != "FusedConv" || spec.inputs.size() < 2 || spec.outputs.size() != 1 || !spec.params) {
    *why_not = "not a FusedConv";
    return std::nullopt;
  }
  const Attributes& a = *spec.params;
  const Operand& x = spec.inputs[0];
  const Operand& w = spec.inputs[1];
  const Operand& y = spec.outputs[0];
  if (!w.is_constant()) {
    *why_not = "W is not a constant";
    return std::nullopt;
  }
  if (x.dims.size() == 3 && w.dims.size() == 3 && y.dims.size() == 3 && a.GetString("layout", "NCHW") == "NCHW") {
    // A 1-D convolution ([N, C, W]) is a 2-D one over [N, C, 1, W] with [M, C/g, 1, k] weights:
    // the same memory, a unit H axis with kernel 1, stride 1, no padding.
    std::optional<Attributes> a2 = WidenWindowAttrsTo2d(a, w.dims[2]);
    if (!a2) {
      *why_not = "unexpected 1-D strides/dilations/pads/kernel_shape";
      return std::nullopt;
    }
    KernelSpec as_2d = spec;
    as_2d.params = &*a2;
    InsertUnitHeight(&as_2d);
    return ParseConv(as_2d, why_not);
  }
  if (x.dims.size() != 4 || w.dims.size() != 4 || y.dims.size() != 4) {
    *why_not = "not a 1-D or 2-D convolution";
    return std::nullopt;
  }
  std::string auto_pad = a.GetString("auto_pad", "NOTSET");
  if (auto_pad != "NOTSET") {
    *why_not = absl::StrCat("auto_pad ", auto_pad);
    return std::nullopt;
  }
  ConvParams p;
  std::string layout = a.GetString("layout", "NCHW");
  if (layout != "NCHW" && layout != "NHWC") {
    *why_not = absl::StrCat("layout ", layout);
    return std::nullopt;
  }
  p.nhwc = layout == "NHWC";
  p.dtype = x.dtype;
  p.wdtype = w.dtype;
  if (!StorageType(p.dtype) || !StorageType(p.wdtype) || y.dtype != p.dtype) {
    *why_not = "dtypes other than one storage type for X and Y";
    return std::nullopt;
  }
  p.n = x.dims[0];
  p.c = p.nhwc ? x.dims[3] : x.dims[1];
  p.h = p.nhwc ? x.dims[1] : x.dims[2];
  p.w = p.nhwc ? x.dims[2] : x.dims[3];
  p.cout = w.dims[0];
  p.ho = p.nhwc ? y.dims[1] : y.dims[2];
  p.wo = p.nhwc ? y.dims[2] : y.dims[3];
  p.kh = w.dims[2];
  p.kw = w.dims[3];
  std::vector<int64_t> s = a.GetInts("strides", {1, 1}), d = a.GetInts("dilations", {1, 1});
  std::vector<int64_t> pads = a.GetInts("pads", {0, 0, 0, 0});
  std::vector<int64_t> ks = a.GetInts("kernel_shape", {p.kh, p.kw});
  if (s.size() != 2 || d.size() != 2 || pads.size() != 4 || ks.size() != 2 || ks[0] != p.kh || ks[1] != p.kw) {
    *why_not = "unexpected strides/dilations/pads/kernel_shape";
    return std::nullopt;
  }
  p.sh = s[0], p.sw = s[1], p.dh = d[0], p.dw = d[1];
  p.pt = pads[0], p.pl = pads[1], p.pb = pads[2], p.pr = pads[3];
  if (p.sh < 1 || p.sw < 1 || p.dh < 1 || p.dw < 1 || p.pt < 0 || p.pl < 0 || p.pb < 0 || p.pr < 0 || p.kh < 1 ||
      p.kw < 1) {
    *why_not = "strides and dilations must be >= 1, pads >= 0, kernel dims >= 1";
    return std::nullopt;
  }
  p.group = a.GetInt("group", 1);
  if (p.group < 1 || p.c % p.group != 0 || p.cout % p.group != 0 || w.dims[1] * p.group != p.c) {
    *why_not = "inconsistent group";
    return std::nullopt;
  }
  const int64_t cy = p.nhwc ? y.dims[3] : y.dims[1];
  if (y.dims[0] != p.n || cy != p.cout || p.ho != (p.h + p.pt + p.pb - p.dh * (p.kh - 1) - 1) / p.sh + 1 ||
      p.wo != (p.w + p.pl + p.pr - p.dw * (p.kw - 1) - 1) / p.sw + 1) {
    *why_not = "output dims do not match the conv geometry";
    return std::nullopt;
  }
  std::optional<Epilogue> e = ParseEpilogue(spec, why_not);
  if (!e) return std::nullopt;
  p.epi = *e;
  if (p.epi.has_bias && NumElements(spec.inputs[kBiasInput].dims) != p.cout) {
    *why_not = "bias is not [Cout]";
    return std::nullopt;
  }
  return p;
}

std::optional<GemmParams> ParseGemm(const KernelSpec& spec, std::string* why_not, bool fp8) {
  const bool matmul = spec.op == "MatMul";
  if ((!matmul && spec.op != "FusedGemm") || spec.inputs.size() < 2 || spec.outputs.size() != 1 || !spec.params ||
      (matmul && spec.inputs.size() != 2)) {
    *why_not = "not a FusedGemm or MatMul";
    return std::nullopt;
  }
  const Attributes& a = *spec.params;
  const Operand& x = spec.inputs[0];
  const Operand& w = spec.inputs[1];
  const Operand& y = spec.outputs[0];
  if (!w.is_constant() || w.dims.size() != 2) {
    *why_not = "B is not a constant matrix";
    return std::nullopt;
  }
  if (x.dims.empty() || (matmul && x.dims.size() < 2)) {
    *why_not = "A has too low a rank";
    return std::nullopt;
  }
  for (const auto& [name, v] : a.all()) {
    if (name != "transB" && name != "alpha" && name != "activation" && name != "clip_min" && name != "clip_max") {
      *why_not = absl::StrCat("attribute ", name);
      return std::nullopt;
    }
  }
  GemmParams p;
  p.dtype = x.dtype;
  p.wdtype = w.dtype;
  if (!matmul && x.dtype == DType::kF8E4M3) {
    if (!fp8) {
      *why_not = "fp8 operands";
      return std::nullopt;
    }
    const bool scales = Present(spec, kScaleBInput) && spec.inputs[kScaleBInput].is_constant() &&
                        spec.inputs[kScaleBInput].dtype == DType::kF32 && a.GetInt("transB", 0) != 0 &&
                        NumElements(spec.inputs[kScaleBInput].dims) == w.dims[0];
    if (w.dtype != DType::kF8E4M3 || y.dtype != DType::kF16 || !scales) {
      *why_not = "an fp8 GEMM other than e4m3 A and B [N,K] with f32 [N] column scales and f16 output";
      return std::nullopt;
    }
    p.fp8 = true;
    p.dtype = p.wdtype = DType::kF16;
  } else if (Present(spec, kScaleBInput)) {
    *why_not = "column scales without fp8 operands";
    return std::nullopt;
  }
  if (!StorageType(p.dtype) || !StorageType(p.wdtype) || y.dtype != p.dtype) {
    *why_not = "dtypes other than one storage type for A and Y";
    return std::nullopt;
  }
  p.trans_b = !matmul && a.GetInt("transB", 0) != 0;
  p.alpha = matmul ? 1.0f : a.GetFloat("alpha", 1.0f);
  p.k = x.dims.back();
  p.m = p.k ? NumElements(x.dims) / p.k : 0;
  p.n = p.trans_b ? w.dims[0] : w.dims[1];
  const int64_t kb = p.trans_b ? w.dims[1] : w.dims[0];
  std::vector<int64_t> want = x.dims;
  want.back() = p.n;
  if (kb != p.k || y.dims != want || p.m == 0 || p.k == 0 || p.n == 0) {
    *why_not = "dims do not match a GEMM";
    return std::nullopt;
  }
  if (matmul) return p;
  std::optional<Epilogue> e = ParseEpilogue(spec, why_not);
  if (!e) return std::nullopt;
  p.epi = *e;
  if (p.epi.has_bias && NumElements(spec.inputs[kBiasInput].dims) != p.n) {
    *why_not = "bias is not [N]";
    return std::nullopt;
  }
  return p;
}

std::string DescribeConv(const ConvParams& p) {
  return absl::StrCat(p.kh, "x", p.kw, "/", p.sh, " ", p.c, "->", p.cout,
                      p.group > 1 ? absl::StrCat(" g", p.group) : "", " ", p.nhwc ? "NHWC" : "NCHW", " ",
                      DTypeName(p.dtype), DescribeEpilogue(p.epi));
}

std::string DescribeGemm(const GemmParams& p) {
  return absl::StrCat("M", p.m, " K", p.k, " N", p.n, p.trans_b ? " transB" : "", " ",
                      p.fp8 ? "e4m3 -> " : "", DTypeName(p.dtype),
                      DescribeEpilogue(p.epi));
}

}  // namespace gcomp::runtime
