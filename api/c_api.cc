// The C API (include/gcomp/gcomp_c.h) over the C++ API (include/gcomp/gcomp.h). Every entry
// point catches whatever the C++ side throws (std::bad_alloc, mostly) and returns a status; no
// exception, abseil or protobuf type crosses it.
#include "include/gcomp/gcomp_c.h"

#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "include/gcomp/gcomp.h"

struct gcomp_plan {
  std::shared_ptr<const gcomp::Plan> plan;  // null for a handle that only holds an error
  std::string error;
  std::string target;
  std::vector<gcomp::TensorInfo> inputs, outputs;
};

struct gcomp_session {
  std::unique_ptr<gcomp::Session> session;
  std::shared_ptr<const gcomp::Plan> plan;
  std::vector<gcomp::TensorInfo> outputs;
  std::vector<std::string> output_names;  // for library-allocated outputs' name pointers
  std::string error;
};

namespace {

thread_local std::string last_error;

gcomp_status ToC(gcomp::StatusCode c) { return static_cast<gcomp_status>(static_cast<int>(c)); }

// Records `message` as the thread's last error and in `slot` (a handle's), returns `status`.
gcomp_status Fail(std::string* slot, gcomp_status status, const std::string& message) {
  last_error = message;
  if (slot) *slot = message;
  return status;
}

gcomp_status Ok(std::string* slot) {
  last_error.clear();
  if (slot) slot->clear();
  return GCOMP_OK;
}

gcomp_status FromStatus(std::string* slot, const gcomp::Status& s) {
  return s.ok() ? Ok(slot) : Fail(slot, ToC(s.code()), s.message());
}

// Runs `body`, turning any exception into an internal error recorded in `slot`.
template <typename F>
gcomp_status Guard(std::string* slot, F&& body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return Fail(slot, GCOMP_RESOURCE_EXHAUSTED, "out of memory");
  } catch (const std::exception& e) {
    return Fail(slot, GCOMP_INTERNAL, std::string("internal error: ") + e.what());
  } catch (...) {
    return Fail(slot, GCOMP_INTERNAL, "internal error: unknown exception");
  }
}

bool ValidDType(gcomp_dtype t) { return t >= GCOMP_FLOAT32 && t <= GCOMP_BOOL; }

// A plan handle for a loaded plan, or one holding only the error.
gcomp_status NewPlan(gcomp::Result<std::shared_ptr<const gcomp::Plan>> loaded, gcomp_plan** out) {
  auto* h = new (std::nothrow) gcomp_plan;
  *out = h;
  if (!h) return Fail(nullptr, GCOMP_RESOURCE_EXHAUSTED, "out of memory");
  if (!loaded.ok()) return FromStatus(&h->error, loaded.status());
  h->plan = *loaded;
  h->target = h->plan->target();
  h->inputs = h->plan->inputs();
  h->outputs = h->plan->outputs();
  return Ok(&h->error);
}

gcomp_status Info(gcomp_plan* plan, const std::vector<gcomp::TensorInfo>& list, size_t index, gcomp_tensor_info* info,
                  const char* what) {
  if (!info) return Fail(&plan->error, GCOMP_INVALID_ARGUMENT, "info is NULL");
  if (index >= list.size()) {
    return Fail(&plan->error, GCOMP_INVALID_ARGUMENT,
                std::string(what) + " " + std::to_string(index) + " of a plan with " + std::to_string(list.size()));
  }
  const gcomp::TensorInfo& t = list[index];
  if (t.shape.size() > GCOMP_MAX_RANK) {
    return Fail(&plan->error, GCOMP_UNIMPLEMENTED, "'" + t.name + "' has a rank over GCOMP_MAX_RANK");
  }
  std::memset(info, 0, sizeof(*info));
  info->name = t.name.c_str();
  info->dtype = static_cast<gcomp_dtype>(static_cast<int>(t.dtype));
  info->rank = t.shape.size();
  for (size_t k = 0; k < t.shape.size(); ++k) {
    info->shape[k] = t.shape[k];
    info->batch_dims[k] = t.batch_dims[k] ? 1 : 0;
  }
  return Ok(&plan->error);
}

// The C inputs as host tensors (copied: the C++ API owns its tensors' bytes).
gcomp_status Inputs(gcomp_session* s, const gcomp_tensor* inputs, size_t n, std::vector<gcomp::HostTensor>* out) {
  if (n > 0 && !inputs) return Fail(&s->error, GCOMP_INVALID_ARGUMENT, "inputs is NULL");
  for (size_t i = 0; i < n; ++i) {
    const gcomp_tensor& t = inputs[i];
    if (!t.name) return Fail(&s->error, GCOMP_INVALID_ARGUMENT, "input " + std::to_string(i) + " has no name");
    if (!ValidDType(t.dtype) || t.rank > GCOMP_MAX_RANK || (t.bytes > 0 && !t.data)) {
      return Fail(&s->error, GCOMP_INVALID_ARGUMENT,
                  std::string("input '") + t.name + "' has an unknown dtype, a rank over GCOMP_MAX_RANK or no data");
    }
    gcomp::HostTensor h;
    h.name = t.name;
    h.dtype = static_cast<gcomp::DataType>(static_cast<int>(t.dtype));
    h.shape.assign(t.shape, t.shape + t.rank);
    const auto* bytes = static_cast<const uint8_t*>(t.data);
    h.data.assign(bytes, bytes + t.bytes);
    out->push_back(std::move(h));
  }
  return GCOMP_OK;
}

gcomp_status Describe(gcomp_session* s, const gcomp::HostTensor& h, size_t k, gcomp_tensor* t) {
  if (h.shape.size() > GCOMP_MAX_RANK) {
    return Fail(&s->error, GCOMP_UNIMPLEMENTED, "output '" + h.name + "' has a rank over GCOMP_MAX_RANK");
  }
  t->name = s->output_names[k].c_str();
  t->dtype = static_cast<gcomp_dtype>(static_cast<int>(h.dtype));
  t->rank = h.shape.size();
  for (size_t d = 0; d < h.shape.size(); ++d) t->shape[d] = h.shape[d];
  return GCOMP_OK;
}

}  // namespace

extern "C" {

const char* gcomp_version(void) { return "0.1.0"; }

const char* gcomp_status_name(gcomp_status status) {
  switch (status) {
    case GCOMP_OK: return "OK";
    case GCOMP_INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case GCOMP_NOT_FOUND: return "NOT_FOUND";
    case GCOMP_RESOURCE_EXHAUSTED: return "RESOURCE_EXHAUSTED";
    case GCOMP_UNIMPLEMENTED: return "UNIMPLEMENTED";
    case GCOMP_INTERNAL: return "INTERNAL";
  }
  return "UNKNOWN";
}

const char* gcomp_dtype_name(gcomp_dtype dtype) {
  if (!ValidDType(dtype)) return "unknown";
  return gcomp::DataTypeName(static_cast<gcomp::DataType>(static_cast<int>(dtype)));
}

const char* gcomp_last_error(void) { return last_error.c_str(); }

gcomp_status gcomp_plan_load(const char* path, gcomp_plan** plan) {
  if (!plan) return Fail(nullptr, GCOMP_INVALID_ARGUMENT, "plan is NULL");
  *plan = nullptr;
  return Guard(nullptr, [&] {
    if (!path) return NewPlan(gcomp::Status(gcomp::StatusCode::kInvalidArgument, "path is NULL"), plan);
    return NewPlan(gcomp::Plan::Load(path), plan);
  });
}

gcomp_status gcomp_plan_load_memory(const void* data, size_t size, gcomp_plan** plan) {
  if (!plan) return Fail(nullptr, GCOMP_INVALID_ARGUMENT, "plan is NULL");
  *plan = nullptr;
  return Guard(nullptr, [&] { return NewPlan(gcomp::Plan::LoadFromMemory(data, size), plan); });
}

gcomp_compile_options gcomp_compile_options_default(void) {
  return gcomp_compile_options{"cpu", "fp32", "O3", 0, nullptr, nullptr};
}

gcomp_status gcomp_compile(const char* model_path, const gcomp_compile_options* options, gcomp_plan** plan) {
  if (!plan) return Fail(nullptr, GCOMP_INVALID_ARGUMENT, "plan is NULL");
  *plan = nullptr;
  return Guard(nullptr, [&] {
    if (!model_path) return NewPlan(gcomp::Status(gcomp::StatusCode::kInvalidArgument, "model_path is NULL"), plan);
    const gcomp_compile_options o = options ? *options : gcomp_compile_options_default();
    gcomp::CompileOptions co;
    if (o.target) co.target = o.target;
    if (o.precision) co.precision = o.precision;
    if (o.level) co.level = o.level;
    co.batch = o.batch;
    if (o.keep_fp32) co.keep_fp32 = o.keep_fp32;
    if (o.calibration) co.calibration = o.calibration;
    return NewPlan(gcomp::Compile(model_path, co), plan);
  });
}

gcomp_status gcomp_plan_save(gcomp_plan* plan, const char* path) {
  if (!plan || !plan->plan) return Fail(plan ? &plan->error : nullptr, GCOMP_INVALID_ARGUMENT, "no plan");
  if (!path) return Fail(&plan->error, GCOMP_INVALID_ARGUMENT, "path is NULL");
  return Guard(&plan->error, [&] { return FromStatus(&plan->error, plan->plan->Save(path)); });
}

const char* gcomp_plan_error(const gcomp_plan* plan) { return plan ? plan->error.c_str() : "no plan handle"; }

void gcomp_plan_free(gcomp_plan* plan) { delete plan; }

gcomp_status gcomp_plan_target(gcomp_plan* plan, const char** target) {
  if (!plan || !plan->plan || !target) return Fail(plan ? &plan->error : nullptr, GCOMP_INVALID_ARGUMENT, "no plan");
  *target = plan->target.c_str();
  return Ok(&plan->error);
}

gcomp_status gcomp_plan_max_batch(gcomp_plan* plan, int64_t* max_batch) {
  if (!plan || !plan->plan || !max_batch) {
    return Fail(plan ? &plan->error : nullptr, GCOMP_INVALID_ARGUMENT, "no plan");
  }
  *max_batch = plan->plan->max_batch();
  return Ok(&plan->error);
}

gcomp_status gcomp_plan_num_inputs(gcomp_plan* plan, size_t* count) {
  if (!plan || !plan->plan || !count) return Fail(plan ? &plan->error : nullptr, GCOMP_INVALID_ARGUMENT, "no plan");
  *count = plan->inputs.size();
  return Ok(&plan->error);
}

gcomp_status gcomp_plan_num_outputs(gcomp_plan* plan, size_t* count) {
  if (!plan || !plan->plan || !count) return Fail(plan ? &plan->error : nullptr, GCOMP_INVALID_ARGUMENT, "no plan");
  *count = plan->outputs.size();
  return Ok(&plan->error);
}

gcomp_status gcomp_plan_input(gcomp_plan* plan, size_t index, gcomp_tensor_info* info) {
  if (!plan || !plan->plan) return Fail(plan ? &plan->error : nullptr, GCOMP_INVALID_ARGUMENT, "no plan");
  return Info(plan, plan->inputs, index, info, "input");
}

gcomp_status gcomp_plan_output(gcomp_plan* plan, size_t index, gcomp_tensor_info* info) {
  if (!plan || !plan->plan) return Fail(plan ? &plan->error : nullptr, GCOMP_INVALID_ARGUMENT, "no plan");
  return Info(plan, plan->outputs, index, info, "output");
}

gcomp_session_options gcomp_session_options_default(void) { return gcomp_session_options{1, 0, nullptr, 1}; }

gcomp_status gcomp_session_create(gcomp_plan* plan, const gcomp_session_options* options, gcomp_session** session) {
  if (!session) return Fail(nullptr, GCOMP_INVALID_ARGUMENT, "session is NULL");
  *session = nullptr;
  return Guard(nullptr, [&]() -> gcomp_status {
    auto* h = new gcomp_session;
    *session = h;
    if (!plan || !plan->plan) return Fail(&h->error, GCOMP_INVALID_ARGUMENT, "no plan (a failed load's handle?)");
    const gcomp_session_options o = options ? *options : gcomp_session_options_default();
    if (o.threads < 1 || o.threads > 1024) {
      return Fail(&h->error, GCOMP_INVALID_ARGUMENT, "threads " + std::to_string(o.threads) + ", expected 1..1024");
    }
    gcomp::SessionOptions so;
    so.threads = o.threads;
    so.device = o.device;
    so.stream = o.stream;
    so.cuda_graphs = o.cuda_graphs != 0;
    auto created = gcomp::Session::Create(plan->plan, so);
    if (!created.ok()) return FromStatus(&h->error, created.status());
    h->session = std::move(*created);
    h->plan = plan->plan;
    h->outputs = plan->outputs;
    for (const gcomp::TensorInfo& t : h->outputs) h->output_names.push_back(t.name);
    return Ok(&h->error);
  });
}

const char* gcomp_session_error(const gcomp_session* session) {
  return session ? session->error.c_str() : "no session handle";
}

void gcomp_session_free(gcomp_session* session) { delete session; }

gcomp_status gcomp_session_run(gcomp_session* session, const gcomp_tensor* inputs, size_t num_inputs,
                               gcomp_tensor* outputs, size_t num_outputs) {
  if (!session || !session->session) {
    return Fail(session ? &session->error : nullptr, GCOMP_INVALID_ARGUMENT, "no session");
  }
  return Guard(&session->error, [&]() -> gcomp_status {
    if (num_outputs != session->outputs.size() || (num_outputs > 0 && !outputs)) {
      return Fail(&session->error, GCOMP_INVALID_ARGUMENT,
                  "the plan has " + std::to_string(session->outputs.size()) + " outputs, " +
                      std::to_string(num_outputs) + " given");
    }
    std::vector<gcomp::HostTensor> in;
    if (gcomp_status s = Inputs(session, inputs, num_inputs, &in); s != GCOMP_OK) return s;
    auto result = session->session->Run(in);
    if (!result.ok()) return FromStatus(&session->error, result.status());
    for (size_t k = 0; k < result->size(); ++k) {
      const gcomp::HostTensor& h = (*result)[k];
      gcomp_tensor& t = outputs[k];
      if (t.name && session->output_names[k] != t.name) {
        return Fail(&session->error, GCOMP_INVALID_ARGUMENT,
                    std::string("output ") + std::to_string(k) + " is '" + session->output_names[k] + "', not '" +
                        t.name + "'");
      }
      if (t.bytes < h.data.size() || (h.data.size() > 0 && !t.data)) {
        const size_t capacity = t.bytes;
        t.bytes = h.data.size();
        return Fail(&session->error, GCOMP_RESOURCE_EXHAUSTED,
                    "output '" + h.name + "' needs " + std::to_string(h.data.size()) + " bytes, its buffer holds " +
                        std::to_string(capacity));
      }
      if (gcomp_status s = Describe(session, h, k, &t); s != GCOMP_OK) return s;
      if (!h.data.empty()) std::memcpy(t.data, h.data.data(), h.data.size());
      t.bytes = h.data.size();
    }
    return Ok(&session->error);
  });
}

gcomp_status gcomp_session_run_alloc(gcomp_session* session, const gcomp_tensor* inputs, size_t num_inputs,
                                     gcomp_tensor** outputs, size_t* num_outputs) {
  if (!session || !session->session) {
    return Fail(session ? &session->error : nullptr, GCOMP_INVALID_ARGUMENT, "no session");
  }
  if (!outputs || !num_outputs) return Fail(&session->error, GCOMP_INVALID_ARGUMENT, "outputs is NULL");
  *outputs = nullptr;
  *num_outputs = 0;
  return Guard(&session->error, [&]() -> gcomp_status {
    std::vector<gcomp::HostTensor> in;
    if (gcomp_status s = Inputs(session, inputs, num_inputs, &in); s != GCOMP_OK) return s;
    auto result = session->session->Run(in);
    if (!result.ok()) return FromStatus(&session->error, result.status());
    auto tensors = std::make_unique<gcomp_tensor[]>(result->size());
    size_t made = 0;
    for (size_t k = 0; k < result->size(); ++k) {
      const gcomp::HostTensor& h = (*result)[k];
      gcomp_tensor& t = tensors[k];
      t = gcomp_tensor{};
      if (gcomp_status s = Describe(session, h, k, &t); s != GCOMP_OK) {
        gcomp_tensors_free(tensors.release(), made);
        return s;
      }
      t.data = h.data.empty() ? nullptr : new uint8_t[h.data.size()];
      if (t.data) std::memcpy(t.data, h.data.data(), h.data.size());
      t.bytes = h.data.size();
      ++made;
    }
    *num_outputs = result->size();
    *outputs = tensors.release();
    return Ok(&session->error);
  });
}

void gcomp_tensors_free(gcomp_tensor* tensors, size_t count) {
  if (!tensors) return;
  for (size_t k = 0; k < count; ++k) delete[] static_cast<uint8_t*>(tensors[k].data);
  delete[] tensors;
}

}  // extern "C"
