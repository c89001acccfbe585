// The cuda executor: runs a cuda plan on one device.
//
// Session create: the device (refused cleanly where none is present), a stream (the caller's or
// its own), cuBLASLt and cuDNN handles on it; the plan's weights uploaded once per device and
// shared by every session of the same plan object, with its generated kernels loaded from the
// cubin for the device's architecture (or the PTX, JIT-compiled, for a newer one); one device
// block for the activation arenas at the maximum batch (256-byte aligned offsets); device I/O
// buffers and pinned host staging for host tensors.
// Per batch size (Reshape): every step chooses its algorithm and workspace; the workspace grows
// to the largest asked for; the whole plan is captured into one CUDA graph. Later runs at that
// batch replay the graph: the run path enqueues copies and the graph, then waits for the outputs
// (host tensors) or returns at once (device pointers), with no allocation.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <map>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/status_macros.h"
#include "runtime/cuda/cuda_backend.h"
#include "runtime/cuda/cuda_kernels.h"
#include "runtime/cuda/cuda_status.h"
#include "runtime/cuda/step_kernels.h"
#include "runtime/plan_steps.h"

namespace gcomp::cuda {
namespace {

using plan::Buffer;
using plan::BufferKind;

// A plan's device state on one device, shared by its sessions there: weights and loaded code.
struct DevicePlan {
  std::shared_ptr<const plan::Plan> plan;
  int device = 0;
  void* weights = nullptr;
  cudaLibrary_t library = nullptr;
  std::string code;  // "cubin sm_90" / "PTX sm_80 (JIT)"
  std::map<std::string, cudaKernel_t> functions;

  ~DevicePlan() {
    int previous = 0;
    cudaGetDevice(&previous);
    cudaSetDevice(device);
    if (library) cudaLibraryUnload(library);
    if (weights) cudaFree(weights);
    cudaSetDevice(previous);
  }
};

int ArchNumber(const std::string& arch) {  // "sm_90" -> 90
  return arch.size() > 3 ? std::atoi(arch.c_str() + 3) : 0;
}

absl::StatusOr<std::shared_ptr<DevicePlan>> LoadDevicePlan(const std::shared_ptr<const plan::Plan>& plan, int device,
                                                           int sm) {
  auto d = std::make_shared<DevicePlan>();
  d->plan = plan;
  d->device = device;
  if (plan->weights_bytes > 0) {
    GCOMP_CUDA(cudaMalloc(&d->weights, static_cast<size_t>(plan->weights_bytes)));
    GCOMP_CUDA(cudaMemcpy(d->weights, plan->weights, static_cast<size_t>(plan->weights_bytes), cudaMemcpyHostToDevice));
  }
  if (plan->device_code.empty()) return d;
  // The cubin built for this architecture, else the newest PTX at or below it.
  const plan::DeviceCode* exact = nullptr;
  const plan::DeviceCode* ptx = nullptr;
  for (const plan::DeviceCode& c : plan->device_code) {
    const int a = ArchNumber(c.arch);
    if (a == sm && !c.cubin.empty()) exact = &c;
    if (a <= sm && !c.ptx.empty() && (!ptx || a > ArchNumber(ptx->arch))) ptx = &c;
  }
  const plan::DeviceCode* use = exact ? exact : ptx;
  if (!use) {
    std::vector<std::string> archs;
    for (const plan::DeviceCode& c : plan->device_code) archs.push_back(c.arch);
    return absl::FailedPreconditionError(absl::StrCat("the plan's generated kernels are built for ",
                                                      absl::StrJoin(archs, ", "), "; the device is sm_", sm));
  }
  const std::string& image = exact ? use->cubin : use->ptx;
  d->code = exact ? absl::StrCat("cubin ", use->arch) : absl::StrCat("PTX ", use->arch, " (JIT for sm_", sm, ")");
  GCOMP_CUDA(cudaLibraryLoadData(&d->library, image.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0));
  for (const plan::DeviceFunction& f : use->functions) {
    cudaKernel_t k = nullptr;
    GCOMP_CUDA(cudaLibraryGetKernel(&k, d->library, f.name.c_str()));
    d->functions[f.name] = k;
  }
  return d;
}

// One DevicePlan per (plan object, device), alive while a session uses it.
absl::StatusOr<std::shared_ptr<DevicePlan>> SharedDevicePlan(const std::shared_ptr<const plan::Plan>& plan, int device,
                                                             int sm) {
  static std::mutex mu;
  static std::map<std::pair<const plan::Plan*, int>, std::weak_ptr<DevicePlan>> plans;
  std::lock_guard<std::mutex> lock(mu);
  auto key = std::make_pair(plan.get(), device);
  if (auto it = plans.find(key); it != plans.end()) {
    if (std::shared_ptr<DevicePlan> d = it->second.lock()) return d;
  }
  ASSIGN_OR_RETURN(std::shared_ptr<DevicePlan> d, LoadDevicePlan(plan, device, sm));
  plans[key] = d;
  return d;
}

struct Graph {
  cudaGraphExec_t exec = nullptr;
  std::vector<void*> io;  // the I/O pointers it was captured with
};

class CudaExecutor : public runtime::Executor {
 public:
  CudaExecutor(std::shared_ptr<const plan::Plan> plan, const runtime::ExecutorOptions& options,
               const runtime::BackendKernels& backend)
      : plan_(std::move(plan)), options_(options), backend_(backend) {}
  ~CudaExecutor() override;

  absl::Status Init();
  absl::StatusOr<std::vector<Tensor>> Run(const std::map<std::string, Tensor>& inputs) override;
  absl::Status RunDevice(const std::map<std::string, runtime::DeviceBuffer>& inputs,
                         const std::map<std::string, runtime::DeviceBuffer>& outputs) override;
  const std::map<std::string, int64_t>& launches() const override { return launches_; }
  const std::vector<double>& step_seconds() const override { return step_seconds_; }
  std::vector<std::string> step_algorithms() const override;
  std::string memory_info() const override;
  std::vector<std::string> notices() const override { return notices_; }
  absl::StatusOr<plan::Tuning> Tune(const std::vector<int64_t>& batches) override;

 private:
  absl::Status Reshape(int64_t batch);
  // Enqueues every step at `batch` with the I/O buffers at `io` (plan inputs, then outputs).
  absl::Status Enqueue(int64_t batch, const std::vector<void*>& io);
  // Runs the plan at `batch` on `io`: the batch's graph (captured or updated for these pointers),
  // or step by step.
  absl::Status Launch(int64_t batch, const std::vector<void*>& io);
  std::vector<void*> Addresses(int64_t batch, const std::vector<void*>& io) const;

  std::shared_ptr<const plan::Plan> plan_;
  runtime::ExecutorOptions options_;
  const runtime::BackendKernels& backend_;
  std::shared_ptr<DevicePlan> device_plan_;
  CudaContext ctx_;
  bool own_stream_ = false;
  std::string device_name_;
  std::vector<std::unique_ptr<CudaKernel>> kernels_;
  uint8_t* arena_ = nullptr;  // batch arena at max_batch, then the fixed arena
  int64_t arena_bytes_ = 0;
  uint8_t* workspace_ = nullptr;
  int64_t workspace_capacity_ = 0;
  std::map<int64_t, int64_t> workspace_at_;  // batch -> workspace (batches already prepared)
  int64_t batch_ = 0;
  std::vector<void*> io_device_;   // session I/O buffers at max_batch (inputs, then outputs)
  std::vector<void*> io_pinned_;   // pinned staging of the same sizes
  std::vector<int64_t> io_bytes_;  // at max_batch
  std::map<int64_t, Graph> graphs_;
  std::string graph_note_;
  std::map<std::string, int64_t> launches_;
  std::vector<double> step_seconds_;
  std::vector<cudaEvent_t> events_;  // profile: one per step boundary
  std::string tuning_key_;            // this device and its libraries
  std::vector<std::string> notices_;
};

// What a tuning is valid for: the device and the libraries whose rankings the choices index.
std::string DeviceKey(const cudaDeviceProp& prop) {
  int driver = 0, runtime_version = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime_version);
  return absl::StrCat(prop.name, " | ", prop.multiProcessorCount, " SMs | driver ", driver, " | CUDA ",
                      runtime_version, " | cuBLASLt ", cublasLtGetVersion(), " | cuDNN ", cudnnGetVersion());
}

CudaExecutor::~CudaExecutor() {
  cudaSetDevice(ctx_.device);
  if (ctx_.stream) cudaStreamSynchronize(ctx_.stream);
  for (auto& [b, g] : graphs_) cudaGraphExecDestroy(g.exec);
  kernels_.clear();  // before the handles they use
  for (cudaEvent_t e : events_) cudaEventDestroy(e);
  for (void* p : io_device_) cudaFree(p);
  for (void* p : io_pinned_) cudaFreeHost(p);
  if (workspace_) cudaFree(workspace_);
  if (arena_) cudaFree(arena_);
  if (ctx_.dnn) cudnnDestroy(ctx_.dnn);
  if (ctx_.lt) cublasLtDestroy(ctx_.lt);
  if (own_stream_ && ctx_.stream) cudaStreamDestroy(ctx_.stream);
}

int64_t BufferBytes(const Buffer& b, int64_t batch) {
  int64_t n = static_cast<int64_t>(DTypeSize(b.dtype));
  for (const plan::LinearDim& d : b.dims) n *= d.At(batch);
  return n;
}

absl::Status CudaExecutor::Init() {
  RETURN_IF_ERROR(DevicePresent());
  int count = 0;
  GCOMP_CUDA(cudaGetDeviceCount(&count));
  if (options_.device < 0 || options_.device >= count) {
    return absl::InvalidArgumentError(absl::StrCat("device ", options_.device, ": this machine has ", count,
                                                   " CUDA device", count == 1 ? "" : "s"));
  }
  ctx_.device = options_.device;
  GCOMP_CUDA(cudaSetDevice(ctx_.device));
  cudaDeviceProp prop{};
  GCOMP_CUDA(cudaGetDeviceProperties(&prop, ctx_.device));
  device_name_ = prop.name;
  ctx_.sm_count = prop.multiProcessorCount;
  const int sm = prop.major * 10 + prop.minor;
  tuning_key_ = DeviceKey(prop);
  ctx_.all_candidates = options_.tuning;
  const int plan_sm = ArchNumber(plan_->isa);
  if (sm < plan_sm) {
    return absl::FailedPreconditionError(absl::StrCat("the plan targets ", plan_->target, "; device ", ctx_.device,
                                                      " (", prop.name, ") is sm_", sm));
  }
  ASSIGN_OR_RETURN(std::vector<const runtime::KernelEntry*> entries, runtime::CheckedEntries(*plan_, backend_));
  for (int32_t id : plan_->inputs) io_bytes_.push_back(BufferBytes(plan_->buffers[id], plan_->max_batch));
  for (int32_t id : plan_->outputs) io_bytes_.push_back(BufferBytes(plan_->buffers[id], plan_->max_batch));
  ASSIGN_OR_RETURN(device_plan_, SharedDevicePlan(plan_, ctx_.device, sm));
  if (options_.stream) {
    ctx_.stream = static_cast<cudaStream_t>(options_.stream);
  } else {
    GCOMP_CUDA(cudaStreamCreateWithFlags(&ctx_.stream, cudaStreamNonBlocking));
    own_stream_ = true;
  }
  GCOMP_CUBLAS(cublasLtCreate(&ctx_.lt));
  GCOMP_CUDNN(cudnnCreate(&ctx_.dnn));
  GCOMP_CUDNN(cudnnSetStream(ctx_.dnn, ctx_.stream));
  DevicePlan* dp = device_plan_.get();
  ctx_.function = [dp](const std::string& name) -> absl::StatusOr<const void*> {
    auto it = dp->functions.find(name);
    if (it == dp->functions.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("invalid plan: generated function '", name, "' is not in the plan's kernels section"));
    }
    return static_cast<const void*>(it->second);
  };
  for (size_t i = 0; i < plan_->steps.size(); ++i) {
    const plan::Step& s = plan_->steps[i];
    const runtime::KernelSpec spec = runtime::SpecAt(*plan_, s, plan_->max_batch, 1);
    absl::StatusOr<std::unique_ptr<CudaKernel>> k;
    const std::string& id = entries[i]->id;
    if (id == kGemmId || id == kGemmActId) {
      k = CreateGemmKernel(ctx_, spec);
    } else if (id == kConvId) {
      k = CreateConvKernel(ctx_, spec);
    } else if (id == kSdpaId) {
      k = CreateSdpaKernel(ctx_, spec);
    } else {
      k = CreateGeneratedKernel(ctx_, spec);
    }
    if (!k.ok()) return runtime::StepError(s, k.status());
    kernels_.push_back(*std::move(k));
  }
  if (!plan_->tuning.empty()) {
    if (plan_->tuning.key == tuning_key_) {
      std::vector<std::map<int64_t, int>> by_step(kernels_.size());
      for (const plan::TuningChoice& c : plan_->tuning.choices) by_step[c.step][c.batch] = c.candidate;
      for (size_t i = 0; i < kernels_.size(); ++i) kernels_[i]->SetTuned(by_step[i]);
    } else {
      notices_.push_back(absl::StrCat("the plan's tuning section is for [", plan_->tuning.key,
                                      "]; this device is [", tuning_key_,
                                      "]: it is ignored, and the libraries' heuristics choose the algorithms"));
    }
  }
  arena_bytes_ = plan_->batch_arena_bytes * plan_->max_batch + plan_->fixed_arena_bytes;
  GCOMP_CUDA(cudaMalloc(reinterpret_cast<void**>(&arena_), static_cast<size_t>(std::max<int64_t>(arena_bytes_, 256))));
  for (int64_t bytes : io_bytes_) {
    void* d = nullptr;
    void* h = nullptr;
    GCOMP_CUDA(cudaMalloc(&d, static_cast<size_t>(std::max<int64_t>(bytes, 256))));
    io_device_.push_back(d);
    GCOMP_CUDA(cudaMallocHost(&h, static_cast<size_t>(std::max<int64_t>(bytes, 1))));
    io_pinned_.push_back(h);
  }
  if (options_.profile) {
    step_seconds_.assign(plan_->steps.size(), 0.0);
    events_.resize(plan_->steps.size() + 1);
    for (cudaEvent_t& e : events_) GCOMP_CUDA(cudaEventCreate(&e));
  }
  return absl::OkStatus();
}

std::vector<void*> CudaExecutor::Addresses(int64_t batch, const std::vector<void*>& io) const {
  std::vector<uint8_t*> in, out;
  for (size_t i = 0; i < io.size(); ++i) (i < plan_->inputs.size() ? in : out).push_back(static_cast<uint8_t*>(io[i]));
  const std::vector<uint8_t*> addr =
      runtime::BufferAddresses(*plan_, batch, arena_, arena_ + plan_->batch_arena_bytes * plan_->max_batch,
                               static_cast<const uint8_t*>(device_plan_->weights), in, out);
  return std::vector<void*>(addr.begin(), addr.end());
}

absl::Status CudaExecutor::Reshape(int64_t batch) {
  if (batch == batch_) return absl::OkStatus();
  if (!workspace_at_.count(batch)) RETURN_IF_ERROR(runtime::CheckCapacities(*plan_, batch));
  int64_t workspace = 0;
  for (size_t i = 0; i < plan_->steps.size(); ++i) {
    const plan::Step& s = plan_->steps[i];
    absl::StatusOr<int64_t> ws = kernels_[i]->Reshape(runtime::SpecAt(*plan_, s, batch, 1));
    if (!ws.ok()) return runtime::StepError(s, ws.status());
    workspace = std::max(workspace, *ws);
  }
  if (workspace > plan_->workspace_bound && plan_->workspace_bound > 0) {
    return absl::InternalError(absl::StrCat("the steps ask for ", workspace, " workspace bytes at batch ", batch,
                                            ", over the plan's bound of ", plan_->workspace_bound));
  }
  if (workspace > workspace_capacity_) {
    // Growing the workspace moves it: graphs captured with the old one are stale.
    GCOMP_CUDA(cudaStreamSynchronize(ctx_.stream));
    if (workspace_) GCOMP_CUDA(cudaFree(workspace_));
    workspace_ = nullptr;
    workspace_capacity_ = 0;
    GCOMP_CUDA(cudaMalloc(reinterpret_cast<void**>(&workspace_), static_cast<size_t>(workspace)));
    workspace_capacity_ = workspace;
    for (auto& [b, g] : graphs_) cudaGraphExecDestroy(g.exec);
    graphs_.clear();
  }
  workspace_at_[batch] = workspace;
  batch_ = batch;
  return absl::OkStatus();
}

absl::Status CudaExecutor::Enqueue(int64_t batch, const std::vector<void*>& io) {
  const std::vector<void*> addr = Addresses(batch, io);
  const runtime::RunContext run{1, ctx_.stream};
  const std::span<uint8_t> workspace(workspace_, static_cast<size_t>(workspace_at_.at(batch)));
  std::vector<const void*> ins;
  std::vector<void*> outs;
  for (size_t s = 0; s < plan_->steps.size(); ++s) {
    const plan::Step& step = plan_->steps[s];
    ins.clear();
    outs.clear();
    for (int32_t id : step.inputs) ins.push_back(id < 0 ? nullptr : addr[id]);
    for (int32_t id : step.outputs) outs.push_back(addr[id]);
    if (!events_.empty()) GCOMP_CUDA(cudaEventRecord(events_[s], ctx_.stream));
    if (absl::Status st = kernels_[s]->Run(run, ins, outs, workspace); !st.ok()) return runtime::StepError(step, st);
  }
  if (!events_.empty()) GCOMP_CUDA(cudaEventRecord(events_.back(), ctx_.stream));
  return absl::OkStatus();
}

absl::Status CudaExecutor::Launch(int64_t batch, const std::vector<void*>& io) {
  RETURN_IF_ERROR(Reshape(batch));
  for (const plan::Step& s : plan_->steps) ++launches_[s.kernel];
  if (!options_.device_graphs || options_.profile) return Enqueue(batch, io);
  auto it = graphs_.find(batch);
  if (it != graphs_.end() && it->second.io == io) return CudaOk(cudaGraphLaunch(it->second.exec, ctx_.stream), "cudaGraphLaunch");
  // Capture the plan at this batch with these I/O pointers; update the batch's graph in place
  // where it exists (only pointers changed), else instantiate it.
  cudaGraph_t graph = nullptr;
  GCOMP_CUDA(cudaStreamBeginCapture(ctx_.stream, cudaStreamCaptureModeThreadLocal));
  absl::Status enqueued = Enqueue(batch, io);
  const cudaError_t ended = cudaStreamEndCapture(ctx_.stream, &graph);
  if (!enqueued.ok() || ended != cudaSuccess) {
    if (graph) cudaGraphDestroy(graph);
    cudaGetLastError();
    if (!enqueued.ok() && enqueued.code() != absl::StatusCode::kInternal) return enqueued;
    // A library call that cannot be captured: this batch runs step by step, and the session says so.
    graph_note_ = absl::StrCat("CUDA graph capture failed at batch ", batch, " (",
                               enqueued.ok() ? cudaGetErrorString(ended) : std::string(enqueued.message()),
                               "): steps launched one by one");
    options_.device_graphs = false;
    return Enqueue(batch, io);
  }
  if (it != graphs_.end()) {
    cudaGraphExecUpdateResultInfo info{};
    if (cudaGraphExecUpdate(it->second.exec, graph, &info) == cudaSuccess) {
      cudaGraphDestroy(graph);
      it->second.io = io;
      return CudaOk(cudaGraphLaunch(it->second.exec, ctx_.stream), "cudaGraphLaunch");
    }
    cudaGetLastError();
    cudaGraphExecDestroy(it->second.exec);
    graphs_.erase(it);
  }
  Graph g;
  const cudaError_t inst = cudaGraphInstantiate(&g.exec, graph, 0);
  cudaGraphDestroy(graph);
  GCOMP_CUDA(inst);
  g.io = io;
  auto [pos, inserted] = graphs_.emplace(batch, g);
  return CudaOk(cudaGraphLaunch(pos->second.exec, ctx_.stream), "cudaGraphLaunch");
}

absl::StatusOr<std::vector<Tensor>> CudaExecutor::Run(const std::map<std::string, Tensor>& inputs) {
  GCOMP_CUDA(cudaSetDevice(ctx_.device));
  std::map<std::string, runtime::InputDecl> decl;
  for (const auto& [name, t] : inputs) decl[name] = {t.dtype(), t.dims()};
  ASSIGN_OR_RETURN(int64_t batch, runtime::BatchOf(*plan_, decl));
  for (size_t i = 0; i < plan_->inputs.size(); ++i) {
    const Buffer& b = plan_->buffers[plan_->inputs[i]];
    const Tensor& t = inputs.at(b.name);
    std::memcpy(io_pinned_[i], t.data(), t.nbytes());
    GCOMP_CUDA(cudaMemcpyAsync(io_device_[i], io_pinned_[i], t.nbytes(), cudaMemcpyHostToDevice, ctx_.stream));
  }
  RETURN_IF_ERROR(Launch(batch, io_device_));
  std::vector<Tensor> outputs;
  const size_t ni = plan_->inputs.size();
  for (size_t k = 0; k < plan_->outputs.size(); ++k) {
    const Buffer& b = plan_->buffers[plan_->outputs[k]];
    ASSIGN_OR_RETURN(Tensor t, Tensor::Zeros(b.dtype, runtime::DimsAt(b, batch)));
    GCOMP_CUDA(cudaMemcpyAsync(io_pinned_[ni + k], io_device_[ni + k], t.nbytes(), cudaMemcpyDeviceToHost, ctx_.stream));
    outputs.push_back(std::move(t));
  }
  GCOMP_CUDA(cudaStreamSynchronize(ctx_.stream));
  for (size_t k = 0; k < outputs.size(); ++k) std::memcpy(outputs[k].mutable_data(), io_pinned_[ni + k], outputs[k].nbytes());
  if (!events_.empty()) {
    for (size_t s = 0; s < plan_->steps.size(); ++s) {
      float ms = 0.0f;
      GCOMP_CUDA(cudaEventElapsedTime(&ms, events_[s], events_[s + 1]));
      step_seconds_[s] += ms * 1e-3;
    }
  }
  return outputs;
}

absl::Status CudaExecutor::RunDevice(const std::map<std::string, runtime::DeviceBuffer>& inputs,
                                     const std::map<std::string, runtime::DeviceBuffer>& outputs) {
  GCOMP_CUDA(cudaSetDevice(ctx_.device));
  std::map<std::string, runtime::InputDecl> decl;
  for (const auto& [name, t] : inputs) decl[name] = {t.dtype, t.dims};
  ASSIGN_OR_RETURN(int64_t batch, runtime::BatchOf(*plan_, decl));
  std::vector<void*> io;
  for (int32_t id : plan_->inputs) {
    void* p = inputs.at(plan_->buffers[id].name).data;
    if (!p) return absl::InvalidArgumentError(absl::StrCat("input '", plan_->buffers[id].name, "' has no device pointer"));
    io.push_back(p);
  }
  for (int32_t id : plan_->outputs) {
    const Buffer& b = plan_->buffers[id];
    auto it = outputs.find(b.name);
    if (it == outputs.end()) return absl::InvalidArgumentError(absl::StrCat("missing output '", b.name, "'"));
    if (it->second.dtype != b.dtype || it->second.dims != runtime::DimsAt(b, batch) || !it->second.data) {
      return absl::InvalidArgumentError(absl::StrCat("output '", b.name, "' must be a device ", DTypeName(b.dtype),
                                                     " tensor of dims [", absl::StrJoin(runtime::DimsAt(b, batch), ","),
                                                     "] at batch ", batch));
    }
    io.push_back(it->second.data);
  }
  if (outputs.size() != plan_->outputs.size()) return absl::InvalidArgumentError("outputs the plan does not have");
  return Launch(batch, io);
}

absl::StatusOr<plan::Tuning> CudaExecutor::Tune(const std::vector<int64_t>& batches) {
  GCOMP_CUDA(cudaSetDevice(ctx_.device));
  plan::Tuning tuning;
  tuning.key = tuning_key_;
  const bool graphs = options_.device_graphs;
  options_.device_graphs = false;
  cudaEvent_t t0 = nullptr, t1 = nullptr;
  GCOMP_CUDA(cudaEventCreate(&t0));
  GCOMP_CUDA(cudaEventCreate(&t1));
  // Candidates may need more workspace than the heuristics' choices: the plan's bound.
  void* scratch = nullptr;
  const int64_t scratch_bytes = std::max<int64_t>(plan_->workspace_bound, 1);
  absl::Status status = CudaOk(cudaMalloc(&scratch, static_cast<size_t>(scratch_bytes)), "cudaMalloc(tuning)");
  for (int64_t batch : batches) {
    if (!status.ok()) break;
    batch_ = 0;
    if (status = Reshape(batch); !status.ok()) break;
    const std::vector<void*> addr = Addresses(batch, io_device_);
    for (size_t s = 0; s < plan_->steps.size() && status.ok(); ++s) {
      CudaKernel& k = *kernels_[s];
      const int n = std::min(k.Candidates(), 8);
      if (n < 2) continue;
      const plan::Step& step = plan_->steps[s];
      std::vector<const void*> ins;
      std::vector<void*> outs;
      for (int32_t id : step.inputs) ins.push_back(id < 0 ? nullptr : addr[id]);
      for (int32_t id : step.outputs) outs.push_back(addr[id]);
      const std::span<uint8_t> ws(static_cast<uint8_t*>(scratch), static_cast<size_t>(scratch_bytes));
      int best = -1;
      float best_ms = 0;
      std::string best_algo;
      for (int c = 0; c < n; ++c) {
        absl::StatusOr<int64_t> need = k.UseCandidate(c);
        if (!need.ok() || *need > scratch_bytes) continue;
        bool ok = true;
        for (int rep = 0; rep < 3 && ok; ++rep) ok = k.Run({1, ctx_.stream}, ins, outs, ws).ok();
        std::vector<float> times;
        for (int rep = 0; rep < 5 && ok; ++rep) {
          cudaEventRecord(t0, ctx_.stream);
          ok = k.Run({1, ctx_.stream}, ins, outs, ws).ok();
          cudaEventRecord(t1, ctx_.stream);
          float ms = 0;
          ok = ok && cudaEventSynchronize(t1) == cudaSuccess && cudaEventElapsedTime(&ms, t0, t1) == cudaSuccess;
          times.push_back(ms);
        }
        if (!ok) {
          cudaGetLastError();
          continue;
        }
        std::sort(times.begin(), times.end());
        if (best < 0 || times[2] < best_ms) {
          best = c;
          best_ms = times[2];
          best_algo = k.Algorithm();
        }
      }
      if (best < 0) {
        status = runtime::StepError(step, absl::InternalError("no candidate algorithm ran"));
        break;
      }
      if (absl::StatusOr<int64_t> back = k.UseCandidate(best); !back.ok()) status = back.status();
      tuning.choices.push_back({static_cast<int32_t>(s), batch, best, best_algo, best_ms});
    }
  }
  cudaStreamSynchronize(ctx_.stream);
  cudaFree(scratch);
  cudaEventDestroy(t0);
  cudaEventDestroy(t1);
  options_.device_graphs = graphs;
  batch_ = 0;
  workspace_at_.clear();
  for (auto& [b, g] : graphs_) cudaGraphExecDestroy(g.exec);
  graphs_.clear();
  RETURN_IF_ERROR(status);
  return tuning;
}

std::vector<std::string> CudaExecutor::step_algorithms() const {
  std::vector<std::string> out;
  for (const auto& k : kernels_) out.push_back(k->Algorithm());
  return out;
}

std::string CudaExecutor::memory_info() const {
  return absl::StrCat("device ", ctx_.device, " (", device_name_, "): weights ", plan_->weights_bytes,
                      " bytes, uploaded once and shared by ", device_plan_.use_count(),
                      " session(s) of this plan; activation arenas ", arena_bytes_, " bytes; I/O buffers ",
                      [&] {
                        int64_t n = 0;
                        for (int64_t b : io_bytes_) n += b;
                        return n;
                      }(),
                      " bytes; workspace ", workspace_capacity_, " bytes; code: ", device_plan_->code,
                      graph_note_.empty() ? "" : absl::StrCat("; ", graph_note_));
}

class CudaBackend : public runtime::Backend {
 public:
  explicit CudaBackend(const runtime::BackendKernels& kernels) : kernels_(kernels) {}
  const runtime::BackendKernels& kernels_side() const override { return kernels_; }
  absl::StatusOr<std::unique_ptr<runtime::Executor>> CreateExecutor(
      std::shared_ptr<const plan::Plan> plan, const runtime::ExecutorOptions& options) const override {
    if (!plan) return absl::InvalidArgumentError("no plan");
    auto e = std::make_unique<CudaExecutor>(std::move(plan), options, kernels_);
    RETURN_IF_ERROR(e->Init());
    return std::unique_ptr<runtime::Executor>(std::move(e));
  }

 private:
  const runtime::BackendKernels& kernels_;
};

}  // namespace

absl::Status DevicePresent() {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    cudaGetLastError();
    return absl::FailedPreconditionError(absl::StrCat(
        "no CUDA device is available to run this cuda plan (",
        e == cudaErrorInsufficientDriver ? "no NVIDIA driver that runs CUDA 13 is installed"
        : e != cudaSuccess               ? absl::StrCat("cudaGetDeviceCount: ", cudaGetErrorString(e))
                                         : "0 devices",
        "); compile and inspect cuda plans here, run them on a machine with an NVIDIA GPU and driver"));
  }
  return absl::OkStatus();
}

const runtime::Backend& CudaSm90Backend() {
  static const CudaBackend kBackend(CudaSm90Kernels());
  return kBackend;
}

const runtime::Backend& CudaSm80Backend() {
  static const CudaBackend kBackend(CudaSm80Kernels());
  return kBackend;
}

}  // namespace gcomp::cuda
