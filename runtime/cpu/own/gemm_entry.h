// What the own GEMM entries (gemm.cc: AMX, gemm_avx2.cc: AVX2, conv_avx2.cc: the implicit-GEMM
// convolution) share: `pack` of a step's constant operands, where the weights become the entry's
// panels and the bias is stored as it is, and the kernel instance `create` makes.
#pragma once

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "runtime/cpu/blas/fused_params.h"
#include "runtime/cpu/kernel.h"
#include "runtime/fused_op.h"

namespace gcomp::cpu::own {

// Input `index` of a GEMM step packed: B (input 1) as `pack_panels(T* dst)` writes it into
// `elements` values of T, in format `format`; any other constant (the bias) as it is.
template <typename T, typename PackPanels>
absl::StatusOr<Packed> PackGemmOperand(const KernelSpec& spec, size_t index, int64_t elements, const char* format,
                                       PackPanels pack_panels) {
  Packed packed;
  const Operand& o = spec.inputs[index];
  if (index != 1) {
    packed.bytes.assign(o.constant, o.constant + o.constant_bytes);
    return packed;
  }
  std::vector<T> panels(static_cast<size_t>(elements));
  RETURN_IF_ERROR(pack_panels(panels.data()));
  const auto* bytes = reinterpret_cast<const uint8_t*>(panels.data());
  packed.bytes.assign(bytes, bytes + panels.size() * sizeof(T));
  packed.format = format;
  return packed;
}

// A Kernel (with `absl::Status Init(const KernelSpec&, const Params&)`: GemmParams, or ConvParams for
// conv_avx2.cc) for the step.
template <typename Kernel, typename Params>
absl::StatusOr<std::unique_ptr<ShapedKernel>> MakeGemmKernel(const KernelSpec& spec, const Params& p) {
  auto k = std::make_unique<Kernel>();
  RETURN_IF_ERROR(k->Init(spec, p));
  return std::unique_ptr<ShapedKernel>(std::move(k));
}

// The own kernels' weight panels of T (f32, or bf16 as uint16_t; `bytes` long in format `format`):
// the plan's as they are where packed and 32-byte aligned, else a copy of them, or
// `pack_panels(T* dst)` of plain weights, held in `owned`. `id` names the entry in errors.
template <typename T, typename PackPanels>
absl::StatusOr<const T*> PackedPanels(const KernelSpec& spec, const char* id, const char* format, size_t bytes,
                                      AlignedArray<T>& owned, PackPanels pack_panels) {
  const Operand& w = spec.inputs[1];
  if (!w.format.empty() && (w.format != format || w.constant_bytes != bytes)) {
    return absl::InvalidArgumentError(absl::StrCat("node '", spec.name, "' (", spec.op, "): ", id, ": weights format '",
                                                   w.format.substr(0, 40), "' (", w.constant_bytes, " bytes) is not ",
                                                   format, " (", bytes, " bytes)"));
  }
  if (!w.format.empty() && reinterpret_cast<uintptr_t>(w.constant) % 32 == 0) {
    return reinterpret_cast<const T*>(w.constant);
  }
  owned = AlignedArray<T>(bytes / sizeof(T));
  if (!owned) return absl::ResourceExhaustedError(absl::StrCat("node '", spec.name, "': ", id, " weights"));
  if (w.format.empty()) {
    RETURN_IF_ERROR(pack_panels(owned.data()));
  } else {
    std::memcpy(owned.data(), w.constant, bytes);
  }
  return owned.data();
}

// The AVX2 kernels' f32 panels.
template <typename PackPanels>
absl::StatusOr<const float*> F32Panels(const KernelSpec& spec, const char* id, const char* format, size_t bytes,
                                       AlignedArray<float>& owned, PackPanels pack_panels) {
  return PackedPanels<float>(spec, id, format, bytes, owned, pack_panels);
}

// The step's bias as f32, zero-padded to `cols` values (whole panels), into `bias`; zeros
// without one.
inline absl::Status PaddedBias(const KernelSpec& spec, bool has_bias, int64_t cols, AlignedArray<float>& bias) {
  bias = AlignedArray<float>(static_cast<size_t>(cols));
  if (!bias) return absl::ResourceExhaustedError(absl::StrCat("node '", spec.name, "': bias"));
  if (!has_bias) return absl::OkStatus();
  ASSIGN_OR_RETURN(std::vector<float> b, blas::ConstantF32(spec, runtime::kBiasInput));
  std::copy(b.begin(), b.end(), bias.data());
  return absl::OkStatus();
}

}  // namespace gcomp::cpu::own
