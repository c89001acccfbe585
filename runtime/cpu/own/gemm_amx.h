// The AMX tiles of cpu.amx.gemm (gemm.cc), compiled in gemm_amx.cc with AMX, AVX-512 and
// AVX512-BF16 enabled; called only where CpuSimdLevel() (simd.h) is kAmxBf16, between
// amx::ConfigureTiles and amx::ReleaseTiles (attention_amx.h) on the calling thread.
//
// B is packed in panels of kGemmPanelCols columns (N padded with zero columns to a multiple of
// it): panel p holds, per step of 32 reduction elements, two tiles of 16 rows x 64 bytes, the
// row r of tile t being the bf16 pairs (B[32s + 2r, c], B[32s + 2r + 1, c]) of the 16 columns
// c = 32p + 16t + 0..15 (the VNNI layout tdpbf16ps reads). One panel is K / 32 such steps,
// contiguous, so a panel streams from memory in order.
#pragma once

#include <cstdint>

#include "core/epilogue.h"

namespace gcomp::cpu::own::amx {

inline constexpr int64_t kGemmPanelCols = 32;
inline constexpr int64_t kGemmBlockRows = 32;
inline constexpr int64_t kGemmStep = 32;  // reduction elements per tile product

// Elements of B (bf16) in the packed form of a K x N matrix (K a multiple of kGemmStep).
inline int64_t PackedGemmElements(int64_t k, int64_t n) {
  return (n + kGemmPanelCols - 1) / kGemmPanelCols * kGemmPanelCols * k;
}

// One GEMM's operands: Y[M x N] = act(A[M x K] B + bias + Z), bf16 A, B, Z and Y, fp32 bias.
struct GemmOperands {
  const uint16_t* a = nullptr;         // row-major, rows K apart
  const uint16_t* a_tail = nullptr;    // rows [M - M % 32, M) of A, zero-padded to 32 rows (when M % 32)
  const uint16_t* b = nullptr;         // packed panels
  const float* bias = nullptr;         // [N] or nullptr
  const uint16_t* residual = nullptr;  // Z [M x N] or nullptr; may be Y itself
  uint16_t* y = nullptr;
  int64_t m = 0, k = 0, n = 0;
  Activation act = Activation::kNone;
  float clip_min = 0.0f, clip_max = 0.0f;
};

// A block whose accumulators are in scratch and whose epilogue (bias, residual, activation,
// rounding to bf16) is not yet done: rows [done, rows) of Y rows [r0, r0 + rows), columns [c0,
// c0 + cols).
struct PendingBlock {
  const float* acc = nullptr;
  int64_t r0 = 0, rows = 0, done = 0, c0 = 0, cols = 0;
};

// Y's row blocks [row_block0, row_block1) (kGemmBlockRows rows each, the last one partial) x
// panel `panel`. The panel's steps are prefetched ahead of the first row block. Each block's
// epilogue is left pending and done while the next block's tiles multiply (rows spread over its
// steps); FinishBlock does what is left of it, at a thread's end. `scratch`: 2 x kGemmBlockRows x
// kGemmPanelCols floats, 64-byte aligned, this thread's.
void GemmPanel(const GemmOperands& g, int64_t row_block0, int64_t row_block1, int64_t panel, float* scratch,
               PendingBlock& pending);
void FinishBlock(const GemmOperands& g, PendingBlock& pending);

}  // namespace gcomp::cpu::own::amx
