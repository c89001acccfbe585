// AMX tiles and the AVX-512 epilogue of cpu.amx.gemm; see gemm_amx.h. This file alone is compiled
// with AMX (and AVX-512, AVX512-BF16) enabled, and uses intrinsics and internal functions only
// (and the out-of-line ApplyActivation for the tanh GELU, called with no accumulators in tiles).
// Tiles (amx::ConfigureTiles: all 16 rows x 64 bytes): 0-3 the fp32 accumulators of a 32 x 32
// block (2 x 2), 4-5 two 16-row A tiles, 6-7 the panel's two B tiles of one step.
#include "runtime/cpu/own/gemm_amx.h"

#include <immintrin.h>

#include "runtime/cpu/erf_rational.h"
#include "runtime/cpu/own/avx512_lanes.h"

namespace gcomp::cpu::own::amx {
namespace {

// Steps of 32 reduction elements between a prefetch and the tile load it serves.
constexpr int64_t kAhead = 4;

// act(v) on 16 lanes. kGeluTanh falls back to the exact scalar math per lane.
inline __m512 Activate(__m512 v, Activation act, float clip_min, float clip_max) {
  switch (act) {
    case Activation::kNone:
      return v;
    case Activation::kRelu:
      return _mm512_max_ps(_mm512_setzero_ps(), v);  // NaN stays NaN (max returns its second operand)
    case Activation::kClip:
      return _mm512_min_ps(_mm512_set1_ps(clip_max), _mm512_max_ps(_mm512_set1_ps(clip_min), v));
    case Activation::kGelu: {
      __m512 x = _mm512_mul_ps(v, _mm512_set1_ps(0.70710678118654752f));
      x = _mm512_min_ps(_mm512_max_ps(x, _mm512_set1_ps(-4.0f)), _mm512_set1_ps(4.0f));
      const __m512 erf = ErfRational(x);
      return _mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(0.5f), v), _mm512_add_ps(_mm512_set1_ps(1.0f), erf));
    }
    case Activation::kGeluTanh: {
      alignas(64) float lanes[16];
      _mm512_store_ps(lanes, v);
      for (float& l : lanes) l = ApplyActivation(act, l, clip_min, clip_max);
      return _mm512_load_ps(lanes);
    }
  }
  return v;
}

// Rows [i0, i1) of the block `e` describes, from its accumulators (kGemmPanelCols floats per row)
// into Y.
void EpilogueRows(const GemmOperands& g, const PendingBlock& e, int64_t i0, int64_t i1) {
  const int64_t cols = e.cols;
  const __mmask16 masks[2] = {Lanes(cols), Lanes(cols - 16)};
  __m512 bias[2] = {_mm512_setzero_ps(), _mm512_setzero_ps()};
  if (g.bias) {
    for (int h = 0; h < 2; ++h) bias[h] = _mm512_maskz_loadu_ps(masks[h], g.bias + e.c0 + 16 * h);
  }
  for (int64_t i = i0; i < i1; ++i) {
    const int64_t off = (e.r0 + i) * g.n + e.c0;
    for (int h = 0; h < 2; ++h) {
      if (!masks[h]) continue;
      __m512 v = _mm512_add_ps(_mm512_load_ps(e.acc + i * kGemmPanelCols + 16 * h), bias[h]);
      if (g.residual) v = _mm512_add_ps(v, LoadBf16(g.residual + off + 16 * h, masks[h]));
      v = Activate(v, g.act, g.clip_min, g.clip_max);
      StoreBf16(g.y + off + 16 * h, masks[h], v);
    }
  }
}

}  // namespace

void FinishBlock(const GemmOperands& g, PendingBlock& pending) {
  if (pending.done < pending.rows) EpilogueRows(g, pending, pending.done, pending.rows);
  pending.done = pending.rows;
}

void GemmPanel(const GemmOperands& g, int64_t row_block0, int64_t row_block1, int64_t panel, float* scratch,
               PendingBlock& pending) {
  const int64_t steps = g.k / kGemmStep, lda = g.k * 2;
  const uint16_t* b0 = g.b + panel * steps * 2 * 512;
  const int64_t full_blocks = g.m / kGemmBlockRows;
  const int64_t c0 = panel * kGemmPanelCols, cols = g.n - c0 < kGemmPanelCols ? g.n - c0 : kGemmPanelCols;
  // Rows of the pending block's epilogue per step: all of them by the loop's end.
  const int64_t per_step = (kGemmBlockRows + steps - 1) / steps;
  const bool pipelined = g.act != Activation::kGeluTanh;
  for (int64_t rb = row_block0; rb < row_block1; ++rb) {
    const uint16_t* a0 = rb < full_blocks ? g.a + rb * kGemmBlockRows * g.k : g.a_tail;
    const uint16_t* a1 = a0 + 16 * g.k;
    // The first row block reads the panel from memory: its steps are fetched kAhead ahead.
    const bool fetch_b = rb == row_block0;
    // This block's Y (and residual) lines, one per row and a row apart (a page apart at wide N,
    // beyond the hardware prefetcher): fetched now, for its epilogue during the next block.
    const int64_t r0 = rb * kGemmBlockRows, rows = g.m - r0 < kGemmBlockRows ? g.m - r0 : kGemmBlockRows;
    for (int64_t i = 0; i < rows; ++i) {
      const int64_t off = (r0 + i) * g.n + c0;
      if (g.residual && g.residual != g.y) _mm_prefetch(reinterpret_cast<const char*>(g.residual + off), _MM_HINT_T1);
      _mm_prefetch(reinterpret_cast<const char*>(g.y + off), _MM_HINT_T1);
    }
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
    const uint16_t* b = b0;
    for (int64_t s = 0; s < steps; ++s, b += 1024) {
      if (fetch_b && s + kAhead < steps) {
        for (int64_t l = 0; l < 1024; l += 32) {
          _mm_prefetch(reinterpret_cast<const char*>(b + kAhead * 1024 + l), _MM_HINT_T0);
        }
      }
      _tile_loadd(4, a0 + s * kGemmStep, lda);
      _tile_loadd(6, b, 64);
      _tile_dpbf16ps(0, 4, 6);
      _tile_loadd(7, b + 512, 64);
      _tile_dpbf16ps(1, 4, 7);
      _tile_loadd(5, a1 + s * kGemmStep, lda);
      _tile_dpbf16ps(2, 5, 6);
      _tile_dpbf16ps(3, 5, 7);
      // The previous block's epilogue runs on the vector units while the tiles multiply (not the
      // tanh GELU's, which calls out of line while the tiles hold accumulators).
      if (pipelined && pending.done < pending.rows) {
        const int64_t end = pending.done + per_step < pending.rows ? pending.done + per_step : pending.rows;
        EpilogueRows(g, pending, pending.done, end);
        pending.done = end;
      }
    }
    // Accumulators into the scratch half the pending block does not use, then what is left of
    // the pending block's epilogue.
    float* acc = pending.acc == scratch ? scratch + kGemmBlockRows * kGemmPanelCols : scratch;
    constexpr int64_t ldc = kGemmPanelCols * 4;
    _tile_stored(0, acc, ldc);
    _tile_stored(1, acc + 16, ldc);
    _tile_stored(2, acc + 16 * kGemmPanelCols, ldc);
    _tile_stored(3, acc + 16 * kGemmPanelCols + 16, ldc);
    FinishBlock(g, pending);
    pending.acc = acc;
    pending.r0 = r0;
    pending.rows = rows;
    pending.c0 = c0;
    pending.cols = cols;
    pending.done = 0;
  }
}

}  // namespace gcomp::cpu::own::amx
