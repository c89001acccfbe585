#include "runtime/cuda/cuda_kernels.h"

#include <cublasLt.h>
#include <cuda.h>
#include <cudnn_version.h>

#include <functional>

#include "absl/strings/str_cat.h"
#include "runtime/cuda/conv_desc.h"
#include "runtime/cuda/gemm_desc.h"
#include "runtime/cuda/sdpa_desc.h"
#include "runtime/op_geometry.h"

namespace gcomp::cuda {
namespace {

using runtime::KernelEntry;
using runtime::KernelSpec;
using runtime::Packed;

bool Tf32(const KernelSpec& spec) { return spec.precision == "tf32"; }
bool FloatOutput(const KernelSpec& spec) { return !spec.outputs.empty() && spec.outputs[0].dtype == DType::kF32; }

}  // namespace

std::optional<RowMajorGemm> GemmFor(const KernelSpec& spec, std::string* why_not) {
  std::optional<runtime::GemmParams> p = runtime::ParseGemm(spec, why_not, /*fp8=*/true);
  if (!p) return std::nullopt;
  RowMajorGemm g;
  g.fp8 = p->fp8;
  g.m = p->m;
  g.n = p->n;
  g.k = p->k;
  g.trans_b = p->trans_b;
  g.alpha = p->alpha;
  g.a_type = p->dtype;
  g.w_type = p->wdtype;
  g.tf32 = Tf32(spec) && p->dtype == DType::kF32;
  g.bias = p->epi.has_bias;
  g.residual = p->epi.has_residual;
  g.act = p->epi.act;
  return g;
}

bool LibraryActivation(Activation a) {
  return a == Activation::kNone || a == Activation::kRelu || a == Activation::kGeluTanh;
}

namespace {

std::vector<AttrSpec> MapParams() {
  return {{"perm", AttrType::kInts}, {"to", AttrType::kString},    {"axis", AttrType::kInt},
          {"allowzero", AttrType::kInt}, {"axes", AttrType::kInts}, {"min", AttrType::kFloat},
          {"max", AttrType::kFloat},   {"approximate", AttrType::kString}, {"start", AttrType::kInt},
          {"end", AttrType::kInt}};
}

KernelEntry GemmEntry(bool separate_activation) {
  KernelEntry e;
  e.id = separate_activation ? kGemmActId : kGemmId;
  e.ops = {"FusedGemm", "MatMul"};
  e.params = runtime::GemmParamSpecs();
  e.in_place = {{0, static_cast<int>(runtime::kResidualInput)}};
  e.description = separate_activation
                      ? "cuBLASLt GEMM (bias and residual in its epilogue), then a generated activation kernel"
                      : "cuBLASLt GEMM with bias/ReLU/tanh-GELU epilogue and the residual as beta*C";
  e.accepts = [separate_activation](const KernelSpec& spec) -> std::optional<std::string> {
    std::string why;
    std::optional<RowMajorGemm> g = GemmFor(spec, &why);
    if (!g || LibraryActivation(g->act) == separate_activation) return std::nullopt;
    RowMajorGemm lib = *g;
    if (separate_activation) lib.act = Activation::kNone;
    absl::StatusOr<LtGemm> lt = MapGemm(lib);
    if (!lt.ok() || (g->fp8 && !lt->aligned16)) return std::nullopt;  // fp8 kernels need 16-byte rows
    return absl::StrCat("cuBLASLt: ", lt->Describe(),
                        separate_activation ? absl::StrCat("; ", ActivationName(g->act),
                                                           " as a generated kernel: cuBLASLt has no exact epilogue for it")
                                            : "");
  };
  // fp8: room for the fp32 product of the fallback (Fp8EpilogueFor) next to cuBLASLt's workspace.
  e.workspace_bound = [](const KernelSpec& spec) -> int64_t {
    std::string why;
    std::optional<RowMajorGemm> g = GemmFor(spec, &why);
    return kCublasLtWorkspace + (g && g->fp8 ? Fp8ProductBytes(g->m, g->n) : 0);
  };
  e.device_sources = [](const KernelSpec& spec) -> absl::StatusOr<std::vector<runtime::DeviceSource>> {
    std::vector<runtime::DeviceSource> out;
    if (std::optional<GeneratedKernel> k = AfterActivationKernel(spec)) out.push_back(k->code);
    if (std::optional<GeneratedKernel> k = Fp8EpilogueFor(spec)) out.push_back(k->code);
    return out;
  };
  return e;
}

KernelEntry ConvEntry() {
  KernelEntry e;
  e.id = kConvId;
  e.ops = {"FusedConv"};
  e.params = runtime::ConvParamSpecs();
  e.in_place = {{0, static_cast<int>(runtime::kResidualInput)}};
  e.description =
      "cuDNN graph: conv_fprop + bias + residual + ReLU in NHWC, fp32 compute (im2col + cuBLASLt where no engine)";
  e.accepts = [](const KernelSpec& spec) -> std::optional<std::string> {
    std::string why;
    std::optional<runtime::ConvParams> p = runtime::ParseConv(spec, &why);
    if (!p) return std::nullopt;
    absl::StatusOr<ConvGraphDesc> d = MapConvGraph(*p, p->n, Tf32(spec));
    if (!d.ok()) return std::nullopt;
    return absl::StrCat("cuDNN graph: ", d->Describe());
  };
  e.pack = [](const KernelSpec& spec, size_t index) -> absl::StatusOr<Packed> {
    Packed out;
    const runtime::Operand& o = spec.inputs[index];
    if (index != 1) {
      out.bytes.assign(o.constant, o.constant + o.constant_bytes);
      return out;
    }
    const size_t es = DTypeSize(o.dtype);
    if (o.dims.size() != 4 || o.constant_bytes != static_cast<size_t>(runtime::NumElements(o.dims)) * es) {
      return absl::InvalidArgumentError("convolution weights are not a dense 4-D tensor");
    }
    out.bytes = PackKrsc(o.constant, o.dims[0], o.dims[1], o.dims[2], o.dims[3], es);
    out.format = "KRSC";
    return out;
  };
  e.device_sources = [](const KernelSpec& spec) -> absl::StatusOr<std::vector<runtime::DeviceSource>> {
    std::vector<runtime::DeviceSource> out;
    if (std::optional<GeneratedKernel> k = Im2ColKernelFor(spec)) out.push_back(k->code);
    if (std::optional<GeneratedKernel> k = AfterActivationKernel(spec)) out.push_back(k->code);
    return out;
  };
  e.workspace_bound = [](const KernelSpec& spec) -> int64_t {
    std::string why;
    std::optional<runtime::ConvParams> p = runtime::ParseConv(spec, &why);
    if (!p) return 0;
    return std::max(kCudnnWorkspace, Im2ColBytes(*p, p->n) + kCublasLtWorkspace);
  };
  return e;
}

// fp16/bf16 attention on cuDNN's fused SDPA, with gcomp's flash-attention kernel compiled into the
// plan for devices whose cuDNN declines the graph (its support check runs on the device only).
KernelEntry SdpaEntry(std::vector<AttrSpec> params) {
  KernelEntry e;
  e.id = kSdpaId;
  e.ops = {"Attention"};
  e.params = std::move(params);
  e.description = "cuDNN fused scaled-dot-product attention (fp16/bf16), gcomp's flash attention where cuDNN declines";
  e.accepts = [](const KernelSpec& spec) -> std::optional<std::string> {
    std::string why;
    std::optional<runtime::AttentionShape> a = runtime::ResolveAttention(spec, &why);
    if (!a) return std::nullopt;
    absl::StatusOr<SdpaDesc> d = MapSdpa(*a);
    std::optional<GeneratedKernel> flash = FlashAttentionKernel(spec, &why);
    if (!d.ok() || !flash) return std::nullopt;
    return absl::StrCat(d->Describe(), "; where cuDNN's support check declines it on the device: ",
                        flash->description);
  };
  e.device_sources = [](const KernelSpec& spec) -> absl::StatusOr<std::vector<runtime::DeviceSource>> {
    std::string why;
    std::optional<GeneratedKernel> flash = FlashAttentionKernel(spec, &why);
    if (!flash) return absl::InternalError(absl::StrCat("no flash-attention kernel: ", why));
    return std::vector<runtime::DeviceSource>{flash->code};
  };
  e.workspace_bound = [](const KernelSpec&) { return kCudnnWorkspace; };
  return e;
}

// An entry whose kernel GeneratedKernelFor generates; `applies` narrows it to some of the steps
// GeneratedKernelFor takes (by dtype, where two entries share an op).
KernelEntry GeneratedEntry(const char* id, std::vector<std::string> ops, std::vector<AttrSpec> params,
                           std::string description, std::vector<runtime::InPlace> in_place = {},
                           std::function<bool(const KernelSpec&)> applies = nullptr) {
  KernelEntry e;
  e.id = id;
  e.ops = std::move(ops);
  e.params = std::move(params);
  e.in_place = std::move(in_place);
  e.description = std::move(description);
  e.accepts = [applies](const KernelSpec& spec) -> std::optional<std::string> {
    if (applies && !applies(spec)) return std::nullopt;
    std::string why;
    std::optional<GeneratedKernel> k = GeneratedKernelFor(spec, &why);
    if (!k) return std::nullopt;
    return absl::StrCat("generated: ", k->description);
  };
  e.device_sources = [](const KernelSpec& spec) -> absl::StatusOr<std::vector<runtime::DeviceSource>> {
    std::string why;
    std::optional<GeneratedKernel> k = GeneratedKernelFor(spec, &why);
    if (!k) return absl::InternalError(absl::StrCat("no generated kernel: ", why));
    return std::vector<runtime::DeviceSource>{k->code};
  };
  return e;
}

class CudaKernels : public runtime::BackendKernels {
 public:
  CudaKernels(std::string name, std::string arch, std::string other)
      : name_(std::move(name)), arch_(std::move(arch)), other_(std::move(other)) {}
  const std::string& name() const override { return name_; }
  const runtime::KernelTable& kernels() const override { return CudaKernelTable(); }
  runtime::Fingerprint fingerprint() const override {
    return {arch_, absl::StrCat("CUDA ", CUDA_VERSION / 1000, ".", (CUDA_VERSION % 1000) / 10, "; cuBLASLt ",
                                CUBLAS_VER_MAJOR, ".", CUBLAS_VER_MINOR, ".", CUBLAS_VER_PATCH, "; cuDNN ",
                                CUDNN_MAJOR, ".", CUDNN_MINOR, ".", CUDNN_PATCHLEVEL)};
  }
  // Plans carry no library-specific state (algorithms are chosen per session), so only the
  // architecture must match; a device's own compute capability is checked by the executor.
  absl::Status CheckFingerprint(const runtime::Fingerprint& recorded) const override {
    if (recorded.isa != arch_) {
      return absl::FailedPreconditionError(
          absl::StrCat("the plan was compiled for ", recorded.isa, ", this backend runs ", arch_));
    }
    return absl::OkStatus();
  }
  std::vector<runtime::MemorySpace> memory_spaces() const override { return {{"device", 256}}; }
  std::vector<std::string> device_archs() const override { return {arch_, other_}; }

 private:
  std::string name_, arch_, other_;
};

}  // namespace

std::optional<GeneratedKernel> GeneratedKernelFor(const KernelSpec& spec, std::string* why_not) {
  if (spec.op == "Pool" || spec.op == "MaxPool" || spec.op == "AveragePool" || spec.op == "GlobalAveragePool") {
    return PoolKernel(spec, why_not);
  }
  if (spec.op == "ReduceMean") return ReduceMeanKernel(spec, why_not);
  if (spec.op == "Shape") return ShapeKernel(spec, why_not);
  if (spec.op == "Attention") {
    // fp32 plans keep attention exact; fp16/bf16 run on Tensor Cores.
    if (!spec.outputs.empty() && spec.outputs[0].dtype == DType::kF32) return ExactAttentionKernel(spec, why_not);
    return FlashAttentionKernel(spec, why_not);
  }
  if (spec.op == "LayerNorm" || spec.op == "LayerNormalization") return LayerNormKernel(spec, why_not);
  if (spec.op == "Gather") return GatherKernel(spec, why_not);
  if (spec.op == "QuantizeFp8" || spec.op == "FakeQuantFp8") return Fp8Kernel(spec, why_not);
  if (spec.op == "Concat") return ConcatKernel(spec, why_not);
  if (spec.op == "Add" || spec.op == "Sub" || spec.op == "Mul" || spec.op == "Div") return BinaryKernel(spec, why_not);
  return MapKernel(spec, why_not);
}

std::optional<GeneratedKernel> AfterActivationKernel(const KernelSpec& spec) {
  std::string why;
  if (spec.op == "FusedConv") {
    std::optional<runtime::ConvParams> p = runtime::ParseConv(spec, &why);
    if (!p || p->epi.act == Activation::kNone || p->epi.act == Activation::kRelu) return std::nullopt;
    return ActivationKernel(p->dtype, p->epi);
  }
  std::optional<runtime::GemmParams> p = runtime::ParseGemm(spec, &why, /*fp8=*/true);
  if (!p || LibraryActivation(p->epi.act)) return std::nullopt;
  return ActivationKernel(p->dtype, p->epi);
}

std::optional<GeneratedKernel> Fp8EpilogueFor(const KernelSpec& spec) {
  std::string why;
  std::optional<runtime::GemmParams> p = runtime::ParseGemm(spec, &why, /*fp8=*/true);
  if (!p || !p->fp8) return std::nullopt;
  return Fp8EpilogueKernel(p->n, p->epi.has_bias, p->epi.has_residual, p->epi);
}

int64_t Fp8ProductBytes(int64_t m, int64_t n) { return (m * n * 4 + 255) / 256 * 256; }

std::optional<GeneratedKernel> Im2ColKernelFor(const KernelSpec& spec) {
  std::string why;
  std::optional<runtime::ConvParams> p = runtime::ParseConv(spec, &why);
  if (!p || !p->nhwc) return std::nullopt;
  Im2ColGeometry g;
  g.c = p->c;
  g.h = p->h;
  g.w = p->w;
  g.ho = p->ho;
  g.wo = p->wo;
  g.kh = p->kh;
  g.kw = p->kw;
  g.sh = p->sh;
  g.sw = p->sw;
  g.dh = p->dh;
  g.dw = p->dw;
  g.pt = p->pt;
  g.pl = p->pl;
  g.group = p->group;
  g.dtype = p->dtype;
  return Im2ColKernel(g);
}

const runtime::KernelTable& CudaKernelTable() {
  static const runtime::KernelTable kTable = [] {
    runtime::KernelTable t;
    t.push_back(GemmEntry(false));
    t.push_back(GemmEntry(true));
    t.push_back(ConvEntry());
    t.push_back(GeneratedEntry(kPoolId, {"Pool", "MaxPool", "AveragePool", "GlobalAveragePool"},
                               {{"kind", AttrType::kString},
                                {"layout", AttrType::kString},
                                {"auto_pad", AttrType::kString},
                                {"ceil_mode", AttrType::kInt},
                                {"dilations", AttrType::kInts},
                                {"kernel_shape", AttrType::kInts},
                                {"pads", AttrType::kInts},
                                {"strides", AttrType::kInts},
                                {"count_include_pad", AttrType::kInt},
                                {"storage_order", AttrType::kInt}},
                               "generated 2-D max/average pooling, NHWC or NCHW"));
    const std::vector<AttrSpec> attention_params = runtime::AttentionParamSpecs();
    t.push_back(SdpaEntry(attention_params));
    t.push_back(GeneratedEntry(kFlashAttentionId, {"Attention"}, attention_params,
                               "generated flash attention for fp16/bf16: mma.sync Tensor Core tiles for Q*K^T and "
                               "P*V, fp32 online softmax, no score matrix in memory",
                               {}, [](const KernelSpec& spec) { return !FloatOutput(spec); }));
    t.push_back(GeneratedEntry(kAttentionExactId, {"Attention"}, attention_params,
                               "generated exact fp32 attention: one warp per query, online softmax, no score matrix",
                               {}, FloatOutput));
    t.push_back(GeneratedEntry(kLayerNormId, {"LayerNorm", "LayerNormalization"},
                               {{"axis", AttrType::kInt},
                                {"epsilon", AttrType::kFloat},
                                {"stash_type", AttrType::kInt},
                                {"fp8_scale", AttrType::kFloat}},
                               "generated layer normalization: one warp per row, fp32 statistics"));
    t.push_back(GeneratedEntry(kReduceMeanId, {"ReduceMean"},
                               {{"axes", AttrType::kInts}, {"keepdims", AttrType::kInt},
                                {"noop_with_empty_axes", AttrType::kInt}},
                               "generated mean over one contiguous block of axes, fp32 accumulation"));
    t.push_back(GeneratedEntry(kMapId,
                               {"Transpose", "Slice", "Cast", "Expand", "Identity", "Reshape", "Flatten", "Squeeze",
                                "Unsqueeze", "Relu", "Clip", "Gelu", "Shape", "Gather", "Concat"},
                               MapParams(),
                               "generated strided copy (transpose, slice, cast, broadcast, activation, gather, "
                               "concat, shape), 16-byte vectors where the layout allows"));
    t.push_back(GeneratedEntry(kFp8QuantizeId, {"QuantizeFp8", "FakeQuantFp8"},
                               {{"scale", AttrType::kFloat}, {"axis", AttrType::kInt}},
                               "generated fp8 e4m3 quantization (round to nearest even, saturating at +-448): e4m3 "
                               "bytes for an fp8 GEMM, or the fp16 round trip for a kernel without fp8 operands"));
    t.push_back(GeneratedEntry(kBinaryId, {"Add", "Sub", "Mul", "Div"}, {},
                               "generated elementwise arithmetic with broadcasting", {{0, 0}, {0, 1}}));
    return t;
  }();
  return kTable;
}

const runtime::BackendKernels& CudaSm90Kernels() {
  static const CudaKernels kBackend("cuda:sm_90", "sm_90", "sm_80");
  return kBackend;
}

const runtime::BackendKernels& CudaSm80Kernels() {
  static const CudaKernels kBackend("cuda:sm_80", "sm_80", "sm_90");
  return kBackend;
}

}  // namespace gcomp::cuda
