// cpu.avx2.winograd4, cpu.avx2.winograd, cpu.avx512.winograd4, cpu.avx512.winograd and
// cpu.avx512.winograd_bf16: NHWC 3x3 stride-1 FusedConv steps as Winograd F(4x4, 3x3) and F(2x2,
// 3x3), every part of it own. Per output tile of m x m pixels (m = 4 or 2), (m + 2)^2 products
// where the direct convolution takes 9 m^2: 36 for 16 pixels (4x fewer) or 16 for 4 (2.25x fewer).
//
// Per block of `block_` output tiles, all threads together in one parallel region:
//   1. V [P][tiles][C] = the input transform B^T d B of the block's (m + 2)^2 windows (bf16
//      widened, zeros outside the image; bf16 variant: rounded to bf16), the tiles split between
//      the threads;
//   2. M_p [tiles][K] = V_p [tiles][C] x U_p [C][K] for the P points p, the (point, column unit)
//      pairs split between the threads in point order, so that a thread's V_p stays in L2 while
//      U_p's panels stream past it. AVX2: units of one 16-channel panel on the 6 x 16 register
//      tiles of avx2_tile.h; AVX-512: units of two panels on 14 x 32 register tiles of f32 FMAs
//      (winograd4_avx512.cc) or, bf16, of vdpbf16ps with f32 sums (winograd_avx512.cc);
//   3. Y = the output transform A^T M A, + bias, then ReLU, the tiles split between the threads.
// U = G g G^T is made at compile time (`pack`): per point, panels of 16 output channels, C rows of
// 16 floats each (bf16: C / 2 rows of 16 x 2 bf16, the input-channel pairs vdpbf16ps multiplies);
// the plan stores it (P/9 of the plain weights' elements: 4x for F(4x4), 1.8x for F(2x2)). F(2x2)
// runs the portable transforms of winograd.h (bf16: the AVX-512 ones of winograd_avx512.cc);
// F(4x4) those of winograd4_transforms.h on 8 (AVX2) or 16 (AVX-512) channels at a time.
//
// The AVX2 pair takes f32 steps and bf16-storage steps (bf16 or f32 weights) without residual,
// with no activation or ReLU, on CPUs whose best vector unit is AVX2; the table tries F(4x4) first,
// then F(2x2), before every other convolution there. cpu.avx512.winograd4 (F(4x4)) and
// cpu.avx512.winograd (F(2x2), the smaller outputs) take the same f32 steps on CPUs with AVX-512,
// cpu.avx512.winograd_bf16 the bf16 ones on CPUs with AVX512-BF16, all before oneDNN's Winograd
// entries. F(4x4) takes the layers where it measured faster: see kMinTiles4x4; the AVX-512 F(2x2)s
// those of kMinTilesF2.
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <memory>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "runtime/cpu/blas/fused_params.h"
#include "runtime/cpu/own/avx2_tile.h"
#include "runtime/cpu/own/common.h"
#include "runtime/cpu/own/entries.h"
#include "runtime/cpu/own/gemm_entry.h"
#include "runtime/cpu/own/simd.h"
#include "runtime/cpu/own/winograd.h"
#include "runtime/cpu/own/winograd4_transforms.h"
#include "runtime/cpu/own/winograd_avx512.h"
#include "runtime/fused_op.h"

namespace gcomp::cpu::own {
namespace {

using runtime::ConvParams;

// One of the three entries: its output tile side m, the format of its packed U (the same layout in
// all three), whether it runs on AVX-512 (f32 only) rather than AVX2, and the bytes of one block's V
// and M together: blocks of more tiles read U fewer times; fewer keep V and M nearer the cores.
struct Variant {
  const char* id;
  const char* format;
  int m;
  bool avx512;
  int64_t block_bytes;
  bool bf16 = false;  // bf16 V and U in pair panels, vdpbf16ps products (AVX512-BF16); else f32 V and U
  int64_t Points() const { return (m + 2) * (m + 2); }
  int64_t VBytes() const { return bf16 ? 2 : 4; }  // per element of V and U
  // Rows of M per register tile.
  int64_t TileRows() const { return avx512 ? avx512::kProductTileRows : kTileRows; }
};
constexpr int64_t kMiB = int64_t{1} << 20;
constexpr Variant kF4{"cpu.avx2.winograd4", "avx2-f32-winograd4-panels16", 4, false, kMiB};
constexpr Variant kF2{"cpu.avx2.winograd", "avx2-f32-winograd-panels16", 2, false, kMiB};
// AVX-512: ResNet-50's 56x56x64 layers at batch 1 (196 tiles, 3.6 MB of V and M) in one block
// rather than four: 1.32x the oneDNN Winograd's speed per layer against 1.26x (`gemm_backends --conv
// cpu.avx512.winograd4,cpu.onednn.winograd`, Zen 5, 2 threads); the same at batch 8.
constexpr Variant kF4Avx512{"cpu.avx512.winograd4", "avx512-f32-winograd4-panels16", 4, true, 4 * kMiB};
// f32 F(2x2) on AVX-512: the layers under 16 F(4x4) tiles per image (7x7 outputs); the portable
// transforms of winograd.h.
constexpr Variant kF2Avx512{"cpu.avx512.winograd", "avx512-f32-winograd-panels16", 2, true, 4 * kMiB};
// bf16 F(2x2): V and U in bf16 (rounded after the transforms), M in f32; blocks of 2 and 8 MiB ran
// ResNet-50's layers like 4, within the noise (README, Kernels).
constexpr Variant kF2Bf16{"cpu.avx512.winograd_bf16", "avx512bf16-winograd-pairs16", 2, true, 4 * kMiB, true};

int64_t Panels(int64_t n) { return (n + kTileCols - 1) / kTileCols; }
int64_t PackedElements(const Variant& v, const ConvParams& p) { return v.Points() * Panels(p.cout) * kTileCols * p.c; }
int64_t TilesPerImage(const Variant& v, const ConvParams& p) {
  return ((p.ho + v.m - 1) / v.m) * ((p.wo + v.m - 1) / v.m);
}

std::optional<ConvParams> Parse(const Variant& v, const KernelSpec& spec, std::string* why) {
  std::optional<ConvParams> p = runtime::ParseConv(spec, why);
  if (!p) return std::nullopt;
  const bool f32 = p->dtype == DType::kF32 && p->wdtype == DType::kF32;
  const bool bf16 = p->dtype == DType::kBF16 && (p->wdtype == DType::kBF16 || p->wdtype == DType::kF32);
  if (v.bf16 && !bf16) {
    *why = absl::StrCat("X and Y ", DTypeName(p->dtype), ", W ", DTypeName(p->wdtype),
                        ": not bf16 with bf16 or fp32 weights");
  } else if (v.bf16 && p->c % 2 != 0) {
    *why = absl::StrCat(p->c, " input channels: not a whole number of the pairs vdpbf16ps multiplies");
  } else if (v.avx512 && !v.bf16 && !f32) {
    *why = absl::StrCat("X and Y ", DTypeName(p->dtype), ", W ", DTypeName(p->wdtype), ": not fp32");
  } else if (!f32 && !bf16) {
    *why = absl::StrCat("X and Y ", DTypeName(p->dtype), ", W ", DTypeName(p->wdtype),
                        ": not fp32, nor bf16 with bf16 or fp32 weights");
  } else if (!p->nhwc || p->group != 1 || p->kh != 3 || p->kw != 3 || p->sh != 1 || p->sw != 1 || p->dh != 1 ||
             p->dw != 1) {
    *why = "not an NHWC 3x3 stride-1 convolution without dilation or groups";
  } else if (p->epi.has_residual || (p->epi.act != Activation::kNone && p->epi.act != Activation::kRelu)) {
    *why = "a residual, or an activation other than none or relu";
  } else {
    return p;
  }
  return std::nullopt;
}

absl::Status Declined(const Variant& v, const KernelSpec& spec, const std::string& why) {
  return absl::InvalidArgumentError(absl::StrCat("node '", spec.name, "' (", spec.op, "): ", v.id, ": ", why));
}

// U = G g G^T of W [K, C, 3, 3] as [point][panel][C][16] (zero past K); bf16 variants: as
// [point][panel][C / 2][16][2], rounded to bf16 (nearest even), into the uint16_t at dst.
absl::Status PackPanels(const Variant& v, const KernelSpec& spec, const ConvParams& p, void* out) {
  ASSIGN_OR_RETURN(std::vector<float> w, blas::ConstantF32(spec, 1));
  const int64_t c = p.c, k = p.cout, panels = Panels(k), points = v.Points();
  std::vector<float> wide;
  if (v.bf16) wide.resize(static_cast<size_t>(PackedElements(v, p)));
  float* dst = v.bf16 ? wide.data() : static_cast<float*>(out);
  std::fill(dst, dst + PackedElements(v, p), 0.0f);
  for (int64_t o = 0; o < k; ++o) {
    for (int64_t ch = 0; ch < c; ++ch) {
      const float* f = &w[static_cast<size_t>((o * c + ch) * 9)];
      float u[36];
      if (v.m == 4) {
        WinogradFilter4x4(f, u);
      } else {
        WinogradFilter(f, u);
      }
      for (int64_t point = 0; point < points; ++point) {
        const int64_t panel = (point * panels + o / kTileCols) * c * kTileCols;
        dst[v.bf16 ? panel + (ch / 2 * kTileCols + o % kTileCols) * 2 + ch % 2
                   : panel + ch * kTileCols + o % kTileCols] = u[point];
      }
    }
  }
  if (v.bf16) StoreF32(DType::kBF16, wide.data(), out, static_cast<int64_t>(wide.size()));
  return absl::OkStatus();
}

// AVX2's vectors for winograd4_transforms.h: 8 f32 lanes; bf16 widened on load, rounded on store.
struct Avx2Vec {
  using V = __m256;
  static constexpr int64_t kLanes = 8;
  static V Zero() { return _mm256_setzero_ps(); }
  static V Set1(float f) { return _mm256_set1_ps(f); }
  static V Add(V a, V b) { return _mm256_add_ps(a, b); }
  static V Sub(V a, V b) { return _mm256_sub_ps(a, b); }
  static V Mul(V a, V b) { return _mm256_mul_ps(a, b); }
  static V Fmadd(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  static V Fnmadd(V a, V b, V c) { return _mm256_fnmadd_ps(a, b, c); }
  static V Max(V a, V b) { return _mm256_max_ps(a, b); }
  static V Load(const float* p, int64_t lanes) {
    if (!p) return _mm256_setzero_ps();
    return lanes == 8 ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, LaneMask(lanes));
  }
  static V Load(const uint16_t* p, int64_t lanes) { return p ? LoadBf16(p, lanes) : _mm256_setzero_ps(); }
  static void Store(float* p, V v, int64_t lanes) {
    if (lanes == 8) {
      _mm256_storeu_ps(p, v);
    } else {
      _mm256_maskstore_ps(p, LaneMask(lanes), v);
    }
  }
  static void Store(uint16_t* p, V v, int64_t lanes) { StoreBf16(p, v, lanes); }
};

class Avx2WinogradKernel : public ShapedKernel {
 public:
  explicit Avx2WinogradKernel(const Variant& v) : v_(v), points_(v.Points()) {}

  absl::Status Init(const KernelSpec& spec, const ConvParams& p) {
    name_ = spec.name;
    threads_ = std::max(1, spec.threads);
    bf16_ = p.dtype == DType::kBF16;
    c_ = p.c;
    k_ = p.cout;
    panels_ = Panels(k_);
    units_ = v_.avx512 ? (panels_ + 1) / 2 : panels_;
    relu_ = p.epi.act == Activation::kRelu;
    g_.h = p.h;
    g_.w = p.w;
    g_.ho = p.ho;
    g_.wo = p.wo;
    g_.pt = p.pt;
    g_.pl = p.pl;
    g_.th = (p.ho + v_.m - 1) / v_.m;
    g_.tw = (p.wo + v_.m - 1) / v_.m;
    g_.count = p.n * g_.th * g_.tw;
    const size_t want = static_cast<size_t>(PackedElements(v_, p) * v_.VBytes());
    if (v_.bf16) {
      ASSIGN_OR_RETURN(ub_, PackedPanels<uint16_t>(spec, v_.id, v_.format, want, owned_ub_,
                                                   [&](uint16_t* dst) { return PackPanels(v_, spec, p, dst); }));
    } else {
      ASSIGN_OR_RETURN(u_, F32Panels(spec, v_.id, v_.format, want, owned_u_,
                                     [&](float* dst) { return PackPanels(v_, spec, p, dst); }));
    }
    RETURN_IF_ERROR(PaddedBias(spec, p.epi.has_bias, panels_ * kTileCols, bias_));
    // Blocks of about block_bytes of V and M (at least one register tile of rows), as even as
    // possible, rounded up to whole register tiles where the tiles take more than one block (up to
    // 5 tiles over the budget: the sizes the figures in the README were measured with).
    const int64_t tile_rows = v_.TileRows();
    const int64_t most = std::max<int64_t>(tile_rows, v_.block_bytes / (points_ * (c_ * v_.VBytes() + k_ * 4)));
    const int64_t blocks = (g_.count + most - 1) / most;
    block_ = (g_.count + blocks - 1) / blocks;
    if (blocks > 1) block_ = std::min(g_.count, (block_ + tile_rows - 1) / tile_rows * tile_rows);
    v_bytes_ = Align64(static_cast<size_t>(points_ * block_ * c_ * v_.VBytes()));
    m_bytes_ = Align64(static_cast<size_t>(points_ * block_ * k_) * 4);
    return absl::OkStatus();
  }

  int64_t WorkspaceBytes() const override { return static_cast<int64_t>(v_bytes_ + m_bytes_); }

  absl::Status Run(std::span<const void* const> inputs, std::span<void* const> outputs) override {
    if (!own_workspace_) own_workspace_ = AlignedArray<uint8_t>(v_bytes_ + m_bytes_);
    if (!own_workspace_) return absl::ResourceExhaustedError(absl::StrCat("node '", name_, "': workspace"));
    return RunWithWorkspace(inputs, outputs, {own_workspace_.data(), v_bytes_ + m_bytes_});
  }

  absl::Status RunWithWorkspace(std::span<const void* const> inputs, std::span<void* const> outputs,
                                std::span<uint8_t> workspace) override {
    if (workspace.size() < v_bytes_ + m_bytes_) {
      return absl::InternalError(absl::StrCat("node '", name_, "': workspace of ", workspace.size(),
                                              " bytes, expected ", v_bytes_ + m_bytes_));
    }
    void* v = workspace.data();
    float* m = reinterpret_cast<float*>(workspace.data() + v_bytes_);
    const void* x = inputs[0];
    void* y = outputs[0];
    const int threads = static_cast<int>(std::min<int64_t>(threads_, points_ * units_));
#pragma omp parallel num_threads(threads) if (threads > 1)
    {
      const int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
      for (int64_t base = 0; base < g_.count; base += block_) {
        const int64_t rows = std::min(block_, g_.count - base);
        const int64_t t0 = base + rows * t / nt, t1 = base + rows * (t + 1) / nt;
        InputTiles(x, base, rows, t0, t1, v);
#pragma omp barrier
        const int64_t items = points_ * units_;
        for (int64_t i = items * t / nt; i < items * (t + 1) / nt; ++i) Products(v, m, rows, i / units_, i % units_);
#pragma omp barrier
        OutputTiles(m, base, rows, t0, t1, y);
#pragma omp barrier
      }
    }
    return absl::OkStatus();
  }

 private:
  void InputTiles(const void* x, int64_t base, int64_t rows, int64_t t0, int64_t t1, void* vv) const {
    if (v_.bf16) {
      avx512::WinogradInputTiles(g_, static_cast<const uint16_t*>(x), c_, base, rows, t0, t1,
                                 static_cast<uint16_t*>(vv));
      return;
    }
    float* v = static_cast<float*>(vv);
    if (v_.avx512 && v_.m == 4) {
      avx512::Winograd4InputTiles(g_, static_cast<const float*>(x), c_, base, rows, t0, t1, v);
    } else if (v_.m == 2) {
      WinogradInputTilesF32(g_, bf16_, x, c_, base, rows, t0, t1, v);
    } else if (bf16_) {
      InputTiles4<Avx2Vec>(g_, static_cast<const uint16_t*>(x), c_, base, rows, t0, t1, v);
    } else {
      InputTiles4<Avx2Vec>(g_, static_cast<const float*>(x), c_, base, rows, t0, t1, v);
    }
  }

  void OutputTiles(const float* m, int64_t base, int64_t rows, int64_t t0, int64_t t1, void* y) const {
    if (v_.bf16) {
      avx512::WinogradOutputTiles(g_, m, k_, base, rows, t0, t1, bias_.data(), relu_, static_cast<uint16_t*>(y));
    } else if (v_.avx512 && v_.m == 4) {
      avx512::Winograd4OutputTiles(g_, m, k_, base, rows, t0, t1, bias_.data(), relu_, static_cast<float*>(y));
    } else if (v_.m == 2) {
      WinogradOutputTilesF32(g_, m, k_, base, rows, t0, t1, bias_.data(), relu_, bf16_, y);
    } else if (bf16_) {
      OutputTiles4<Avx2Vec>(g_, m, k_, base, rows, t0, t1, bias_.data(), relu_, static_cast<uint16_t*>(y));
    } else {
      OutputTiles4<Avx2Vec>(g_, m, k_, base, rows, t0, t1, bias_.data(), relu_, static_cast<float*>(y));
    }
  }

  // M_p [rows][K] columns of `unit` (AVX2: one 16-column panel; AVX-512: a pair) = V_p [rows][C] x
  // U_p's panels.
  void Products(const void* vv, float* m, int64_t rows, int64_t point, int64_t unit) const {
    if (v_.bf16) {
      avx512::WinogradProductsBf16(static_cast<const uint16_t*>(vv) + point * rows * c_,
                                   ub_ + point * panels_ * c_ * kTileCols, rows, c_, k_, unit, m + point * rows * k_);
      return;
    }
    const float* v = static_cast<const float*>(vv);
    if (v_.avx512) {
      avx512::WinogradProducts(v + point * rows * c_, u_ + point * panels_ * c_ * kTileCols, rows, c_, k_, unit,
                               m + point * rows * k_);
      return;
    }
    const int64_t panel = unit;
    TileOutput out;
    out.y = m + point * rows * k_;
    out.ld = out.n = k_;
    const float* vp = v + point * rows * c_;
    const float* b = u_ + (point * panels_ + panel) * c_ * kTileCols;
    for (int64_t r0 = 0; r0 < rows; r0 += kTileRows) {
      WithTileRows(std::min<int64_t>(kTileRows, rows - r0),
                   [&](auto tile_rows) { Tile<decltype(tile_rows)::value>(vp, b, out, r0, panel); });
    }
  }

  template <int R>
  void Tile(const float* vp, const float* b, const TileOutput& out, int64_t r0, int64_t panel) const {
    const float* a[R];
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) a[r] = vp + (r0 + r) * c_;
    TileAcc<R> acc;
    Accumulate<R>(acc, a, c_, b);
    StoreTile<R, false>(acc, out, r0, panel * kTileCols);
  }

  const Variant v_;
  const int64_t points_;
  std::string name_;
  int threads_ = 1;
  bool bf16_ = false, relu_ = false;
  int64_t c_ = 0, k_ = 0, panels_ = 0;
  int64_t units_ = 0;  // the column units the threads split per point: panels (AVX2), pairs of them (AVX-512)
  WinogradTiles g_;
  int64_t block_ = 0;         // tiles per block (the last may have fewer)
  const float* u_ = nullptr;  // f32 variants' U
  AlignedArray<float> owned_u_;
  const uint16_t* ub_ = nullptr;  // bf16 variants' U
  AlignedArray<uint16_t> owned_ub_;
  AlignedArray<float> bias_;          // zero-padded to whole panels (zeros without a bias)
  size_t v_bytes_ = 0, m_bytes_ = 0;  // V and M of one block in the workspace, each rounded up to 64 bytes
  AlignedArray<uint8_t> own_workspace_;
};

// Where F(4x4) takes a layer that F(2x2) would otherwise: at 16 or more F(4x4) tiles per image
// (outputs of 13x13 and up). Its U is 2.25x F(2x2)'s, and with fewer tiles reading it costs more
// than the products it saves: ResNet-50's 7x7 layers (4 tiles) ran 6-13% slower than F(2x2) at
// batch 1, its 14x14 ones (16 tiles) 1.15x faster and its 28x28 and 56x56 ones 1.7x faster
// (`gemm_backends --conv cpu.avx2.winograd,cpu.avx2.winograd4`, Zen 3, 2 threads). The AVX-512
// variant against oneDNN's direct convolution on the 7x7 layers: 1.07-1.11x slower at batch 1,
// 1.36x faster at batch 8 (`gemm_backends --conv cpu.onednn.conv,cpu.avx512.winograd4`, Zen 5); a
// plan compiled at batch 8 runs at batch 1 too, so it keeps the same threshold.
constexpr int64_t kMinTiles4x4 = 16;

// The AVX-512 F(2x2)s' layers: >= 64 input and output channels and >= 16 of their tiles per image
// (outputs of 7x7 and up; oneDNN's bf16 Winograd took >= 40), the f32 one only below F(4x4)'s
// kMinTiles4x4 (7x7 to 12x12 outputs). f32, ResNet-50's 7x7x512 layers against oneDNN's direct
// convolution (`gemm_backends --conv cpu.onednn.conv,cpu.avx512.winograd`, two runs): 236 -> 286
// and 220 -> 228 GFLOP/s at batch 1, 261 -> 320 and 256 -> 321 at batch 8; in the model at batch 1
// 1.01-1.03 ms per layer -> 0.82-0.90 (`gcomp bench --profile`, alternating; its U, 16/9 of the
// plain f32 weights, is 16.8 MB per layer). bf16, ResNet-50's 7x7x512 layers against
// oneDNN's direct convolution (`gemm_backends --bf16 --conv cpu.onednn.conv,cpu.avx512.winograd_bf16`,
// Zen 5, 2 threads, three runs): 1.11-1.28x faster at batch 8, 1.03-1.19x at batch 1; in the model
// at batch 1 (its U, 1.8x the plain weights' bytes, read from memory) 0.43-0.47 ms per layer
// against 0.48-0.50 (`gcomp bench --profile`, two plans alternating). The choice cannot depend on
// the batch: a dynamic-batch plan runs its kernels at every batch.
constexpr int64_t kMinChannelsF2 = 64, kMinTilesF2 = 16;

// Whether an AVX-512 F(2x2) takes the layer from plain weights (the f32 one leaves F(4x4) its own).
bool TakenByF2(const Variant& v, const ConvParams& p) {
  return p.c >= kMinChannelsF2 && p.cout >= kMinChannelsF2 && TilesPerImage(v, p) >= kMinTilesF2 &&
         (v.bf16 || TilesPerImage(kF4, p) < kMinTiles4x4);
}

CpuEntry WinogradEntry(const Variant& v) {
  CpuEntry e;
  e.id = v.id;
  e.ops = {"FusedConv"};
  e.params = runtime::ConvParamSpecs();
  e.description =
      v.bf16 ? absl::StrCat(
                   "own bf16 Winograd F(2x2, 3x3) on AVX512-BF16 (3x3 stride 1, even channels, no "
                   "residual, none or ReLU; bf16): bf16 transforms around 16 vdpbf16ps GEMMs on 14 x 32 "
                   "register tiles with f32 sums, U made at compile time; chosen where the CPU has "
                   "AVX512-BF16, on >= ",
                   kMinChannelsF2, " channels and >= ", kMinTilesF2, " tiles per image")
      : v.avx512 && v.m == 2 ? absl::StrCat(
                                   "own Winograd F(2x2, 3x3) on AVX-512 (3x3 stride 1, no residual, none or ReLU; "
                                   "f32): the portable transforms around 16 GEMMs on 14 x 32 register tiles, U made "
                                   "at compile time; chosen where the CPU has AVX-512, on >= ",
                                   kMinChannelsF2, " channels and >= ", kMinTilesF2,
                                   " tiles per image where F(4x4) has fewer than ", kMinTiles4x4)
      : v.avx512 ? absl::StrCat(
                       "own Winograd F(4x4, 3x3) on AVX-512 (3x3 stride 1, no residual, none or ReLU; f32): "
                       "transforms on 16 channels around 36 GEMMs on 14 x 32 register tiles, U made at compile "
                       "time; chosen where the CPU has AVX-512")
                 : absl::StrCat("own Winograd F(", v.m, "x", v.m,
                                ", 3x3) on AVX2 + FMA (3x3 stride 1, no residual, none or ReLU; f32, or bf16 "
                                "widened): f32 transforms around ",
                                v.Points(),
                                " GEMMs on 6 x 16 register tiles, U made at compile time; chosen "
                                "where the CPU has no AVX-512");
  e.accepts = [v](const KernelSpec& spec) -> std::optional<std::string> {
    std::string why;
    std::optional<ConvParams> p = Parse(v, spec, &why);
    const bool packed = spec.inputs[1].format == v.format;
    if (!p) return std::nullopt;
    if (v.avx512 && v.m == 2) {
      // AVX-512 (and AVX512-BF16) code: never on a CPU without it, packed or not.
      if (CpuSimdLevel() < (v.bf16 ? SimdLevel::kAvx512Bf16 : SimdLevel::kAvx512)) return std::nullopt;
      if (!packed && !TakenByF2(v, *p)) return std::nullopt;
      return absl::StrCat("own ", v.bf16 ? "AVX512-BF16" : "AVX-512", " Winograd F(2x2, 3x3), ", TilesPerImage(v, *p),
                          " tiles per image (", runtime::DescribeConv(*p), ")",
                          packed ? ": the plan's weights are packed for it" : "");
    }
    if (v.avx512) {
      // AVX-512 code: never on a CPU without it, packed or not.
      if (CpuSimdLevel() == SimdLevel::kAvx2) return std::nullopt;
      const int64_t tiles = TilesPerImage(v, *p);
      if (!packed && tiles < kMinTiles4x4) return std::nullopt;
      return absl::StrCat("own AVX-512 Winograd F(4x4, 3x3), ", tiles, " tiles per image (", runtime::DescribeConv(*p),
                          ")", packed ? ": the plan's weights are packed for it" : "");
    }
    if (CpuSimdLevel() != SimdLevel::kAvx2 && !packed) return std::nullopt;
    const int64_t tiles = TilesPerImage(v, *p);
    if (v.m == 4 && !packed && tiles < kMinTiles4x4) return std::nullopt;
    return absl::StrCat("own AVX2 Winograd F(", v.m, "x", v.m, ", 3x3), ", tiles, " tiles per image (",
                        runtime::DescribeConv(*p), ")", p->dtype == DType::kBF16 ? ", bf16 storage widened to f32" : "",
                        packed ? ": the plan's weights are packed for it" : ": this CPU has no AVX-512",
                        v.m == 4                                ? ""
                        : TilesPerImage(kF4, *p) < kMinTiles4x4 ? " (under 16 F(4x4) tiles per image)"
                                                                : "");
  };
  e.pack = [v](const KernelSpec& spec, size_t index) -> absl::StatusOr<Packed> {
    std::string why;
    std::optional<ConvParams> p = Parse(v, spec, &why);
    if (!p) return Declined(v, spec, why);
    if (v.bf16) {
      return PackGemmOperand<uint16_t>(spec, index, PackedElements(v, *p), v.format,
                                       [&](uint16_t* dst) { return PackPanels(v, spec, *p, dst); });
    }
    return PackGemmOperand<float>(spec, index, PackedElements(v, *p), v.format,
                                  [&](float* dst) { return PackPanels(v, spec, *p, dst); });
  };
  e.create = [v](const KernelSpec& spec) -> absl::StatusOr<std::unique_ptr<ShapedKernel>> {
    std::string why;
    std::optional<ConvParams> p = Parse(v, spec, &why);
    if (!p) return Declined(v, spec, why);
    auto k = std::make_unique<Avx2WinogradKernel>(v);
    RETURN_IF_ERROR(k->Init(spec, *p));
    return std::unique_ptr<ShapedKernel>(std::move(k));
  };
  return e;
}

}  // namespace

std::vector<CpuEntry> Avx2WinogradEntries() { return {WinogradEntry(kF4), WinogradEntry(kF2)}; }

std::vector<CpuEntry> Avx512WinogradEntries() {
  return {WinogradEntry(kF4Avx512), WinogradEntry(kF2Avx512), WinogradEntry(kF2Bf16)};
}

}  // namespace gcomp::cpu::own
