// The cuBLASLt GEMM and generated-kernel steps of the cuda executor (the cuDNN convolution is in
// cudnn_conv.cc).
#include "runtime/cuda/step_kernels.h"

#include <algorithm>
#include <cstdint>
#include <map>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "runtime/cuda/cuda_kernels.h"
#include "runtime/cuda/cuda_status.h"
#include "runtime/cuda/lt_matmul.h"

namespace gcomp::cuda {
namespace {

using runtime::KernelSpec;

// The work items of a generated kernel over a step's output 0.
int64_t ItemsAt(const GeneratedKernel& k, const KernelSpec& spec) {
  return WorkItems(k, runtime::NumElements(spec.outputs.at(0).dims));
}

class GeneratedStep : public CudaKernel {
 public:
  GeneratedStep(const CudaContext& ctx, GeneratedKernel k, const void* fn)
      : ctx_(ctx), k_(std::move(k)), fn_(fn) {}

  absl::StatusOr<int64_t> Reshape(const KernelSpec& spec) override {
    // The function was generated for the maximum batch's dims; at this batch, the same function
    // must come out (only the leading axis may change).
    std::string why;
    std::optional<GeneratedKernel> again = GeneratedKernelFor(spec, &why);
    if (!again || again->code.name != k_.code.name) {
      return absl::InvalidArgumentError(absl::StrCat("generated kernel '", k_.code.name,
                                                     "' does not run this step at these operand dims",
                                                     why.empty() ? "" : absl::StrCat(" (", why, ")")));
    }
    batch_ = spec.batch;
    items_ = ItemsAt(*again, spec);
    return 0;
  }

  absl::Status Run(const runtime::RunContext&, std::span<const void* const> inputs, std::span<void* const> outputs,
                   std::span<uint8_t>) override {
    return LaunchGenerated(ctx_, k_, fn_, batch_, items_, inputs, outputs);
  }

  std::string Algorithm() const override { return absl::StrCat(k_.code.name, ": ", k_.description); }

 private:
  const CudaContext& ctx_;
  GeneratedKernel k_;
  const void* fn_;
  int64_t batch_ = 0, items_ = 0;
};

class GemmStep : public CudaKernel {
 public:
  GemmStep(const CudaContext& ctx, RowMajorGemm g, std::optional<GeneratedKernel> act, const void* act_fn,
           std::optional<GeneratedKernel> fp8_epilogue, const void* fp8_epilogue_fn)
      : ctx_(ctx), g_(g), act_(std::move(act)), act_fn_(act_fn), fp8_epilogue_(std::move(fp8_epilogue)),
        fp8_epilogue_fn_(fp8_epilogue_fn) {}
  ~GemmStep() override {
    if (ones_) cudaFree(ones_);
  }

  absl::StatusOr<int64_t> Reshape(const KernelSpec& spec) override {
    std::string why;
    std::optional<RowMajorGemm> g = GemmFor(spec, &why);
    if (!g || g->n != g_.n || g->k != g_.k || g->act != g_.act) {
      return absl::InvalidArgumentError(absl::StrCat("the GEMM does not match its compiled shape: ", why));
    }
    m_ = g->m;
    lib_ = *g;
    if (fallback_) lib_ = FallbackForm(*g);
    if (g_.fp8 && !ones_) {
      // B's outer-vector scales: one per row of A, all 1 (A's factor is in alpha), for the
      // compiled (maximum) row count, allocated once so that captured graphs keep a valid pointer.
      const std::vector<float> ones(static_cast<size_t>(g_.m), 1.0f);
      GCOMP_CUDA(cudaMalloc(reinterpret_cast<void**>(&ones_), ones.size() * sizeof(float)));
      GCOMP_CUDA(cudaMemcpy(ones_, ones.data(), ones.size() * sizeof(float), cudaMemcpyHostToDevice));
    }
    if (m_ > g_.m) return absl::InvalidArgumentError(absl::StrCat("GEMM of ", m_, " rows, compiled for ", g_.m));
    if (act_) lib_.act = Activation::kNone;
    const int tuned = TunedFor(spec.outputs.at(0).dims.empty() ? 1 : BatchOf(spec));
    absl::StatusOr<LtMatmul*> mm = Matmul(m_, tuned);
    if (!mm.ok() && g_.fp8 && !fallback_ && absl::IsUnimplemented(mm.status()) && fp8_epilogue_) {
      // cuBLASLt offers no algorithm with outer-vector scales on this device and library: the
      // GEMM writes alpha·A·W in fp32 and the plan's generated epilogue applies the column
      // scales, bias, residual and activation (the same arithmetic, one more pass over D).
      fallback_ = true;
      fallback_why_ = std::string(mm.status().message());
      lib_ = FallbackForm(*g);
      mm = Matmul(m_, tuned);
    }
    if (!mm.ok()) return mm.status();
    current_ = *mm;
    batch_ = spec.batch;
    items_ = act_ ? ItemsAt(*act_, spec) : 0;
    return current_->workspace() + (fallback_ ? Fp8ProductBytes(m_, g_.n) : 0);
  }

  absl::Status Run(const runtime::RunContext&, std::span<const void* const> in, std::span<void* const> out,
                   std::span<uint8_t> workspace) override {
    if (!current_) return absl::InternalError("GEMM run before Reshape");
    const void* bias = in.size() > runtime::kBiasInput ? in[runtime::kBiasInput] : nullptr;
    const void* residual = in.size() > runtime::kResidualInput ? in[runtime::kResidualInput] : nullptr;
    const float* w_scale =
        g_.fp8 && in.size() > runtime::kScaleBInput ? static_cast<const float*>(in[runtime::kScaleBInput]) : nullptr;
    if (fallback_) {
      const int64_t product = Fp8ProductBytes(m_, g_.n);
      if (static_cast<int64_t>(workspace.size()) < product) return absl::InternalError("fp8 GEMM workspace too small");
      uint8_t* d = workspace.data();
      RETURN_IF_ERROR(current_->Enqueue(ctx_.lt, ctx_.stream, in[1], in[0], nullptr, nullptr, d, d + product,
                                        static_cast<int64_t>(workspace.size()) - product));
      const std::vector<const void*> epi_in = {d, w_scale, bias, residual};
      return LaunchGenerated(ctx_, *fp8_epilogue_, fp8_epilogue_fn_, batch_, m_ * g_.n, epi_in, out);
    }
    RETURN_IF_ERROR(current_->Enqueue(ctx_.lt, ctx_.stream, in[1], in[0], bias, residual, out[0], workspace.data(),
                                      static_cast<int64_t>(workspace.size()), w_scale, ones_));
    if (act_) {
      const std::vector<const void*> none;
      return LaunchGenerated(ctx_, *act_, act_fn_, batch_, items_, none, out);
    }
    return absl::OkStatus();
  }

  std::string Algorithm() const override {
    if (!current_) return "";
    if (fallback_) {
      return absl::StrCat(current_->algorithm(), " (fp8 into fp32: ", fallback_why_, "); then ", fp8_epilogue_->code.name);
    }
    return act_ ? absl::StrCat(current_->algorithm(), "; then ", act_->code.name) : current_->algorithm();
  }

  int Candidates() const override { return current_ ? current_->candidates() : 0; }
  int Candidate() const override { return candidate_; }
  absl::StatusOr<int64_t> UseCandidate(int index) override {
    ASSIGN_OR_RETURN(current_, Matmul(m_, index));
    return current_->workspace();
  }

 private:
  // The batch of a step: the leading output dim per unit of its compiled size.
  static int64_t BatchOf(const KernelSpec& spec) {
    const runtime::Operand& y = spec.outputs.at(0);
    return !y.per_batch.empty() && y.per_batch[0] > 0 ? y.dims[0] / y.per_batch[0] : 1;
  }

  // The fp8 GEMM without its epilogue, into fp32 (runtime/cuda/gemm_desc.h).
  static RowMajorGemm FallbackForm(RowMajorGemm g) {
    g.fp32_out = true;
    g.bias = g.residual = false;
    g.act = Activation::kNone;
    return g;
  }

  // The prepared matmul for M rows and a candidate, made once.
  absl::StatusOr<LtMatmul*> Matmul(int64_t m, int candidate) {
    auto key = std::make_pair(m, candidate);
    auto it = by_m_.find(key);
    if (it == by_m_.end()) {
      RowMajorGemm g = lib_;
      g.m = m;
      ASSIGN_OR_RETURN(LtGemm lt, MapGemm(g));
      auto mm = std::make_unique<LtMatmul>();
      RETURN_IF_ERROR(mm->Prepare(ctx_.lt, lt, kCublasLtWorkspace, candidate).status());
      it = by_m_.emplace(key, std::move(mm)).first;
    }
    candidate_ = candidate;
    return it->second.get();
  }

  const CudaContext& ctx_;
  RowMajorGemm g_, lib_;
  std::optional<GeneratedKernel> act_;
  const void* act_fn_ = nullptr;
  std::map<std::pair<int64_t, int>, std::unique_ptr<LtMatmul>> by_m_;
  LtMatmul* current_ = nullptr;
  int64_t m_ = 0;
  float* ones_ = nullptr;  // fp8: B's scale vector
  std::optional<GeneratedKernel> fp8_epilogue_;
  const void* fp8_epilogue_fn_ = nullptr;
  bool fallback_ = false;  // fp8 through fp32 and the generated epilogue
  std::string fallback_why_;
  int candidate_ = 0;
  int64_t batch_ = 0, items_ = 0;
};

}  // namespace

absl::Status LaunchGenerated(const CudaContext& ctx, const GeneratedKernel& k, const void* fn, int64_t batch,
                             int64_t total, std::span<const void* const> inputs, std::span<void* const> outputs) {
  ASSIGN_OR_RETURN(GeneratedArgs args, PackGeneratedArgs(k, batch, total, inputs, outputs));
  if (total <= 0) return absl::OkStatus();
  auto aligned = [&](const void* p) {
    return !p || reinterpret_cast<uintptr_t>(p) % static_cast<uintptr_t>(k.alignment) == 0;
  };
  if (!std::all_of(std::begin(args.in), std::end(args.in), aligned) ||
      !std::all_of(std::begin(args.out), std::end(args.out), aligned)) {
    return absl::InvalidArgumentError(
        absl::StrCat("generated kernel '", k.code.name, "' needs operands aligned to ", k.alignment, " bytes"));
  }
  // A grid-stride loop: enough blocks to fill the device several times over, no more.
  const int64_t threads = total * k.threads_per_item;
  const int64_t blocks = std::min<int64_t>((threads + k.block - 1) / k.block, int64_t{ctx.sm_count} * 32);
  void* params[] = {&args};
  GCOMP_CUDA(cudaLaunchKernel(fn, dim3(static_cast<unsigned>(blocks)), dim3(static_cast<unsigned>(k.block)), params,
                              0, ctx.stream));
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<CudaKernel>> CreateGeneratedKernel(const CudaContext& ctx, const KernelSpec& spec) {
  std::string why;
  std::optional<GeneratedKernel> k = GeneratedKernelFor(spec, &why);
  if (!k) return absl::InvalidArgumentError(absl::StrCat("no generated kernel runs this step: ", why));
  ASSIGN_OR_RETURN(const void* fn, ctx.function(k->code.name));
  return std::unique_ptr<CudaKernel>(new GeneratedStep(ctx, *std::move(k), fn));
}

absl::StatusOr<std::unique_ptr<CudaKernel>> CreateGemmKernel(const CudaContext& ctx, const KernelSpec& spec) {
  std::string why;
  std::optional<RowMajorGemm> g = GemmFor(spec, &why);
  if (!g) return absl::InvalidArgumentError(absl::StrCat("not a GEMM cuBLASLt runs: ", why));
  std::optional<GeneratedKernel> act = AfterActivationKernel(spec);
  const void* fn = nullptr;
  if (act) {
    ASSIGN_OR_RETURN(fn, ctx.function(act->code.name));
  }
  std::optional<GeneratedKernel> fp8_epilogue = Fp8EpilogueFor(spec);
  const void* fp8_fn = nullptr;
  if (fp8_epilogue) {
    ASSIGN_OR_RETURN(fp8_fn, ctx.function(fp8_epilogue->code.name));
  }
  return std::unique_ptr<CudaKernel>(new GemmStep(ctx, *g, std::move(act), fn, std::move(fp8_epilogue), fp8_fn));
}

}  // namespace gcomp::cuda
