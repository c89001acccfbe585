// cpu.avx2.winograd: NHWC 3x3 stride-1 FusedConv steps as Winograd F(2x2, 3x3) on AVX2 + FMA, every
// part of it own: the f32 transforms of winograd.h around 16 GEMMs (one per Winograd point) on the
// 6 x 16 register tiles of avx2_tile.h. 16 products per 2x2 output tile where the direct
// convolution takes 36: 2.25x fewer.
//
// Per block of `block_` output tiles, all threads together:
//   1. V [16][tiles][C] = the input transform of the block's 4x4 windows (bf16 widened, zeros
//      outside the image), the tiles split between the threads;
//   2. M_p [tiles][K] = V_p [tiles][C] x U_p [C][K] for the 16 points p, the (point, 16-channel
//      panel) pairs split between the threads in point order, so that a thread's V_p stays in L2
//      while U_p's panels stream past it;
//   3. Y = the output transform of M, + bias, then ReLU, the tiles split between the threads.
// U = G g G^T is made at compile time (`pack`): per point, panels of 16 output channels, C rows of
// 16 floats each; the plan stores it (16/9 of the plain weights' bytes).
//
// It takes f32 steps and bf16-storage steps (bf16 or f32 weights) without residual, with no
// activation or ReLU, on CPUs whose best vector unit is AVX2; the table tries it before every other
// convolution there. Layers with few tiles per image run the own direct convolution
// (conv_avx2.cc) instead: see Chosen().
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
#include "runtime/fused_op.h"

namespace gcomp::cpu::own {
namespace {

using runtime::ConvParams;

constexpr char kPackedFormat[] = "avx2-f32-winograd-panels16";
constexpr int64_t kPoints = 16;
// The bytes of one block's V and M together: blocks of more tiles read U fewer times; fewer keep
// V and M nearer the cores.
constexpr int64_t kBlockBytes = int64_t{1} << 20;

int64_t Panels(int64_t n) { return (n + kTileCols - 1) / kTileCols; }
int64_t PackedElements(const ConvParams& p) { return kPoints * Panels(p.cout) * kTileCols * p.c; }
int64_t TilesPerImage(const ConvParams& p) { return ((p.ho + 1) / 2) * ((p.wo + 1) / 2); }

std::optional<ConvParams> Parse(const KernelSpec& spec, std::string* why) {
  std::optional<ConvParams> p = runtime::ParseConv(spec, why);
  if (!p) return std::nullopt;
  const bool f32 = p->dtype == DType::kF32 && p->wdtype == DType::kF32;
  const bool bf16 = p->dtype == DType::kBF16 && (p->wdtype == DType::kBF16 || p->wdtype == DType::kF32);
  if (!f32 && !bf16) {
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

absl::Status Declined(const KernelSpec& spec, const std::string& why) {
  return absl::InvalidArgumentError(absl::StrCat("node '", spec.name, "' (", spec.op, "): cpu.avx2.winograd: ", why));
}

// U = G g G^T of W [K, C, 3, 3] as [point][panel][C][16] (zero past K).
absl::Status PackPanels(const KernelSpec& spec, const ConvParams& p, float* dst) {
  ASSIGN_OR_RETURN(std::vector<float> w, blas::ConstantF32(spec, 1));
  const int64_t c = p.c, k = p.cout, panels = Panels(k);
  std::fill(dst, dst + PackedElements(p), 0.0f);
  for (int64_t o = 0; o < k; ++o) {
    for (int64_t ch = 0; ch < c; ++ch) {
      const float* f = &w[static_cast<size_t>((o * c + ch) * 9)];
      float u[kPoints];
      WinogradFilter(f, u);
      for (int64_t point = 0; point < kPoints; ++point) {
        dst[((point * panels + o / kTileCols) * c + ch) * kTileCols + o % kTileCols] = u[point];
      }
    }
  }
  return absl::OkStatus();
}

class Avx2WinogradKernel : public ShapedKernel {
 public:
  absl::Status Init(const KernelSpec& spec, const ConvParams& p) {
    name_ = spec.name;
    threads_ = std::max(1, spec.threads);
    bf16_ = p.dtype == DType::kBF16;
    c_ = p.c;
    k_ = p.cout;
    panels_ = Panels(k_);
    relu_ = p.epi.act == Activation::kRelu;
    g_.h = p.h;
    g_.w = p.w;
    g_.ho = p.ho;
    g_.wo = p.wo;
    g_.pt = p.pt;
    g_.pl = p.pl;
    g_.th = (p.ho + 1) / 2;
    g_.tw = (p.wo + 1) / 2;
    g_.count = p.n * g_.th * g_.tw;
    const size_t want = static_cast<size_t>(PackedElements(p)) * sizeof(float);
    ASSIGN_OR_RETURN(u_, F32Panels(spec, "cpu.avx2.winograd", kPackedFormat, want, owned_u_,
                                   [&](float* dst) { return PackPanels(spec, p, dst); }));
    if (p.epi.has_bias) {
      ASSIGN_OR_RETURN(bias_, blas::ConstantF32(spec, runtime::kBiasInput));
    }
    // Blocks of at most kBlockBytes of V and M (at least one row of tiles), as even as possible.
    const int64_t most = std::max<int64_t>(kTileRows, kBlockBytes / (kPoints * (c_ + k_) * 4));
    const int64_t blocks = (g_.count + most - 1) / most;
    block_ = (g_.count + blocks - 1) / blocks;
    v_bytes_ = Align64(static_cast<size_t>(kPoints * block_ * c_) * 4);
    m_bytes_ = Align64(static_cast<size_t>(kPoints * block_ * k_) * 4);
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
    float* v = reinterpret_cast<float*>(workspace.data());
    float* m = reinterpret_cast<float*>(workspace.data() + v_bytes_);
    const void* x = inputs[0];
    void* y = outputs[0];
    const float* bias = bias_.empty() ? nullptr : bias_.data();
    const int threads = static_cast<int>(std::min<int64_t>(threads_, kPoints * panels_));
#pragma omp parallel num_threads(threads) if (threads > 1)
    {
      const int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
      for (int64_t base = 0; base < g_.count; base += block_) {
        const int64_t rows = std::min(block_, g_.count - base);
        WinogradInputTilesF32(g_, bf16_, x, c_, base, rows, base + rows * t / nt, base + rows * (t + 1) / nt, v);
#pragma omp barrier
        const int64_t items = kPoints * panels_;
        for (int64_t i = items * t / nt; i < items * (t + 1) / nt; ++i) Products(v, m, rows, i / panels_, i % panels_);
#pragma omp barrier
        WinogradOutputTilesF32(g_, m, k_, base, rows, base + rows * t / nt, base + rows * (t + 1) / nt, bias, relu_,
                               bf16_, y);
#pragma omp barrier
      }
    }
    return absl::OkStatus();
  }

 private:
  // M_p [rows][K] columns of `panel` = V_p [rows][C] x U_p's panel.
  void Products(const float* v, float* m, int64_t rows, int64_t point, int64_t panel) const {
    TileOutput out;
    out.y = m + point * rows * k_;
    out.ld = out.n = k_;
    const float* vp = v + point * rows * c_;
    const float* b = u_ + (point * panels_ + panel) * c_ * kTileCols;
    for (int64_t r0 = 0; r0 < rows; r0 += kTileRows) {
      switch (std::min<int64_t>(kTileRows, rows - r0)) {
        case 6: Tile<6>(vp, b, out, r0, panel); break;
        case 5: Tile<5>(vp, b, out, r0, panel); break;
        case 4: Tile<4>(vp, b, out, r0, panel); break;
        case 3: Tile<3>(vp, b, out, r0, panel); break;
        case 2: Tile<2>(vp, b, out, r0, panel); break;
        default: Tile<1>(vp, b, out, r0, panel); break;
      }
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

  std::string name_;
  int threads_ = 1;
  bool bf16_ = false, relu_ = false;
  int64_t c_ = 0, k_ = 0, panels_ = 0;
  WinogradTiles g_;
  int64_t block_ = 0;  // tiles per block (the last may have fewer)
  const float* u_ = nullptr;
  AlignedArray<float> owned_u_;
  std::vector<float> bias_;
  size_t v_bytes_ = 0, m_bytes_ = 0;  // V and M of one block in the workspace, each rounded up to 64 bytes
  AlignedArray<uint8_t> own_workspace_;
};

}  // namespace

CpuEntry Avx2WinogradEntry() {
  CpuEntry e;
  e.id = "cpu.avx2.winograd";
  e.ops = {"FusedConv"};
  e.params = runtime::ConvParamSpecs();
  e.description =
      "own Winograd F(2x2, 3x3) on AVX2 + FMA (3x3 stride 1, no residual, none or ReLU; f32, or bf16 widened): f32 "
      "transforms around 16 GEMMs on 6 x 16 register tiles, U made at compile time; chosen where the CPU has no "
      "AVX-512";
  e.accepts = [](const KernelSpec& spec) -> std::optional<std::string> {
    std::string why;
    std::optional<ConvParams> p = Parse(spec, &why);
    const bool packed = spec.inputs[1].format == kPackedFormat;
    if (!p || (CpuSimdLevel() != SimdLevel::kAvx2 && !packed)) return std::nullopt;
    return absl::StrCat("own AVX2 Winograd F(2x2, 3x3), ", TilesPerImage(*p), " tiles per image (",
                        runtime::DescribeConv(*p), ")", p->dtype == DType::kBF16 ? ", bf16 storage widened to f32" : "",
                        packed ? ": the plan's weights are packed for it" : ": this CPU has no AVX-512");
  };
  e.pack = [](const KernelSpec& spec, size_t index) -> absl::StatusOr<Packed> {
    std::string why;
    std::optional<ConvParams> p = Parse(spec, &why);
    if (!p) return Declined(spec, why);
    return PackGemmOperand<float>(spec, index, PackedElements(*p), kPackedFormat,
                                    [&](float* dst) { return PackPanels(spec, *p, dst); });
  };
  e.create = [](const KernelSpec& spec) -> absl::StatusOr<std::unique_ptr<ShapedKernel>> {
    std::string why;
    std::optional<ConvParams> p = Parse(spec, &why);
    if (!p) return Declined(spec, why);
    return MakeGemmKernel<Avx2WinogradKernel>(spec, *p);
  };
  return e;
}

}  // namespace gcomp::cpu::own
