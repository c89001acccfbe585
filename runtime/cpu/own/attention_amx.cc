// AMX tiles of cpu.attention; see attention_amx.h. This file alone is compiled with AMX enabled,
// and like attention_avx512.cc uses intrinsics and internal functions only. ConfigureTiles gives
// all eight tiles 16 rows x 64 bytes (cpu.amx.gemm uses them all); attention uses 0-3 as the fp32
// accumulators (16 x 16), 4 the A operand (16 rows x 32 bf16), 5 the B operand (16 pairs x 16
// columns, the VNNI layout the packed K and V tiles have).
#include "runtime/cpu/own/attention_amx.h"

#include <immintrin.h>

#include "runtime/cpu/own/attention_avx512.h"

namespace gcomp::cpu::own::amx {
namespace {

constexpr int64_t kKb = kAttentionKeyBlock;

struct alignas(64) TileConfig {
  uint8_t palette = 1;
  uint8_t start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};

constexpr TileConfig MakeTileConfig() {
  TileConfig c;
  for (int t = 0; t < 8; ++t) {
    c.rows[t] = 16;
    c.colsb[t] = 64;
  }
  return c;
}
constexpr TileConfig kTileConfig = MakeTileConfig();

// One B tile at `b` (row stride `b_stride` bytes) into accumulator T (the intrinsics take tile
// numbers as literals).
template <int T>
inline void Product(const void* b, int64_t b_stride) {
  _tile_loadd(5, b, b_stride);
  if constexpr (T == 0) {
    _tile_dpbf16ps(0, 4, 5);
  } else if constexpr (T == 1) {
    _tile_dpbf16ps(1, 4, 5);
  } else if constexpr (T == 2) {
    _tile_dpbf16ps(2, 4, 5);
  } else {
    _tile_dpbf16ps(3, 4, 5);
  }
}

// NT accumulators of 16 rows x 16 fp32 at `c` (row stride c_stride bytes), += A (tile 4, loaded by
// `load_a(k)` per step) times the B tiles `b(k, n)` for `steps` steps of 32 reduction elements.
template <int NT, typename LoadA, typename BAt>
inline void Accumulate(float* c, int64_t c_stride, bool zero, int64_t steps, int64_t b_stride, LoadA load_a, BAt b) {
  if (zero) {
    _tile_zero(0);
    if (NT > 1) _tile_zero(1);
    if (NT > 2) _tile_zero(2);
    if (NT > 3) _tile_zero(3);
  } else {
    _tile_loadd(0, c, c_stride);
    if (NT > 1) _tile_loadd(1, c + 16, c_stride);
    if (NT > 2) _tile_loadd(2, c + 32, c_stride);
    if (NT > 3) _tile_loadd(3, c + 48, c_stride);
  }
  for (int64_t k = 0; k < steps; ++k) {
    load_a(k);
    Product<0>(b(k, 0), b_stride);
    if (NT > 1) Product<1>(b(k, 1), b_stride);
    if (NT > 2) Product<2>(b(k, 2), b_stride);
    if (NT > 3) Product<3>(b(k, 3), b_stride);
  }
  _tile_stored(0, c, c_stride);
  if (NT > 1) _tile_stored(1, c + 16, c_stride);
  if (NT > 2) _tile_stored(2, c + 32, c_stride);
  if (NT > 3) _tile_stored(3, c + 48, c_stride);
}

template <typename LoadA, typename BAt>
void AccumulateCols(int64_t nt, float* c, int64_t c_stride, bool zero, int64_t steps, int64_t b_stride, LoadA load_a,
                    BAt b) {
  switch (nt) {
    case 4: Accumulate<4>(c, c_stride, zero, steps, b_stride, load_a, b); break;
    case 3: Accumulate<3>(c, c_stride, zero, steps, b_stride, load_a, b); break;
    case 2: Accumulate<2>(c, c_stride, zero, steps, b_stride, load_a, b); break;
    default: Accumulate<1>(c, c_stride, zero, steps, b_stride, load_a, b); break;
  }
}

}  // namespace

void ConfigureTiles() {
  // A constant in read-only data: GCC 12 does not see ldtilecfg read a stack configuration past
  // its first 16 bytes and drops the stores of the rows and column widths.
  _tile_loadconfig(&kTileConfig);
}

void ReleaseTiles() { _tile_release(); }

void ScoreTile(const uint16_t* q, const uint16_t* kt, float* s, int64_t rows, int64_t cols, int64_t dq,
               int64_t stride) {
  for (int64_t i = 0; i < rows; i += 16) {
    const uint16_t* qi = q + i * dq;
    for (int64_t j = 0; j < cols; j += 64) {
      const int64_t nt = (cols - j) >= 64 ? 4 : (cols - j) / 16;
      AccumulateCols(
          nt, s + i * stride + j, stride * 4, /*zero=*/true, dq / 32, kKb * 4,
          [&](int64_t k) { _tile_loadd(4, qi + 32 * k, dq * 2); },
          [&](int64_t k, int n) { return kt + ((16 * k) * kKb + j + 16 * n) * 2; });
    }
  }
}

void AccumulateTile(const uint16_t* p, const uint16_t* vt, float* o, int64_t rows, int64_t keys, int64_t dv,
                    int64_t stride) {
  for (int64_t i = 0; i < rows; i += 16) {
    const uint16_t* pi = p + i * stride;
    for (int64_t e = 0; e < dv; e += 64) {
      const int64_t nt = (dv - e) >= 64 ? 4 : (dv - e) / 16;
      AccumulateCols(
          nt, o + i * dv + e, dv * 4, /*zero=*/false, keys / 32, dv * 4,
          [&](int64_t k) { _tile_loadd(4, pi + 32 * k, stride * 2); },
          [&](int64_t k, int n) { return vt + ((16 * k) * dv + e + 16 * n) * 2; });
    }
  }
}

}  // namespace gcomp::cpu::own::amx
