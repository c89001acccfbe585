// cpu.avx2.conv: NHWC FusedConv steps (any kernel size, stride, padding and dilation; no groups) on
// AVX2 + FMA as an implicit GEMM: Y [N*Ho*Wo, Cout] = windows [N*Ho*Wo, kh*kw*C] x W [kh*kw*C, Cout],
// where no window is ever copied: each 6 x 16 register tile (avx2_tile.h) reads its six output
// pixels' windows straight from the input, one contiguous run of floats per kernel row (kw*C values
// where the dilation along W is 1, else C per tap), and the weights as 16-column panels in the same
// (ky, kx, c) order. Bias, residual and activation are applied as the tile leaves the registers.
//
// Padding and bf16: the input is first copied (bf16 widened) into a zero-bordered f32 image in the
// session's workspace, so every window is in bounds; an unpadded f32 input is read where it is.
// That copy is one pass over the input, against the kh*kw passes of the products.
//
// It takes f32 steps and bf16-storage steps (bf16 or f32 weights) with activation none, relu, clip
// or gelu (erf), on CPUs whose best vector unit is AVX2 (no AVX-512), where oneDNN 2.6's direct
// convolution (jit:avx2) ran ResNet-50's strided 3x3 layers at 77-115 GFLOP/s on a Zen 3 core pair
// (README, "CPU runtime and plans"). The Winograd entries come before it in the table and keep the
// stride-1 3x3 layers they take.
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
#include "runtime/cpu/own/gemm_split.h"
#include "runtime/cpu/own/simd.h"
#include "runtime/fused_op.h"

namespace gcomp::cpu::own {
namespace {

using runtime::ConvParams;

constexpr char kPackedFormat[] = "avx2-f32-conv-panels16";
// The shortest run of contiguous window floats it takes: below, each tile's fixed costs (the rows'
// pointers, the loop tails, the epilogue) weigh on few products per run. ResNet-50's 7x7 stem on 3
// channels (runs of 21) ran at 175-179 GFLOP/s here against 193-195 for oneDNN's jit:avx2
// convolution (tools/bench/gemm_backends --conv, Zen 3, 2 threads, batches 1 and 8); ViT-B/16's
// 16x16 patch embedding (runs of 48) at 169-180 against 165-182.
constexpr int64_t kMinRun = 32;

int64_t Panels(int64_t n) { return (n + kTileCols - 1) / kTileCols; }
int64_t Taps(const ConvParams& p) { return p.kh * p.kw * p.c; }  // the GEMM's K
int64_t PackedElements(const ConvParams& p) { return Panels(p.cout) * kTileCols * Taps(p); }

std::optional<ConvParams> Parse(const KernelSpec& spec, std::string* why) {
  std::optional<ConvParams> p = runtime::ParseConv(spec, why);
  if (!p) return std::nullopt;
  const bool f32 = p->dtype == DType::kF32 && p->wdtype == DType::kF32;
  const bool bf16 = p->dtype == DType::kBF16 && (p->wdtype == DType::kBF16 || p->wdtype == DType::kF32);
  if (!f32 && !bf16) {
    *why = absl::StrCat("X, Z and Y ", DTypeName(p->dtype), ", W ", DTypeName(p->wdtype),
                        ": not fp32, nor bf16 with bf16 or fp32 weights");
  } else if (!p->nhwc) {
    *why = "NCHW activations: it reads NHWC windows";
  } else if (p->group != 1) {
    *why = absl::StrCat("group ", p->group, ": only ungrouped convolutions");
  } else if (p->epi.act == Activation::kGeluTanh) {
    *why = "activation gelu_tanh is not none, relu, clip or gelu";
  } else if ((p->dw == 1 ? p->kw * p->c : p->c) < kMinRun) {
    *why = absl::StrCat("runs of ", p->dw == 1 ? p->kw * p->c : p->c, " floats per kernel row, under ", kMinRun);
  } else {
    return p;  // ParseConv has checked that a bias is a constant [Cout]
  }
  return std::nullopt;
}

absl::Status Declined(const KernelSpec& spec, const std::string& why) {
  return absl::InvalidArgumentError(absl::StrCat("node '", spec.name, "' (", spec.op, "): cpu.avx2.conv: ", why));
}

// W [Cout, C, kh, kw] as panels of 16 output channels: panel q is K = kh*kw*C rows (ky, kx, c
// order) of the 16 floats W[16q .. 16q + 15, c, ky, kx] (zero past Cout), contiguous.
absl::Status PackPanels(const KernelSpec& spec, const ConvParams& p, float* dst) {
  ASSIGN_OR_RETURN(std::vector<float> w, blas::ConstantF32(spec, 1));
  for (int64_t q = 0; q < Panels(p.cout); ++q) {
    for (int64_t ky = 0; ky < p.kh; ++ky) {
      for (int64_t kx = 0; kx < p.kw; ++kx) {
        for (int64_t c = 0; c < p.c; ++c, dst += kTileCols) {
          for (int64_t j = 0; j < kTileCols; ++j) {
            const int64_t o = q * kTileCols + j;
            dst[j] = o < p.cout ? w[static_cast<size_t>(((o * p.c + c) * p.kh + ky) * p.kw + kx)] : 0.0f;
          }
        }
      }
    }
  }
  return absl::OkStatus();
}

// One run's operands.
struct Operands {
  const float* x = nullptr;  // the (padded) f32 input image [N, hp, wp, C]
  const float* b = nullptr;  // panels
  TileOutput out;            // Y [N*Ho*Wo, Cout]
};

class Avx2ConvKernel : public ShapedKernel {
 public:
  absl::Status Init(const KernelSpec& spec, const ConvParams& p) {
    p_ = p;
    name_ = spec.name;
    threads_ = std::max(1, spec.threads);
    m_ = p.n * p.ho * p.wo;
    k_ = Taps(p);
    hp_ = p.h + p.pt + p.pb;
    wp_ = p.w + p.pl + p.pr;
    copy_ = p.dtype == DType::kBF16 || p.pt + p.pl + p.pb + p.pr > 0;
    image_ = hp_ * wp_ * p.c;
    for (int64_t oy = 0; oy < p.ho; ++oy) {
      for (int64_t ox = 0; ox < p.wo; ++ox) window_.push_back((oy * p.sh * wp_ + ox * p.sw) * p.c);
    }
    // The runs of one window: a kernel row of kw*C floats where taps along W are adjacent, else
    // each tap's C floats.
    if (p.dw == 1) {
      run_len_ = p.kw * p.c;
      for (int64_t ky = 0; ky < p.kh; ++ky) runs_.push_back(ky * p.dh * wp_ * p.c);
    } else {
      run_len_ = p.c;
      for (int64_t ky = 0; ky < p.kh; ++ky) {
        for (int64_t kx = 0; kx < p.kw; ++kx) runs_.push_back((ky * p.dh * wp_ + kx * p.dw) * p.c);
      }
    }
    const size_t want = static_cast<size_t>(PackedElements(p)) * sizeof(float);
    ASSIGN_OR_RETURN(b_, F32Panels(spec, "cpu.avx2.conv", kPackedFormat, want, owned_b_,
                                   [&](float* dst) { return PackPanels(spec, p, dst); }));
    if (p.epi.has_bias) RETURN_IF_ERROR(PaddedBias(spec, true, Panels(p.cout) * kTileCols, bias_));
    split_ = GemmSplit((m_ + kTileRows - 1) / kTileRows, Panels(p.cout), kTileRows * k_ * 4);
    return absl::OkStatus();
  }

  // The zero-bordered f32 input image, where it is copied.
  int64_t WorkspaceBytes() const override {
    return copy_ ? static_cast<int64_t>(Align64(static_cast<size_t>(p_.n * hp_ * wp_ * p_.c) * 4)) : 0;
  }

  absl::Status Run(std::span<const void* const> inputs, std::span<void* const> outputs) override {
    const size_t bytes = static_cast<size_t>(WorkspaceBytes());
    if (bytes > 0 && !own_workspace_) own_workspace_ = AlignedArray<uint8_t>(bytes);
    if (bytes > 0 && !own_workspace_) return absl::ResourceExhaustedError(absl::StrCat("node '", name_, "': workspace"));
    return RunWithWorkspace(inputs, outputs, {own_workspace_.data(), bytes});
  }

  absl::Status RunWithWorkspace(std::span<const void* const> inputs, std::span<void* const> outputs,
                                std::span<uint8_t> workspace) override {
    if (workspace.size() < static_cast<size_t>(WorkspaceBytes())) {
      return absl::InternalError(absl::StrCat("node '", name_, "': workspace of ", workspace.size(), " bytes, expected ",
                                              WorkspaceBytes()));
    }
    const bool bf16 = p_.dtype == DType::kBF16;
    Operands g;
    g.x = copy_ ? reinterpret_cast<const float*>(workspace.data()) : static_cast<const float*>(inputs[0]);
    g.b = b_;
    g.out.bias = bias_ ? bias_.data() : nullptr;
    g.out.residual = p_.epi.has_residual ? inputs[runtime::kResidualInput] : nullptr;
    g.out.y = outputs[0];
    g.out.ld = g.out.n = p_.cout;
    g.out.act = p_.epi.act;
    g.out.clip_min = p_.epi.clip_min;
    g.out.clip_max = p_.epi.clip_max;
    const int threads = split_.Threads(threads_);
#pragma omp parallel num_threads(threads) if (threads > 1)
    {
      const int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
      if (copy_) {  // each thread pads its share of the image's rows; then any tile may read any row
        const int64_t rows = p_.n * hp_;
        Pad(inputs[0], reinterpret_cast<float*>(workspace.data()), rows * t / nt, rows * (t + 1) / nt);
#pragma omp barrier
      }
      if (bf16) {
        split_.ForShare(t, nt, [&](int64_t rb0, int64_t rb1, int64_t panel) { Panel<true>(g, rb0, rb1, panel); });
      } else {
        split_.ForShare(t, nt, [&](int64_t rb0, int64_t rb1, int64_t panel) { Panel<false>(g, rb0, rb1, panel); });
      }
    }
    return absl::OkStatus();
  }

 private:
  // Rows [r0, r1) of the padded image (row r: image r / hp, padded row r % hp) from X.
  void Pad(const void* x, float* xp, int64_t r0, int64_t r1) const {
    const int64_t c = p_.c, row = wp_ * c;
    for (int64_t r = r0; r < r1; ++r) {
      float* dst = xp + r * row;
      const int64_t n = r / hp_, iy = r % hp_ - p_.pt;
      if (iy < 0 || iy >= p_.h) {
        std::fill(dst, dst + row, 0.0f);
        continue;
      }
      std::fill(dst, dst + p_.pl * c, 0.0f);
      const int64_t at = ((n * p_.h + iy) * p_.w) * c;
      if (p_.dtype == DType::kBF16) {
        LoadF32(DType::kBF16, static_cast<const uint16_t*>(x) + at, dst + p_.pl * c, p_.w * c);
      } else {
        std::memcpy(dst + p_.pl * c, static_cast<const float*>(x) + at, static_cast<size_t>(p_.w * c) * 4);
      }
      std::fill(dst + (p_.pl + p_.w) * c, dst + row, 0.0f);
    }
  }

  // Output rows [r0, r0 + R) (pixels in N, Ho, Wo order) x the 16 channels of `panel`.
  template <int R, bool kBf16>
  void Tile(const Operands& g, int64_t r0, int64_t panel) const {
    // Each row's window (one division per tile: the pixels after r0 follow by increments).
    const float* base[R];
    const int64_t hw = p_.ho * p_.wo;
    int64_t n = r0 / hw, at = r0 % hw;
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) {
      base[r] = g.x + n * image_ + window_[static_cast<size_t>(at)];
      if (++at == hw) at = 0, ++n;
    }
    TileAcc<R> acc;
    const float* b = g.b + panel * k_ * kTileCols;
    for (const int64_t off : runs_) {
      const float* a[R];
#pragma GCC unroll 6
      for (int r = 0; r < R; ++r) a[r] = base[r] + off;
      Accumulate<R>(acc, a, run_len_, b);
      b += run_len_ * kTileCols;
    }
    StoreTile<R, kBf16>(acc, g.out, r0, panel * kTileCols);
  }

  template <bool kBf16>
  void Panel(const Operands& g, int64_t rb0, int64_t rb1, int64_t panel) const {
    for (int64_t rb = rb0; rb < rb1; ++rb) {
      const int64_t r0 = rb * kTileRows;
      WithTileRows(std::min<int64_t>(kTileRows, m_ - r0),
                   [&](auto rows) { Tile<decltype(rows)::value, kBf16>(g, r0, panel); });
    }
  }

  ConvParams p_;
  std::string name_;
  int threads_ = 1;
  int64_t m_ = 0, k_ = 0, hp_ = 0, wp_ = 0;
  bool copy_ = false;
  int64_t image_ = 0;            // floats per (padded) image
  std::vector<int64_t> window_;  // per output pixel of an image: its window's offset in the image
  std::vector<int64_t> runs_;    // each run's offset in floats from the window's first pixel
  int64_t run_len_ = 0;
  const float* b_ = nullptr;
  AlignedArray<float> owned_b_, bias_;
  AlignedArray<uint8_t> own_workspace_;
  GemmSplit split_;
};

}  // namespace

CpuEntry Avx2ConvEntry() {
  CpuEntry e;
  e.id = "cpu.avx2.conv";
  e.ops = {"FusedConv"};
  e.params = runtime::ConvParamSpecs();
  e.in_place = {{0, 3}};
  e.description =
      "own fp32 convolution on AVX2 + FMA as an implicit GEMM (6 x 16 register tiles reading the input windows in "
      "place, weights in 16-channel f32 panels), bias + residual + relu/clip/gelu applied per tile, f32 or bf16 "
      "storage; chosen where the CPU has no AVX-512";
  e.accepts = [](const KernelSpec& spec) -> std::optional<std::string> {
    std::string why;
    std::optional<ConvParams> p = Parse(spec, &why);
    // Chosen where the CPU has no AVX-512; a plan that chose it (its weights in this entry's
    // panels) runs on any x86-64-v3 CPU.
    const bool packed = spec.inputs[1].format == kPackedFormat;
    if (!p || (CpuSimdLevel() != SimdLevel::kAvx2 && !packed)) return std::nullopt;
    return absl::StrCat("own AVX2 implicit-GEMM convolution (", runtime::DescribeConv(*p), ")",
                        p->dtype == DType::kBF16 ? ", bf16 storage widened to f32" : "", packed ? ": the plan's weights are packed for it" : ": this CPU has no AVX-512");
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
    return MakeGemmKernel<Avx2ConvKernel>(spec, *p);
  };
  return e;
}

}  // namespace gcomp::cpu::own
