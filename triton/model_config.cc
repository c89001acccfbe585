#include "triton/model_config.h"

#include <algorithm>
#include <charconv>
#include <map>

namespace gcomp::triton {
namespace {

struct TypeNames {
  DataType dtype;
  const char* config;  // ModelConfig's DataType enum name
  int triton;          // TRITONSERVER_DataType
};
// TRITONSERVER_TYPE_* values: BOOL 1, UINT8 2, INT8 6, INT32 8, INT64 9, FP16 10, FP32 11, FP64 12, BF16 14.
constexpr TypeNames kTypes[] = {
    {DataType::kFloat32, "TYPE_FP32", 11},  {DataType::kFloat16, "TYPE_FP16", 10},
    {DataType::kBFloat16, "TYPE_BF16", 14}, {DataType::kFloat64, "TYPE_FP64", 12},
    {DataType::kInt64, "TYPE_INT64", 9},    {DataType::kInt32, "TYPE_INT32", 8},
    {DataType::kInt8, "TYPE_INT8", 6},      {DataType::kUInt8, "TYPE_UINT8", 2},
    {DataType::kBool, "TYPE_BOOL", 1},
};

const TypeNames* FindType(DataType t) {
  for (const TypeNames& n : kTypes) {
    if (n.dtype == t) return &n;
  }
  return nullptr;
}

Status Refuse(const std::string& model, const std::string& what) {
  return Status(StatusCode::kInvalidArgument, "model '" + model + "': " + what);
}

// Whether every input and output of the plan grows on dim 0 alone, one row per batch item.
bool PlanBatchesOnDim0(const PlanIo& plan, std::string& why) {
  if (plan.max_batch <= 1) {
    bool any = false;
    for (const auto* list : {&plan.inputs, &plan.outputs}) {
      for (const TensorInfo& t : *list) {
        for (int64_t g : t.per_batch) any |= g != 0;
      }
    }
    if (!any) return false;
  }
  for (const auto* list : {&plan.inputs, &plan.outputs}) {
    for (const TensorInfo& t : *list) {
      bool ok = !t.shape.empty() && t.shape[0] == 1 && !t.per_batch.empty() && t.per_batch[0] == 1;
      for (size_t k = 1; k < t.per_batch.size(); ++k) ok &= t.per_batch[k] == 0;
      if (!ok) {
        why = "'" + t.name + "' does not grow on dim 0 by one row per batch item (shape at batch 1 " +
              DimsText(t.shape) + ")";
        return false;
      }
    }
  }
  return true;
}

bool PlanIsStatic(const PlanIo& plan) {
  for (const auto* list : {&plan.inputs, &plan.outputs}) {
    for (const TensorInfo& t : *list) {
      for (int64_t g : t.per_batch) {
        if (g != 0) return false;
      }
    }
  }
  return true;
}

Json DimsJson(const std::vector<int64_t>& dims) {
  Json a = Json::Array();
  for (int64_t d : dims) a.Push(Json::Number(d));
  return a;
}

// The dims a config entry for `t` has: without the batch dim when Triton batches; -1 for the
// batch dim of a batching plan that Triton does not batch. Triton needs at least one dim, so a
// tensor with none left is given as [1] with `reshape: { shape: [] }` (the backend sees it as []).
std::vector<int64_t> ConfigDims(const TensorInfo& t, bool triton_batches, bool plan_batches) {
  if (triton_batches) return std::vector<int64_t>(t.shape.begin() + 1, t.shape.end());
  std::vector<int64_t> dims = t.shape;
  if (plan_batches) dims[0] = -1;
  return dims;
}

// Fills in an entry's data_type and/or dims (with the reshape a tensor without dims needs).
void SetTensorFields(Json& e, const TensorInfo& t, bool triton_batches, bool plan_batches, bool type = true,
                     bool shape = true) {
  if (type) e.Set("data_type", Json::String(FindType(t.dtype)->config));
  if (!shape) return;
  const std::vector<int64_t> dims = ConfigDims(t, triton_batches, plan_batches);
  if (dims.empty()) {
    e.Set("dims", DimsJson({1}));
    Json reshape = Json::Object();
    reshape.Set("shape", Json::Array());
    e.Set("reshape", std::move(reshape));
  } else {
    e.Set("dims", DimsJson(dims));
  }
}

Json TensorJson(const TensorInfo& t, bool triton_batches, bool plan_batches) {
  Json e = Json::Object();
  e.Set("name", Json::String(t.name));
  SetTensorFields(e, t, triton_batches, plan_batches);
  return e;
}

Result<std::vector<int64_t>> ReadDims(const std::string& model, const std::string& where, const Json& entry) {
  std::vector<int64_t> dims;
  const Json* d = entry.Find("dims");
  if (!d) return dims;
  if (!d->is_array()) return Refuse(model, where + ": 'dims' is not a list");
  for (const Json& v : d->items()) {
    auto i = v.AsInt();
    if (!i) return Refuse(model, where + ": 'dims' holds a non-integer");
    dims.push_back(*i);
  }
  return dims;
}

// Checks one config entry against the plan's tensor and returns it as served.
Result<ServedTensor> CheckEntry(const std::string& model, const std::string& kind, const Json& entry,
                                const TensorInfo& t, bool triton_batches, bool plan_batches, int64_t plan_max) {
  const std::string where = "config " + kind + " '" + t.name + "'";
  ServedTensor s{t.name, t.dtype, {}, t.shape, true};
  const Json* dt = entry.Find("data_type");
  const char* want_type = FindType(t.dtype)->config;
  if (!dt || dt->str().empty() || dt->str() == "TYPE_INVALID") {
    return Refuse(model, where + " gives no data_type (the plan's is " + want_type + ")");
  }
  if (dt->str() != want_type) {
    return Refuse(model, where + " has data_type " + dt->str() + ", the plan's is " + want_type);
  }
  for (const char* flag : {"allow_ragged_batch", "is_shape_tensor", "optional"}) {
    const Json* f = entry.Find(flag);
    if (f && f->kind() == Json::Kind::kBool && f->boolean()) {
      return Refuse(model, where + " sets '" + flag + "', which the gcomp backend does not support");
    }
  }
  std::vector<int64_t> want = ConfigDims(t, triton_batches, false);
  // The one reshape the backend takes: dims [1] for a tensor with no dims (see ConfigDims).
  const Json* r = entry.Find("reshape");
  const bool reshaped = r && r->is_object() && !r->members().empty();
  if (reshaped) {
    const Json* shape = r->Find("shape");
    if (!want.empty() || !shape || !shape->is_array() || !shape->items().empty()) {
      return Refuse(model, where +
                               " has a 'reshape', which the gcomp backend takes only as dims [1] with reshape: "
                               "{ shape: [] } for a tensor without dims");
    }
    want = {1};
  }
  auto dims = ReadDims(model, where, entry);
  if (!dims.ok()) return dims.status();
  bool match = dims->size() == want.size();
  for (size_t k = 0; match && k < want.size(); ++k) {
    const int64_t d = (*dims)[k];
    // A plan that batches but is served without Triton's batching takes any batch up to its maximum on dim 0.
    if (!triton_batches && plan_batches && k == 0) {
      match = d == -1 || (d >= 1 && d <= plan_max);
    } else {
      match = d == want[k];
    }
  }
  if (!match) {
    std::string expect = DimsText(want);
    if (!triton_batches && plan_batches) expect += " (dim 0: -1 or a batch 1.." + std::to_string(plan_max) + ")";
    return Refuse(model, where + " has dims " + DimsText(*dims) + ", the plan's are " + expect +
                             (triton_batches ? " with max_batch_size > 0 (dims exclude the batch dim)" : ""));
  }
  s.dims = *dims;
  return s;
}

}  // namespace

std::string DimsText(const int64_t* dims, size_t n) {
  std::string s = "[";
  for (size_t i = 0; i < n; ++i) {
    if (i) s += ',';
    s += std::to_string(dims[i]);
  }
  return s + "]";
}

PlanIo DescribePlan(const Plan& plan) { return PlanIo{plan.target(), plan.max_batch(), plan.inputs(), plan.outputs()}; }

const char* ConfigTypeName(DataType t) {
  const TypeNames* n = FindType(t);
  return n ? n->config : nullptr;
}

int TritonDataType(DataType t) {
  const TypeNames* n = FindType(t);
  return n ? n->triton : 0;
}

const char* TritonTypeName(int triton_type) {
  static const char* kNames[] = {"INVALID", "BOOL",  "UINT8", "UINT16", "UINT32", "UINT64", "INT8", "INT16",
                                 "INT32",   "INT64", "FP16",  "FP32",   "FP64",   "BYTES",  "BF16"};
  return triton_type >= 0 && triton_type < 15 ? kNames[triton_type] : "INVALID";
}

std::string PlanFilename(const Json& config) {
  const Json* f = config.Find("default_model_filename");
  return f && f->kind() == Json::Kind::kString && !f->str().empty() ? f->str() : "model.gplan";
}

std::string CheckApiVersion(uint32_t server_major, uint32_t server_minor, uint32_t want_major, uint32_t want_minor) {
  if (server_major == want_major && server_minor >= want_minor) return "";
  return "the server's backend API is " + std::to_string(server_major) + "." + std::to_string(server_minor) +
         "; the gcomp backend needs " + std::to_string(want_major) + ".x with x >= " + std::to_string(want_minor);
}

Result<ReconciledConfig> ReconcileConfig(const std::string& model, const Json& config, const PlanIo& plan,
                                         bool auto_complete) {
  if (!config.is_object()) return Refuse(model, "the model configuration is not a JSON object");
  ReconciledConfig out{config, false, {}};
  Json& cfg = out.config;
  ServingSpec& spec = out.spec;
  spec.plan_max_batch = plan.max_batch;
  spec.plan_filename = PlanFilename(config);
  for (const auto* list : {&plan.inputs, &plan.outputs}) {
    for (const TensorInfo& t : *list) {
      if (!FindType(t.dtype)) {
        return Refuse(model, "the plan's '" + t.name + "' is " + DataTypeName(t.dtype) + ", which Triton cannot carry");
      }
    }
  }
  if (plan.inputs.empty() || plan.outputs.empty()) {
    return Refuse(model, "the plan has no inputs or no outputs; Triton serves tensors in and out");
  }
  std::string why_not;
  spec.plan_batches = PlanBatchesOnDim0(plan, why_not);
  if (!spec.plan_batches && !PlanIsStatic(plan)) {
    return Refuse(model, "the plan grows with the batch, but " + why_not + "; Triton batches on dim 0");
  }

  const Json* in_cfg = cfg.Find("input");
  const Json* out_cfg = cfg.Find("output");
  const bool no_inputs = !in_cfg || !in_cfg->is_array() || in_cfg->items().empty();
  const bool no_outputs = !out_cfg || !out_cfg->is_array() || out_cfg->items().empty();

  int64_t max_batch_size = 0;
  if (const Json* m = cfg.Find("max_batch_size")) {
    auto v = m->AsInt();
    if (!v || *v < 0) return Refuse(model, "config max_batch_size is not a non-negative integer");
    max_batch_size = *v;
  }
  if (auto_complete && max_batch_size == 0 && spec.plan_batches) {
    // Batching is what a dynamic-batch plan is for, unless the config spells the batch dim out.
    bool dims_include_batch = false;
    if (!no_inputs) {
      for (const Json& e : in_cfg->items()) {
        const Json* n = e.Find("name");
        for (const TensorInfo& t : plan.inputs) {
          if (n && n->str() == t.name) {
            auto d = ReadDims(model, "config input '" + t.name + "'", e);
            if (d.ok() && d->size() == t.shape.size()) dims_include_batch = true;
          }
        }
      }
    }
    if (!dims_include_batch) {
      max_batch_size = plan.max_batch;
      cfg.Set("max_batch_size", Json::Number(max_batch_size));
      out.changed = true;
    }
  }
  if (max_batch_size > 0 && !spec.plan_batches) {
    return Refuse(model, "config max_batch_size is " + std::to_string(max_batch_size) +
                             ", but the plan has a fixed batch (" +
                             (why_not.empty() ? "a static-batch model" : why_not) +
                             "): set max_batch_size 0 and give the full dims");
  }
  if (max_batch_size > plan.max_batch) {
    return Refuse(model, "config max_batch_size " + std::to_string(max_batch_size) +
                             " exceeds the plan's maximum batch " + std::to_string(plan.max_batch) +
                             " (recompile with --batch to raise it)");
  }
  spec.max_batch_size = max_batch_size;
  const bool triton_batches = max_batch_size > 0;

  for (int pass = 0; pass < 2; ++pass) {
    const bool inputs = pass == 0;
    const std::vector<TensorInfo>& tensors = inputs ? plan.inputs : plan.outputs;
    const std::string kind = inputs ? "input" : "output";
    const bool missing = inputs ? no_inputs : no_outputs;
    if (missing) {
      if (!auto_complete) {
        return Refuse(model,
                      "the config lists no " + kind + "s and auto-completion is off (--disable-auto-complete-config)");
      }
      Json list = Json::Array();
      for (const TensorInfo& t : tensors) list.Push(TensorJson(t, triton_batches, spec.plan_batches));
      cfg.Set(kind, std::move(list));
      out.changed = true;
    }
    Json& list = *cfg.Find(kind);
    std::map<std::string, ServedTensor> named;  // the checked entries
    for (Json& e : list.mutable_items()) {
      const Json* n = e.Find("name");
      if (!n || n->kind() != Json::Kind::kString) return Refuse(model, "a config " + kind + " has no name");
      auto it = std::find_if(tensors.begin(), tensors.end(), [&](const TensorInfo& t) { return t.name == n->str(); });
      if (it == tensors.end()) {
        std::string have;
        for (const TensorInfo& t : tensors) have += (have.empty() ? "'" : ", '") + t.name + "'";
        return Refuse(model,
                      "config " + kind + " '" + n->str() + "' is not one of the plan's " + kind + "s (" + have + ")");
      }
      if (named.count(n->str())) {
        return Refuse(model, "config " + kind + " '" + n->str() + "' is listed twice");
      }
      // Triton writes every field: an entry that names a tensor only has data_type TYPE_INVALID and dims [].
      const Json* dt = e.Find("data_type");
      const Json* dims = e.Find("dims");
      const bool no_type = !dt || dt->str().empty() || dt->str() == "TYPE_INVALID";
      const bool no_dims = !dims || (dims->is_array() && dims->items().empty());
      if (auto_complete && (no_type || no_dims)) {
        SetTensorFields(e, *it, triton_batches, spec.plan_batches, no_type, no_dims);
        out.changed = true;
      }
      auto s = CheckEntry(model, kind, e, *it, triton_batches, spec.plan_batches, plan.max_batch);
      if (!s.ok()) return s.status();
      named.emplace(it->name, std::move(*s));  // not n: filling the entry in may have moved its members
    }
    if (inputs && named.size() != tensors.size()) {
      for (const TensorInfo& t : tensors) {
        if (!named.count(t.name)) return Refuse(model, "the config does not list the plan's input '" + t.name + "'");
      }
    }
    // Served tensors in the plan's order; outputs the config leaves out are still known (not served).
    for (const TensorInfo& t : tensors) {
      auto it = named.find(t.name);
      (inputs ? spec.inputs : spec.outputs)
          .push_back(it != named.end() ? it->second
                                       : ServedTensor{t.name, t.dtype, ConfigDims(t, triton_batches, spec.plan_batches),
                                                      t.shape, false});
    }
  }

  if (auto_complete && triton_batches && !cfg.Find("dynamic_batching") && !cfg.Find("sequence_batching") &&
      !cfg.Find("ensemble_scheduling")) {
    cfg.Set("dynamic_batching", Json::Object());
    out.changed = true;
  }

  if (const Json* params = cfg.Find("parameters")) {
    if (const Json* t = params->Find("threads")) {
      const Json* v = t->Find("string_value");
      auto n = v ? v->AsInt() : std::nullopt;
      if (!n || *n < 1 || *n > 1024) {
        return Refuse(model,
                      "parameter 'threads' must be an integer 1..1024 (parameters { key: \"threads\" value: { "
                      "string_value: \"4\" } })");
      }
      spec.threads = static_cast<int>(*n);
    }
  }
  return out;
}

}  // namespace gcomp::triton
