// What the own GEMM entries (gemm.cc: AMX, gemm_avx2.cc: AVX2, conv_avx2.cc: the implicit-GEMM
// convolution) share: `pack` of a step's constant operands, where the weights become the entry's
// panels and the bias is stored as it is, and the kernel instance `create` makes.
#pragma once

#include <memory>
#include <vector>

#include "core/status_macros.h"
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

}  // namespace gcomp::cpu::own
