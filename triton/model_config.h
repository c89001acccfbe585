// The model configuration of a gcomp model in Triton: the config Triton holds (config.pbtxt, as
// JSON) reconciled with the plan. Missing inputs, outputs, max_batch_size and the dynamic batcher
// are filled in from the plan when Triton asks for auto-completion; anything that contradicts the
// plan is refused with a message naming the field. Pure logic: no Triton call, unit-tested.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gcomp/gcomp.h"
#include "triton/json.h"

namespace gcomp::triton {

// What the backend needs to know of a plan.
struct PlanIo {
  std::string target;  // "cpu", "cuda:sm_90", ...
  int64_t max_batch = 1;
  std::vector<TensorInfo> inputs;
  std::vector<TensorInfo> outputs;
};
PlanIo DescribePlan(const Plan& plan);

// One input or output as served: the dims a request carries (without the batch dim when Triton
// batches), and the plan's full shape at batch 1.
struct ServedTensor {
  std::string name;
  DataType dtype = DataType::kFloat32;
  std::vector<int64_t> dims;        // as in the config; -1 only for a batch dim Triton does not batch
  std::vector<int64_t> plan_shape;  // the plan's shape at batch 1
  bool served = true;               // outputs: listed in the config (the plan computes all of them)
};

struct ServingSpec {
  int64_t max_batch_size = 0;  // Triton's: 0 when Triton does not batch
  bool plan_batches = false;   // the plan's inputs and outputs grow on dim 0, one row per item
  int64_t plan_max_batch = 1;
  std::vector<ServedTensor> inputs;   // the plan's order
  std::vector<ServedTensor> outputs;  // the plan's order (all of them; the config may name fewer)
  int threads = 1;                    // KIND_CPU instances: parameters { key: "threads" }
  std::string plan_filename = "model.gplan";
};

struct ReconciledConfig {
  Json config;           // the completed configuration
  bool changed = false;  // whether auto-completion changed it (to be handed to TRITONBACKEND_ModelSetConfig)
  ServingSpec spec;
};

// Reconciles `config` (Triton's model configuration as JSON) with `plan`. With `auto_complete`,
// fills in what the config leaves out; without it, a config that leaves out inputs or outputs is
// refused. `model` names the model in messages.
Result<ReconciledConfig> ReconcileConfig(const std::string& model, const Json& config, const PlanIo& plan,
                                         bool auto_complete);

// The plan file named by the config ("default_model_filename", else model.gplan).
std::string PlanFilename(const Json& config);

// "[1,3,224,224]" for messages.
std::string DimsText(const int64_t* dims, size_t n);
inline std::string DimsText(const std::vector<int64_t>& dims) { return DimsText(dims.data(), dims.size()); }

// Triton's TYPE_* names and the matching TRITONSERVER_DataType values.
const char* ConfigTypeName(DataType t);       // "TYPE_FP32"; nullptr for types Triton has no name for
int TritonDataType(DataType t);               // TRITONSERVER_TYPE_*; 0 (INVALID) where none
const char* TritonTypeName(int triton_type);  // "FP32" for messages

// The server's backend API version against the one this backend was written for: an empty string
// when compatible, else the message TRITONBACKEND_Initialize refuses the server with.
std::string CheckApiVersion(uint32_t server_major, uint32_t server_minor, uint32_t want_major, uint32_t want_minor);

}  // namespace gcomp::triton
