// cuda.cudnn.sdpa: fp16/bf16 attention as cuDNN's fused scaled-dot-product attention (cudnn-frontend's
// SDPA node, inference: no softmax statistics output), Q, K, V and O described through their
// strides (sdpa_desc.h). Graphs are built per batch size at Reshape. Where cuDNN's support check
// declines the graph on this device (architecture, version, shape), the step runs the plan's
// flash-attention kernel instead and its algorithm says so.
#include <cudnn_frontend.h>

#include <cstdint>
#include <map>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "runtime/cuda/cuda_kernels.h"
#include "runtime/cuda/cuda_status.h"
#include "runtime/cuda/cudnn_status.h"
#include "runtime/cuda/sdpa_desc.h"
#include "runtime/cuda/step_kernels.h"

namespace gcomp::cuda {
namespace {

namespace fe = cudnn_frontend;
using runtime::KernelSpec;

bool Aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

struct SdpaGraph {
  std::shared_ptr<fe::graph::Graph> graph;
  std::shared_ptr<fe::graph::Tensor_attributes> q, k, v, o;
  int64_t workspace = 0;
  std::string plan_name;
};

absl::StatusOr<SdpaGraph> BuildSdpa(cudnnHandle_t handle, const SdpaDesc& d) {
  SdpaGraph g;
  g.graph = std::make_shared<fe::graph::Graph>();
  fe::graph::Graph& graph = *g.graph;
  const fe::DataType_t io = d.io_type == DType::kBF16 ? fe::DataType_t::BFLOAT16 : fe::DataType_t::HALF;
  graph.set_io_data_type(io)
      .set_intermediate_data_type(fe::DataType_t::FLOAT)
      .set_compute_data_type(fe::DataType_t::FLOAT);
  g.q = graph.tensor(fe::graph::Tensor_attributes().set_name("Q").set_dim(d.q_dims).set_stride(d.q_strides));
  g.k = graph.tensor(fe::graph::Tensor_attributes().set_name("K").set_dim(d.k_dims).set_stride(d.k_strides));
  g.v = graph.tensor(fe::graph::Tensor_attributes().set_name("V").set_dim(d.v_dims).set_stride(d.v_strides));
  auto options = fe::graph::SDPA_attributes().set_name("sdpa").set_generate_stats(false).set_attn_scale(d.scale);
  auto [o, stats] = graph.sdpa(g.q, g.k, g.v, options);
  (void)stats;
  o->set_output(true).set_dim(d.o_dims).set_stride(d.o_strides).set_data_type(io);
  g.o = o;
  RETURN_IF_ERROR(FeOk(graph.validate(), "validate"));
  RETURN_IF_ERROR(FeOk(graph.build_operation_graph(handle), "build_operation_graph"));
  RETURN_IF_ERROR(FeOk(graph.create_execution_plans({fe::HeurMode_t::A, fe::HeurMode_t::FALLBACK}),
                       "create_execution_plans"));
  graph.deselect_workspace_greater_than(kCudnnWorkspace);
  RETURN_IF_ERROR(FeOk(graph.check_support(handle), "check_support"));
  RETURN_IF_ERROR(FeOk(graph.build_plans(fe::BuildPlanPolicy_t::HEURISTICS_CHOICE), "build_plans"));
  RETURN_IF_ERROR(FeOk(graph.get_workspace_size(g.workspace), "get_workspace_size"));
  std::string name;
  if (graph.get_plan_name(name).is_good()) g.plan_name = name;
  return g;
}

class SdpaStep : public CudaKernel {
 public:
  SdpaStep(const CudaContext& ctx, GeneratedKernel flash, const void* flash_fn)
      : ctx_(ctx), flash_(std::move(flash)), flash_fn_(flash_fn) {}

  absl::StatusOr<int64_t> Reshape(const KernelSpec& spec) override {
    std::string why;
    std::optional<runtime::AttentionShape> a = runtime::ResolveAttention(spec, &why);
    if (!a) return absl::InvalidArgumentError(absl::StrCat("not an attention step: ", why));
    std::optional<GeneratedKernel> flash = FlashAttentionKernel(spec, &why);
    if (!flash || flash->code.name != flash_.code.name) {
      return absl::InvalidArgumentError(absl::StrCat("the attention does not match its compiled shape: ", why));
    }
    batch_ = spec.batch;
    auto it = by_batch_.find(batch_);
    if (it == by_batch_.end()) {
      PerBatch pb;
      ASSIGN_OR_RETURN(SdpaDesc d, MapSdpa(*a));
      absl::StatusOr<SdpaGraph> g = BuildSdpa(ctx_.dnn, d);
      pb.items = flash->items;
      pb.desc = d;
      pb.element_size = static_cast<int64_t>(DTypeSize(d.io_type));
      if (g.ok()) {
        pb.graph = *std::move(g);
        pb.cudnn = true;
        pb.algorithm = absl::StrCat("cuDNN ", pb.graph.plan_name.empty() ? "SDPA engine" : pb.graph.plan_name,
                                    ", workspace ", pb.graph.workspace, " bytes: ", d.Describe());
      } else {
        pb.algorithm = absl::StrCat(flash_.code.name, ": ", flash_.description, " (cuDNN declined: ",
                                    g.status().message(), ")");
      }
      it = by_batch_.emplace(batch_, std::move(pb)).first;
    }
    current_ = &it->second;
    return current_->cudnn ? current_->graph.workspace : 0;
  }

  absl::Status Run(const runtime::RunContext&, std::span<const void* const> in, std::span<void* const> out,
                   std::span<uint8_t> workspace) override {
    if (!current_) return absl::InternalError("attention run before Reshape");
    auto at = [&](const void* p, int64_t offset) {
      return static_cast<void*>(const_cast<uint8_t*>(static_cast<const uint8_t*>(p)) + offset * current_->element_size);
    };
    // cuDNN takes 16-byte aligned operands only; device I/O a caller passes in may be less aligned
    // (the flash kernel needs 4 bytes).
    const bool aligned = Aligned16(at(in[0], current_->desc.q_offset)) && Aligned16(at(in[1], current_->desc.k_offset)) &&
                         Aligned16(at(in[2], current_->desc.v_offset)) && Aligned16(out[0]);
    if (!current_->cudnn || !aligned) return LaunchGenerated(ctx_, flash_, flash_fn_, batch_, current_->items, in, out);
    const SdpaGraph& g = current_->graph;
    std::unordered_map<std::shared_ptr<fe::graph::Tensor_attributes>, void*> pack = {
        {g.q, at(in[0], current_->desc.q_offset)},
        {g.k, at(in[1], current_->desc.k_offset)},
        {g.v, at(in[2], current_->desc.v_offset)},
        {g.o, out[0]}};
    return FeExecuted(g.graph->execute(ctx_.dnn, pack, workspace.data()));
  }

  std::string Algorithm() const override { return current_ ? current_->algorithm : ""; }

 private:
  struct PerBatch {
    SdpaGraph graph;
    SdpaDesc desc;
    int64_t element_size = 2;
    bool cudnn = false;
    int64_t items = 0;
    std::string algorithm;
  };
  const CudaContext& ctx_;
  GeneratedKernel flash_;
  const void* flash_fn_;
  std::map<int64_t, PerBatch> by_batch_;
  PerBatch* current_ = nullptr;
  int64_t batch_ = 0;
};

}  // namespace

absl::StatusOr<std::unique_ptr<CudaKernel>> CreateSdpaKernel(const CudaContext& ctx, const KernelSpec& spec) {
  std::string why;
  std::optional<GeneratedKernel> flash = FlashAttentionKernel(spec, &why);
  if (!flash) return absl::InvalidArgumentError(absl::StrCat("no flash-attention kernel for this step: ", why));
  ASSIGN_OR_RETURN(const void* fn, ctx.function(flash->code.name));
  return std::unique_ptr<CudaKernel>(new SdpaStep(ctx, *std::move(flash), fn));
}

}  // namespace gcomp::cuda
