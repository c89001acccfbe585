// libtriton_gcomp.so: Triton Inference Server's backend API over gcomp plans.
//
//   TRITONBACKEND_Initialize           checks the server's backend API version
//   TRITONBACKEND_ModelInitialize      loads MODEL/VERSION/model.gplan, reconciles config.pbtxt with the
//                                      plan (auto-completion), keeps the plan
//   TRITONBACKEND_ModelInstanceInitialize  a session per instance: KIND_CPU with `threads`, KIND_GPU
//                                      on the instance's device (cuda plans)
//   TRITONBACKEND_ModelInstanceExecute checks each request, runs the good ones as one batch (up to
//                                      the plan's maximum), gives each response its own rows, and
//                                      answers bad requests with an error
//
// Only gcomp's public API (include/gcomp) is used.
#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "gcomp/gcomp.h"
#include "triton/json.h"
#include "triton/model_config.h"
#include "triton/triton_api.h"

namespace gcomp::triton {
namespace {

void Log(TRITONSERVER_LogLevel level, int line, const std::string& msg) {
  if (!TRITONSERVER_LogIsEnabled(level)) return;
  if (TRITONSERVER_Error* e = TRITONSERVER_LogMessage(level, "gcomp_backend", line, msg.c_str())) {
    TRITONSERVER_ErrorDelete(e);
  }
}
#define GCOMP_LOG_INFO(msg) Log(TRITONSERVER_LOG_INFO, __LINE__, (msg))
#define GCOMP_LOG_ERROR(msg) Log(TRITONSERVER_LOG_ERROR, __LINE__, (msg))

#define RETURN_IF_TRITON_ERROR(expr)       \
  do {                                     \
    if (TRITONSERVER_Error* e_ = (expr)) { \
      return e_;                           \
    }                                      \
  } while (0)

TRITONSERVER_Error* Error(TRITONSERVER_Error_Code code, const std::string& msg) {
  return TRITONSERVER_ErrorNew(code, msg.c_str());
}

TRITONSERVER_Error* FromStatus(const Status& st) {
  TRITONSERVER_Error_Code code = TRITONSERVER_ERROR_INTERNAL;
  switch (st.code()) {
    case StatusCode::kInvalidArgument:
      code = TRITONSERVER_ERROR_INVALID_ARG;
      break;
    case StatusCode::kNotFound:
      code = TRITONSERVER_ERROR_NOT_FOUND;
      break;
    case StatusCode::kResourceExhausted:
      code = TRITONSERVER_ERROR_UNAVAILABLE;
      break;
    case StatusCode::kUnimplemented:
      code = TRITONSERVER_ERROR_UNSUPPORTED;
      break;
    default:
      break;
  }
  return Error(code, st.message());
}

// The message of `e`, which is deleted.
std::string Consume(TRITONSERVER_Error* e) {
  std::string m = TRITONSERVER_ErrorMessage(e);
  TRITONSERVER_ErrorDelete(e);
  return m;
}

uint64_t NowNs() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

int64_t Elements(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

Result<Json> ReadModelConfig(TRITONBACKEND_Model* model) {
  TRITONSERVER_Message* message = nullptr;
  if (TRITONSERVER_Error* e = TRITONBACKEND_ModelConfig(model, 1, &message)) {
    return Status(StatusCode::kInternal, "cannot read the model configuration: " + Consume(e));
  }
  const char* base = nullptr;
  size_t size = 0;
  TRITONSERVER_Error* e = TRITONSERVER_MessageSerializeToJson(message, &base, &size);
  Result<Json> config = e ? Result<Json>(Status(StatusCode::kInternal, Consume(e))) : Json::Parse({base, size});
  if (TRITONSERVER_Error* d = TRITONSERVER_MessageDelete(message)) TRITONSERVER_ErrorDelete(d);
  return config;
}

struct ModelState {
  std::string name;
  std::string plan_path;
  std::shared_ptr<const Plan> plan;
  ServingSpec spec;
};

struct InstanceState {
  ModelState* model = nullptr;
  std::string name;
  bool host_plan = true;  // a cpu plan: inputs and outputs are read and written in place in host memory
  std::unique_ptr<Session> session;
  std::vector<std::vector<uint8_t>> inputs;   // the batch's inputs, gathered (plan order)
  std::vector<std::vector<uint8_t>> outputs;  // the batch's outputs (plan order)
};

// One request in an Execute call.
struct Pending {
  TRITONBACKEND_Request* request = nullptr;
  TRITONBACKEND_Response* response = nullptr;
  std::string error;  // why it fails (empty: good so far)
  TRITONSERVER_Error_Code code = TRITONSERVER_ERROR_INVALID_ARG;
  int64_t batch = 1;  // its rows
  // Per plan input: the request's buffers, in order.
  std::vector<std::vector<std::pair<const uint8_t*, uint64_t>>> buffers;
  std::vector<size_t> outputs;  // requested outputs (indices into spec.outputs)
  uint64_t compute_start = 0, compute_end = 0;
};

// Checks a request against the model and collects its input buffers; returns the reason it is
// refused, or an empty string.
std::string CheckRequest(const ModelState& m, Pending& p) {
  const ServingSpec& spec = m.spec;
  uint32_t count = 0;
  if (TRITONSERVER_Error* e = TRITONBACKEND_RequestInputCount(p.request, &count)) return Consume(e);
  std::string names;
  for (const ServedTensor& t : spec.inputs) names += (names.empty() ? "'" : ", '") + t.name + "'";
  if (count != spec.inputs.size()) {
    return "model '" + m.name + "' takes " + std::to_string(spec.inputs.size()) + " input(s) (" + names +
           "), the request has " + std::to_string(count);
  }
  p.buffers.assign(spec.inputs.size(), {});
  std::vector<bool> seen(spec.inputs.size(), false);
  int64_t batch = -1;
  for (uint32_t i = 0; i < count; ++i) {
    TRITONBACKEND_Input* input = nullptr;
    if (TRITONSERVER_Error* e = TRITONBACKEND_RequestInputByIndex(p.request, i, &input)) return Consume(e);
    const char* name = nullptr;
    TRITONSERVER_DataType dtype = TRITONSERVER_TYPE_INVALID;
    const int64_t* shape = nullptr;
    uint32_t rank = 0, buffer_count = 0;
    uint64_t byte_size = 0;
    if (TRITONSERVER_Error* e =
            TRITONBACKEND_InputProperties(input, &name, &dtype, &shape, &rank, &byte_size, &buffer_count)) {
      return Consume(e);
    }
    size_t k = 0;
    while (k < spec.inputs.size() && spec.inputs[k].name != name) ++k;
    if (k == spec.inputs.size())
      return "model '" + m.name + "' has no input '" + name + "' (its inputs: " + names + ")";
    if (seen[k]) return "input '" + std::string(name) + "' is given twice";
    seen[k] = true;
    const ServedTensor& t = spec.inputs[k];
    if (dtype != TritonDataType(t.dtype)) {
      return "input '" + t.name + "' is " + TritonTypeName(dtype) + ", the model takes " +
             TritonTypeName(TritonDataType(t.dtype));
    }
    // The shape: [batch, plan dims...] when the plan batches, else the plan's shape.
    std::vector<int64_t> want = t.plan_shape;
    int64_t rows = 1;
    const int64_t max_rows = spec.max_batch_size > 0 ? spec.max_batch_size : spec.plan_max_batch;
    bool ok = rank == want.size();
    if (ok && spec.plan_batches) {
      rows = shape[0];
      want[0] = rows;
      if (rows < 1 || rows > max_rows) {
        return "input '" + t.name + "' has shape " + DimsText(shape, rank) + ": its batch " + std::to_string(rows) +
               " is outside 1.." + std::to_string(max_rows);
      }
    }
    for (uint32_t d = 0; ok && d < rank; ++d) ok = shape[d] == want[d];
    if (!ok) {
      std::string expect = spec.plan_batches ? "[batch" : "[";
      for (size_t d = spec.plan_batches ? 1 : 0; d < t.plan_shape.size(); ++d) {
        if (d) expect += ',';
        expect += std::to_string(t.plan_shape[d]);
      }
      return "input '" + t.name + "' has shape " + DimsText(shape, rank) + ", the model takes " + expect + "]";
    }
    if (batch >= 0 && rows != batch) {
      return "the inputs disagree on the batch (" + std::to_string(batch) + " and " + std::to_string(rows) + ")";
    }
    batch = rows;
    const uint64_t need = static_cast<uint64_t>(Elements(want)) * DataTypeSize(t.dtype);
    if (byte_size != need) {
      return "input '" + t.name + "' has " + std::to_string(byte_size) + " bytes, its shape " + DimsText(shape, rank) +
             " needs " + std::to_string(need);
    }
    uint64_t total = 0;
    for (uint32_t b = 0; b < buffer_count; ++b) {
      const void* ptr = nullptr;
      uint64_t size = 0;
      TRITONSERVER_MemoryType type = TRITONSERVER_MEMORY_CPU;
      int64_t type_id = 0;
      if (TRITONSERVER_Error* e = TRITONBACKEND_InputBuffer(input, b, &ptr, &size, &type, &type_id)) return Consume(e);
      if (type == TRITONSERVER_MEMORY_GPU) {
        return "input '" + t.name + "' is in GPU memory; the gcomp backend reads inputs from host memory";
      }
      p.buffers[k].emplace_back(static_cast<const uint8_t*>(ptr), size);
      total += size;
    }
    if (total != need)
      return "input '" + t.name + "' buffers hold " + std::to_string(total) + " bytes, expected " +
             std::to_string(need);
  }
  p.batch = batch;

  uint32_t requested = 0;
  if (TRITONSERVER_Error* e = TRITONBACKEND_RequestOutputCount(p.request, &requested)) return Consume(e);
  for (uint32_t i = 0; i < requested; ++i) {
    const char* name = nullptr;
    if (TRITONSERVER_Error* e = TRITONBACKEND_RequestOutputName(p.request, i, &name)) return Consume(e);
    size_t k = 0;
    while (k < spec.outputs.size() && !(spec.outputs[k].served && spec.outputs[k].name == name)) ++k;
    if (k == spec.outputs.size()) return "model '" + m.name + "' has no output '" + name + "'";
    p.outputs.push_back(k);
  }
  if (requested == 0) {
    for (size_t k = 0; k < spec.outputs.size(); ++k) {
      if (spec.outputs[k].served) p.outputs.push_back(k);
    }
  }
  return "";
}

// The shape of a plan tensor at `rows` batch items.
std::vector<int64_t> ShapeAt(const ServingSpec& spec, const ServedTensor& t, int64_t rows) {
  std::vector<int64_t> s = t.plan_shape;
  if (spec.plan_batches) s[0] = rows;
  return s;
}

// Runs `group` (good requests whose rows sum to at most the plan's maximum batch) as one batch
// and writes each response's rows; returns the reason the run failed, or an empty string.
std::string RunGroup(InstanceState& st, std::vector<Pending*>& group) {
  const ServingSpec& spec = st.model->spec;
  int64_t rows = 0;
  for (Pending* p : group) rows += p->batch;
  std::vector<std::vector<int64_t>> in_shapes, out_shapes;
  st.inputs.resize(spec.inputs.size());
  st.outputs.resize(spec.outputs.size());
  std::vector<const uint8_t*> in_ptrs(spec.inputs.size());
  for (size_t k = 0; k < spec.inputs.size(); ++k) {
    in_shapes.push_back(ShapeAt(spec, spec.inputs[k], rows));
    const auto& first = group[0]->buffers[k];
    if (group.size() == 1 && first.size() == 1 && st.host_plan) {
      in_ptrs[k] = first[0].first;  // one request in one buffer: read in place
      continue;
    }
    std::vector<uint8_t>& buf = st.inputs[k];
    buf.resize(static_cast<size_t>(Elements(in_shapes[k])) * DataTypeSize(spec.inputs[k].dtype));
    size_t at = 0;
    for (Pending* p : group) {
      for (const auto& [ptr, size] : p->buffers[k]) {
        std::memcpy(buf.data() + at, ptr, size);
        at += size;
      }
    }
    in_ptrs[k] = buf.data();
  }
  for (size_t k = 0; k < spec.outputs.size(); ++k) {
    out_shapes.push_back(ShapeAt(spec, spec.outputs[k], rows));
  }

  const uint64_t start = NowNs();
  if (st.host_plan) {
    std::vector<DeviceTensor> ins, outs;
    for (size_t k = 0; k < spec.inputs.size(); ++k) {
      ins.push_back({spec.inputs[k].name, spec.inputs[k].dtype, in_shapes[k], const_cast<uint8_t*>(in_ptrs[k])});
    }
    for (size_t k = 0; k < spec.outputs.size(); ++k) {
      st.outputs[k].resize(static_cast<size_t>(Elements(out_shapes[k])) * DataTypeSize(spec.outputs[k].dtype));
      outs.push_back({spec.outputs[k].name, spec.outputs[k].dtype, out_shapes[k], st.outputs[k].data()});
    }
    if (Status s = st.session->RunOnDevice(ins, outs); !s.ok()) return s.message();
  } else {
    std::vector<HostTensor> ins;
    for (size_t k = 0; k < spec.inputs.size(); ++k) {
      HostTensor h{spec.inputs[k].name, spec.inputs[k].dtype, in_shapes[k], {}};
      h.data.assign(in_ptrs[k], in_ptrs[k] + static_cast<size_t>(Elements(in_shapes[k])) * DataTypeSize(h.dtype));
      ins.push_back(std::move(h));
    }
    auto outs = st.session->Run(ins);
    if (!outs.ok()) return outs.status().message();
    for (size_t k = 0; k < spec.outputs.size() && k < outs->size(); ++k) st.outputs[k] = std::move((*outs)[k].data);
  }
  const uint64_t end = NowNs();

  int64_t row = 0;
  for (Pending* p : group) {
    p->compute_start = start;
    p->compute_end = end;
    for (size_t k : p->outputs) {
      const ServedTensor& t = spec.outputs[k];
      const std::vector<int64_t> shape = ShapeAt(spec, t, p->batch);
      const size_t bytes = static_cast<size_t>(Elements(shape)) * DataTypeSize(t.dtype);
      const size_t offset = spec.plan_batches ? static_cast<size_t>(row) * (bytes / static_cast<size_t>(p->batch)) : 0;
      if (st.outputs[k].size() < offset + bytes) {
        p->error = "output '" + t.name + "' came back smaller than its batch";
        break;
      }
      TRITONBACKEND_Output* output = nullptr;
      if (TRITONSERVER_Error* e = TRITONBACKEND_ResponseOutput(
              p->response, &output, t.name.c_str(), static_cast<TRITONSERVER_DataType>(TritonDataType(t.dtype)),
              shape.data(), static_cast<uint32_t>(shape.size()))) {
        p->error = Consume(e);
        break;
      }
      void* buffer = nullptr;
      TRITONSERVER_MemoryType type = TRITONSERVER_MEMORY_CPU;
      int64_t type_id = 0;
      if (TRITONSERVER_Error* e = TRITONBACKEND_OutputBuffer(output, &buffer, bytes, &type, &type_id)) {
        p->error = Consume(e);
        break;
      }
      if (type == TRITONSERVER_MEMORY_GPU) {
        p->error = "output '" + t.name + "' was given GPU memory; the gcomp backend writes outputs to host memory";
        break;
      }
      std::memcpy(buffer, st.outputs[k].data() + offset, bytes);
    }
    row += p->batch;
  }
  return "";
}

}  // namespace
}  // namespace gcomp::triton

namespace gcomp::triton {
namespace {

TRITONSERVER_Error* InitializeImpl(TRITONBACKEND_Backend* backend) {
  const char* name = nullptr;
  RETURN_IF_TRITON_ERROR(TRITONBACKEND_BackendName(backend, &name));
  uint32_t major = 0, minor = 0;
  RETURN_IF_TRITON_ERROR(TRITONBACKEND_ApiVersion(&major, &minor));
  const std::string refusal = CheckApiVersion(major, minor, kTritonBackendApiMajor, kTritonBackendApiMinor);
  if (!refusal.empty()) {
    GCOMP_LOG_ERROR("backend '" + std::string(name) + "': " + refusal);
    return Error(TRITONSERVER_ERROR_UNSUPPORTED, "backend '" + std::string(name) + "': " + refusal);
  }
  GCOMP_LOG_INFO("backend '" + std::string(name) + "': gcomp plans; server backend API " + std::to_string(major) + "." +
                 std::to_string(minor) + ", written for " + std::to_string(kTritonBackendApiMajor) + "." +
                 std::to_string(kTritonBackendApiMinor));
  return nullptr;
}

TRITONSERVER_Error* FinalizeImpl(TRITONBACKEND_Backend*) { return nullptr; }

TRITONSERVER_Error* ModelInitializeImpl(TRITONBACKEND_Model* model) {
  const char* name = nullptr;
  uint64_t version = 0;
  TRITONBACKEND_ArtifactType artifact = TRITONBACKEND_ARTIFACT_FILESYSTEM;
  const char* location = nullptr;
  RETURN_IF_TRITON_ERROR(TRITONBACKEND_ModelName(model, &name));
  RETURN_IF_TRITON_ERROR(TRITONBACKEND_ModelVersion(model, &version));
  RETURN_IF_TRITON_ERROR(TRITONBACKEND_ModelRepository(model, &artifact, &location));
  if (artifact != TRITONBACKEND_ARTIFACT_FILESYSTEM) {
    return Error(TRITONSERVER_ERROR_UNSUPPORTED, "model '" + std::string(name) + "': plans are read from a filesystem");
  }
  auto config = ReadModelConfig(model);
  if (!config.ok()) return FromStatus(config.status());

  auto state = std::make_unique<ModelState>();
  state->name = name;
  state->plan_path = std::string(location) + "/" + std::to_string(version) + "/" + PlanFilename(*config);
  auto plan = Plan::Load(state->plan_path);
  if (!plan.ok()) {
    const std::string msg = "model '" + state->name + "': " + plan.status().message();
    GCOMP_LOG_ERROR(msg);
    return Error(TRITONSERVER_ERROR_INVALID_ARG, msg);
  }
  state->plan = *plan;
  bool auto_complete = false;
  RETURN_IF_TRITON_ERROR(TRITONBACKEND_ModelAutoCompleteConfig(model, &auto_complete));
  const PlanIo io = DescribePlan(*state->plan);
  auto reconciled = ReconcileConfig(state->name, *config, io, auto_complete);
  if (!reconciled.ok()) return FromStatus(reconciled.status());
  if (reconciled->changed) {
    const std::string text = reconciled->config.Dump();
    TRITONSERVER_Message* message = nullptr;
    RETURN_IF_TRITON_ERROR(TRITONSERVER_MessageNewFromSerializedJson(&message, text.data(), text.size()));
    TRITONSERVER_Error* e = TRITONBACKEND_ModelSetConfig(model, 1, message);
    if (TRITONSERVER_Error* d = TRITONSERVER_MessageDelete(message)) TRITONSERVER_ErrorDelete(d);
    if (e) return e;
    // Triton may fill in more fields: serve what it holds now.
    auto completed = ReadModelConfig(model);
    if (!completed.ok()) return FromStatus(completed.status());
    reconciled = ReconcileConfig(state->name, *completed, io, false);
    if (!reconciled.ok()) return FromStatus(reconciled.status());
  }
  state->spec = reconciled->spec;
  GCOMP_LOG_INFO("model '" + state->name + "': " + state->plan_path + " (target " + io.target + ", maximum batch " +
                 std::to_string(io.max_batch) + "), max_batch_size " + std::to_string(state->spec.max_batch_size) +
                 (auto_complete ? ", config auto-completed" : ""));
  RETURN_IF_TRITON_ERROR(TRITONBACKEND_ModelSetState(model, state.get()));
  state.release();
  return nullptr;
}

TRITONSERVER_Error* ModelFinalizeImpl(TRITONBACKEND_Model* model) {
  void* state = nullptr;
  RETURN_IF_TRITON_ERROR(TRITONBACKEND_ModelState(model, &state));
  delete static_cast<ModelState*>(state);
  return nullptr;
}

TRITONSERVER_Error* ModelInstanceInitializeImpl(TRITONBACKEND_ModelInstance* instance) {
  const char* name = nullptr;
  TRITONSERVER_InstanceGroupKind kind = TRITONSERVER_INSTANCEGROUPKIND_AUTO;
  int32_t device = 0;
  TRITONBACKEND_Model* model = nullptr;
  void* model_state = nullptr;
  RETURN_IF_TRITON_ERROR(TRITONBACKEND_ModelInstanceName(instance, &name));
  RETURN_IF_TRITON_ERROR(TRITONBACKEND_ModelInstanceKind(instance, &kind));
  RETURN_IF_TRITON_ERROR(TRITONBACKEND_ModelInstanceDeviceId(instance, &device));
  RETURN_IF_TRITON_ERROR(TRITONBACKEND_ModelInstanceModel(instance, &model));
  RETURN_IF_TRITON_ERROR(TRITONBACKEND_ModelState(model, &model_state));
  auto* m = static_cast<ModelState*>(model_state);
  const std::string target = m->plan->target();
  const bool cpu_plan = target == "cpu";
  const std::string where = "model '" + m->name + "' instance '" + name + "': ";
  SessionOptions options;
  if (kind == TRITONSERVER_INSTANCEGROUPKIND_CPU) {
    if (!cpu_plan) {
      return Error(TRITONSERVER_ERROR_INVALID_ARG,
                   where + "the plan is for " + target + ": serve it with instance_group [ { kind: KIND_GPU } ]");
    }
    options.threads = m->spec.threads;
  } else if (kind == TRITONSERVER_INSTANCEGROUPKIND_GPU) {
    if (cpu_plan) {
      return Error(TRITONSERVER_ERROR_INVALID_ARG,
                   where + "the plan is for the cpu: serve it with instance_group [ { kind: KIND_CPU } ]");
    }
    options.device = device;
  } else {
    return Error(TRITONSERVER_ERROR_INVALID_ARG,
                 where + "instance kind must be KIND_CPU (cpu plans) or KIND_GPU (cuda plans)");
  }
  auto session = Session::Create(m->plan, options);
  if (!session.ok()) return FromStatus(Status(session.status().code(), where + session.status().message()));
  auto state = std::make_unique<InstanceState>();
  state->model = m;
  state->name = name;
  state->host_plan = cpu_plan;
  state->session = std::move(*session);
  GCOMP_LOG_INFO(where + (cpu_plan ? "KIND_CPU, threads " + std::to_string(options.threads)
                                   : "KIND_GPU, device " + std::to_string(device)));
  RETURN_IF_TRITON_ERROR(TRITONBACKEND_ModelInstanceSetState(instance, state.get()));
  state.release();
  return nullptr;
}

TRITONSERVER_Error* ModelInstanceFinalizeImpl(TRITONBACKEND_ModelInstance* instance) {
  void* state = nullptr;
  RETURN_IF_TRITON_ERROR(TRITONBACKEND_ModelInstanceState(instance, &state));
  delete static_cast<InstanceState*>(state);
  return nullptr;
}

TRITONSERVER_Error* ModelInstanceExecuteImpl(TRITONBACKEND_ModelInstance* instance, TRITONBACKEND_Request** requests,
                                             uint32_t request_count) {
  const uint64_t exec_start = NowNs();
  void* vstate = nullptr;
  RETURN_IF_TRITON_ERROR(TRITONBACKEND_ModelInstanceState(instance, &vstate));
  InstanceState& st = *static_cast<InstanceState*>(vstate);
  const ServingSpec& spec = st.model->spec;

  std::vector<Pending> pending;
  try {
    pending.resize(request_count);
  } catch (const std::exception& e) {
    return Error(TRITONSERVER_ERROR_UNAVAILABLE,
                 std::string("gcomp backend: ") + e.what());  // Triton keeps the requests
  }
  // From here on the requests are ours: every one gets a response (if one can be made) and is
  // released, whatever is thrown.
  for (uint32_t i = 0; i < request_count; ++i) {
    Pending& p = pending[i];
    p.request = requests[i];
    if (TRITONSERVER_Error* e = TRITONBACKEND_ResponseNew(&p.response, p.request)) {
      GCOMP_LOG_ERROR("model '" + st.model->name + "': cannot make a response: " + Consume(e));
      p.response = nullptr;
      p.error = "no response";
      continue;
    }
    try {
      p.error = CheckRequest(*st.model, p);
    } catch (const std::exception& e) {
      p.error = std::string("model '") + st.model->name + "': " + e.what();
      p.code = TRITONSERVER_ERROR_INTERNAL;
    }
  }

  // Good requests in arrival order, grouped up to the largest batch a run may take.
  const int64_t max_rows =
      spec.plan_batches ? (spec.max_batch_size > 0 ? spec.max_batch_size : spec.plan_max_batch) : 1;
  std::vector<std::vector<Pending*>> groups;
  try {
    int64_t rows = 0;
    for (Pending& p : pending) {
      if (!p.error.empty()) continue;
      if (groups.empty() || rows + p.batch > max_rows) {
        groups.emplace_back();
        rows = 0;
      }
      groups.back().push_back(&p);
      rows += p.batch;
    }
  } catch (const std::exception& e) {
    groups.clear();
    for (Pending& p : pending) {
      if (p.error.empty()) p.error = std::string("gcomp backend: ") + e.what();
    }
  }
  for (std::vector<Pending*>& group : groups) {
    std::string failed;
    try {
      failed = RunGroup(st, group);
    } catch (const std::exception& e) {
      failed = std::string("run failed: ") + e.what();
    }
    uint64_t batch = 0;
    for (Pending* p : group) {
      batch += static_cast<uint64_t>(p->batch);
      if (!failed.empty()) {
        p->error = "model '" + st.model->name + "': " + failed;
        p->code = TRITONSERVER_ERROR_INTERNAL;
      }
    }
    if (failed.empty()) {
      const uint64_t now = NowNs();
      if (TRITONSERVER_Error* e = TRITONBACKEND_ModelInstanceReportBatchStatistics(
              instance, batch, exec_start, group[0]->compute_start, group[0]->compute_end, now)) {
        TRITONSERVER_ErrorDelete(e);
      }
    }
  }

  const uint64_t exec_end = NowNs();
  for (Pending& p : pending) {
    const bool ok = p.error.empty();
    if (p.response) {
      TRITONSERVER_Error* err = ok ? nullptr : Error(p.code, p.error);
      if (TRITONSERVER_Error* e = TRITONBACKEND_ResponseSend(p.response, kTritonResponseCompleteFinal, err)) {
        GCOMP_LOG_ERROR("model '" + st.model->name + "': cannot send a response: " + Consume(e));
      }
      if (err) TRITONSERVER_ErrorDelete(err);
    }
    const uint64_t cs = p.compute_start ? p.compute_start : exec_end;
    const uint64_t ce = p.compute_end ? p.compute_end : exec_end;
    if (TRITONSERVER_Error* e =
            TRITONBACKEND_ModelInstanceReportStatistics(instance, p.request, ok, exec_start, cs, ce, exec_end)) {
      TRITONSERVER_ErrorDelete(e);
    }
    if (TRITONSERVER_Error* e = TRITONBACKEND_RequestRelease(p.request, kTritonRequestReleaseAll)) {
      GCOMP_LOG_ERROR("model '" + st.model->name + "': cannot release a request: " + Consume(e));
    }
  }
  return nullptr;
}

// Every entry point turns an exception into an error (none may cross into the server).
template <typename F>
TRITONSERVER_Error* Guard(const char* what, F&& f) {
  try {
    return f();
  } catch (const std::exception& e) {
    return Error(TRITONSERVER_ERROR_INTERNAL, std::string("gcomp backend: ") + what + ": " + e.what());
  } catch (...) {
    return Error(TRITONSERVER_ERROR_INTERNAL, std::string("gcomp backend: ") + what + ": unknown exception");
  }
}

}  // namespace
}  // namespace gcomp::triton

extern "C" {

using gcomp::triton::Guard;

TRITONSERVER_Error* TRITONBACKEND_Initialize(TRITONBACKEND_Backend* backend) {
  return Guard("initialize", [&] { return gcomp::triton::InitializeImpl(backend); });
}
TRITONSERVER_Error* TRITONBACKEND_Finalize(TRITONBACKEND_Backend* backend) {
  return Guard("finalize", [&] { return gcomp::triton::FinalizeImpl(backend); });
}
TRITONSERVER_Error* TRITONBACKEND_ModelInitialize(TRITONBACKEND_Model* model) {
  return Guard("model initialize", [&] { return gcomp::triton::ModelInitializeImpl(model); });
}
TRITONSERVER_Error* TRITONBACKEND_ModelFinalize(TRITONBACKEND_Model* model) {
  return Guard("model finalize", [&] { return gcomp::triton::ModelFinalizeImpl(model); });
}
TRITONSERVER_Error* TRITONBACKEND_ModelInstanceInitialize(TRITONBACKEND_ModelInstance* instance) {
  return Guard("instance initialize", [&] { return gcomp::triton::ModelInstanceInitializeImpl(instance); });
}
TRITONSERVER_Error* TRITONBACKEND_ModelInstanceFinalize(TRITONBACKEND_ModelInstance* instance) {
  return Guard("instance finalize", [&] { return gcomp::triton::ModelInstanceFinalizeImpl(instance); });
}
// Execute catches inside (once it owns the requests it must answer and release them); what is
// caught here happened before that, so Triton keeps the requests.
TRITONSERVER_Error* TRITONBACKEND_ModelInstanceExecute(TRITONBACKEND_ModelInstance* instance,
                                                       TRITONBACKEND_Request** requests, uint32_t request_count) {
  return Guard("execute", [&] { return gcomp::triton::ModelInstanceExecuteImpl(instance, requests, request_count); });
}

}  // extern "C"
