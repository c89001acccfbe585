// The oneDNN and OpenBLAS kernels' view of FusedConv / FusedGemm / MatMul steps: the parsing every
// backend shares (runtime/fused_op.h), and the cpu's fp32 epilogue and constant helpers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/epilogue.h"
#include "runtime/fused_op.h"
#include "runtime/cpu/kernel.h"

namespace gcomp::cpu::blas {

using Act = Activation;  // core/epilogue.h

using runtime::ConvParams;
using runtime::ConvParamSpecs;
using runtime::DescribeConv;
using runtime::DescribeGemm;
using runtime::GemmParams;
using runtime::GemmParamSpecs;
using runtime::kBiasInput;
using runtime::kResidualInput;
using runtime::ParseConv;
using runtime::ParseGemm;

// y[i] = act(y[i] + bias[i]) over one row of n values (bias may be nullptr).
void BiasActRow(const Epilogue& e, const float* bias, float* y, int64_t n);

// The constant input `index` as fp32 (LoadF32 of the plain bytes); an error when its byte count
// does not match its dims and dtype.
absl::StatusOr<std::vector<float>> ConstantF32(const KernelSpec& spec, size_t index);

}  // namespace gcomp::cpu::blas
