// The backend's entry points (triton/backend.cc, linked in) driven by a fake of the part of
// Triton's C API they call: the server checks requests against the config before the backend sees
// them, so the backend's own checks, one Execute call mixing good and bad requests, ownership
// (every request released once, every response sent once, no error object leaked) and the
// statistics are tested here. Outputs are compared with a gcomp::Session run of the same plan.
// Usage: triton_execute_tests MODEL.onnx (a dynamic-batch image model)
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gcomp/gcomp.h"
#include "triton/json.h"
#include "triton/triton_api.h"

// The fake server's objects.
struct TRITONSERVER_Error {
  TRITONSERVER_Error_Code code;
  std::string msg;
};
struct TRITONSERVER_Message {
  std::string json;
};
struct TRITONBACKEND_Backend {
  std::string name = "gcomp";
};
struct TRITONBACKEND_Model {
  std::string name = "m";
  std::string repo;
  uint64_t version = 1;
  std::string config;
  bool auto_complete = true;
  int set_config_calls = 0;
  void* state = nullptr;
};
struct TRITONBACKEND_ModelInstance {
  std::string name = "m_0";
  TRITONSERVER_InstanceGroupKind kind = TRITONSERVER_INSTANCEGROUPKIND_CPU;
  int32_t device = 0;
  TRITONBACKEND_Model* model = nullptr;
  void* state = nullptr;
  std::vector<std::pair<TRITONBACKEND_Request*, bool>> request_stats;
  std::vector<uint64_t> batch_stats;
};
struct TRITONBACKEND_Input {
  std::string name;
  TRITONSERVER_DataType dtype = TRITONSERVER_TYPE_FP32;
  std::vector<int64_t> shape;
  std::vector<std::vector<uint8_t>> buffers;
  TRITONSERVER_MemoryType memory = TRITONSERVER_MEMORY_CPU;
  uint64_t byte_size() const {
    uint64_t n = 0;
    for (const auto& b : buffers) n += b.size();
    return n;
  }
};
struct TRITONBACKEND_Request {
  std::vector<TRITONBACKEND_Input> inputs;
  std::vector<std::string> outputs;
  int released = 0;
};
struct TRITONBACKEND_Output {
  std::string name;
  TRITONSERVER_DataType dtype;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;
};
struct TRITONBACKEND_Response {
  TRITONBACKEND_Request* request = nullptr;
  std::deque<TRITONBACKEND_Output> outputs;
  int sent = 0;
  bool failed = false;
  std::string error;
};

namespace {
int live_errors = 0;
uint32_t api_major = 1, api_minor = 19;
std::vector<std::unique_ptr<TRITONBACKEND_Response>> responses;
std::vector<std::string> logs;
TRITONSERVER_Error* Fail(const std::string& msg) {
  ++live_errors;
  return new TRITONSERVER_Error{TRITONSERVER_ERROR_INVALID_ARG, msg};
}
}  // namespace

extern "C" {
TRITONSERVER_Error* TRITONSERVER_ErrorNew(TRITONSERVER_Error_Code code, const char* msg) {
  ++live_errors;
  return new TRITONSERVER_Error{code, msg};
}
void TRITONSERVER_ErrorDelete(TRITONSERVER_Error* error) {
  --live_errors;
  delete error;
}
const char* TRITONSERVER_ErrorMessage(TRITONSERVER_Error* error) { return error->msg.c_str(); }
bool TRITONSERVER_LogIsEnabled(TRITONSERVER_LogLevel) { return true; }
TRITONSERVER_Error* TRITONSERVER_LogMessage(TRITONSERVER_LogLevel, const char*, int, const char* msg) {
  logs.push_back(msg);
  return nullptr;
}
TRITONSERVER_Error* TRITONSERVER_MessageNewFromSerializedJson(TRITONSERVER_Message** message, const char* base,
                                                              size_t byte_size) {
  *message = new TRITONSERVER_Message{std::string(base, byte_size)};
  return nullptr;
}
TRITONSERVER_Error* TRITONSERVER_MessageDelete(TRITONSERVER_Message* message) {
  delete message;
  return nullptr;
}
TRITONSERVER_Error* TRITONSERVER_MessageSerializeToJson(TRITONSERVER_Message* message, const char** base,
                                                        size_t* byte_size) {
  *base = message->json.data();
  *byte_size = message->json.size();
  return nullptr;
}
TRITONSERVER_Error* TRITONBACKEND_ApiVersion(uint32_t* major, uint32_t* minor) {
  *major = api_major;
  *minor = api_minor;
  return nullptr;
}
TRITONSERVER_Error* TRITONBACKEND_BackendName(TRITONBACKEND_Backend* backend, const char** name) {
  *name = backend->name.c_str();
  return nullptr;
}
TRITONSERVER_Error* TRITONBACKEND_ModelName(TRITONBACKEND_Model* model, const char** name) {
  *name = model->name.c_str();
  return nullptr;
}
TRITONSERVER_Error* TRITONBACKEND_ModelVersion(TRITONBACKEND_Model* model, uint64_t* version) {
  *version = model->version;
  return nullptr;
}
TRITONSERVER_Error* TRITONBACKEND_ModelRepository(TRITONBACKEND_Model* model, TRITONBACKEND_ArtifactType* type,
                                                  const char** location) {
  *type = TRITONBACKEND_ARTIFACT_FILESYSTEM;
  *location = model->repo.c_str();
  return nullptr;
}
TRITONSERVER_Error* TRITONBACKEND_ModelConfig(TRITONBACKEND_Model* model, uint32_t version,
                                              TRITONSERVER_Message** config) {
  if (version != 1) return Fail("config version");
  *config = new TRITONSERVER_Message{model->config};
  return nullptr;
}
TRITONSERVER_Error* TRITONBACKEND_ModelAutoCompleteConfig(TRITONBACKEND_Model* model, bool* auto_complete) {
  *auto_complete = model->auto_complete;
  return nullptr;
}
TRITONSERVER_Error* TRITONBACKEND_ModelSetConfig(TRITONBACKEND_Model* model, uint32_t, TRITONSERVER_Message* config) {
  ++model->set_config_calls;
  model->config = config->json;
  return nullptr;
}
TRITONSERVER_Error* TRITONBACKEND_ModelState(TRITONBACKEND_Model* model, void** state) {
  *state = model->state;
  return nullptr;
}
TRITONSERVER_Error* TRITONBACKEND_ModelSetState(TRITONBACKEND_Model* model, void* state) {
  model->state = state;
  return nullptr;
}
TRITONSERVER_Error* TRITONBACKEND_ModelInstanceName(TRITONBACKEND_ModelInstance* instance, const char** name) {
  *name = instance->name.c_str();
  return nullptr;
}
TRITONSERVER_Error* TRITONBACKEND_ModelInstanceKind(TRITONBACKEND_ModelInstance* instance,
                                                    TRITONSERVER_InstanceGroupKind* kind) {
  *kind = instance->kind;
  return nullptr;
}
TRITONSERVER_Error* TRITONBACKEND_ModelInstanceDeviceId(TRITONBACKEND_ModelInstance* instance, int32_t* device) {
  *device = instance->device;
  return nullptr;
}
TRITONSERVER_Error* TRITONBACKEND_ModelInstanceModel(TRITONBACKEND_ModelInstance* instance,
                                                     TRITONBACKEND_Model** model) {
  *model = instance->model;
  return nullptr;
}
TRITONSERVER_Error* TRITONBACKEND_ModelInstanceState(TRITONBACKEND_ModelInstance* instance, void** state) {
  *state = instance->state;
  return nullptr;
}
TRITONSERVER_Error* TRITONBACKEND_ModelInstanceSetState(TRITONBACKEND_ModelInstance* instance, void* state) {
  instance->state = state;
  return nullptr;
}
TRITONSERVER_Error* TRITONBACKEND_ModelInstanceReportStatistics(TRITONBACKEND_ModelInstance* instance,
                                                                TRITONBACKEND_Request* request, bool success,
                                                                uint64_t exec_start, uint64_t compute_start,
                                                                uint64_t compute_end, uint64_t exec_end) {
  if (!(exec_start <= compute_start && compute_start <= compute_end && compute_end <= exec_end)) {
    return Fail("timestamps out of order");
  }
  instance->request_stats.emplace_back(request, success);
  return nullptr;
}
TRITONSERVER_Error* TRITONBACKEND_ModelInstanceReportBatchStatistics(TRITONBACKEND_ModelInstance* instance,
                                                                     uint64_t batch_size, uint64_t, uint64_t, uint64_t,
                                                                     uint64_t) {
  instance->batch_stats.push_back(batch_size);
  return nullptr;
}
TRITONSERVER_Error* TRITONBACKEND_RequestInputCount(TRITONBACKEND_Request* request, uint32_t* count) {
  *count = static_cast<uint32_t>(request->inputs.size());
  return nullptr;
}
TRITONSERVER_Error* TRITONBACKEND_RequestInputByIndex(TRITONBACKEND_Request* request, uint32_t index,
                                                      TRITONBACKEND_Input** input) {
  if (index >= request->inputs.size()) return Fail("input index");
  *input = &request->inputs[index];
  return nullptr;
}
TRITONSERVER_Error* TRITONBACKEND_RequestOutputCount(TRITONBACKEND_Request* request, uint32_t* count) {
  *count = static_cast<uint32_t>(request->outputs.size());
  return nullptr;
}
TRITONSERVER_Error* TRITONBACKEND_RequestOutputName(TRITONBACKEND_Request* request, uint32_t index, const char** name) {
  if (index >= request->outputs.size()) return Fail("output index");
  *name = request->outputs[index].c_str();
  return nullptr;
}
TRITONSERVER_Error* TRITONBACKEND_RequestRelease(TRITONBACKEND_Request* request, uint32_t flags) {
  if (flags != kTritonRequestReleaseAll) return Fail("release flags");
  ++request->released;
  return nullptr;
}
TRITONSERVER_Error* TRITONBACKEND_InputProperties(TRITONBACKEND_Input* input, const char** name,
                                                  TRITONSERVER_DataType* datatype, const int64_t** shape,
                                                  uint32_t* dims_count, uint64_t* byte_size, uint32_t* buffer_count) {
  *name = input->name.c_str();
  *datatype = input->dtype;
  *shape = input->shape.data();
  *dims_count = static_cast<uint32_t>(input->shape.size());
  *byte_size = input->byte_size();
  *buffer_count = static_cast<uint32_t>(input->buffers.size());
  return nullptr;
}
TRITONSERVER_Error* TRITONBACKEND_InputBuffer(TRITONBACKEND_Input* input, uint32_t index, const void** buffer,
                                              uint64_t* size, TRITONSERVER_MemoryType* memory_type,
                                              int64_t* memory_type_id) {
  if (index >= input->buffers.size()) return Fail("buffer index");
  *buffer = input->buffers[index].data();
  *size = input->buffers[index].size();
  *memory_type = input->memory;
  *memory_type_id = 0;
  return nullptr;
}
TRITONSERVER_Error* TRITONBACKEND_ResponseNew(TRITONBACKEND_Response** response, TRITONBACKEND_Request* request) {
  responses.push_back(std::make_unique<TRITONBACKEND_Response>());
  responses.back()->request = request;
  *response = responses.back().get();
  return nullptr;
}
TRITONSERVER_Error* TRITONBACKEND_ResponseDelete(TRITONBACKEND_Response*) { return nullptr; }
TRITONSERVER_Error* TRITONBACKEND_ResponseOutput(TRITONBACKEND_Response* response, TRITONBACKEND_Output** output,
                                                 const char* name, TRITONSERVER_DataType datatype, const int64_t* shape,
                                                 uint32_t dims_count) {
  response->outputs.push_back({name, datatype, std::vector<int64_t>(shape, shape + dims_count), {}});
  *output = &response->outputs.back();
  return nullptr;
}
TRITONSERVER_Error* TRITONBACKEND_OutputBuffer(TRITONBACKEND_Output* output, void** buffer, uint64_t byte_size,
                                               TRITONSERVER_MemoryType* memory_type, int64_t* memory_type_id) {
  output->data.assign(byte_size, 0xAB);
  *buffer = output->data.data();
  *memory_type = TRITONSERVER_MEMORY_CPU;
  *memory_type_id = 0;
  return nullptr;
}
TRITONSERVER_Error* TRITONBACKEND_ResponseSend(TRITONBACKEND_Response* response, uint32_t flags,
                                               TRITONSERVER_Error* error) {
  if (flags != kTritonResponseCompleteFinal) return Fail("send flags");
  ++response->sent;
  response->failed = error != nullptr;
  if (error) response->error = error->msg;
  return nullptr;
}
}  // extern "C"

namespace {

std::string g_model;  // argv[1]
constexpr int64_t kMaxBatch = 4;

class BackendExecute : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = std::filesystem::temp_directory_path() / ("gcomp_triton_execute_" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_ / "m" / "1");
    gcomp::CompileOptions options;
    options.batch = kMaxBatch;
    auto plan = gcomp::Compile(g_model, options);
    ASSERT_TRUE(plan.ok()) << plan.status().message();
    plan_ = *plan;
    ASSERT_TRUE(plan_->Save((dir_ / "m" / "1" / "model.gplan").string()).ok());
    in_ = plan_->inputs().at(0);
  }
  static void TearDownTestSuite() { std::filesystem::remove_all(dir_); }

  void SetUp() override {
    responses.clear();
    live_errors = 0;
    model_.repo = (dir_ / "m").string();
    model_.config = R"({"name":"m","backend":"gcomp","max_batch_size":0,"input":[],"output":[]})";
    instance_.model = &model_;
  }
  void TearDown() override {
    if (instance_.state) {
      EXPECT_EQ(TRITONBACKEND_ModelInstanceFinalize(&instance_), nullptr);
    }
    if (model_.state) {
      EXPECT_EQ(TRITONBACKEND_ModelFinalize(&model_), nullptr);
    }
    EXPECT_EQ(live_errors, 0) << "error objects leaked or freed twice";
  }

  // Loads the model and one instance; returns the error message ("" when both load).
  std::string Load() {
    if (TRITONSERVER_Error* e = TRITONBACKEND_ModelInitialize(&model_)) return Take(e);
    return Take(TRITONBACKEND_ModelInstanceInitialize(&instance_));
  }
  // An error's message ("" for none), the error deleted.
  static std::string Take(TRITONSERVER_Error* e) {
    if (!e) return "";
    std::string m = TRITONSERVER_ErrorMessage(e);
    TRITONSERVER_ErrorDelete(e);
    return m;
  }

  static const gcomp::TensorInfo& In() { return in_; }

  // A request of `rows` images (seeded), its input split into `pieces` buffers.
  static TRITONBACKEND_Request Images(int64_t rows, int seed, int pieces = 1) {
    std::vector<int64_t> shape = In().ShapeAt(rows);
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    std::vector<float> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) v[i] = static_cast<float>(((i * 7919 + seed * 104729) % 2001) - 1000) / 500.0f;
    TRITONBACKEND_Request r;
    TRITONBACKEND_Input in{In().name, TRITONSERVER_TYPE_FP32, shape, {}};
    const auto* bytes = reinterpret_cast<const uint8_t*>(v.data());
    const size_t total = v.size() * sizeof(float), step = total / pieces;
    for (int p = 0; p < pieces; ++p) {
      const size_t end = p + 1 == pieces ? total : (p + 1) * step;
      in.buffers.emplace_back(bytes + p * step, bytes + end);
    }
    r.inputs.push_back(std::move(in));
    return r;
  }

  // The plan's output for `request`'s input, from a session of its own.
  static std::vector<float> Expected(const TRITONBACKEND_Request& request) {
    gcomp::HostTensor h{In().name, gcomp::DataType::kFloat32, request.inputs[0].shape, {}};
    for (const auto& b : request.inputs[0].buffers) h.data.insert(h.data.end(), b.begin(), b.end());
    auto session = gcomp::Session::Create(plan_);
    auto outs = (*session)->Run({h});
    EXPECT_TRUE(outs.ok()) << outs.status().message();
    return outs.ok() ? outs->at(0).ToFloat32() : std::vector<float>{};
  }

  static void ExpectOutput(const TRITONBACKEND_Response& r, const std::vector<float>& want, int64_t rows) {
    ASSERT_FALSE(r.failed) << r.error;
    ASSERT_EQ(r.outputs.size(), 1u);
    const TRITONBACKEND_Output& o = r.outputs[0];
    EXPECT_EQ(o.shape.at(0), rows);
    ASSERT_EQ(o.data.size(), want.size() * sizeof(float));
    const auto* got = reinterpret_cast<const float*>(o.data.data());
    float scale = 1.0f;
    for (float w : want) scale = std::max(scale, std::abs(w));
    for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-4f * scale) << "element " << i;
  }

  static inline std::filesystem::path dir_;
  static inline std::shared_ptr<const gcomp::Plan> plan_;
  static inline gcomp::TensorInfo in_;
  TRITONBACKEND_Model model_;
  TRITONBACKEND_ModelInstance instance_;
};

TEST_F(BackendExecute, InitializeChecksTheApiVersion) {
  TRITONBACKEND_Backend backend;
  EXPECT_EQ(TRITONBACKEND_Initialize(&backend), nullptr);
  api_minor = 17;
  TRITONSERVER_Error* e = TRITONBACKEND_Initialize(&backend);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(Take(e), "backend 'gcomp': the server's backend API is 1.17; the gcomp backend needs 1.x with x >= 19");
  api_major = 2;
  api_minor = 0;
  e = TRITONBACKEND_Initialize(&backend);
  ASSERT_NE(e, nullptr);
  EXPECT_NE(Take(e).find("backend API is 2.0"), std::string::npos);
  api_major = 1;
  api_minor = 19;
}

TEST_F(BackendExecute, ModelInitializeCompletesTheConfig) {
  ASSERT_EQ(Load(), "");
  EXPECT_EQ(model_.set_config_calls, 1);
  auto cfg = gcomp::triton::Json::Parse(model_.config);
  ASSERT_TRUE(cfg.ok());
  EXPECT_EQ(cfg->Find("max_batch_size")->AsInt(), kMaxBatch);
  EXPECT_NE(cfg->Find("dynamic_batching"), nullptr);
  EXPECT_EQ(cfg->Find("input")->items().at(0).Find("name")->str(), In().name);
}

TEST_F(BackendExecute, OneCallMixingGoodAndBadRequests) {
  ASSERT_EQ(Load(), "");
  const std::string name = In().name;
  std::vector<TRITONBACKEND_Request> reqs;
  reqs.push_back(Images(1, 1));  // 0 good
  reqs.push_back(Images(1, 2));  // 1 wrong dtype
  reqs.back().inputs[0].dtype = TRITONSERVER_TYPE_INT64;
  reqs.push_back(Images(2, 3, 3));  // 2 good, two rows in three buffers
  reqs.push_back(Images(1, 4));     // 3 wrong shape
  reqs.back().inputs[0].shape.back() += 1;
  reqs.push_back(Images(kMaxBatch + 1, 5));  // 4 a batch over the maximum
  reqs.push_back(Images(1, 6));              // 5 unknown input
  reqs.back().inputs[0].name = "pixels";
  reqs.push_back(Images(1, 7));  // 6 bytes short of the shape
  reqs.back().inputs[0].buffers[0].resize(reqs.back().inputs[0].buffers[0].size() - 4);
  reqs.push_back(Images(1, 8));  // 7 in GPU memory
  reqs.back().inputs[0].memory = TRITONSERVER_MEMORY_GPU;
  reqs.push_back(Images(1, 9));  // 8 an output the model does not have
  reqs.back().outputs = {"no_such_output"};
  reqs.push_back(Images(2, 10));  // 9 good: with 0 and 2 makes 5 rows > 4: a second run
  reqs.push_back(Images(1, 11));  // 10 two inputs
  reqs.back().inputs.push_back(reqs.back().inputs[0]);
  std::vector<TRITONBACKEND_Request*> ptrs;
  for (auto& r : reqs) ptrs.push_back(&r);
  ASSERT_EQ(TRITONBACKEND_ModelInstanceExecute(&instance_, ptrs.data(), static_cast<uint32_t>(ptrs.size())), nullptr);

  ASSERT_EQ(responses.size(), reqs.size());
  for (size_t i = 0; i < reqs.size(); ++i) {
    EXPECT_EQ(reqs[i].released, 1) << "request " << i;
    EXPECT_EQ(responses[i]->sent, 1) << "response " << i;
    EXPECT_EQ(responses[i]->request, &reqs[i]);
  }
  ExpectOutput(*responses[0], Expected(reqs[0]), 1);
  ExpectOutput(*responses[2], Expected(reqs[2]), 2);
  ExpectOutput(*responses[9], Expected(reqs[9]), 2);
  const std::string shape = [&] {
    std::string s;
    for (int64_t d : In().shape) {
      s += ',';
      s += std::to_string(d);
    }
    return s.substr(3);  // the dims after the batch
  }();
  EXPECT_EQ(responses[1]->error, "input '" + name + "' is INT64, the model takes FP32");
  EXPECT_NE(responses[3]->error.find("input '" + name + "' has shape [1,"), std::string::npos) << responses[3]->error;
  EXPECT_NE(responses[3]->error.find("the model takes [batch," + shape + "]"), std::string::npos)
      << responses[3]->error;
  EXPECT_NE(responses[4]->error.find("its batch 5 is outside 1..4"), std::string::npos) << responses[4]->error;
  EXPECT_EQ(responses[5]->error, "model 'm' has no input 'pixels' (its inputs: '" + name + "')");
  EXPECT_NE(responses[6]->error.find("bytes, its shape"), std::string::npos) << responses[6]->error;
  EXPECT_EQ(responses[7]->error,
            "input '" + name + "' is in GPU memory; the gcomp backend reads inputs from host memory");
  EXPECT_EQ(responses[8]->error, "model 'm' has no output 'no_such_output'");
  EXPECT_EQ(responses[10]->error, "model 'm' takes 1 input(s) ('" + name + "'), the request has 2");
  for (size_t i : {1, 3, 4, 5, 6, 7, 8, 10}) {
    EXPECT_TRUE(responses[i]->failed) << i;
    EXPECT_TRUE(responses[i]->outputs.empty()) << i;
  }

  // Statistics: one per request with its outcome, one per run with its rows (3, then 2).
  ASSERT_EQ(instance_.request_stats.size(), reqs.size());
  for (size_t i = 0; i < reqs.size(); ++i) {
    EXPECT_EQ(instance_.request_stats[i].first, &reqs[i]);
    EXPECT_EQ(instance_.request_stats[i].second, i == 0 || i == 2 || i == 9) << i;
  }
  EXPECT_EQ(instance_.batch_stats, (std::vector<uint64_t>{3, 2}));
}

TEST_F(BackendExecute, RequestedOutputsOnly) {
  ASSERT_EQ(Load(), "");
  TRITONBACKEND_Request r = Images(1, 3);
  r.outputs = {plan_->outputs().at(0).name};
  TRITONBACKEND_Request* p = &r;
  ASSERT_EQ(TRITONBACKEND_ModelInstanceExecute(&instance_, &p, 1), nullptr);
  ExpectOutput(*responses.at(0), Expected(r), 1);
  EXPECT_EQ(responses[0]->outputs[0].name, plan_->outputs().at(0).name);
}

TEST_F(BackendExecute, InstanceKindsAndPlans) {
  instance_.kind = TRITONSERVER_INSTANCEGROUPKIND_GPU;
  EXPECT_EQ(Load(),
            "model 'm' instance 'm_0': the plan is for the cpu: serve it with instance_group [ { kind: KIND_CPU } ]");
  instance_.kind = TRITONSERVER_INSTANCEGROUPKIND_MODEL;
  EXPECT_EQ(Take(TRITONBACKEND_ModelInstanceInitialize(&instance_)),
            "model 'm' instance 'm_0': instance kind must be KIND_CPU (cpu plans) or KIND_GPU (cuda plans)");
}

TEST_F(BackendExecute, ThreadsParameterAndContradictions) {
  model_.config = R"({"name":"m","max_batch_size":2,"parameters":{"threads":{"string_value":"2"}}})";
  ASSERT_EQ(Load(), "");
  EXPECT_NE(std::find(logs.begin(), logs.end(), "model 'm' instance 'm_0': KIND_CPU, threads 2"), logs.end());
  TRITONBACKEND_Request r = Images(2, 5);
  TRITONBACKEND_Request* p = &r;
  ASSERT_EQ(TRITONBACKEND_ModelInstanceExecute(&instance_, &p, 1), nullptr);
  ExpectOutput(*responses.at(0), Expected(r), 2);
  ASSERT_EQ(TRITONBACKEND_ModelInstanceFinalize(&instance_), nullptr);
  instance_.state = nullptr;
  ASSERT_EQ(TRITONBACKEND_ModelFinalize(&model_), nullptr);
  model_.state = nullptr;
  model_.config = R"({"name":"m","max_batch_size":8})";
  EXPECT_EQ(Load(),
            "model 'm': config max_batch_size 8 exceeds the plan's maximum batch 4 (recompile with --batch "
            "to raise it)");
}

TEST_F(BackendExecute, CorruptPlanFailsTheLoadWithTheLoadersMessage) {
  const auto bad = dir_ / "bad";
  std::filesystem::create_directories(bad / "1");
  std::ifstream in(dir_ / "m" / "1" / "model.gplan", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  std::ofstream(bad / "1" / "model.gplan", std::ios::binary) << bytes.substr(0, bytes.size() / 3);
  model_.repo = bad.string();
  const std::string msg = Load();
  EXPECT_EQ(msg.rfind("model 'm': " + (bad / "1" / "model.gplan").string() + ": truncated plan file", 0), 0u) << msg;
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (argc < 2) {
    std::fprintf(stderr, "usage: triton_execute_tests MODEL.onnx\n");
    return 2;
  }
  g_model = argv[1];
  return RUN_ALL_TESTS();
}
