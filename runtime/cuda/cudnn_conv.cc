// cuda.cudnn.conv_graph: an NHWC convolution with its epilogue as one cuDNN operation graph
// (conv_fprop -> + bias -> + residual -> ReLU), built with cudnn-frontend's C++ graph API
// (header-only, from PyPI's nvidia-cudnn-frontend): it builds the backend descriptors, queries
// the heuristics (mode A, then the fallback list) and filters the engines, which the raw backend
// API would need several hundred lines for. Graphs are built per batch size at Reshape. Where
// cuDNN offers no engine for the graph, the step falls back to the plan's generated im2col kernel
// and one cuBLASLt GEMM (batched over the groups) with the same epilogue, and says so.
#include <cudnn_frontend.h>

#include <map>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "runtime/cuda/conv_desc.h"
#include "runtime/cuda/cuda_kernels.h"
#include "runtime/cuda/cuda_status.h"
#include "runtime/cuda/cudnn_status.h"
#include "runtime/cuda/lt_matmul.h"
#include "runtime/cuda/step_kernels.h"

namespace gcomp::cuda {
namespace {

namespace fe = cudnn_frontend;
using runtime::KernelSpec;

fe::DataType_t FeType(DType t) {
  switch (t) {
    case DType::kF16:
      return fe::DataType_t::HALF;
    case DType::kBF16:
      return fe::DataType_t::BFLOAT16;
    default:
      return fe::DataType_t::FLOAT;
  }
}

// One batch size's graph and its tensors; `plan` is the execution plan it runs (-1: the
// heuristics' choice as built by build_plans).
struct ConvGraph {
  std::shared_ptr<fe::graph::Graph> graph;
  std::shared_ptr<fe::graph::Tensor_attributes> x, w, b, z, y;
  int64_t workspace = 0;
  std::string plan_name;
  int candidates = 0;
  int64_t plan = -1;
};

// Runs execution plan `index` (built) from now on.
absl::Status SelectPlan(ConvGraph& g, int index) {
  int64_t ws = 0;
  RETURN_IF_ERROR(FeOk(g.graph->get_workspace_size_plan_at_index(index, ws), "get_workspace_size_plan_at_index"));
  if (ws > kCudnnWorkspace) return absl::ResourceExhaustedError("the plan's workspace is over the limit");
  std::string name;
  if (!g.graph->get_plan_name_at_index(index, name).is_good()) {
    return absl::UnimplementedError(absl::StrCat("cuDNN plan ", index, " was not built"));
  }
  g.plan = index;
  g.workspace = ws;
  g.plan_name = name;
  return absl::OkStatus();
}

absl::StatusOr<ConvGraph> BuildGraph(cudnnHandle_t handle, const ConvGraphDesc& d, bool all_plans, int candidate) {
  ConvGraph g;
  g.graph = std::make_shared<fe::graph::Graph>();
  fe::graph::Graph& graph = *g.graph;
  graph.set_io_data_type(FeType(d.io_type))
      .set_intermediate_data_type(fe::DataType_t::FLOAT)
      .set_compute_data_type(fe::DataType_t::FLOAT);
  g.x = graph.tensor(fe::graph::Tensor_attributes().set_name("X").set_dim(d.x_dims).set_stride(d.x_strides));
  g.w = graph.tensor(fe::graph::Tensor_attributes().set_name("W").set_dim(d.w_dims).set_stride(d.w_strides));
  auto conv = fe::graph::Conv_fprop_attributes()
                  .set_pre_padding(d.pre_pad)
                  .set_post_padding(d.post_pad)
                  .set_stride(d.stride)
                  .set_dilation(d.dilation)
                  .set_compute_data_type(fe::DataType_t::FLOAT);
  auto cur = graph.conv_fprop(g.x, g.w, conv);
  if (d.bias) {
    g.b = graph.tensor(fe::graph::Tensor_attributes().set_name("B").set_dim(d.bias_dims).set_stride(d.bias_strides));
    cur = graph.pointwise(cur, g.b, fe::graph::Pointwise_attributes().set_mode(fe::PointwiseMode_t::ADD));
  }
  if (d.residual) {
    g.z = graph.tensor(fe::graph::Tensor_attributes().set_name("Z").set_dim(d.y_dims).set_stride(d.y_strides));
    cur = graph.pointwise(cur, g.z, fe::graph::Pointwise_attributes().set_mode(fe::PointwiseMode_t::ADD));
  }
  if (d.graph_act == Activation::kRelu) {
    cur = graph.pointwise(cur, fe::graph::Pointwise_attributes().set_mode(fe::PointwiseMode_t::RELU_FWD));
  }
  cur->set_output(true).set_dim(d.y_dims).set_stride(d.y_strides).set_data_type(FeType(d.io_type));
  g.y = cur;
  RETURN_IF_ERROR(FeOk(graph.validate(), "validate"));
  RETURN_IF_ERROR(FeOk(graph.build_operation_graph(handle), "build_operation_graph"));
  RETURN_IF_ERROR(FeOk(graph.create_execution_plans({fe::HeurMode_t::A, fe::HeurMode_t::FALLBACK}),
                       "create_execution_plans"));
  graph.deselect_workspace_greater_than(kCudnnWorkspace);
  // fp32 is true fp32: no engine that rounds its inputs to TF32 on Tensor Cores.
  if (d.io_type == DType::kF32 && !d.tf32) graph.deselect_numeric_notes({fe::NumericalNote_t::TENSOR_CORE});
  RETURN_IF_ERROR(FeOk(graph.check_support(handle), "check_support"));
  g.candidates = static_cast<int>(graph.get_execution_plan_count());
  if (all_plans || candidate > 0) {
    // Every plan (tuning), or the recorded one; build failures of single plans are not errors.
    if (!all_plans) {
      RETURN_IF_ERROR(FeOk(graph.build_plan_at_index(candidate), "build_plan_at_index"));
      RETURN_IF_ERROR(SelectPlan(g, candidate));
      return g;
    }
    (void)graph.build_plans(fe::BuildPlanPolicy_t::ALL);
    for (int i = 0; i < g.candidates; ++i) {
      if (SelectPlan(g, i).ok()) return g;
    }
    return absl::UnimplementedError("cuDNN built none of its execution plans");
  }
  RETURN_IF_ERROR(FeOk(graph.build_plans(fe::BuildPlanPolicy_t::HEURISTICS_CHOICE), "build_plans"));
  RETURN_IF_ERROR(FeOk(graph.get_workspace_size(g.workspace), "get_workspace_size"));
  std::string name;
  if (graph.get_plan_name(name).is_good()) g.plan_name = name;
  return g;
}

class ConvStep : public CudaKernel {
 public:
  ConvStep(const CudaContext& ctx, runtime::ConvParams p, bool tf32, GeneratedKernel im2col, const void* im2col_fn,
           std::optional<GeneratedKernel> act, const void* act_fn)
      : ctx_(ctx), p_(p), tf32_(tf32), im2col_(std::move(im2col)), im2col_fn_(im2col_fn), act_(std::move(act)),
        act_fn_(act_fn) {}

  absl::StatusOr<int64_t> Reshape(const KernelSpec& spec) override {
    std::string why;
    std::optional<runtime::ConvParams> p = runtime::ParseConv(spec, &why);
    if (!p || p->c != p_.c || p->cout != p_.cout || p->h != p_.h || p->w != p_.w || p->kh != p_.kh ||
        p->kw != p_.kw || p->group != p_.group) {
      return absl::InvalidArgumentError(absl::StrCat("the convolution does not match its compiled shape: ", why));
    }
    batch_ = p->n;
    auto it = by_batch_.find(batch_);
    if (it == by_batch_.end()) {
      PerBatch pb;
      ASSIGN_OR_RETURN(ConvGraphDesc d, MapConvGraph(*p, batch_, tf32_));
      absl::StatusOr<ConvGraph> g = BuildGraph(ctx_.dnn, d, ctx_.all_candidates, TunedFor(batch_));
      if (g.ok()) {
        pb.graph = *std::move(g);
        pb.workspace = pb.graph.workspace;
        pb.algorithm = absl::StrCat("cuDNN ", pb.graph.plan_name.empty() ? "engine" : pb.graph.plan_name, ", workspace ",
                                    pb.workspace, " bytes: ", d.Describe());
      } else {
        // No engine: im2col into the workspace, then one cuBLASLt GEMM with the epilogue.
        ASSIGN_OR_RETURN(RowMajorGemm rg, ConvAsGemm(*p, batch_, tf32_));
        if (act_) rg.act = Activation::kNone;
        ASSIGN_OR_RETURN(LtGemm lt, MapGemm(rg));
        pb.fallback = std::make_unique<LtMatmul>();
        RETURN_IF_ERROR(pb.fallback->Prepare(ctx_.lt, lt, kCublasLtWorkspace).status());
        pb.im2col_bytes_exact = Im2ColBytes(*p, batch_);
        pb.im2col_bytes = (pb.im2col_bytes_exact + 255) / 256 * 256;
        pb.workspace = pb.im2col_bytes + pb.fallback->workspace();
        pb.algorithm = absl::StrCat("im2col + ", pb.fallback->algorithm(), " (cuDNN: ", g.status().message(), ")");
      }
      it = by_batch_.emplace(batch_, std::move(pb)).first;
    }
    current_ = &it->second;
    return current_->workspace;
  }

  absl::Status Run(const runtime::RunContext&, std::span<const void* const> in, std::span<void* const> out,
                   std::span<uint8_t> workspace) override {
    if (!current_) return absl::InternalError("convolution run before Reshape");
    const void* bias = in.size() > runtime::kBiasInput ? in[runtime::kBiasInput] : nullptr;
    const void* residual = in.size() > runtime::kResidualInput ? in[runtime::kResidualInput] : nullptr;
    if (current_->fallback) {
      uint8_t* cols = workspace.data();
      const std::vector<const void*> x = {in[0]};
      const std::vector<void*> y = {cols};
      RETURN_IF_ERROR(LaunchGenerated(ctx_, im2col_, im2col_fn_, batch_,
                                      current_->im2col_bytes_exact / static_cast<int64_t>(DTypeSize(p_.dtype)), x, y));
      RETURN_IF_ERROR(current_->fallback->Enqueue(ctx_.lt, ctx_.stream, in[1], cols, bias, residual, out[0],
                                                  cols + current_->im2col_bytes,
                                                  static_cast<int64_t>(workspace.size()) - current_->im2col_bytes));
    } else {
      const ConvGraph& g = current_->graph;
      std::unordered_map<std::shared_ptr<fe::graph::Tensor_attributes>, void*> pack = {
          {g.x, const_cast<void*>(in[0])}, {g.w, const_cast<void*>(in[1])}, {g.y, out[0]}};
      if (g.b) pack[g.b] = const_cast<void*>(bias);
      if (g.z) pack[g.z] = const_cast<void*>(residual);
      if (g.plan >= 0) {
        RETURN_IF_ERROR(FeExecuted(g.graph->execute_plan_at_index(ctx_.dnn, pack, workspace.data(), g.plan)));
      } else {
        RETURN_IF_ERROR(FeExecuted(g.graph->execute(ctx_.dnn, pack, workspace.data())));
      }
    }
    if (act_) {
      const std::vector<const void*> none;
      return LaunchGenerated(ctx_, *act_, act_fn_, batch_, batch_ * p_.ho * p_.wo * p_.cout, none, out);
    }
    return absl::OkStatus();
  }

  std::string Algorithm() const override { return current_ ? current_->algorithm : ""; }

  int Candidates() const override { return current_ && !current_->fallback ? current_->graph.candidates : 0; }
  int Candidate() const override { return current_ && current_->graph.plan > 0 ? static_cast<int>(current_->graph.plan) : 0; }
  absl::StatusOr<int64_t> UseCandidate(int index) override {
    if (!current_ || current_->fallback) return absl::UnimplementedError("no cuDNN plans for this step");
    RETURN_IF_ERROR(SelectPlan(current_->graph, index));
    current_->workspace = current_->graph.workspace;
    current_->algorithm = absl::StrCat("cuDNN ", current_->graph.plan_name, " (plan ", index, "), workspace ",
                                       current_->workspace, " bytes");
    return current_->workspace;
  }

 private:
  struct PerBatch {
    ConvGraph graph;
    std::unique_ptr<LtMatmul> fallback;
    int64_t im2col_bytes = 0, im2col_bytes_exact = 0;
    int64_t workspace = 0;
    std::string algorithm;
  };
  const CudaContext& ctx_;
  runtime::ConvParams p_;
  bool tf32_;
  GeneratedKernel im2col_;
  const void* im2col_fn_;
  std::optional<GeneratedKernel> act_;
  const void* act_fn_;
  std::map<int64_t, PerBatch> by_batch_;
  PerBatch* current_ = nullptr;
  int64_t batch_ = 0;
};

}  // namespace

absl::StatusOr<std::unique_ptr<CudaKernel>> CreateConvKernel(const CudaContext& ctx, const KernelSpec& spec) {
  std::string why;
  std::optional<runtime::ConvParams> p = runtime::ParseConv(spec, &why);
  if (!p) return absl::InvalidArgumentError(absl::StrCat("not a convolution cuDNN runs: ", why));
  std::optional<GeneratedKernel> im2col = Im2ColKernelFor(spec);
  if (!im2col) return absl::InvalidArgumentError("no im2col kernel for this convolution");
  ASSIGN_OR_RETURN(const void* im2col_fn, ctx.function(im2col->code.name));
  std::optional<GeneratedKernel> act = AfterActivationKernel(spec);
  const void* act_fn = nullptr;
  if (act) {
    ASSIGN_OR_RETURN(act_fn, ctx.function(act->code.name));
  }
  return std::unique_ptr<CudaKernel>(
      new ConvStep(ctx, *p, spec.precision == "tf32", *std::move(im2col), im2col_fn, std::move(act), act_fn));
}

}  // namespace gcomp::cuda
