// The AVX-512 parts of cpu.avx512.winograd4 (winograd_avx2.cc); see winograd_avx512.h. Compiled
// with AVX-512 F/BW/VL/DQ enabled; intrinsics and internal functions only (attention_avx512.cc).
#include <immintrin.h>

#include "runtime/cpu/own/avx512_lanes.h"
#include "runtime/cpu/own/winograd4_transforms.h"
#include "runtime/cpu/own/winograd_avx512.h"
#include "runtime/cpu/own/winograd_products_avx512.h"

namespace gcomp::cpu::own::avx512 {
namespace {

// AVX-512's vectors for winograd4_transforms.h: 16 f32 lanes, masked at channel tails.
struct Avx512Vec {
  using V = __m512;
  static constexpr int64_t kLanes = 16;
  static V Zero() { return _mm512_setzero_ps(); }
  static V Set1(float f) { return _mm512_set1_ps(f); }
  static V Add(V a, V b) { return _mm512_add_ps(a, b); }
  static V Sub(V a, V b) { return _mm512_sub_ps(a, b); }
  static V Mul(V a, V b) { return _mm512_mul_ps(a, b); }
  static V Fmadd(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
  static V Fnmadd(V a, V b, V c) { return _mm512_fnmadd_ps(a, b, c); }
  static V Max(V a, V b) { return _mm512_max_ps(a, b); }
  static V Load(const float* p, int64_t lanes) {
    if (!p) return _mm512_setzero_ps();
    return lanes == 16 ? _mm512_loadu_ps(p) : _mm512_maskz_loadu_ps(Lanes(lanes), p);
  }
  static void Store(float* p, V v, int64_t lanes) {
    if (lanes == 16) {
      _mm512_storeu_ps(p, v);
    } else {
      _mm512_mask_storeu_ps(p, Lanes(lanes), v);
    }
  }
};

}  // namespace

void Winograd4InputTiles(const WinogradTiles& g, const float* x, int64_t c, int64_t base, int64_t rows, int64_t t0,
                         int64_t t1, float* v) {
  InputTiles4<Avx512Vec>(g, x, c, base, rows, t0, t1, v);
}

void Winograd4OutputTiles(const WinogradTiles& g, const float* m, int64_t k, int64_t base, int64_t rows, int64_t t0,
                          int64_t t1, const float* bias, bool relu, float* y) {
  OutputTiles4<Avx512Vec>(g, m, k, base, rows, t0, t1, bias, relu, y);
}

void WinogradProducts(const float* vp, const float* up, int64_t rows, int64_t c, int64_t k, int64_t pair, float* mp) {
  PointProducts(vp, up, rows, c, k, pair, mp);
}

}  // namespace gcomp::cpu::own::avx512
