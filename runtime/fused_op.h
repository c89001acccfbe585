// What a backend's GEMM and convolution kernels read from a FusedConv / FusedGemm / MatMul step:
// its geometry, storage types and epilogue (graph/ops/fused_ops.cc defines the semantics), and
// the parameter blobs those entries declare. Every backend parses these steps here, once.
// Parsing returns nullopt with `why_not` set when a step is outside what the parser describes (a
// kernel table then asks the next entry), never an error.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/epilogue.h"
#include "runtime/kernel.h"

namespace gcomp::runtime {

// The fused-op input indices.
inline constexpr size_t kBiasInput = 2;
inline constexpr size_t kResidualInput = 3;
inline constexpr size_t kScaleBInput = 4;  // FusedGemm's fp8 form: B's per-column dequantization

struct ConvParams {
  bool nhwc = false;
  int64_t n = 0, c = 0, h = 0, w = 0;  // input
  int64_t cout = 0, ho = 0, wo = 0;    // output
  int64_t kh = 0, kw = 0, sh = 1, sw = 1, dh = 1, dw = 1;
  int64_t pt = 0, pl = 0, pb = 0, pr = 0;
  int64_t group = 1;
  DType dtype = DType::kF32;   // X, Z and Y
  DType wdtype = DType::kF32;  // W (and B)
  Epilogue epi;
};

struct GemmParams {
  int64_t m = 0, k = 0, n = 0;
  bool trans_b = false;
  float alpha = 1.0f;
  DType dtype = DType::kF32;   // A, Z and Y
  DType wdtype = DType::kF32;  // B (and bias)
  // The fp8 form (graph/ops/fused_ops.cc): A and B are e4m3 bytes, B [N, K] (trans_b), input
  // kScaleBInput the f32 [N] column factors; dtype and wdtype are then f16 (Y, Z and bias).
  bool fp8 = false;
  Epilogue epi;
};

// The parameter blobs of the conv and GEMM entries: the fused op's geometry and epilogue attributes.
std::vector<AttrSpec> ConvParamSpecs();
std::vector<AttrSpec> GemmParamSpecs();

std::optional<ConvParams> ParseConv(const KernelSpec& spec, std::string* why_not);
// FusedGemm, or MatMul (A [..., K] x constant B [K, N], no epilogue). The fp8 form of FusedGemm
// only for a caller that runs it (`fp8`); others are told "fp8 operands".
std::optional<GemmParams> ParseGemm(const KernelSpec& spec, std::string* why_not, bool fp8 = false);

std::string DescribeConv(const ConvParams& p);
std::string DescribeGemm(const GemmParams& p);

}  // namespace gcomp::runtime
