// cpu.amx.gemm and cpu.amx.matmul: bf16 FusedGemm / MatMul steps on AMX tiles (gemm_amx.h), with
// the epilogue (bias, residual, activation) applied to each 32 x 32 block as it leaves the tiles.
//
// They take bf16 steps with K a multiple of 32 and at least kMinK, where the CPU has AMX-BF16
// (simd.h); the table tries them before oneDNN, which takes every other GEMM. A step of K below
// kLongK at more than kMaxRowsShortK rows (a large batch) runs oneDNN's matmul instead, on the
// weights unpacked from the panels; the step's reason says so. On ViT-B/16 bf16 plans (README,
// "CPU runtime and plans") the tiles cut the model's time against oneDNN 2.6's brgemm matmuls by
// about a sixth at batch 1 and an eighth at batch 8.
//
// Weights: `pack` stores B (alpha folded in, rounded once to bf16) in the panels of gemm_amx.h,
// format kPackedFormat; `create` takes those, or packs plain weights itself.
//
// Work: row blocks of 32 x panels of 32 columns, each block over the whole K in the tiles, split
// between the threads as gemm_split.h says.
#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "runtime/cpu/blas/backends.h"
#include "runtime/cpu/blas/fused_params.h"
#include "runtime/cpu/own/attention_amx.h"
#include "runtime/cpu/own/common.h"
#include "runtime/cpu/own/gemm_amx.h"
#include "runtime/cpu/own/gemm_entry.h"
#include "runtime/cpu/own/gemm_split.h"
#include "runtime/cpu/own/simd.h"
#include "runtime/fused_op.h"

namespace gcomp::cpu::own {
namespace {

using amx::kGemmBlockRows;
using amx::kGemmPanelCols;
using amx::kGemmStep;
using runtime::GemmParams;

constexpr char kPackedFormat[] = "amx-bf16-panels32";
// Shorter reductions leave too few tile products per 32 x 32 block to hide its epilogue and its
// A and Y traffic: ResNet-50's 1x1 layers of K 64-256 ran slower than oneDNN's in the model.
constexpr int64_t kMinK = 512;
// Below kLongK the tiles win only while the weights dominate the traffic (few rows): with more
// rows than kMaxRowsShortK the step runs oneDNN's matmul. (ResNet-50 bf16: its K-512 layers ran
// faster on the tiles at 49 and 196 rows, batch 1, and on oneDNN at 392 rows and more.)
constexpr int64_t kLongK = 768;
constexpr int64_t kMaxRowsShortK = 256;

// Whether a GEMM of these dims runs on the tiles (else on oneDNN, with the weights unpacked).
bool OnTiles(const GemmParams& p) { return p.k >= kLongK || p.m <= kMaxRowsShortK; }

std::optional<GemmParams> Parse(const KernelSpec& spec, std::string* why) {
  std::optional<GemmParams> p = runtime::ParseGemm(spec, why);
  if (!p) return std::nullopt;
  if (CpuSimdLevel() != SimdLevel::kAmxBf16) {
    *why = "this CPU has no AMX-BF16 tiles";
    return std::nullopt;
  }
  if (p->dtype != DType::kBF16) {
    *why = "A and Y are not bf16";
    return std::nullopt;
  }
  if (p->k % kGemmStep != 0 || p->k < kMinK) {
    *why = absl::StrCat("K ", p->k, " is not a multiple of ", kGemmStep, " of at least ", kMinK);
    return std::nullopt;
  }
  return p;  // ParseGemm has checked that a bias is a constant
}

absl::Status Declined(const KernelSpec& spec, const std::string& why) {
  return absl::InvalidArgumentError(absl::StrCat("node '", spec.name, "' (", spec.op, "): cpu.amx.gemm: ", why));
}

// B times alpha in the panel layout (gemm_amx.h), each element rounded once to bf16, into dst
// (amx::PackedGemmElements(K, N) elements).
absl::Status PackPanels(const KernelSpec& spec, const GemmParams& p, uint16_t* dst) {
  ASSIGN_OR_RETURN(std::vector<float> w, blas::ConstantF32(spec, 1));
  const int64_t k = p.k, n = p.n, panels = (n + kGemmPanelCols - 1) / kGemmPanelCols;
  std::vector<float> tile(512);
  for (int64_t pn = 0; pn < panels; ++pn) {
    for (int64_t s = 0; s < k / kGemmStep; ++s) {
      for (int64_t t = 0; t < 2; ++t, dst += 512) {
        for (int64_t r = 0; r < 16; ++r) {
          for (int64_t c = 0; c < 16; ++c) {
            const int64_t col = pn * kGemmPanelCols + t * 16 + c;
            for (int64_t e = 0; e < 2; ++e) {
              const int64_t row = s * kGemmStep + 2 * r + e;
              tile[r * 32 + c * 2 + e] = col < n ? p.alpha * w[p.trans_b ? col * k + row : row * n + col] : 0.0f;
            }
          }
        }
        StoreF32(DType::kBF16, tile.data(), dst, 512);
      }
    }
  }
  return absl::OkStatus();
}

class AmxGemmKernel : public ShapedKernel {
 public:
  absl::Status Init(const KernelSpec& spec, const GemmParams& p) {
    p_ = p;
    threads_ = std::max(1, spec.threads);
    const Operand& w = spec.inputs[1];
    const size_t want = static_cast<size_t>(amx::PackedGemmElements(p.k, p.n)) * sizeof(uint16_t);
    if (w.format == kPackedFormat) {
      if (w.constant_bytes != want) {
        return Declined(spec, absl::StrCat("packed weights have ", w.constant_bytes, " bytes, expected ", want));
      }
      if (reinterpret_cast<uintptr_t>(w.constant) % 64 == 0) {
        b_ = reinterpret_cast<const uint16_t*>(w.constant);
      } else {  // tile loads want 64-byte rows: an aligned copy
        RETURN_IF_ERROR(OwnWeights(spec, want));
        std::memcpy(owned_b_.data(), w.constant, want);
      }
    } else if (w.format.empty()) {
      RETURN_IF_ERROR(OwnWeights(spec, want));
      RETURN_IF_ERROR(PackPanels(spec, p, owned_b_.data()));
    } else {
      return Declined(spec, absl::StrCat("weights format '", w.format.substr(0, 40), "' is not ", kPackedFormat));
    }
    if (p.epi.has_bias) {
      ASSIGN_OR_RETURN(bias_, blas::ConstantF32(spec, runtime::kBiasInput));
    }
    if (p.m % kGemmBlockRows) tail_ = AlignedArray<uint16_t>(kGemmBlockRows * p.k);
    scratch_ = AlignedArray<float>(threads_ * 2 * kGemmBlockRows * kGemmPanelCols);
    if (!scratch_ || (p.m % kGemmBlockRows && !tail_)) {
      return absl::ResourceExhaustedError(absl::StrCat("node '", spec.name, "': cpu.amx.gemm buffers"));
    }
    split_ = GemmSplit((p.m + kGemmBlockRows - 1) / kGemmBlockRows, (p.n + kGemmPanelCols - 1) / kGemmPanelCols,
                       kGemmBlockRows * p.k * 2);
    return absl::OkStatus();
  }

  absl::Status Run(std::span<const void* const> inputs, std::span<void* const> outputs) override {
    amx::GemmOperands g;
    g.a = static_cast<const uint16_t*>(inputs[0]);
    g.b = b_;
    g.bias = bias_.empty() ? nullptr : bias_.data();
    g.residual = p_.epi.has_residual ? static_cast<const uint16_t*>(inputs[runtime::kResidualInput]) : nullptr;
    g.y = static_cast<uint16_t*>(outputs[0]);
    g.m = p_.m;
    g.k = p_.k;
    g.n = p_.n;
    g.act = p_.epi.act;
    g.clip_min = p_.epi.clip_min;
    g.clip_max = p_.epi.clip_max;
    if (tail_) {
      const int64_t full = p_.m / kGemmBlockRows * kGemmBlockRows, rows = p_.m - full;
      std::memcpy(tail_.data(), g.a + full * p_.k, static_cast<size_t>(rows * p_.k) * 2);
      std::memset(tail_.data() + rows * p_.k, 0, static_cast<size_t>((kGemmBlockRows - rows) * p_.k) * 2);
      g.a_tail = tail_.data();
    }
    const int threads = split_.Threads(threads_);
#pragma omp parallel num_threads(threads) if (threads > 1)
    {
      const int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
      float* scratch = scratch_.data() + t * 2 * kGemmBlockRows * kGemmPanelCols;
      amx::PendingBlock pending;
      amx::ConfigureTiles();
      split_.ForShare(t, nt, [&](int64_t rb0, int64_t rb1, int64_t panel) {
        amx::GemmPanel(g, rb0, rb1, panel, scratch, pending);
      });
      amx::FinishBlock(g, pending);
      amx::ReleaseTiles();
    }
    return absl::OkStatus();
  }

 private:
  // Line-aligned kernel-owned memory for the packed weights (bytes of them), which b_ points to.
  absl::Status OwnWeights(const KernelSpec& spec, size_t bytes) {
    owned_b_ = AlignedArray<uint16_t>(bytes / sizeof(uint16_t));
    if (!owned_b_) return absl::ResourceExhaustedError(absl::StrCat("node '", spec.name, "': cpu.amx.gemm weights"));
    b_ = owned_b_.data();
    return absl::OkStatus();
  }

  GemmParams p_;
  int threads_ = 1;
  const uint16_t* b_ = nullptr;
  AlignedArray<uint16_t> owned_b_, tail_;
  AlignedArray<float> scratch_;
  std::vector<float> bias_;
  GemmSplit split_;
};

// B as the step stores it ([K, N], or [N, K] with transB), bf16, from the panels (alpha folded in).
std::vector<uint16_t> UnpackPanels(const uint16_t* panels, const GemmParams& p) {
  std::vector<uint16_t> w(static_cast<size_t>(p.k * p.n));
  const int64_t steps = p.k / kGemmStep;
  for (int64_t row = 0; row < p.k; ++row) {
    const int64_t s = row / kGemmStep, r = (row % kGemmStep) / 2, e = row % 2;
    for (int64_t col = 0; col < p.n; ++col) {
      const int64_t pn = col / kGemmPanelCols, t = (col % kGemmPanelCols) / 16, c = col % 16;
      w[p.trans_b ? col * p.k + row : row * p.n + col] = panels[((pn * steps + s) * 2 + t) * 512 + r * 32 + c * 2 + e];
    }
  }
  return w;
}

// The oneDNN form (a step of K below kLongK at more than kMaxRowsShortK rows): oneDNN's matmul on
// the weights unpacked from the panels (alpha already in them), which it reorders into its own
// layout when it is created.
absl::StatusOr<std::unique_ptr<ShapedKernel>> OneDnnForm(const KernelSpec& spec, const GemmParams& p,
                                                         const std::string& op) {
  const CpuEntry entry = op == "MatMul" ? blas::OneDnnMatMulEntry() : blas::OneDnnGemmEntry();
  const Operand& w = spec.inputs[1];
  if (w.format.empty()) return entry.create(spec);
  if (w.format != kPackedFormat ||
      w.constant_bytes != static_cast<size_t>(amx::PackedGemmElements(p.k, p.n)) * sizeof(uint16_t)) {
    return Declined(spec, absl::StrCat("weights format '", w.format.substr(0, 40), "' (", w.constant_bytes,
                                       " bytes) is not ", kPackedFormat, " of these dims"));
  }
  const std::vector<uint16_t> plain = UnpackPanels(reinterpret_cast<const uint16_t*>(w.constant), p);
  KernelSpec plain_spec = spec;
  Attributes attrs = *spec.params;
  if (op != "MatMul") attrs.Set("alpha", 1.0f);
  plain_spec.params = &attrs;
  plain_spec.inputs[1].dtype = DType::kBF16;
  plain_spec.inputs[1].constant = reinterpret_cast<const uint8_t*>(plain.data());
  plain_spec.inputs[1].constant_bytes = plain.size() * sizeof(uint16_t);
  plain_spec.inputs[1].format.clear();
  return entry.create(plain_spec);  // oneDNN keeps its own reordered copy of the weights
}

CpuEntry AmxEntry(const std::string& id, const std::string& op) {
  CpuEntry e;
  e.id = id;
  e.ops = {op};
  e.params = runtime::GemmParamSpecs();
  e.in_place = {{0, 3}};
  e.description =
      "own bf16 GEMM on AMX tiles (32 x 32 blocks, B packed in 32-column tile panels), bias + residual + "
      "activation applied per block; CPUs with AMX-BF16, K a multiple of 32";
  e.accepts = [](const KernelSpec& spec) -> std::optional<std::string> {
    std::string why;
    std::optional<GemmParams> p = Parse(spec, &why);
    if (!p) return std::nullopt;
    return absl::StrCat("own AMX-BF16 GEMM (", runtime::DescribeGemm(*p), ")",
                        p->k < kLongK ? absl::StrCat("; oneDNN matmul at more than ", kMaxRowsShortK, " rows") : "");
  };
  e.pack = [](const KernelSpec& spec, size_t index) -> absl::StatusOr<Packed> {
    std::string why;
    std::optional<GemmParams> p = Parse(spec, &why);
    if (!p) return Declined(spec, why);
    return PackGemmOperand<uint16_t>(spec, index, amx::PackedGemmElements(p->k, p->n), kPackedFormat,
                                    [&](uint16_t* dst) { return PackPanels(spec, *p, dst); });
  };
  e.create = [op](const KernelSpec& spec) -> absl::StatusOr<std::unique_ptr<ShapedKernel>> {
    std::string why;
    std::optional<GemmParams> p = Parse(spec, &why);
    if (!p) return Declined(spec, why);
    if (!OnTiles(*p)) return OneDnnForm(spec, *p, op);
    return MakeGemmKernel<AmxGemmKernel>(spec, *p);
  };
  return e;
}

}  // namespace

std::vector<CpuEntry> GemmEntries() {
  return {AmxEntry("cpu.amx.gemm", "FusedGemm"), AmxEntry("cpu.amx.matmul", "MatMul")};
}

}  // namespace gcomp::cpu::own
