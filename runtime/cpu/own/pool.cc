// cpu.pool: 2-D max/average pooling (gcomp Pool in NHWC or NCHW, ONNX MaxPool/AveragePool without
// Indices, 1-D ones as 2-D over a unit H axis, GlobalAveragePool) and cpu.reduce_mean: ReduceMean or
// ReduceSum over one contiguous block of axes
// (ResNet's global pooling on NHWC: axes [1, 2] of [N, 7, 7, 2048]).
//
// NHWC pools vectorize over channels (bf16 and f32 max pooling by AVX-512 rows, pool_avx512.cc,
// where the CPU has AVX-512, fetching the window's next columns ahead); NCHW pools loop over each
// plane's windows. Averages divide by the taps inside the input, or with count_include_pad by the
// taps inside the padded input.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "runtime/cpu/own/common.h"
#include "runtime/cpu/own/pool_avx512.h"
#include "runtime/cpu/own/simd.h"
#include "runtime/op_geometry.h"

namespace gcomp::cpu::own {
namespace {

using PoolPlan = runtime::PoolGeometry;
using ReducePlan = runtime::ReduceGeometry;
using runtime::ResolvePool;
using runtime::ResolveReduce;


// Window taps of output position `o` along one axis: [lo, hi) inside the input, and the count
// inside the padded input [-pad_begin, in + pad_end).
struct Taps {
  int64_t lo, hi, padded;
};
Taps AxisTaps(int64_t o, int64_t s, int64_t pad_begin, int64_t pad_end, int64_t k, int64_t in) {
  const int64_t start = o * s - pad_begin;
  Taps t;
  t.lo = std::max<int64_t>(start, 0);
  t.hi = std::min<int64_t>(start + k, in);
  t.padded = std::min<int64_t>(start + k, in + pad_end) - std::max<int64_t>(start, -pad_begin);
  if (t.hi < t.lo) t.hi = t.lo;
  return t;
}

// Columns ahead of an NHWC max-pooling window that its AVX-512 path prefetches: ResNet-50's
// 3x3/2 pool over the stem's output, bf16 at batch 8, ran 2.3-2.5 ms without and 1.4-1.8 ms with
// 8 (4 to 12 measured alike within this machine's noise).
constexpr int64_t kPrefetchColumns = 8;

inline float MaxKeepNan(float m, float v) { return (v > m || std::isnan(v)) ? v : m; }

class PoolKernel : public ShapedKernel {
 public:
  PoolKernel(const PoolPlan& p, int threads)
      : p_(p),
        threads_(std::max(1, threads)),
        max_avx512_(UsesAvx512Row(p)) {
    if (max_avx512_) taps_.assign(threads_, std::vector<const uint8_t*>(p_.kh * p_.kw));
    const int64_t per = p_.nhwc ? p_.w * p_.c + 2 * p_.c : p_.h * p_.w + p_.oh * p_.ow;
    bufs_.assign(threads_, std::vector<float>(per));
  }

  // NHWC bf16 or f32 max pooling on an AVX-512 CPU: avx512::MaxPoolBf16 / MaxPoolF32.
  static bool UsesAvx512Row(const PoolPlan& p) {
    return p.nhwc && p.max && p.x_type == p.y_type && (p.x_type == DType::kBF16 || p.x_type == DType::kF32) &&
           CpuSimdLevel() >= SimdLevel::kAvx512;
  }

  absl::Status Run(std::span<const void* const> inputs, std::span<void* const> outputs) override {
    if (p_.nhwc) {
      RunNhwc(static_cast<const uint8_t*>(inputs[0]), static_cast<uint8_t*>(outputs[0]));
    } else {
      RunNchw(static_cast<const uint8_t*>(inputs[0]), static_cast<uint8_t*>(outputs[0]));
    }
    return absl::OkStatus();
  }

 private:
  void RunNhwc(const uint8_t* x, uint8_t* y) {
    const int64_t c = p_.c, tasks = p_.n * p_.oh * p_.ow;
    const size_t xs = DTypeSize(p_.x_type), ys = DTypeSize(p_.y_type);
#pragma omp parallel for num_threads(threads_) schedule(static) if (threads_ > 1)
    for (int64_t t = 0; t < tasks; ++t) {
      const int64_t n = t / (p_.oh * p_.ow), oy = (t / p_.ow) % p_.oh, ox = t % p_.ow;
      float* buf = bufs_[omp_get_thread_num()].data();
      float* acc = buf;
      float* in = buf + c;
      const Taps ty = AxisTaps(oy, p_.sh, p_.pt, p_.pb, p_.kh, p_.h);
      const Taps tx = AxisTaps(ox, p_.sw, p_.pl, p_.pr, p_.kw, p_.w);
      if (max_avx512_ && ty.hi > ty.lo && tx.hi > tx.lo) {
        const uint8_t** taps = taps_[omp_get_thread_num()].data();
        int64_t count = 0;
        const int64_t row_bytes = c * static_cast<int64_t>(xs);
        // The window moves sw columns per output pixel; the columns it reaches kPrefetchColumns
        // further on are fetched now (the input, a stem conv's output, comes from memory).
        const int64_t ahead = std::min(tx.lo + kPrefetchColumns, p_.w - 1);
        const int64_t ahead_bytes = std::min(p_.sw, p_.w - ahead) * row_bytes;
        for (int64_t iy = ty.lo; iy < ty.hi; ++iy) {
          const uint8_t* row = x + (n * p_.h + iy) * p_.w * row_bytes;
          for (int64_t b = 0; b < ahead_bytes; b += 64) __builtin_prefetch(row + ahead * row_bytes + b);
          for (int64_t ix = tx.lo; ix < tx.hi; ++ix) taps[count++] = row + ix * row_bytes;
        }
        if (p_.x_type == DType::kBF16) {
          avx512::MaxPoolBf16(taps, count, c, reinterpret_cast<uint16_t*>(y + t * c * ys));
        } else {
          avx512::MaxPoolF32(taps, count, c, reinterpret_cast<float*>(y + t * c * ys));
        }
        continue;
      }
      const float init = p_.max ? std::numeric_limits<float>::lowest() : 0.0f;
      std::fill(acc, acc + c, init);
      for (int64_t iy = ty.lo; iy < ty.hi; ++iy) {
        for (int64_t ix = tx.lo; ix < tx.hi; ++ix) {
          const float* v = in;
          const uint8_t* src = x + ((n * p_.h + iy) * p_.w + ix) * c * xs;
          if (p_.x_type == DType::kF32) {
            v = reinterpret_cast<const float*>(src);
          } else {
            ToF32(p_.x_type, src, in, c);
          }
          if (p_.max) {
#pragma omp simd
            for (int64_t ch = 0; ch < c; ++ch) acc[ch] = MaxKeepNan(acc[ch], v[ch]);
          } else {
#pragma omp simd
            for (int64_t ch = 0; ch < c; ++ch) acc[ch] += v[ch];
          }
        }
      }
      if (!p_.max) {
        const int64_t count = p_.include_pad ? ty.padded * tx.padded : (ty.hi - ty.lo) * (tx.hi - tx.lo);
        const float inv = 1.0f / static_cast<float>(count);
        for (int64_t ch = 0; ch < c; ++ch) acc[ch] = count ? acc[ch] * inv : NAN;
      }
      FromF32(p_.y_type, acc, y + t * c * ys, c);
    }
  }

  void RunNchw(const uint8_t* x, uint8_t* y) {
    const int64_t planes = p_.n * p_.c, in_plane = p_.h * p_.w, out_plane = p_.oh * p_.ow;
    const size_t xs = DTypeSize(p_.x_type), ys = DTypeSize(p_.y_type);
#pragma omp parallel for num_threads(threads_) schedule(static) if (threads_ > 1)
    for (int64_t pl = 0; pl < planes; ++pl) {
      float* in = bufs_[omp_get_thread_num()].data();
      float* out = in + in_plane;
      ToF32(p_.x_type, x + pl * in_plane * xs, in, in_plane);
      for (int64_t oy = 0; oy < p_.oh; ++oy) {
        const Taps ty = AxisTaps(oy, p_.sh, p_.pt, p_.pb, p_.kh, p_.h);
        for (int64_t ox = 0; ox < p_.ow; ++ox) {
          const Taps tx = AxisTaps(ox, p_.sw, p_.pl, p_.pr, p_.kw, p_.w);
          float r;
          if (p_.max) {
            r = std::numeric_limits<float>::lowest();
            for (int64_t iy = ty.lo; iy < ty.hi; ++iy) {
              for (int64_t ix = tx.lo; ix < tx.hi; ++ix) r = MaxKeepNan(r, in[iy * p_.w + ix]);
            }
          } else {
            float sum = 0.0f;
            for (int64_t iy = ty.lo; iy < ty.hi; ++iy) {
#pragma omp simd reduction(+ : sum)
              for (int64_t ix = tx.lo; ix < tx.hi; ++ix) sum += in[iy * p_.w + ix];
            }
            const int64_t count = p_.include_pad ? ty.padded * tx.padded : (ty.hi - ty.lo) * (tx.hi - tx.lo);
            r = count ? sum / static_cast<float>(count) : NAN;
          }
          out[oy * p_.ow + ox] = r;
        }
      }
      FromF32(p_.y_type, out, y + pl * out_plane * ys, out_plane);
    }
  }

  PoolPlan p_;
  int threads_;
  bool max_avx512_;  // NHWC bf16 / f32 max pooling by avx512::MaxPoolBf16 / MaxPoolF32
  std::vector<std::vector<float>> bufs_;
  std::vector<std::vector<const uint8_t*>> taps_;  // per thread: the window's input rows
};

// ---- ReduceMean ---------------------------------------------------------------------------

class ReduceMeanKernel : public ShapedKernel {
 public:
  ReduceMeanKernel(const ReducePlan& p, int threads) : p_(p), threads_(std::max(1, threads)) {
    bufs_.assign(threads_, std::vector<float>(std::max<int64_t>(2 * 256, p_.reduced)));
  }

  absl::Status Run(std::span<const void* const> inputs, std::span<void* const> outputs) override {
    const auto* x = static_cast<const uint8_t*>(inputs[0]);
    auto* y = static_cast<uint8_t*>(outputs[0]);
    const size_t xs = DTypeSize(p_.x_type), ys = DTypeSize(p_.y_type);
    const int64_t inner = p_.inner, red = p_.reduced;
    const float inv = p_.mean ? 1.0f / static_cast<float>(red) : 1.0f;
    if (inner == 1) {
#pragma omp parallel for num_threads(threads_) schedule(static) if (threads_ > 1)
      for (int64_t o = 0; o < p_.outer; ++o) {
        float* row = bufs_[omp_get_thread_num()].data();
        ToF32(p_.x_type, x + o * red * xs, row, red);
        float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
        for (int64_t j = 0; j < red; ++j) sum += row[j];
        const float m = sum * inv;
        FromF32(p_.y_type, &m, y + o * ys, 1);
      }
      return absl::OkStatus();
    }
    // Chunks of the inner axis, accumulated over the reduced axis.
    constexpr int64_t kChunk = 256;
    const int64_t chunks = (inner + kChunk - 1) / kChunk, tasks = p_.outer * chunks;
#pragma omp parallel for num_threads(threads_) schedule(static) if (threads_ > 1)
    for (int64_t t = 0; t < tasks; ++t) {
      const int64_t o = t / chunks, i0 = (t % chunks) * kChunk, len = std::min(kChunk, inner - i0);
      float* acc = bufs_[omp_get_thread_num()].data();
      float* tmp = acc + kChunk;
      std::fill(acc, acc + len, 0.0f);
      for (int64_t r = 0; r < red; ++r) {
        const uint8_t* src = x + ((o * red + r) * inner + i0) * xs;
        const float* v = tmp;
        if (p_.x_type == DType::kF32) {
          v = reinterpret_cast<const float*>(src);
        } else {
          ToF32(p_.x_type, src, tmp, len);
        }
#pragma omp simd
        for (int64_t i = 0; i < len; ++i) acc[i] += v[i];
      }
      for (int64_t i = 0; i < len; ++i) acc[i] *= inv;
      FromF32(p_.y_type, acc, y + (o * inner + i0) * ys, len);
    }
    return absl::OkStatus();
  }

 private:
  ReducePlan p_;
  int threads_;
  std::vector<std::vector<float>> bufs_;
};

}  // namespace

CpuEntry PoolEntry() {
  CpuEntry e;
  e.id = "cpu.pool";
  e.ops = {"Pool", "MaxPool", "AveragePool", "GlobalAveragePool"};
  e.params = {{"kind", AttrType::kString},     {"layout", AttrType::kString},  {"auto_pad", AttrType::kString},
              {"ceil_mode", AttrType::kInt},     {"dilations", AttrType::kInts}, {"kernel_shape", AttrType::kInts},
              {"pads", AttrType::kInts},         {"strides", AttrType::kInts},   {"count_include_pad", AttrType::kInt},
              {"storage_order", AttrType::kInt}};
  e.description = "2-D max/average pooling, NHWC vectorized over channels, NCHW per plane";
  e.accepts = [](const KernelSpec& spec) -> std::optional<std::string> {
    if (spec.op != "Pool" && spec.op != "MaxPool" && spec.op != "AveragePool" && spec.op != "GlobalAveragePool") {
      return std::nullopt;
    }
    std::optional<PoolPlan> p = ResolvePool(spec);
    if (!p) return std::nullopt;
    return absl::StrCat("own pool: ", p->max ? "max " : "average ", p->kh, "x", p->kw, " stride ", p->sh, "x", p->sw,
                        p->nhwc ? " NHWC" : " NCHW", PoolKernel::UsesAvx512Row(*p) ? ", AVX-512 rows" : "");
  };
  e.create = [](const KernelSpec& spec) -> absl::StatusOr<std::unique_ptr<ShapedKernel>> {
    std::optional<PoolPlan> p = ResolvePool(spec);
    if (!p) return absl::InvalidArgumentError(absl::StrCat("node '", spec.name, "': cpu.pool does not run it"));
    return std::unique_ptr<ShapedKernel>(new PoolKernel(*p, spec.threads));
  };
  return e;
}

CpuEntry ReduceMeanEntry() {
  CpuEntry e;
  e.id = "cpu.reduce_mean";  // (the id predates ReduceSum; plan files name kernels by id)
  e.ops = {"ReduceMean", "ReduceSum"};
  e.params = {{"axes", AttrType::kInts}, {"keepdims", AttrType::kInt}, {"noop_with_empty_axes", AttrType::kInt}};
  e.description = "mean (ReduceMean) or sum (ReduceSum) over one contiguous block of axes, fp32 accumulation";
  e.accepts = [](const KernelSpec& spec) -> std::optional<std::string> {
    std::optional<ReducePlan> p = ResolveReduce(spec);
    if (!p) return std::nullopt;
    return absl::StrCat("own reduce ", p->mean ? "mean" : "sum", ": [", p->outer, ", ", p->reduced, ", ", p->inner, "] over the middle");
  };
  e.create = [](const KernelSpec& spec) -> absl::StatusOr<std::unique_ptr<ShapedKernel>> {
    std::optional<ReducePlan> p = ResolveReduce(spec);
    if (!p) return absl::InvalidArgumentError(absl::StrCat("node '", spec.name, "': cpu.reduce_mean does not run it"));
    return std::unique_ptr<ShapedKernel>(new ReduceMeanKernel(*p, spec.threads));
  };
  return e;
}

}  // namespace gcomp::cpu::own
