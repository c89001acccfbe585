// cpu.avx2.gemm and cpu.avx2.matmul: fp32 FusedGemm / MatMul steps on AVX2 + FMA, with the
// epilogue (bias, residual, activation) applied to each 6 x 16 tile as it leaves the registers.
//
// They take fp32 steps (A, B, Y) and bf16-storage steps (A, Z, Y bf16; B bf16 or f32) with
// activation none, relu, clip or gelu (erf), on CPUs whose best vector unit is AVX2 (CpuSimdLevel() kAvx2: no
// AVX-512); elsewhere oneDNN's GEMMs are chosen, which use the wider registers. bf16 steps widen A
// into the session's workspace once per run, keep B widened to f32 in the panels, and read Z and
// round Y (to nearest even, NaN kept quiet) in the tiles' epilogue. A plan that chose them runs on any x86-64-v3 CPU (they need only AVX2 and
// FMA, which the library is built for). oneDNN 2.6's gemm:jit reaches about 80 GFLOP/s on
// ResNet-50's stage-4 1x1 layers (49 rows at batch 1) on a Zen 3 core pair, where these tiles
// keep the weights' panel in L1 and each row of A in registers (README, "CPU runtime and plans").
//
// Weights: `pack` stores B (alpha folded in) in panels of 16 columns: panel p is K rows of the 16
// floats B[k, 16p .. 16p + 15] (zero past N), contiguous, so a panel streams in order; format
// kPackedFormat. `create` takes those, or packs plain weights itself.
//
// Work: row blocks of 6 x panels of 16 columns, each tile over the whole K in 12 ymm accumulators
// (6 rows x 2 vectors), split between the threads as gemm_split.h says.
#include <immintrin.h>
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

using runtime::GemmParams;

constexpr char kPackedFormat[] = "avx2-f32-panels16";
constexpr int64_t kPanelCols = kTileCols;
constexpr int64_t kBlockRows = kTileRows;

int64_t Panels(int64_t n) { return (n + kPanelCols - 1) / kPanelCols; }
int64_t PackedElements(int64_t k, int64_t n) { return Panels(n) * kPanelCols * k; }

std::optional<GemmParams> Parse(const KernelSpec& spec, std::string* why) {
  std::optional<GemmParams> p = runtime::ParseGemm(spec, why);
  if (!p) return std::nullopt;
  const bool f32 = p->dtype == DType::kF32 && p->wdtype == DType::kF32;
  const bool bf16 = p->dtype == DType::kBF16 && (p->wdtype == DType::kBF16 || p->wdtype == DType::kF32);
  if (!f32 && !bf16) {
    *why = absl::StrCat("A, Z and Y ", DTypeName(p->dtype), ", B ", DTypeName(p->wdtype),
                        ": not fp32, nor bf16 with bf16 or fp32 weights");
    return std::nullopt;
  }
  if (p->epi.act == Activation::kGeluTanh) {
    *why = "activation gelu_tanh is not none, relu, clip or gelu";
    return std::nullopt;
  }
  return p;  // ParseGemm has checked that a bias is a constant
}

absl::Status Declined(const KernelSpec& spec, const std::string& why) {
  return absl::InvalidArgumentError(absl::StrCat("node '", spec.name, "' (", spec.op, "): cpu.avx2.gemm: ", why));
}

// B times alpha in the panel layout above, into dst (PackedElements(K, N) floats).
absl::Status PackPanels(const KernelSpec& spec, const GemmParams& p, float* dst) {
  ASSIGN_OR_RETURN(std::vector<float> w, blas::ConstantF32(spec, 1));
  const int64_t k = p.k, n = p.n;
  for (int64_t pn = 0; pn < Panels(n); ++pn) {
    for (int64_t row = 0; row < k; ++row, dst += kPanelCols) {
      for (int64_t c = 0; c < kPanelCols; ++c) {
        const int64_t col = pn * kPanelCols + c;
        dst[c] = col < n ? p.alpha * w[p.trans_b ? col * k + row : row * n + col] : 0.0f;
      }
    }
  }
  return absl::OkStatus();
}

struct Operands {
  const float* a = nullptr;  // [M, K] row-major (bf16 steps: widened)
  const float* b = nullptr;  // panels
  int64_t m = 0, k = 0;
  TileOutput out;  // Y [M, N]; bias [Panels(N) * 16] zero-padded
};

// Y rows [r0, r0 + R) x the 16 columns of `panel`: the dot products over the whole K in registers,
// then the epilogue (avx2_tile.h).
template <int R, bool kBf16>
void Tile(const Operands& g, int64_t r0, int64_t panel) {
  const float* a[R];
#pragma GCC unroll 6
  for (int r = 0; r < R; ++r) a[r] = g.a + (r0 + r) * g.k;
  TileAcc<R> acc;
  Accumulate<R>(acc, a, g.k, g.b + panel * g.k * kPanelCols);
  StoreTile<R, kBf16>(acc, g.out, r0, panel * kPanelCols);
}

// Row blocks [rb0, rb1) x panel.
template <bool kBf16>
void Panel(const Operands& g, int64_t rb0, int64_t rb1, int64_t panel) {
  for (int64_t rb = rb0; rb < rb1; ++rb) {
    const int64_t r0 = rb * kBlockRows;
    WithTileRows(std::min(kBlockRows, g.m - r0), [&](auto rows) { Tile<decltype(rows)::value, kBf16>(g, r0, panel); });
  }
}

class Avx2GemmKernel : public ShapedKernel {
 public:
  absl::Status Init(const KernelSpec& spec, const GemmParams& p) {
    p_ = p;
    threads_ = std::max(1, spec.threads);
    const size_t want = static_cast<size_t>(PackedElements(p.k, p.n)) * sizeof(float);
    ASSIGN_OR_RETURN(b_, F32Panels(spec, "cpu.avx2.gemm", kPackedFormat, want, owned_b_,
                                   [&](float* dst) { return PackPanels(spec, p, dst); }));
    if (p.epi.has_bias) RETURN_IF_ERROR(PaddedBias(spec, true, Panels(p.n) * kPanelCols, bias_));
    split_ = GemmSplit((p.m + kBlockRows - 1) / kBlockRows, Panels(p.n), kBlockRows * p.k * 4);
    name_ = spec.name;
    return absl::OkStatus();
  }

  // bf16 steps: A widened to f32.
  int64_t WorkspaceBytes() const override {
    return p_.dtype == DType::kBF16 ? static_cast<int64_t>(Align64(static_cast<size_t>(p_.m * p_.k) * 4)) : 0;
  }

  absl::Status Run(std::span<const void* const> inputs, std::span<void* const> outputs) override {
    const size_t bytes = static_cast<size_t>(WorkspaceBytes());
    if (bytes > 0 && !own_workspace_) own_workspace_ = AlignedArray<uint8_t>(bytes);
    if (bytes > 0 && !own_workspace_) return absl::ResourceExhaustedError(absl::StrCat("node '", name_, "': workspace"));
    return RunWithWorkspace(inputs, outputs, {own_workspace_.data(), bytes});
  }

  absl::Status RunWithWorkspace(std::span<const void* const> inputs, std::span<void* const> outputs,
                                std::span<uint8_t> workspace) override {
    const bool bf16 = p_.dtype == DType::kBF16;
    if (workspace.size() < static_cast<size_t>(WorkspaceBytes())) {
      return absl::InternalError(absl::StrCat("node '", name_, "': workspace of ", workspace.size(), " bytes, expected ",
                                              WorkspaceBytes()));
    }
    Operands g;
    g.a = bf16 ? reinterpret_cast<const float*>(workspace.data()) : static_cast<const float*>(inputs[0]);
    g.b = b_;
    g.m = p_.m;
    g.k = p_.k;
    g.out.bias = bias_ ? bias_.data() : nullptr;
    g.out.residual = p_.epi.has_residual ? inputs[runtime::kResidualInput] : nullptr;
    g.out.y = outputs[0];
    g.out.ld = g.out.n = p_.n;
    g.out.act = p_.epi.act;
    g.out.clip_min = p_.epi.clip_min;
    g.out.clip_max = p_.epi.clip_max;
    const int threads = split_.Threads(threads_);
#pragma omp parallel num_threads(threads) if (threads > 1)
    {
      const int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
      if (bf16) {  // each thread widens its share of A's rows, then every tile may read any row
        const int64_t r0 = p_.m * t / nt, r1 = p_.m * (t + 1) / nt;
        LoadF32(DType::kBF16, static_cast<const uint16_t*>(inputs[0]) + r0 * p_.k,
                reinterpret_cast<float*>(workspace.data()) + r0 * p_.k, (r1 - r0) * p_.k);
#pragma omp barrier
        split_.ForShare(t, nt, [&](int64_t rb0, int64_t rb1, int64_t panel) { Panel<true>(g, rb0, rb1, panel); });
      } else {
        split_.ForShare(t, nt, [&](int64_t rb0, int64_t rb1, int64_t panel) { Panel<false>(g, rb0, rb1, panel); });
      }
    }
    return absl::OkStatus();
  }

 private:
  GemmParams p_;
  std::string name_;
  int threads_ = 1;
  const float* b_ = nullptr;
  AlignedArray<float> owned_b_, bias_;
  AlignedArray<uint8_t> own_workspace_;
  GemmSplit split_;
};

CpuEntry Avx2Entry(const std::string& id, const std::string& op) {
  CpuEntry e;
  e.id = id;
  e.ops = {op};
  e.params = runtime::GemmParamSpecs();
  e.in_place = {{0, 3}};
  e.description =
      "own fp32 GEMM on AVX2 + FMA (6 x 16 register tiles, B packed in 16-column f32 panels), bias + residual + "
      "relu/clip/gelu applied per tile, f32 or bf16 storage; chosen where the CPU has no AVX-512";
  e.accepts = [](const KernelSpec& spec) -> std::optional<std::string> {
    std::string why;
    std::optional<GemmParams> p = Parse(spec, &why);
    // Chosen where the CPU has no AVX-512; a plan that chose it (its weights in this entry's
    // panels) runs on any x86-64-v3 CPU.
    const bool packed = spec.inputs[1].format == kPackedFormat;
    if (!p || (CpuSimdLevel() != SimdLevel::kAvx2 && !packed)) return std::nullopt;
    return absl::StrCat("own AVX2 fp32 GEMM (", runtime::DescribeGemm(*p), ")",
                        p->dtype == DType::kBF16 ? ", bf16 storage widened to f32 in the tiles" : "",
                        packed ? ": the plan's weights are packed for it" : ": this CPU has no AVX-512");
  };
  e.pack = [](const KernelSpec& spec, size_t index) -> absl::StatusOr<Packed> {
    std::string why;
    std::optional<GemmParams> p = Parse(spec, &why);
    if (!p) return Declined(spec, why);
    return PackGemmOperand<float>(spec, index, PackedElements(p->k, p->n), kPackedFormat,
                                    [&](float* dst) { return PackPanels(spec, *p, dst); });
  };
  e.create = [](const KernelSpec& spec) -> absl::StatusOr<std::unique_ptr<ShapedKernel>> {
    std::string why;
    std::optional<GemmParams> p = Parse(spec, &why);
    if (!p) return Declined(spec, why);
    return MakeGemmKernel<Avx2GemmKernel>(spec, *p);
  };
  return e;
}

}  // namespace

std::vector<CpuEntry> Avx2GemmEntries() {
  return {Avx2Entry("cpu.avx2.gemm", "FusedGemm"), Avx2Entry("cpu.avx2.matmul", "MatMul")};
}

}  // namespace gcomp::cpu::own
