// The public runtime API (include/gcomp/gcomp.h) over plan::Plan and the backend registry's executors.
#include "include/gcomp/gcomp.h"

#include <cstring>

#include "plan/plan_file.h"
#include "runtime/api_status.h"
#include "runtime/backend.h"

namespace gcomp {

Status FromAbsl(const absl::Status& s) {
  StatusCode code = StatusCode::kInternal;
  switch (s.code()) {
    case absl::StatusCode::kOk:
      return Status();
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kOutOfRange:
      code = StatusCode::kInvalidArgument;
      break;
    case absl::StatusCode::kNotFound:
      code = StatusCode::kNotFound;
      break;
    case absl::StatusCode::kResourceExhausted:
      code = StatusCode::kResourceExhausted;
      break;
    case absl::StatusCode::kUnimplemented:
      code = StatusCode::kUnimplemented;
      break;
    default:
      break;
  }
  return Status(code, std::string(s.message()));
}

namespace {

DataType ToPublic(DType t) {
  switch (t) {
    case DType::kF32: return DataType::kFloat32;
    case DType::kF16: return DataType::kFloat16;
    case DType::kBF16: return DataType::kBFloat16;
    case DType::kF8E4M3: return DataType::kFloat8E4M3;
    case DType::kF64: return DataType::kFloat64;
    case DType::kI64: return DataType::kInt64;
    case DType::kI32: return DataType::kInt32;
    case DType::kI8: return DataType::kInt8;
    case DType::kU8: return DataType::kUInt8;
    default: return DataType::kBool;
  }
}

DType ToInternal(DataType t) {
  switch (t) {
    case DataType::kFloat32: return DType::kF32;
    case DataType::kFloat16: return DType::kF16;
    case DataType::kBFloat16: return DType::kBF16;
    case DataType::kFloat8E4M3: return DType::kF8E4M3;
    case DataType::kFloat64: return DType::kF64;
    case DataType::kInt64: return DType::kI64;
    case DataType::kInt32: return DType::kI32;
    case DataType::kInt8: return DType::kI8;
    case DataType::kUInt8: return DType::kU8;
    default: return DType::kBool;
  }
}

std::vector<TensorInfo> Infos(const plan::Plan& p, const std::vector<int32_t>& ids) {
  std::vector<TensorInfo> out;
  for (int32_t id : ids) {
    const plan::Buffer& b = p.buffers[id];
    TensorInfo t;
    t.name = b.name;
    t.dtype = ToPublic(b.dtype);
    for (const plan::LinearDim& d : b.dims) {
      t.shape.push_back(d.At(1));
      t.batch_dims.push_back(d.per_batch != 0);
      t.per_batch.push_back(d.per_batch);
    }
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace

struct Plan::Impl {
  std::shared_ptr<const plan::Plan> plan;
};

struct Session::Impl {
  std::shared_ptr<const plan::Plan> plan;
  std::unique_ptr<runtime::Executor> executor;
};

const char* DataTypeName(DataType t) { return gcomp::DTypeName(ToInternal(t)); }
size_t DataTypeSize(DataType t) { return gcomp::DTypeSize(ToInternal(t)); }

HostTensor HostTensor::Float32(std::string name, std::vector<int64_t> shape, const std::vector<float>& values) {
  HostTensor t;
  t.name = std::move(name);
  t.shape = std::move(shape);
  t.data.resize(values.size() * sizeof(float));
  std::memcpy(t.data.data(), values.data(), t.data.size());
  return t;
}

int64_t HostTensor::num_elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::vector<float> HostTensor::ToFloat32() const {
  const DType t = ToInternal(dtype);
  if (!IsFloat(t)) return {};
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0 || (d > 0 && n > (int64_t{1} << 40) / d)) return {};
    n *= d;
  }
  if (static_cast<size_t>(n) * DTypeSize(t) != data.size()) return {};
  std::vector<float> out(static_cast<size_t>(num_elements()));
  if (data.size() != out.size() * DTypeSize(t)) return {};
  for (size_t i = 0; i < out.size(); ++i) {
    const uint8_t* p = data.data() + i * DTypeSize(t);
    switch (t) {
      case DType::kF32: std::memcpy(&out[i], p, 4); break;
      case DType::kF16: { uint16_t h; std::memcpy(&h, p, 2); out[i] = HalfToFloat(h); break; }
      case DType::kBF16: { uint16_t h; std::memcpy(&h, p, 2); out[i] = BFloat16ToFloat(h); break; }
      case DType::kF8E4M3: out[i] = F8E4M3ToFloat(*p); break;
      case DType::kF64: { double d; std::memcpy(&d, p, 8); out[i] = static_cast<float>(d); break; }
      default: break;
    }
  }
  return out;
}

Result<std::shared_ptr<const Plan>> Plan::Load(const std::string& path) {
  auto p = plan::ReadPlanFile(path);
  if (!p.ok()) return FromAbsl(p.status());
  auto impl = std::make_shared<Impl>();
  impl->plan = *p;
  return std::make_shared<const Plan>(std::move(impl));
}

Result<std::shared_ptr<const Plan>> Plan::LoadFromMemory(const void* data, size_t size) {
  auto p = plan::ReadPlanBytes(data, size, "plan in memory");
  if (!p.ok()) return FromAbsl(p.status());
  auto impl = std::make_shared<Impl>();
  impl->plan = *p;
  return std::make_shared<const Plan>(std::move(impl));
}

Result<std::string> Plan::Serialize() const {
  auto bytes = plan::SerializePlan(*impl_->plan);
  if (!bytes.ok()) return FromAbsl(bytes.status());
  return *std::move(bytes);
}

Status Plan::Save(const std::string& path) const { return FromAbsl(plan::WritePlanFile(*impl_->plan, path)); }

std::string Plan::target() const { return impl_->plan->target; }
std::string Plan::precision() const { return impl_->plan->precision; }
int64_t Plan::max_batch() const { return impl_->plan->max_batch; }
std::vector<TensorInfo> Plan::inputs() const { return Infos(*impl_->plan, impl_->plan->inputs); }
std::vector<TensorInfo> Plan::outputs() const { return Infos(*impl_->plan, impl_->plan->outputs); }

Session::Session(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Session::~Session() = default;

Result<std::unique_ptr<Session>> Session::Create(std::shared_ptr<const Plan> plan, SessionOptions options) {
  if (!plan) return Status(StatusCode::kInvalidArgument, "no plan");
  runtime::ExecutorOptions o;
  o.threads = options.threads;
  o.device = options.device;
  o.stream = options.stream;
  o.device_graphs = options.cuda_graphs;
  auto backend = runtime::BackendFor(plan->impl().plan->target);
  if (!backend.ok()) return FromAbsl(backend.status());
  auto e = (*backend)->CreateExecutor(plan->impl().plan, o);
  if (!e.ok()) return FromAbsl(e.status());
  auto impl = std::make_unique<Impl>();
  impl->plan = plan->impl().plan;
  impl->executor = std::move(*e);
  return std::unique_ptr<Session>(new Session(std::move(impl)));
}

Result<std::vector<HostTensor>> Session::Run(const std::vector<HostTensor>& inputs) {
  std::map<std::string, Tensor> feeds;
  const plan::Plan& plan = *impl_->plan;
  for (const HostTensor& h : inputs) {
    bool known = false;
    for (int32_t id : plan.inputs) known |= plan.buffers[id].name == h.name;
    if (!known) return Status(StatusCode::kInvalidArgument, "the plan has no input '" + h.name + "'");
    if (feeds.count(h.name)) return Status(StatusCode::kInvalidArgument, "input '" + h.name + "' is given twice");
    for (int64_t d : h.shape) {
      if (d < 0) return Status(StatusCode::kInvalidArgument, "input '" + h.name + "' has a negative dim");
    }
    auto t = Tensor::Zeros(ToInternal(h.dtype), h.shape);
    if (!t.ok()) return FromAbsl(t.status());
    if (t->nbytes() != h.data.size()) {
      return Status(StatusCode::kInvalidArgument,
                    "input '" + h.name + "' has " + std::to_string(h.data.size()) + " bytes, its shape needs " +
                        std::to_string(t->nbytes()));
    }
    std::memcpy(t->mutable_data(), h.data.data(), h.data.size());
    feeds[h.name] = std::move(*t);
  }
  auto outs = impl_->executor->Run(feeds);
  if (!outs.ok()) return FromAbsl(outs.status());
  std::vector<HostTensor> result;
  const plan::Plan& p = plan;
  for (size_t k = 0; k < outs->size(); ++k) {
    const Tensor& t = (*outs)[k];
    HostTensor h;
    h.name = p.buffers[p.outputs[k]].name;
    h.dtype = ToPublic(t.dtype());
    h.shape = t.dims();
    h.data.assign(t.data(), t.data() + t.nbytes());
    result.push_back(std::move(h));
  }
  return result;
}

Status Session::RunOnDevice(const std::vector<DeviceTensor>& inputs, const std::vector<DeviceTensor>& outputs) {
  std::map<std::string, runtime::DeviceBuffer> in, out;
  for (const auto* list : {&inputs, &outputs}) {
    auto& map = list == &inputs ? in : out;
    for (const DeviceTensor& t : *list) {
      if (map.count(t.name)) return Status(StatusCode::kInvalidArgument, "tensor '" + t.name + "' is given twice");
      map[t.name] = runtime::DeviceBuffer{ToInternal(t.dtype), t.shape, t.data};
    }
  }
  return FromAbsl(impl_->executor->RunDevice(in, out));
}

std::map<std::string, int64_t> Session::kernel_launches() const { return impl_->executor->launches(); }
std::vector<std::string> Session::step_algorithms() const { return impl_->executor->step_algorithms(); }
std::string Session::memory_info() const { return impl_->executor->memory_info(); }

}  // namespace gcomp
